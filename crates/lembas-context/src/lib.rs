//! Context hygiene (`context.md`): what a tool result becomes when it is inserted into the
//! conversation, and never afterwards.
//!
//! Every measure here acts at insertion. Nothing already sent to the model is rewritten, so a
//! server's prompt cache holds for the whole session; the one deliberate break is compaction.
//!
//! - [`ResultId`] / [`IdCounter`]: `#0001`, `#0002`, … unique in a session, never reused.
//! - [`Ledger`]: the dedupe table (what the request being built carries) and the reads a
//!   compaction will cover. It turns a read, a tool's output or a file change into the text the
//!   model sees, plus the full text the session stores.
//! - [`cap()`]: the output cap with its elided line.
//! - [`recall()`]: a stored result shown again.
//! - [`reasoning`]: which assistant messages carry their reasoning back (§8).

mod cap;
mod diff;
mod id;
mod ledger;
pub mod note;
mod read;
pub mod reasoning;
mod recall;

pub use cap::cap;
pub use diff::{FileChange, change_result, patch_result, unified_hunks};
pub use id::{IdCounter, ResultId};
pub use ledger::{Inserted, Ledger};
pub use read::{ReadWindow, WindowError, count_lines, read_window};
pub use recall::recall;

use sha2::{Digest, Sha256};

/// The full SHA-256 of `bytes` in lowercase hex: what decides whether a file is unchanged.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The short hash a bracket shows (`sha_digits` hex digits of the full one).
pub fn short_sha(full: &str) -> &str {
    let digits = lembas_spec::loop_spec().context.sha_digits;
    &full[..digits.min(full.len())]
}
