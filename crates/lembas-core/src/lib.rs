//! The engine: runs a session's turns and says what happens as events.
//!
//! Every front end — headless, the terminal UI, the ACP server — opens sessions through the same
//! [`Host`], sends them [`Command`]s and renders the same [`Event`]s; a session itself is private
//! to the engine (its own tests drive it through the host too).
//!
//! What it keeps to, from the spec:
//! - **The still prefix** (`context.md` §10): the system prompt is made once per session, stored,
//!   and sent byte for byte; no clock is in it; what changes goes as a `<session-note>` on the
//!   next message that starts a turn; the tool list is fixed for the session.
//! - **Context hygiene**: every result is inserted through `lembas-context` (ids, brackets,
//!   stubs, caps, diffs) and stored in full; nothing already sent is rewritten.
//! - **Reasoning** goes back during its turn only (§8).
//! - **The loop** (`loop.json`): a reply's calls run together, at most 4 at once, calls on one
//!   file in order; a tool's error is its result; the step backstop ends a prompt with the
//!   wrap-up request.
//! - **The store**: a step is written whole, so a killed process loses nothing answered.

mod agents;
mod approve;
mod asks;
mod attach;
mod batches;
mod cache_watch;
mod calls;
mod changes;
mod compaction;
mod config;
mod context_use;
mod counted;
mod engine_tools;
mod finding;
mod fit;
mod handlers;
mod hooks;
mod host;
mod insert;
mod job_asks;
mod judging;
mod mcp;
pub use session::memory::{NO_MEMORY_WHY, memory_said};
mod offer;
mod opener;
mod opening;
mod person;
mod phase;
mod prefix;
mod prepare;
mod preview;
mod prompt;
mod rewind;
mod room;
mod sandboxing;
mod session;
mod sink;
mod transcript;
mod turn;
mod undo;
mod waking;
mod watching;
mod worktree;

pub use approve::{Approver, Nobody};
pub use config::{MeasureKeeper, WebSetup};
pub use host::{Host, OpenSession, Opened, SessionHandle, Start};
pub use lembas_mcp::{InstanceMcp, McpHub, ServerEntry};
pub use lembas_protocol::{
    Answer, Approval, ApprovalRequest, Ask, Attachment, Command, ContextShare, DoneReason, Event, FileDiff, Found,
    Plan, PlanPhase, PlanVerdict, Question, Reply, Said, ServerState, ServerStatus, Status, StoredSession, Submission,
    SubmissionId, Task, TurnUsage,
};
pub use lembas_protocol::{Mode, ModelInfo, MonthUsage, Progress, progress, tools};
pub use lembas_tools::{EditorFiles, SkillPlaces};
pub use mcp::connect_mcp;
pub use opener::{Opener, ProjectOf, ProjectSetup, RootOf};
pub use prompt::{Instruction, PromptParts, instructions, system_prompt, title_from};
pub use session::{SessionConfig, local_today};
pub use transcript::stored_transcript;

/// Checks a team size setting against the bounds (`team.md` §2): refused with them, never
/// clamped.
pub use lembas_protocol::agents::check as check_agents;

/// Why the engine could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] lembas_store::StoreError),
    #[error("no session {0}")]
    NoSession(String),
    #[error("the stored session cannot be read: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Model(#[from] lembas_model::ModelError),
    #[error("{0}")]
    Compaction(String),
    #[error("{0}")]
    Undo(String),
    /// The model's window cannot hold even the smallest offer (nothing was sent).
    #[error("{0}")]
    Window(String),
    /// The person's UserPromptSubmit hook blocked the prompt (it was not sent, nor kept).
    #[error("The prompt was blocked by your hook: {0}")]
    Blocked(String),
}

/// The step backstop of a prompt (`loop.json` `steps.max`), unless the configuration sets one.
pub fn default_max_steps() -> u32 {
    lembas_spec::loop_spec().steps.max
}

pub(crate) use lembas_progress::now_ms;
