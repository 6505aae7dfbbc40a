//! A schedule's watch command run on this computer (`acp.md` `_lembas/monitor`), as a front end
//! asks the host for it.

use std::path::PathBuf;
use std::time::Duration;

use lembas_protocol::Mode;

/// What to watch: a command line, in a folder the front end admitted, judged in `mode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRequest {
    pub cwd: PathBuf,
    pub command: String,
    pub mode: Mode,
    pub timeout: Duration,
}

/// What the watch command came to (`_lembas/monitor`'s result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    /// `sha256:…` over the whole output and the exit status; `None` when it timed out.
    pub hash: Option<String>,
    /// The exit status; `None` on a signal or a timeout.
    pub exit: Option<i32>,
    pub timed_out: bool,
    /// The start of the output as text.
    pub excerpt: String,
    /// More output than the excerpt.
    pub truncated: bool,
    /// The output's whole length.
    pub bytes: u64,
    pub duration_ms: u64,
}

/// Why a watch command was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchRefused {
    /// The mode would ask about it, and a watch has nobody to ask; why it would.
    Asks(String),
    /// The rules refuse it; why.
    Denied(String),
    /// It could not be run.
    Failed(String),
}
