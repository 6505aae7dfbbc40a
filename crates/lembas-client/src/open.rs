//! Opening a session from a front end that chooses for each one (ACP: the editor's or the
//! LLeMbas chat's model, mode and servers; the link next): what it asks for, what it gets back,
//! and the host it asks. The engine fills in the rest from the person's set-up.

use lembas_protocol::team::TeamTree;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use lembas_protocol::{Mode, ModelInfo};
use serde_json::Value;

use crate::{Failure, Opened, SessionHandle, Sessions};

/// The editor's view of the files, when the session runs in one that offers it: its unsaved
/// buffers are what the agent reads, and its writes go through the editor. Each call answers
/// `None` when the editor does not do that, and the disk is used. Called from blocking threads
/// (file tools run off the async runtime).
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    fn read(&self, path: &Path) -> Option<Result<String, String>>;
    fn write(&self, path: &Path, content: &str) -> Option<Result<(), String>>;
}

/// What the client chose for a session, over the person's own set-up.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    pub mode: Option<Mode>,
    /// The client shows files (`show` is offered: `acp.md` `_lembas/show`).
    pub display: bool,
    /// The widest mode the session may ever run in (a remote session's `remote.max_mode`):
    /// whatever mode is chosen, now or later, is lowered to it.
    pub widest_mode: Option<Mode>,
    /// A model of the login's, by id or by the name it is shown with.
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The team's size setting (`min`, `max`).
    pub agents: Option<(u32, u32)>,
    /// No subagents at all.
    pub subagents_off: bool,
    /// The person's earlier words of a chat carried on here (`acp.md` `said`).
    pub said: Vec<String>,
    /// A LLeMbas server's client opens it over the link: its memory lands in that chat's data
    /// group (`_meta.lembas.scope`), not the device's own.
    pub scoped: bool,
    /// The knowledge bases the conversation is limited to (`_meta.lembas.library`); none: all.
    pub knowledge_scope: Option<Vec<String>>,
    /// A chat's personality (`_meta.lembas.personalization`): its text, or none; unsent: the
    /// device's own.
    pub personality: Option<Option<String>>,
    /// A chat's instructions (its personalization's, its system prompt), by the name the prompt
    /// gives them; unsent: the device's own.
    pub given_instructions: Option<Vec<(String, String)>>,
}

/// How a front end wants a session opened.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    /// The folder the client names: the project is the one it lies in.
    pub cwd: PathBuf,
    /// A stored session to open again, by id; `None`: a new one.
    pub resume: Option<String>,
    /// Whether a person is there to answer what the session asks.
    pub attended: bool,
    pub choices: Choices,
    /// MCP servers the client brings (ACP's `McpServer` entries, as JSON); one replaces a
    /// configured server of the same name.
    pub mcp_servers: Vec<Value>,
    pub editor_files: Option<Arc<dyn EditorFiles>>,
}

/// A session opened for a front end, and what it runs with.
pub struct OpenedSession {
    pub opened: Opened,
    pub mode: Mode,
    pub model: ModelInfo,
    /// The login's models it may move to.
    pub models: Vec<ModelInfo>,
    pub effort: Option<String>,
    pub agents: (u32, u32),
}

impl std::fmt::Debug for OpenedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedSession").field("id", &self.opened.handle.id()).field("mode", &self.mode).finish()
    }
}

/// The host as a front end that opens sessions itself reaches it.
pub trait Host: Sessions {
    /// Opens a session and starts its task (within a tokio runtime).
    fn open(&self, request: OpenRequest) -> Result<OpenedSession, Failure>;
    /// The handle of a session open here, if it is.
    fn handle(&self, id: &str) -> Option<SessionHandle>;
    /// Whether another lembas (a terminal, another editor) holds the session open now.
    fn held_elsewhere(&self, id: &str) -> bool;
    /// The team tree a stored session kept (`None`: it had no subagent).
    fn kept_tree(&self, id: &str) -> Result<Option<TeamTree>, Failure>;
    /// The id of the last turn a stored session finished, if it kept one.
    fn last_turn(&self, id: &str) -> Result<Option<String>, Failure>;
    /// Ends what the sessions opened here started besides themselves (their MCP servers), once
    /// the front end is done.
    fn shut_down(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
    /// Runs a schedule's watch command here, judged as `bash` would be in its folder and mode,
    /// and only when that allows it without asking (`acp.md` *Monitor mode*).
    fn watch(
        &self,
        request: crate::WatchRequest,
    ) -> Pin<Box<dyn Future<Output = Result<crate::Watched, crate::WatchRefused>> + Send + '_>>;
}
