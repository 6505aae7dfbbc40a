//! Text kept once however often it recurs: a session's system prompt and tool list (the same
//! ~13 KB for most sessions of a project, and for every subagent), by hash; and a tool result
//! too long to keep plainly, deflated.

use std::io::{Read, Write};

use rusqlite::{Connection, params};
use sha2::{Digest, Sha256};

use crate::StoreError;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS prefixes (
    hash TEXT PRIMARY KEY,
    text TEXT NOT NULL
) WITHOUT ROWID;
";

/// Makes the table of shared texts.
pub(crate) fn make(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)
}

/// Keeps `text` once; answers the hash a session row refers to it by.
pub(crate) fn keep_prefix(conn: &Connection, text: &str) -> Result<String, StoreError> {
    let hash = hex::encode(Sha256::digest(text.as_bytes()));
    conn.execute("INSERT OR IGNORE INTO prefixes (hash, text) VALUES (?1, ?2)", params![hash, text])?;
    Ok(hash)
}

/// Drops the prompts and tool lists no session refers to any more.
pub(crate) fn forget_unused_prefixes(conn: &Connection) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM prefixes WHERE hash NOT IN (
             SELECT prompt_ref FROM sessions WHERE prompt_ref IS NOT NULL
             UNION SELECT tools_ref FROM sessions WHERE tools_ref IS NOT NULL)",
        [],
    )?;
    Ok(())
}

/// A result longer than this is kept deflated (tool output compresses several times over).
pub(crate) const PACK_ABOVE: usize = 16 * 1024;

/// `text` deflated.
pub(crate) fn pack(text: &str) -> Vec<u8> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(text.as_bytes()).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// What [`pack`] made, as text again.
pub(crate) fn unpack(packed: &[u8]) -> Result<String, StoreError> {
    let mut text = String::new();
    flate2::read::DeflateDecoder::new(packed)
        .read_to_string(&mut text)
        .map_err(|e| StoreError::Corrupt(format!("a stored result does not inflate: {e}")))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_result_comes_back_whole_and_smaller() {
        let text: String = (0..5000).map(|n| format!("line {n}: cargo test passed\n")).collect();
        let packed = pack(&text);
        assert!(packed.len() * 5 < text.len(), "{} bytes packed from {}", packed.len(), text.len());
        assert_eq!(unpack(&packed).unwrap(), text);
        assert!(matches!(unpack(b"not deflate"), Err(StoreError::Corrupt(_))));
    }
}
