//! What a person or a client can ask of an open session. Every front end sends the same
//! commands through the session host, and the host applies them the same way whichever sent
//! them: while a turn runs, a mode, model or effort change or a rename takes effect at its next
//! step; a prompt, a compaction or an undo waits for the turn to end; a cancel, steering words
//! and answers act at once.

use lembas_spec::Mode;
use serde::{Deserialize, Serialize};

use crate::Answer;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Start a turn with the person's words (after the running one, if one runs).
    Prompt {
        text: String,
    },
    /// Words for the running turn, delivered at its next step (a prompt when none runs).
    Steer {
        text: String,
    },
    /// Stop the running turn.
    Cancel,
    /// Answer what the session asked ([`crate::Event::Ask`]).
    Answer {
        id: u64,
        answer: Answer,
    },
    SetMode {
        mode: Mode,
    },
    /// Move to another of the login's models, by id.
    SetModel {
        model: String,
    },
    /// The effort level for the next requests; `None`: the model's start level.
    SetEffort {
        level: Option<String>,
    },
    Rename {
        title: String,
    },
    Compact,
    /// Take the last turn back.
    Undo,
    /// Say what fills the context window ([`crate::Event::Context`]).
    ReportContext,
    /// Say where the MCP servers stand ([`crate::Event::McpServers`]).
    ReportMcp,
    /// Say the session again ([`crate::Event::Session`]).
    Announce,
    /// Close the session: its events end. With `wait_for_jobs`, background jobs may first run
    /// that many seconds and their notes wake it (nobody comes back to it later).
    Close {
        wait_for_jobs: Option<u64>,
    },
}
