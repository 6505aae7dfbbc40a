//! What every command reads at start: the folders, the configuration, the login, the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lembas_config::{Config, Home, Login, Standing};
use lembas_core::SessionConfig;
use lembas_model::{ClientConfig, Learned, ModelClient};
use lembas_models::ModelInfo;
use lembas_permissions::{Mode, RuleSet, Source};
use lembas_store::Store;

use crate::Failure;
use crate::cli::exit;

pub fn home() -> Result<Home, Failure> {
    Home::from_env().map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}

pub fn config(home: &Home) -> Result<Config, Failure> {
    let config = Config::load(home).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
    // Values out of their range are refused where they are written, as a flag's would be.
    if let Some(share) = config.compact_at
        && !(0.5..=0.95).contains(&share)
    {
        return Err(Failure::new(
            exit::USAGE,
            format!("{}: compact_at = {share} is outside 0.5–0.95", config_place(home, "compact_at")),
        ));
    }
    if let Some(agents) = &config.agents
        && let Err(why) = lembas_core::check_agents(agents.min, agents.max)
    {
        return Err(Failure::new(exit::USAGE, format!("{}: {why}", config_place(home, "agents"))));
    }
    if let Some(mode) = &config.mode
        && Mode::parse(mode).is_none()
    {
        return Err(Failure::new(
            exit::USAGE,
            format!("{}: no mode {mode}: use manual, edit, auto or plan", config_place(home, "mode")),
        ));
    }
    Ok(config)
}

/// `config.toml:LINE` for the line that sets `key` at the top level (just the file when it
/// cannot be found), for messages about a value written there.
pub fn config_place(home: &Home, key: &str) -> String {
    let file = home.config_file();
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let line = text.lines().position(|l| {
        let l = l.trim_start();
        l.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='))
    });
    match line {
        Some(n) => format!("{}:{}", file.display(), n + 1),
        None => file.display().to_string(),
    }
}

/// The configuration's `model`, checked against the login: a name it does not offer is said
/// where it is written.
pub fn check_config_model(home: &Home, config: &Config, login: &Login) -> Result<(), Failure> {
    match &config.model {
        Some(name) if login.model(name).is_none() => {
            let names: Vec<&str> = login.models.iter().map(|m| m.id.as_str()).collect();
            Err(Failure::new(
                exit::USAGE,
                format!("{}: no model {name}; the login offers: {}", config_place(home, "model"), names.join(", ")),
            ))
        }
        _ => Ok(()),
    }
}

/// The stored login, or the one-line way to make one.
pub fn login(home: &Home) -> Result<Login, Failure> {
    match Login::load(home) {
        Ok(Some(login)) => Ok(login),
        Ok(None) => Err(Failure::new(
            exit::LOGIN,
            "not logged in: run `lembas login URL` with your model server (an OpenAI-compatible one, or a LLeMbas server)",
        )),
        Err(e) => Err(Failure::new(exit::LOGIN, e.to_string())),
    }
}

/// The model named (on the command line, by a resumed session or in the configuration), else
/// the login's default.
pub fn choose_model(login: &Login, wanted: Option<&str>) -> Result<ModelInfo, Failure> {
    let names = || login.models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>().join(", ");
    match wanted {
        Some(name) => login
            .model(name)
            .cloned()
            .ok_or_else(|| Failure::new(exit::USAGE, format!("no model {name}; the login offers: {}", names()))),
        None => login.default_model().cloned().ok_or_else(|| {
            Failure::new(exit::LOGIN, "the server offered no models: run `lembas models --refresh`, or log in again")
        }),
    }
}

/// The mode named, else `edit`.
pub fn choose_mode(wanted: Option<&str>) -> Result<Mode, Failure> {
    let word = wanted.unwrap_or("edit");
    Mode::parse(word)
        .ok_or_else(|| Failure::new(exit::USAGE, format!("no mode {word}: use manual, edit, auto or plan")))
}

/// The session store, for a command that reads it (`lembas sessions`); a command that runs a
/// session opens it with `to_write`, which begins its log while the rest starts.
pub fn store(home: &Home, to_write: bool) -> Result<Arc<Store>, Failure> {
    let path = home.sessions_db();
    let opened = if to_write { Store::open_to_write(&path) } else { Store::open(&path) };
    opened.map(Arc::new).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}

/// The model client for a login, starting from what earlier runs learned about its server.
pub fn client(home: &Home, login: &Login, settings: &Config) -> Result<ModelClient, Failure> {
    let mut config = ClientConfig::new(&login.base_url);
    if let Some(seconds) = settings.retry_seconds {
        config.retry_for = std::time::Duration::from_secs(seconds);
    }
    config.api_key = login.secret.clone().or_else(|| lembas_sys::handed::var("LEMBAS_API_KEY"));
    config.prompt_progress = login.llama_cpp;
    let client = ModelClient::new(config)?;
    if let Ok(text) = std::fs::read_to_string(home.learned_file())
        && let Ok(learned) = serde_json::from_str::<Learned>(&text)
    {
        client.set_learned(learned);
    }
    Ok(client)
}

/// Keeps what the client learned, for the next run.
pub fn save_learned(home: &Home, client: &ModelClient) {
    let learned = client.learned();
    if learned != Learned::default() {
        let text = serde_json::to_string_pretty(&learned).unwrap_or_default();
        let _ = lembas_config::write_atomic(&home.learned_file(), text.as_bytes(), 0o600);
    }
}

/// An XDG folder the environment names (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`): only an absolute
/// path counts, as the XDG rules say; `None` for the caller's default.
pub fn xdg_folder(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The project a directory belongs to: the top of its git work tree, else the directory — as
/// the person spells it (a session says once where that really is).
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors().find(|d| d.join(".git").exists()).unwrap_or(dir).to_path_buf()
}

/// Where a project root really is: the one spelling trust, rules, MCP servers, skills and stored
/// sessions are keyed by. Each way in (a terminal, a run, a server's session) reads it once and
/// hands it on.
pub fn real_root(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// The permission rules: the defaults, the global configuration's, and — for a project the
/// person trusted — the project's own (`.lembas/permissions.json`).
pub fn rules(home: &Home, config: &Config, project: Option<(&Path, Standing)>) -> Result<RuleSet, Failure> {
    let mut rules = RuleSet::defaults();
    if let Some(global) = &config.permissions {
        rules
            .add_json(global, Source::Global)
            .map_err(|e| Failure::new(exit::USAGE, format!("{}: permissions: {e}", home.config_file().display())))?;
    }
    let Some((root, standing)) = project else { return Ok(rules) };
    // A project's own rules count once the person trusted it (`lembas trust`; the terminal UI
    // asks). Running headless asks nothing.
    if standing == Standing::Trusted
        && let Some(project) =
            lembas_config::project_rules(root).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?
    {
        rules
            .add_json(&project, Source::Project)
            .map_err(|e| Failure::new(exit::USAGE, format!("{}/.lembas/permissions.json: {e}", root.display())))?;
    }
    Ok(rules)
}

/// Where the project at `root` (its real path) stands with the person: read once at start (the
/// trust file, and a hash of the project's trust-bearing files), and handed to what depends on it.
pub fn standing(home: &Home, root: &Path) -> Result<Standing, Failure> {
    let trust = lembas_config::Trust::load(home).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
    Ok(trust.standing(root))
}

/// What to say at start about the project's trust: that it lapsed because its trust-bearing
/// files changed; and, while it is not trusted, how many MCP servers its own `.mcp.json` names
/// (they start once it is).
pub fn start_notes(root: &Path, standing: Standing) -> Vec<String> {
    let mut notes = Vec::new();
    if standing == Standing::Changed {
        notes.push(format!(
            "{}'s own rules, MCP servers, commands or skills changed since you trusted it, so they do not count until you trust it again (lembas trust).",
            root.display()
        ));
    }
    if standing != Standing::Trusted
        && let Ok(servers) = lembas_config::project_mcp_servers(root)
        && !servers.is_empty()
    {
        let n = servers.len();
        notes.push(format!(
            "{}/.mcp.json names {n} MCP server{} ({}), not started: they run programs, so they start once you trust the project (lembas trust).",
            root.display(),
            if n == 1 { "" } else { "s" },
            servers.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    notes
}

/// The MCP servers a session in `root` connects: the configuration's `[mcp_servers.*]`, then a
/// trusted project's `.mcp.json` (an entry of the same name there replaces the configuration's;
/// an untrusted project's file is not read — it would start programs). An entry that cannot be
/// used is kept as a failed server, so the person sees why.
pub fn mcp_entries(config: &Config, root: &Path, standing: Standing) -> Vec<lembas_core::ServerEntry> {
    let mut servers: Vec<(String, lembas_config::McpServer)> =
        config.mcp_servers.iter().map(|(name, server)| (name.clone(), server.clone())).collect();
    let mut broken = Vec::new();
    if standing == Standing::Trusted {
        match lembas_config::project_mcp_servers(root) {
            Ok(project) => {
                for (name, server) in project {
                    servers.retain(|(n, _)| *n != name);
                    servers.push((name, server));
                }
            }
            Err(e) => broken.push(lembas_core::ServerEntry { name: ".mcp.json".into(), plan: Err(e.to_string()) }),
        }
    }
    // An entry that names the login's key (`${LEMBAS_API_KEY}`) gets it as it was handed over.
    let env = |name: &str| lembas_sys::handed::var(name).or_else(|| std::env::var(name).ok());
    servers
        .into_iter()
        .filter(|(_, server)| server.enabled())
        .map(|(name, server)| lembas_core::ServerEntry { plan: server.plan(&name, &env), name })
        .chain(broken)
        .collect()
}

/// The folders no listing or search walks into: lembas' own (its login, sessions, logs) and the
/// person's credentials (`~/.ssh`, `~/.netrc`, …).
fn walk_private(home: &Home) -> std::sync::Arc<[PathBuf]> {
    let credentials = home.user_home.as_deref().map(lembas_permissions::credentials).unwrap_or_default();
    lembas_tools::private_folders(
        [home.config.clone(), home.data.clone(), home.state.clone()]
            .into_iter()
            .chain(credentials.into_iter().map(|(place, _)| place)),
    )
}

/// Where sessions in the project at `root` find skills (`filesystem.md`, *Skills*): a trusted
/// project's `.agent/skills/`, then the person's own (where new ones are made), then the
/// configuration's `skill_dirs` (`~/` is the person's home; relative ones the project's).
pub fn skill_places(home: &Home, config: &Config, root: &Path, standing: Standing) -> lembas_core::SkillPlaces {
    let own = home.skills_dir();
    let mut search = Vec::new();
    if standing == Standing::Trusted {
        search.push(root.join(".agent").join("skills"));
    }
    search.push(own.clone());
    // Relative folders are the project's (an absolute one stays as it is).
    search.extend(config.skill_dirs.iter().map(|dir| root.join(config_folder(dir, home.user_home.as_deref()))));
    lembas_core::SkillPlaces { search, own: Some(own) }
}

/// The custom agents sessions in the project at `root` may start: a trusted project's
/// `.agent/agents/`, then its `.claude/agents/` (as Claude Code keeps them), then the person's
/// own agents folder — an earlier one's name hiding a later one's. A file that does not read as
/// an agent is said once on stderr.
pub fn agent_files(home: &Home, root: &Path, standing: Standing) -> std::sync::Arc<[lembas_tools::AgentFile]> {
    let mut places = Vec::new();
    if standing == Standing::Trusted {
        places.push(root.join(".agent").join("agents"));
        places.push(root.join(".claude").join("agents"));
    }
    places.push(home.agents_dir());
    let (found, skipped) = lembas_tools::agents::discover(&places);
    for (file, why) in skipped {
        eprintln!("lembas: {} is not read as an agent: {why}", file.display());
    }
    found.into()
}

/// The hooks sessions in the project at `root` run: the person's (`config.toml`), then a
/// trusted project's Claude Code settings (`.claude/settings.json`, `.claude/settings.local.json`).
/// A hook file that cannot be read is an error, named; events lembas does not run are said once.
pub fn hooks(config: &Config, root: &Path, standing: Standing) -> Result<Arc<lembas_hooks::Hooks>, String> {
    let mut hooks = lembas_hooks::Hooks::from_config(&config.hooks, "config.toml")?;
    if standing == Standing::Trusted {
        for name in ["settings.json", "settings.local.json"] {
            let file = root.join(".claude").join(name);
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let (found, left) = lembas_hooks::Hooks::from_claude_settings(&text, &file.display().to_string())?;
            if !left.is_empty() {
                eprintln!("lembas: {} has hooks lembas does not run: {}", file.display(), left.join(", "));
            }
            hooks = hooks.and(found);
        }
    }
    Ok(Arc::new(hooks))
}

/// The web tools' setup from `[web]`: a search provider that cannot be used (no key in the
/// environment, an unknown provider) is said once on stderr, and `web_search` is not offered.
pub fn web_setup(web: &lembas_config::WebSettings) -> lembas_core::WebSetup {
    let defaults = lembas_web::Limits::default();
    let limits = lembas_web::Limits {
        timeout: web.timeout.map_or(defaults.timeout, std::time::Duration::from_secs),
        max_bytes: web.max_bytes.unwrap_or(defaults.max_bytes).max(1024),
        ..defaults
    };
    let search = web.search.as_ref().and_then(|s| {
        lembas_web::SearchProvider::new(&s.provider, s.url.as_deref(), s.key_env.as_deref())
            .map_err(|why| eprintln!("lembas: web_search is not offered: {why}"))
            .ok()
    });
    lembas_core::WebSetup { limits, search: search.map(Arc::new), reader: lembas_web::Reader::beside_this_program() }
}

/// Where the notes are: the person's (`notes/personal` in lembas' data folder) and, in a project,
/// its own (`notes/projects/<name>-<hash of its real root>`, so two projects of one name keep
/// theirs apart and a moved project is a new one, as its sessions are).
pub fn notes(home: &Home, real_root: Option<&Path>) -> lembas_library::Notes {
    use sha2::Digest;
    let folder = home.data.join("notes");
    let project = real_root.map(|root| {
        let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("root");
        let hash = hex::encode(&sha2::Sha256::digest(root.as_os_str().as_encoded_bytes())[..4]);
        folder.join("projects").join(format!("{name}-{hash}"))
    });
    lembas_library::Notes { project, personal: folder.join("personal") }
}

/// A folder named in `config.toml`: `~/` is the home folder.
fn config_folder(word: &str, home: Option<&Path>) -> std::path::PathBuf {
    match (word.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => std::path::PathBuf::from(word),
    }
}

/// The program that sets each command's sandbox up: `lembas-sandbox` installed beside lembas
/// (small, so it starts quickly), else lembas itself (`lembas __sandbox …`) — the running
/// binary, even when the one on disk was replaced since it started.
fn sandbox_launcher() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("lembas-sandbox")))
        .filter(|sibling| sibling.is_file())
        .unwrap_or_else(|| PathBuf::from("/proc/self/exe"))
}

/// A session's configuration from the person's settings and the chosen model, mode and approver.
#[allow(clippy::too_many_arguments)]
pub fn session_config(
    home: &Home,
    config: &Config,
    store: Arc<Store>,
    client: ModelClient,
    model: ModelInfo,
    effort: Option<String>,
    mode: Mode,
    rules: RuleSet,
) -> SessionConfig {
    // A configured window is the person's statement; without one the window is unknown until
    // the server says (never assumed).
    let mut cfg = SessionConfig::new(store, client, model, mode, home.jobs_dir(), config.context_window);
    cfg.effort = effort;
    cfg.rules = rules;
    cfg.snapshots_dir = home.snapshots_dir();
    cfg.lembas_config = Some(home.config.clone());
    cfg.lembas_private = vec![home.data.clone(), home.state.clone()];
    cfg.sandbox = config.sandbox.enabled;
    cfg.sandbox_network = config.sandbox.network;
    cfg.sandbox_launcher = Some(sandbox_launcher());
    cfg.sandbox_credentials = config.sandbox.credentials.clone();
    // An unknown personality is said once, and the default used.
    cfg.personality = lembas_protocol::personality_text(
        config.personality.as_deref().unwrap_or_default(),
        config.personality_custom.as_deref(),
    )
    .unwrap_or_else(|e| {
        eprintln!("lembas: {}: {e}", home.config_file().display());
        None
    });
    cfg.sandbox_writable =
        config.sandbox.writable.iter().map(|w| config_folder(w, home.user_home.as_deref())).collect();
    cfg.max_steps = config.steps.unwrap_or(cfg.max_steps);
    cfg.budget_tokens = config.budget_tokens;
    cfg.budget_seconds = config.budget_seconds;
    cfg.compact_at = config.compact_at();
    cfg.global_instructions = Some(home.global_instructions());
    cfg.extra_instructions = config.instructions.clone();
    cfg.user_home = home.user_home.clone();
    cfg.subagents = config.subagents.unwrap_or(true);
    if let Some(agents) = config.agents {
        cfg.agents = (agents.min, agents.max);
    }
    // A model's tokens, as a session first measures them against its server's count, are kept
    // with the login: the next session's first request is fitted by them. One not kept costs
    // only that the next session estimates again, so it is not worth a word on the screen.
    let login_home = home.clone();
    cfg.measured = Some(Arc::new(move |model: &str, per_token: f64| {
        let _ = Login::keep_measure(&login_home, model, per_token);
    }));
    cfg
}

/// What every way of starting lembas builds first, once: the home, the configuration, the login,
/// the store, the model client and the session host. `run`, the terminal UI and `serve` differ
/// only in the front end they attach (and what they ask of the person before it).
pub struct Startup {
    pub home: Home,
    pub config: Config,
    pub login: Login,
    pub client: ModelClient,
    pub host: Arc<lembas_core::Host>,
    /// The folders no listing or search walks into ([`walk_private`]), read once.
    pub walk_private: Arc<[PathBuf]>,
    /// The web tools' limits and search provider, read once.
    pub web: lembas_core::WebSetup,
    /// The person's knowledge bases.
    pub knowledge: Arc<lembas_knowledge::Knowledge>,
    /// The person's memory on their LLeMbas instance, where the login may reach it.
    pub memory: Option<Arc<lembas_core::InstanceMcp>>,
    /// The person's own instructions on their LLeMbas account (personalization on).
    pub account_instructions: Option<String>,
}

/// The person's memory on their LLeMbas instance (`acp.md` *Memory*): where the login's token
/// may reach it and the config does not keep the library local. Connected when first used.
pub fn memory(config: &Config, login: &Login) -> Option<Arc<lembas_core::InstanceMcp>> {
    if config.library.as_deref() == Some("local") || !login.keeps_memory() {
        return None;
    }
    Some(Arc::new(lembas_core::InstanceMcp::new(&login.server, login.secret.as_deref()?)))
}

/// A project a session works in: its root, where it stands with the person, and what that gives.
pub struct Project {
    /// The root as the person spells it (what a new session is given, and says the real path of).
    pub root: PathBuf,
    /// Where it really is: what the project's trust, rules, servers and sessions are keyed by.
    pub real: PathBuf,
    pub standing: Standing,
    pub rules: RuleSet,
    pub mcp: Option<Arc<lembas_core::McpHub>>,
    pub skills: lembas_core::SkillPlaces,
    pub agent_files: Arc<[lembas_tools::AgentFile]>,
    pub hooks: Arc<lembas_hooks::Hooks>,
}

impl Startup {
    pub fn load() -> Result<Startup, Failure> {
        let home = home()?;
        lembas_tools::sandbox::launcher::try_early(
            sandbox_launcher(),
            Some(home.state.join("launcher-can-make-namespaces")),
        );
        let config = config(&home)?;
        let login = login(&home)?;
        let store = store(&home, true)?;
        let client = client(&home, &login, &config)?;
        let walk_private = walk_private(&home);
        let web = web_setup(&config.web);
        let host = lembas_core::Host::new(store).keeping_snapshots_in(home.snapshots_dir());
        let knowledge = Arc::new(crate::kb::knowledge(&home, &config, Some(&login)));
        let memory = memory(&config, &login);
        Ok(Startup {
            host: Arc::new(host),
            home,
            config,
            login,
            client,
            walk_private,
            web,
            knowledge,
            memory,
            account_instructions: None,
        })
    }

    /// On a LLeMbas login whose account keeps personalization (on and available), its
    /// personality stands over the local keys and its instructions join the prompt (`acp.md`
    /// *The HTTP API*); asked once, briefly.
    pub async fn take_account_personality(&mut self) {
        if let Some(kept) = lembas_login::personalization(&self.login).await {
            self.config.personality = Some(kept.personality);
            if kept.custom.is_some() {
                self.config.personality_custom = kept.custom;
            }
            self.account_instructions = kept.instructions;
        }
    }

    /// The project at `root`: its standing read once; its rules, MCP servers (connecting from now
    /// on) and skill places as that standing allows.
    pub fn project(&self, root: PathBuf) -> Result<Project, Failure> {
        let real = real_root(&root);
        let standing = standing(&self.home, &real)?;
        let rules = rules(&self.home, &self.config, Some((&real, standing)))?;
        let mcp = lembas_core::connect_mcp(mcp_entries(&self.config, &real, standing), &real);
        let skills = skill_places(&self.home, &self.config, &real, standing);
        let agent_files = agent_files(&self.home, &real, standing);
        let hooks = hooks(&self.config, &real, standing).map_err(|e| Failure::new(exit::USAGE, e))?;
        Ok(Project { root, real, standing, rules, mcp, skills, agent_files, hooks })
    }

    /// A session's configuration on `model`, `effort` and `mode`, with `rules`; subagents may run
    /// on any of the login's models.
    pub fn session_config(
        &self,
        model: ModelInfo,
        effort: Option<String>,
        mode: Mode,
        rules: RuleSet,
    ) -> SessionConfig {
        let mut cfg = session_config(
            &self.home,
            &self.config,
            self.host.store().clone(),
            self.client.clone(),
            model,
            effort,
            mode,
            rules,
        );
        cfg.walk_private = self.walk_private.clone();
        cfg.models = self.login.models.clone();
        cfg.web = self.web.clone();
        cfg.knowledge = Some(self.knowledge.clone());
        cfg.memory = self.memory.clone();
        if let Some(text) = &self.account_instructions {
            cfg.given_instructions.push((lembas_protocol::ACCOUNT_INSTRUCTIONS.to_owned(), text.clone()));
        }
        cfg
    }

    /// The same for a session in `project`.
    pub fn project_session(
        &self,
        project: &Project,
        model: ModelInfo,
        effort: Option<String>,
        mode: Mode,
    ) -> SessionConfig {
        let mut cfg = self.session_config(model, effort, mode, project.rules.clone());
        cfg.mcp = project.mcp.clone();
        cfg.skills = project.skills.clone();
        cfg.agent_files = project.agent_files.clone();
        cfg.hooks = project.hooks.clone();
        cfg.notes = notes(&self.home, Some(&project.real));
        cfg
    }

    /// After the front end is done: the MCP servers stopped, what the model client learned kept.
    pub async fn finish(&self, project: Option<&Project>) {
        if let Some(hub) = project.and_then(|p| p.mcp.as_ref()) {
            hub.shutdown().await;
        }
        save_learned(&self.home, &self.client);
    }
}
