//! What a person or a client can ask of an open session. Every front end sends the same
//! commands through the session host, and the host applies them the same way whichever sent
//! them: while a turn runs, a mode, model or effort change or a rename takes effect at its next
//! step; a prompt, a compaction or an undo waits for the turn to end; a cancel, steering words
//! and answers act at once.

use lembas_spec::Mode;
use serde::{Deserialize, Serialize};

use crate::Answer;

/// What goes with a prompt besides its words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attachment {
    /// A picture (base64), for a model that sees; a model that does not is told it was left out.
    Image {
        mime: String,
        data: String,
        /// Where it came from, when it has a name (a file, a URI).
        #[serde(default)]
        name: Option<String>,
    },
    /// A file, read when the prompt is sent as the `read` tool reads it — under the same rules,
    /// and recorded as a read, so a later read of the same lines is a stub.
    File { path: String },
    /// Text the client holds (an editor's buffer, an embedded resource), named by where it is
    /// from.
    Text { name: String, text: String },
}

impl Command {
    /// A prompt of words alone.
    pub fn prompt(text: impl Into<String>) -> Command {
        Command::Prompt { text: text.into(), attachments: Vec::new(), machine: false }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Start a turn with the person's words (after the running one, if one runs), and what
    /// they attached.
    Prompt {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
        /// The harness's words, not the person's (`acp.md`: a `session/prompt` marked
        /// `machine`): no hook, no title, no named model, no undo point of its own.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        machine: bool,
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
    /// How the agent speaks from the next message on: a personality's text (`None`: the
    /// default), told to the model as the personality note.
    SetPersonality {
        text: Option<String>,
    },
    Rename {
        title: String,
    },
    /// The person's own instructions from their account or the chat, by the name the prompt
    /// gives each ([`crate::ACCOUNT_INSTRUCTIONS`], [`crate::CHAT_INSTRUCTIONS`]): a change is
    /// told to the model on its next message, as a changed instruction file is; the prompt
    /// stays as it began.
    SetInstructions {
        given: Vec<(String, String)>,
    },
    /// The team's size setting (`team.md` §2), the main agent included; the main agent is told
    /// on its next message. Outside the bounds it is refused with them.
    SetAgents {
        min: u32,
        max: u32,
    },
    /// The person stops a subagent (by its name or its id) and its subtree, at once; the main
    /// agent is told. Answered by [`crate::Event::SubagentsStopped`], or an error.
    StopSubagent {
        name: String,
    },
    Compact,
    /// A shell command the person runs themselves (`!` in the TUI), judged by the session's
    /// rules as a `bash` call they asked for: a refusal stands, an ask counts as answered. Its
    /// output is shown as a `bash` call's, and goes with the next prompt for the model to read.
    Shell {
        line: String,
    },
    /// Take the last turn back.
    Undo,
    /// Go back to before turn `to` (1: the first the person started since the last compaction,
    /// as [`crate::Event::Turns`] lists them): its files and those of every turn after it put
    /// back (`files`), and those turns out of the conversation (`conversation`). Said as
    /// [`crate::Event::Undone`].
    Rewind {
        to: u32,
        files: bool,
        conversation: bool,
    },
    /// Make a new session from this one as it was before turn `to` (numbered as for
    /// [`Command::Rewind`]), this one kept as it is; with `files`, the project's files are put
    /// back to before that turn too. Answered by [`crate::Event::Forked`].
    Fork {
        to: u32,
        files: bool,
    },
    /// Put back, as they were before the turn, the files the last undo or rewind left because
    /// they changed after it (`FilesBack::kept`) — the person's changes to them go. Said as
    /// [`crate::Event::Undone`] (the conversation stands).
    OverwriteKept,
    /// Say the turns one can go back to ([`crate::Event::Turns`]).
    ReportTurns,
    /// Say what fills the context window ([`crate::Event::Context`]).
    ReportContext,
    /// Say where the MCP servers stand ([`crate::Event::McpServers`]).
    ReportMcp,
    /// Say the custom agents this session may start ([`crate::Event::AgentFiles`]).
    ReportAgentFiles,
    /// Say the notes as asked ([`crate::Event::Notes`]).
    ReportNotes {
        ask: crate::notes::NotesAsk,
    },
    /// Say the team as it stands: its tree ([`crate::Event::Team`], when it has subagents) and its
    /// room's messages numbered above `since` ([`crate::Event::Room`], said last). Answered at
    /// once, during a turn too.
    ReportTeam {
        #[serde(default)]
        since: u64,
    },
    /// Ask something of the background jobs (`_lembas/jobs`, `_lembas/job/*`). Answered by
    /// [`crate::Event::JobSaid`] or an error, at once, during a turn too.
    Job {
        ask: crate::jobs::JobAsk,
    },
    /// Find the files under the session's working folder whose paths hold `query` as a
    /// subsequence, best first, at most `limit` (`_lembas/files/search`, `@path` mentions).
    /// Answered by [`crate::Event::FilesFound`], at once, during a turn too.
    FindFiles {
        query: String,
        limit: usize,
    },
    /// Say the session again ([`crate::Event::Session`]) — not the spec's `announce`, a terminal
    /// sharing its session with a LLeMbas server.
    SaySession,
    /// Close the session: its events end. With `wait_for_jobs`, background jobs may first run
    /// that many seconds and their notes wake it (nobody comes back to it later).
    Close {
        wait_for_jobs: Option<u64>,
    },
}
