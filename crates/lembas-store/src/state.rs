//! A session's engine state, kept as a log of changes rather than rewritten whole.
//!
//! The state (the context ledger, what notes have said, the mode, the plan, …) is written after
//! every step, and the ledger grows with every file read: rewriting it whole made a session's
//! writes grow with the square of its length, and every turn's undo point copied it. Instead
//! each write appends the JSON Patch from the state before to the state after (an appended ledger
//! entry is one small `add`). Now and then a whole copy — a snapshot — is kept, once the patches
//! since the last one outweigh it a few times over ([`SNAPSHOT_AFTER`]), so that rebuilding a
//! state reads a few times its size, and the snapshots add up to a fraction of the patches. The
//! engine hands the state over as a JSON value, so a step neither writes it out as text nor
//! parses it back. An undo point is a position in the log.
//!
//! Positions count from 0, the state the session was created with (kept in its `sessions` row;
//! a store from before this log keeps the session's current state there, with no log).

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::StoreError;

/// A whole copy is kept once the patches since the last one outweigh that copy this many times:
/// rebuilding a state then reads a few times its size (only on resume and undo), and the copies
/// add up to a fraction of the patches.
const SNAPSHOT_AFTER: usize = 4;

/// The state last written for a session, so the next write needs no read to find its patch.
#[derive(Debug, Clone)]
pub(crate) struct Current {
    /// Its position in the log.
    pub n: i64,
    pub state: Value,
    /// Bytes of patches written since the last whole copy.
    pub since_snapshot: usize,
    /// The length of the last whole copy: what the state weighs as far as the log knows, without
    /// writing the state out at every step.
    pub size: usize,
}

/// What this process last wrote for each session it writes (one writer per session: the
/// session lock).
pub(crate) type Written = HashMap<String, Current>;

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

fn parse(json: &str) -> Result<Value, StoreError> {
    serde_json::from_str(json).map_err(|e| corrupt(format!("a stored state is not JSON: {e}")))
}

/// The state at position `n`: the last whole copy at or before it, then the patches after.
pub(crate) fn state_at(conn: &Connection, id: &str, n: i64) -> Result<Value, StoreError> {
    Ok(rebuild(conn, id, n)?.0)
}

/// The state at position `n`, and the length of the whole copy it was rebuilt from.
fn rebuild(conn: &Connection, id: &str, n: i64) -> Result<(Value, usize), StoreError> {
    let snapshot: Option<(i64, String)> = conn
        .query_row(
            "SELECT n, state FROM state_snapshots WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n <= ?2 ORDER BY n DESC LIMIT 1",
            params![id, n],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (from, text) = match snapshot {
        Some(found) => found,
        None => {
            let base: Option<String> =
                conn.query_row("SELECT state FROM sessions WHERE id = ?1", [id], |r| r.get(0)).optional()?;
            (0, base.ok_or_else(|| StoreError::NoSession(id.to_owned()))?)
        }
    };
    let size = text.len();
    let mut state = parse(&text)?;
    let mut stmt =
        conn.prepare_cached("SELECT patch FROM state_log WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n > ?2 AND n <= ?3 ORDER BY n")?;
    let patches = stmt.query_map(params![id, from, n], |r| r.get::<_, String>(0))?;
    for patch in patches {
        crate::patch::apply(&mut state, &patch?)
            .map_err(|e| corrupt(format!("a stored state change does not apply: {e}")))?;
    }
    Ok((state, size))
}

/// The last position written for a session.
pub(crate) fn last_position(conn: &Connection, id: &str) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "SELECT MAX(COALESCE((SELECT MAX(n) FROM state_log WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)), 0),
                    COALESCE((SELECT MAX(n) FROM state_snapshots WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)), 0))",
        [id],
        |r| r.get(0),
    )?)
}

/// Bytes of the patches after the session's last whole copy.
fn patch_bytes_since_snapshot(conn: &Connection, id: &str) -> Result<usize, StoreError> {
    let bytes: i64 = conn.query_row(
        "SELECT COALESCE(SUM(length(patch)), 0) FROM state_log WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)
           AND n > COALESCE((SELECT MAX(n) FROM state_snapshots WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)), 0)",
        [id],
        |r| r.get(0),
    )?;
    Ok(bytes as usize)
}

/// The session's latest state, as the store holds it.
pub(crate) fn current(conn: &Connection, id: &str) -> Result<Current, StoreError> {
    let n = last_position(conn, id)?;
    let (state, size) = rebuild(conn, id, n)?;
    Ok(Current { n, state, since_snapshot: patch_bytes_since_snapshot(conn, id)?, size })
}

/// Writes `state` as the session's next position after `current`: a patch, or a whole copy when
/// the patch outweighs the last copy or the patches since it outweigh it [`SNAPSHOT_AFTER`]
/// times. Nothing is written when nothing changed. Answers what is current after it — for the
/// caller to remember once its transaction commits.
pub(crate) fn write(conn: &Connection, id: &str, current: Current, state: &Value) -> Result<Current, StoreError> {
    let patch = json_patch::diff(&current.state, state);
    if patch.0.is_empty() {
        return Ok(current);
    }
    let patch = crate::patch::to_text(&patch);
    let n = current.n + 1;
    let since_snapshot = current.since_snapshot + patch.len();
    if patch.len() >= current.size || since_snapshot > SNAPSHOT_AFTER * current.size {
        let text = serde_json::to_string(state).expect("a state serializes");
        conn.execute("INSERT INTO state_snapshots (session_id, n, state) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3)", params![id, n, text])?;
        return Ok(Current { n, state: state.clone(), since_snapshot: 0, size: text.len() });
    }
    conn.execute(
        "INSERT INTO state_log (session_id, n, patch) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3)",
        params![id, n, patch],
    )?;
    Ok(Current { n, state: state.clone(), since_snapshot, size: current.size })
}

/// Forgets every position after `n` (an undo went back to it), which is then the latest.
pub(crate) fn truncate(conn: &Connection, id: &str, n: i64) -> Result<Current, StoreError> {
    conn.execute(
        "DELETE FROM state_log WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n > ?2",
        params![id, n],
    )?;
    conn.execute(
        "DELETE FROM state_snapshots WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n > ?2",
        params![id, n],
    )?;
    current(conn, id)
}

/// Keeps only what rebuilds position `n` and later (no undo point reaches further back): a whole
/// copy at `n`, and nothing before it.
pub(crate) fn settle(conn: &Connection, id: &str, current: &Current) -> Result<Current, StoreError> {
    let text = serde_json::to_string(&current.state).expect("a state serializes");
    conn.execute(
        "INSERT OR REPLACE INTO state_snapshots (session_id, n, state) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3)",
        params![id, current.n, text],
    )?;
    conn.execute(
        "DELETE FROM state_log WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n <= ?2",
        params![id, current.n],
    )?;
    conn.execute(
        "DELETE FROM state_snapshots WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND n < ?2",
        params![id, current.n],
    )?;
    Ok(Current { since_snapshot: 0, size: text.len(), ..current.clone() })
}
