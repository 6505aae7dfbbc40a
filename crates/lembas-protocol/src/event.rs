//! What the engine says as a session runs: one typed event vocabulary (`acp.md`
//! `_lembas/event`), serialized with its `type`, so the same values cross the ACP link
//! unchanged and every front end renders the same thing. Every change of a session's state is
//! said by one, so what a front end shows is a function of the events it received.

use lembas_progress::Progress;
use lembas_spec::Mode;
use serde::{Deserialize, Serialize};

use crate::{Ask, Plan};

/// One category's part of the context window (what `/context` draws).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextShare {
    pub category: String,
    pub tokens: u64,
}

/// What came of a tool call, said for a person by the tool's own handler, so that no client
/// reads the text the model was sent to draw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// One line: "Read 120 lines", "3 matches in 2 files", "exit 1", "You answered: postgres".
    pub summary: String,
    /// It went wrong: the call failed, or a command ended badly.
    #[serde(default)]
    pub went_wrong: bool,
    /// The result as a person reads it: without its id bracket, and a command's output without
    /// the line saying how it ended (the summary says it).
    #[serde(default)]
    pub body: String,
    /// The body is shown under the summary (a change's diff, a command's output); otherwise only
    /// where the whole transcript is read.
    #[serde(default)]
    pub show_body: bool,
    /// The body is shown whole, never folded: a refusal, whose part the person needs (the rule
    /// to add, the way round) is often its last.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole: bool,
}

impl ToolOutcome {
    /// The longest summary line, in characters; a longer one is cut with `…`.
    pub const SUMMARY_CHARS: usize = 100;

    /// The first line of `text` that says something, cut to a summary's length.
    pub fn summary_line(text: &str) -> String {
        let line = Self::first_said(text);
        let mut summary: String = line.chars().take(Self::SUMMARY_CHARS).collect();
        if line.chars().count() > Self::SUMMARY_CHARS {
            summary.push('…');
        }
        summary
    }

    /// The first line of `text` that says something.
    fn first_said(text: &str) -> &str {
        text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
    }

    /// A call refused before it ran: its reason whole — its first line as the summary (uncut: the
    /// part a person needs may be at its end), the rest shown under it.
    pub fn refused(reason: &str) -> ToolOutcome {
        let summary = Self::first_said(reason).trim().to_owned();
        let said_all = reason.trim() == summary;
        ToolOutcome { summary, went_wrong: true, body: reason.to_owned(), show_body: !said_all, whole: true }
    }
}

/// Where an MCP server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    Connecting,
    Ready { tools: usize },
    Failed { reason: String },
}

/// One MCP server of a session, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub name: String,
    #[serde(flatten)]
    pub state: ServerState,
}

/// One file a call changed: its absolute path, and its text before (none: created) and after
/// (none: deleted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// How a prompt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoneReason {
    /// The model answered.
    Answered,
    /// The step backstop or a budget ended it with the wrap-up answer.
    Limit,
    /// The person (or a signal) stopped it.
    Cancelled,
    /// It could not go on: the error event says why.
    Failed,
}

/// Tokens over one prompt's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnUsage {
    pub input: u64,
    pub output: u64,
    /// Of `input`, what the server had cached (when it says).
    pub cached: u64,
}

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session a prompt runs in.
    Session {
        id: String,
        title: String,
        model: String,
        mode: Mode,
        resumed: bool,
        /// Whether commands run in the OS sandbox: `active`, `off` (the person's setting),
        /// `landlock only: <why>` (nothing inside a writable place can be kept read-only), or
        /// `unavailable: <why>` (the judgement alone stands).
        #[serde(default)]
        sandbox: String,
    },
    /// The words that started a turn: the person's, or the harness's own (`machine`: a job's
    /// note waking an idle session).
    Prompt {
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        machine: bool,
    },
    /// A new step (one model request) began.
    Step {
        n: u32,
    },
    /// Reply text as it streams.
    Text {
        delta: String,
    },
    /// Reasoning as it streams.
    Reasoning {
        delta: String,
    },
    /// A tool call starts.
    ToolStart {
        call_id: String,
        tool: String,
        title: String,
        args: serde_json::Value,
        /// The paths the call reaches, resolved (absolute).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
    },
    /// A tool call ended; `text` is what the model was sent, `outcome` what a person reads.
    ToolEnd {
        call_id: String,
        tool: String,
        result_id: Option<String>,
        text: String,
        is_error: bool,
        #[serde(default)]
        outcome: ToolOutcome,
        /// The files the call changed, whole, for a client that draws a diff.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        diffs: Vec<FileDiff>,
    },
    /// A tool call was refused before it ran.
    ToolDenied {
        call_id: String,
        tool: String,
        reason: String,
    },
    /// One request's tokens.
    Usage {
        input: u64,
        output: u64,
        cached: Option<u64>,
    },
    /// The team tree as it stands now (`subagents.md` §12's data), sent when it changes.
    Team {
        tree: crate::team::TeamTree,
    },
    /// The team's room as it stands, every message oldest first (asked for with `report_team`;
    /// `None`: the session has no team).
    Room {
        messages: Option<Vec<crate::team::RoomMessage>>,
    },
    /// The subagents the person stopped (`Command::StopSubagent`), by id: the one named and
    /// those under it.
    SubagentsStopped {
        ids: Vec<String>,
    },
    /// How many background jobs run now (sent when the number changes).
    Jobs {
        running: usize,
        /// Of them, subagents working in the background.
        #[serde(default)]
        subagents: usize,
    },
    /// A background job began, has news (new output, a subagent's step: at most four a second
    /// per job) or ended (`acp.md` `job`).
    Job {
        state: crate::jobs::JobChange,
        job: crate::jobs::JobInfo,
    },
    /// The note about a job was given to the model: at the next step of a turn, or as the
    /// `machine` turn whose prompt follows (`acp.md` `job_note`).
    JobNote {
        #[serde(rename = "jobId")]
        job_id: String,
        text: String,
    },
    /// The answer to [`crate::Command::Job`].
    JobSaid {
        said: crate::jobs::JobSaid,
    },
    /// The answer to [`crate::Command::FindFiles`]: the folder the paths are relative to (the
    /// session's working folder, which `@path` mentions resolve against) and the paths.
    FilesFound {
        root: String,
        files: Vec<String>,
    },
    /// What fills the context window, by category (asked for with `Session::report_context`);
    /// `window` 0: nobody said how large the window is.
    Context {
        window: u64,
        shares: Vec<ContextShare>,
        /// What a small window left out of the session's offer ("small window: team and
        /// subagents not offered"), or that the window is too small for lembas at all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offer: Option<String>,
        /// The last request the server read again though it should have had it cached: how
        /// much, and where the prefix changed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_miss: Option<String>,
    },
    /// The progress line's object; `null` when the session does nothing.
    Phase {
        progress: Option<Progress>,
    },
    /// The plan changed (by the model's plan tools).
    Plan {
        plan: Plan,
    },
    /// The conversation was compacted: the model's summary it goes on from, and the table of
    /// the reads that summary covers.
    Compacted {
        #[serde(default)]
        summary: String,
        table: String,
    },
    /// The permission mode changed.
    Mode {
        mode: Mode,
    },
    /// The model, or its effort level, changed.
    Model {
        model: String,
        /// The effort level asked for; `None`: the model's start level.
        #[serde(default)]
        effort: Option<String>,
    },
    /// The team's size setting changed (`team.md` §2): at least `min` agents, at most `max`, the
    /// main agent included.
    Agents {
        min: u32,
        max: u32,
    },
    /// The session's title changed (given from the first prompt, or renamed).
    Title {
        title: String,
    },
    /// How the agent speaks changed (`Command::SetPersonality`): the personality's text, told to
    /// the model on its next message (`None`: the default).
    Personality {
        text: Option<String>,
    },
    /// The model's effort levels narrowed (its server refused one and named those it takes).
    Levels {
        levels: Vec<String>,
    },
    /// The custom agents the session may start, read from agent files as it started.
    AgentFiles {
        agents: Vec<crate::agents::AgentFileInfo>,
    },
    /// The notes' answer to a front end's [`crate::notes::NotesAsk`].
    Notes {
        said: crate::notes::NotesSaid,
    },
    /// The session's MCP servers and where each stands (asked for with `report_mcp`).
    McpServers {
        servers: Vec<ServerStatus>,
    },
    /// Something worth saying once that is not an error (the project root's real spelling).
    Notice {
        message: String,
    },
    /// Words the person added during a turn, delivered to the model at a step boundary (until
    /// then a front end shows them as queued under the running turn).
    Steered {
        text: String,
    },
    /// Words added during a turn that was stopped before they were delivered: given back to
    /// the person (the terminal UI puts them in the input box), not sent.
    SteerReturned {
        texts: Vec<String>,
    },
    /// The last turn was taken back (or, by a rewind, a turn and the `later` ones after it):
    /// its words (to offer again; `None`: the conversation stood, the turn being behind a
    /// compaction) and what came of its files ([`crate::undo_said`] says it).
    Undone {
        prompt: Option<String>,
        #[serde(default)]
        later: u32,
        files: crate::FilesBack,
    },
    /// The project's snapshot store after a turn kept its snapshots: its size on disk and the
    /// most it may hold (older snapshots are dropped past it), in bytes.
    SnapshotStore {
        bytes: u64,
        cap: u64,
    },
    /// The turns a rewind can go back to, oldest first (turn 1 first).
    Turns {
        turns: Vec<crate::TurnPoint>,
    },
    /// A new session was made from this one as it was before a turn ([`crate::Command::Fork`]);
    /// this one stays as it is. `prompt`: that turn's words, to offer again in the new one.
    Forked {
        id: String,
        prompt: String,
        files: crate::FilesBack,
    },
    /// Something a subagent did: its own event, with the `task` call it works for and the
    /// description it goes by.
    Subagent {
        call_id: String,
        agent: String,
        /// The background job it runs as, when it is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job: Option<String>,
        event: Box<Event>,
    },
    /// The session waits for the person: an approval, a question or a plan. Answered with
    /// [`crate::Command::Answer`] and this `id`; every front end attached sees it.
    Ask {
        id: u64,
        ask: Ask,
    },
    /// An ask was answered (here or by another front end), or given up: its card goes.
    Answered {
        id: u64,
    },
    Error {
        message: String,
    },
    /// The session closed: nothing more comes.
    Closed,
    /// The prompt ended. `text` is the final answer (empty when there was none); `session` the
    /// session's id and `usage` the prompt's tokens over all its requests, for a script.
    Done {
        reason: DoneReason,
        text: String,
        steps: u32,
        #[serde(default)]
        session: String,
        #[serde(default)]
        usage: TurnUsage,
    },
}
