//! Tool results as the store keeps them: deflated when long, and kept once when a message holds
//! them whole (where in the message, then); read back whole either way.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::{StoreError, shared};

/// Where a result's text is when a message holds it: (message seq, at, len).
pub(crate) type Place = (i64, i64, i64);

/// A stored result's whole text, and where it is when a message holds it.
pub(crate) fn read_result(
    conn: &Connection,
    id: &str,
    result: u64,
) -> Result<Option<(String, Option<Place>)>, StoreError> {
    type Row = (String, Option<Vec<u8>>, Option<i64>, Option<i64>, Option<i64>);
    let row: Option<Row> = conn
        .query_row(
            "SELECT text, packed, in_message, at, len FROM results
             WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND id = ?2",
            params![id, result as i64],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    let Some((text, packed, in_message, at, len)) = row else { return Ok(None) };
    if let (Some(seq), Some(at), Some(len)) = (in_message, at, len) {
        let json: Option<String> = conn
            .query_row(
                &format!(
                    "SELECT {} FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND seq = ?2",
                    crate::kept::whole_json_sql()
                ),
                params![id, seq],
                |r| r.get(0),
            )
            .optional()?;
        let held = json
            .as_deref()
            .and_then(message_content)
            .and_then(|c| c.get(at as usize..(at + len) as usize).map(str::to_owned));
        return Ok(held.map(|text| (text, Some((seq, at, len)))));
    }
    let text = match packed {
        Some(packed) => shared::unpack(&packed)?,
        None => text,
    };
    Ok(Some((text, None)))
}

/// The results a step's messages name (`#0011`): where a stub points.
pub(crate) fn named_results(contents: &[Option<String>]) -> Vec<u64> {
    let mut ids = Vec::new();
    for content in contents.iter().flatten() {
        for (i, _) in content.match_indices('#') {
            let hex: String = content[i + 1..].chars().take_while(char::is_ascii_hexdigit).collect();
            if hex.len() >= 4
                && let Ok(n) = u64::from_str_radix(&hex, 16)
                && !ids.contains(&n)
            {
                ids.push(n);
            }
        }
    }
    ids
}

/// A stored message's content, when it is text (a tool result's always is).
pub(crate) fn message_content(json: &str) -> Option<String> {
    let value: Value = serde_json::from_str(json).ok()?;
    value.get("content")?.as_str().map(str::to_owned)
}
