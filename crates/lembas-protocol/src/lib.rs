//! The seam between lembas' engine and its front ends — the terminal UI, headless runs, the
//! ACP server and the link: the [`Event`]s an open session says, and the [`Command`]s it
//! takes. Types only (serde, the spec's own types); no runtime, no I/O.

pub mod agents;
mod ask;
mod command;
mod event;
pub mod jobs;
pub mod notes;
mod personality;
mod plan;
pub mod schedules;
mod stored;
mod submission;
pub mod team;
pub mod tools;
mod undo;
mod usage;

pub use ask::{Answer, Approval, ApprovalRequest, Ask, PlanVerdict, Question, Reply, Showing, SubagentRef, card};
pub use command::{Attachment, Command};
pub use event::{ContextShare, DoneReason, Event, FileDiff, ServerState, ServerStatus, ToolOutcome, TurnUsage};
pub use lembas_models::ModelInfo;
pub use lembas_progress::{self as progress, Progress};
pub use lembas_spec::Mode;

/// The harness spec this build implements (`harness_spec` of `initialize` and `_lembas/hello`).
pub const HARNESS_SPEC: &str = lembas_spec::VERSION;
pub use personality::{ACCOUNT_INSTRUCTIONS, CHAT_INSTRUCTIONS, PERSONALITIES, personality_text};
pub use plan::{Plan, PlanPhase, Status, Task};
pub use stored::{Found, StoredSession};
pub use submission::{Said, Submission, SubmissionId};
pub use undo::{FilesBack, LEFT_AS_ASKED, TurnPoint, fork_said, turns_said, undo_said};
pub use usage::MonthUsage;
