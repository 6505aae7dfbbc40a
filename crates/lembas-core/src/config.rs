//! What a session needs from the outside: the store, the model and the login's others, the
//! mode and rules, the approver, MCP servers, skills, limits — one configuration a new and a
//! resumed session are made from alike.

use std::path::PathBuf;
use std::sync::Arc;

use lembas_model::ModelClient;
use lembas_models::ModelInfo;
use lembas_permissions::{Mode, RuleSet};
use lembas_store::Store;

use crate::approve::Approver;

/// Everything a session needs from the outside.
#[derive(Clone)]
pub struct SessionConfig {
    pub store: Arc<Store>,
    pub client: ModelClient,
    pub model: ModelInfo,
    /// The effort level asked for (`None`: the model's start level).
    pub effort: Option<String>,
    pub mode: Mode,
    /// Its client shows files in a viewer beside the conversation (`show` is offered).
    pub display: bool,
    /// The widest mode the session may ever run in, whoever asks for a wider one (a remote
    /// session's `remote.max_mode`); `None`: any.
    pub widest_mode: Option<Mode>,
    pub approver: Arc<dyn Approver>,
    /// The permission rules: the defaults, then the person's global ones (and a trusted
    /// project's).
    pub rules: RuleSet,
    /// lembas' own configuration folder, which no tool may read or write.
    pub lembas_config: Option<PathBuf>,
    /// lembas' other folders (sessions, logs, job output), which no tool may read or write.
    pub lembas_private: Vec<PathBuf>,
    /// Folders no listing or search walks into (`Workspace::private`).
    pub walk_private: Arc<[PathBuf]>,
    /// Commands run in the OS sandbox (where the kernel can).
    pub sandbox: bool,
    /// More folders commands may write, besides what their mode gives.
    pub sandbox_writable: Vec<PathBuf>,
    /// Whether commands may use the network (`[sandbox] network`); `None`: all modes but plan.
    pub sandbox_network: Option<bool>,
    /// The program that makes the sandbox's mounts (lembas itself); `None`: Landlock alone.
    pub sandbox_launcher: Option<PathBuf>,
    /// What the session's commands may read, kept between them (shared with its subagents).
    pub read_grants: std::sync::Arc<lembas_tools::sandbox::ReadGrants>,
    /// Commands that may read the person's credentials in the sandbox (`[sandbox]
    /// credentials`, bash rule patterns).
    pub sandbox_credentials: Vec<String>,
    /// Where jobs keep their output (each session in a folder of its own below it).
    pub jobs_dir: PathBuf,
    /// Where the projects' snapshots are kept (a git store per project); by default beside
    /// `jobs_dir`.
    pub snapshots_dir: PathBuf,
    pub snapshot_limits: lembas_snapshot::Limits,
    /// The editor's files, when the session runs in an editor that offers them (ACP).
    pub editor_files: Option<Arc<dyn lembas_tools::EditorFiles>>,
    pub max_steps: u32,
    /// A prompt's token budget (input and output over its requests), if any.
    pub budget_tokens: Option<u64>,
    /// A prompt's time budget, if any.
    pub budget_seconds: Option<u64>,
    /// The window the person configured for a model whose server does not say one: a
    /// statement, used as one. `None`: the window is unknown until the server says otherwise.
    pub context_window: Option<u64>,
    /// Compaction starts at this share of the window.
    pub compact_at: f64,
    pub global_instructions: Option<PathBuf>,
    pub extra_instructions: Vec<String>,
    /// Instructions that come with the session rather than from a file, by the name the prompt
    /// gives them: the person's own on their LLeMbas account, a chat's system prompt.
    pub given_instructions: Vec<(String, String)>,
    pub user_home: Option<PathBuf>,
    /// Today's date as the person reads it (`YYYY-MM-DD`); a function so tests can move it.
    pub today: Arc<dyn Fn() -> String + Send + Sync>,
    /// The MCP servers the session is configured with, connecting or connected.
    pub mcp: Option<Arc<lembas_mcp::McpHub>>,
    /// The models the person may use (the login's), for subagents; the session's own model
    /// counts whether or not it is listed.
    pub models: Vec<ModelInfo>,
    /// Subagents are enabled (`subagents.md` §4 rule 1): `task` and the team may be offered at
    /// all.
    pub subagents: bool,
    /// The size setting `agents {min, max}` (`team.md` §2): the main agent included.
    pub agents: (u32, u32),
    /// Where skills are found, and where new ones go.
    pub skills: lembas_tools::SkillPlaces,
    /// The custom agents `task` and `team_add` may start, found as the session starts.
    pub agent_files: Arc<[lembas_tools::AgentFile]>,
    /// The person's hooks (config.toml's, and a trusted project's).
    pub hooks: Arc<lembas_hooks::Hooks>,
    /// The web tools' limits and search provider.
    pub web: WebSetup,
    /// Where the project's notes and the person's are kept.
    pub notes: lembas_library::Notes,
    /// How the main agent speaks (a personality's text), when the person chose one.
    pub personality: Option<String>,
    /// The person's knowledge bases (none: not set up here).
    pub knowledge: Option<Arc<lembas_knowledge::Knowledge>>,
    /// The knowledge bases this conversation is limited to (a LLeMbas chat's, `lembas run --kb`):
    /// searched alone, and named in the prompt (`knowledge_scope`). None: every base.
    pub knowledge_scope: Option<Vec<String>>,
    /// The person's memory on their LLeMbas instance (`acp.md` *Memory*): a login whose token
    /// may reach it. None: there is no memory, and no `memory` tool.
    pub memory: Option<Arc<lembas_mcp::InstanceMcp>>,
    /// A link client opened the session: its memory calls carry the session's id as their
    /// scope (`_meta.lembas.scope`), landing in that chat's data group.
    pub memory_scoped: bool,
    /// The person's earlier messages of a chat a new session carries on (a LLeMbas chat that
    /// moved to this device, `acp.md` `said`): counted as typed in the session, for the models
    /// they name (`subagents.md` §2).
    pub said: Vec<String>,
    /// Keeps a model's measure of bytes per token, as a session first measured it against its
    /// server's count (by model id), for the next session's first request (the room in the window).
    pub measured: Option<MeasureKeeper>,
}

/// Where a measure of a model's tokens is kept: the login, in the CLI.
pub type MeasureKeeper = Arc<dyn Fn(&str, f64) + Send + Sync>;

impl SessionConfig {
    /// The login's model `name` names (its id, or the name people see); an unknown one is
    /// refused naming the login's models.
    pub(crate) fn model_named(&self, name: &str) -> Result<ModelInfo, String> {
        let found = self.models.iter().chain([&self.model]).find(|m| m.is_named(name));
        found.cloned().ok_or_else(|| {
            let known: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
            format!("no model {name}; the login's models: {}", known.join(", "))
        })
    }

    /// lembas' own folders (its configuration, sessions, logs): hidden from commands, never shown.
    pub(crate) fn own_folders(&self) -> impl Iterator<Item = &PathBuf> {
        self.lembas_private.iter().chain(&self.lembas_config)
    }

    /// Where the person's credentials are (`~/.ssh`, `~/.aws`, …).
    pub(crate) fn credential_places(&self) -> Vec<PathBuf> {
        let places = self.user_home.as_deref().map(lembas_permissions::credentials).unwrap_or_default();
        places.into_iter().map(|(place, _)| place).collect()
    }

    /// `mode`, lowered to the widest the session may run in.
    pub(crate) fn bounded(&self, mode: Mode) -> Mode {
        self.widest_mode.map_or(mode, |widest| mode.at_most(widest))
    }

    /// A configuration with lembas' defaults for everything not given: nobody to ask, the
    /// default rules, the spec's step backstop, no budgets, compaction at 85 % of the window,
    /// no instruction files beyond the project's, today's local date.
    pub fn new(
        store: Arc<Store>,
        client: ModelClient,
        model: ModelInfo,
        mode: Mode,
        jobs_dir: PathBuf,
        context_window: Option<u64>,
    ) -> Self {
        SessionConfig {
            store,
            client,
            model,
            effort: None,
            mode,
            widest_mode: None,
            display: false,
            approver: Arc::new(crate::Nobody),
            rules: RuleSet::defaults(),
            lembas_config: None,
            lembas_private: Vec::new(),
            walk_private: Arc::new([]),
            sandbox: true,
            sandbox_writable: Vec::new(),
            sandbox_network: None,
            sandbox_launcher: None,
            read_grants: Default::default(),
            sandbox_credentials: Vec::new(),
            snapshots_dir: jobs_dir.with_file_name("snapshots"),
            snapshot_limits: Default::default(),
            jobs_dir,
            editor_files: None,
            max_steps: crate::default_max_steps(),
            budget_tokens: None,
            budget_seconds: None,
            context_window,
            compact_at: 0.85,
            global_instructions: None,
            extra_instructions: Vec::new(),
            given_instructions: Vec::new(),
            user_home: None,
            today: Arc::new(local_today),
            mcp: None,
            models: Vec::new(),
            subagents: true,
            agents: lembas_team::default_setting(),
            said: Vec::new(),
            skills: Default::default(),
            agent_files: Arc::from(Vec::new()),
            hooks: Arc::default(),
            web: WebSetup::default(),
            notes: lembas_library::Notes::default(),
            knowledge: None,
            knowledge_scope: None,
            memory: None,
            memory_scoped: false,
            personality: None,
            measured: None,
        }
    }
}

/// What the web tools run with: a fetch's limits, and the search provider (none: `web_search`
/// is not offered).
#[derive(Debug, Clone, Default)]
pub struct WebSetup {
    pub limits: lembas_web::Limits,
    pub search: Option<Arc<lembas_web::SearchProvider>>,
    /// Who reads pages and PDFs: `lembas-reader` beside lembas.
    pub reader: lembas_web::Reader,
}

impl std::fmt::Debug for SessionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionConfig").field("model", &self.model.id).field("mode", &self.mode).finish_non_exhaustive()
    }
}

/// The person's local date.
pub fn local_today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}
