//! Sessions opened for a front end that chooses for each one (ACP now, the link next): the
//! person's configuration is the template, the client's choices go over it, and the project the
//! client names brings its own MCP servers and skills. What the front end holds is
//! `lembas_client::Host`; this is the engine's side of it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use lembas_client::{Failure, OpenRequest, OpenedSession, SessionHandle};
use lembas_mcp::{McpHub, ServerEntry};
use lembas_protocol::{Event, Found, StoredSession};
use lembas_tools::SkillPlaces;

use crate::{Host, OpenSession, SessionConfig, Start};

/// How a session's project root is found from the folder the client names.
pub type RootOf = fn(&Path) -> PathBuf;

/// What a project root gives its sessions, as the person set it up: the MCP servers configured
/// for it, and where its sessions find skills.
#[derive(Debug, Clone, Default)]
pub struct ProjectSetup {
    pub mcp: Vec<ServerEntry>,
    pub skills: SkillPlaces,
    /// The custom agents its sessions may start.
    pub agent_files: Arc<[lembas_tools::AgentFile]>,
    /// The hooks its sessions run.
    pub hooks: Arc<lembas_hooks::Hooks>,
    /// Where its notes and the person's are.
    pub notes: lembas_library::Notes,
}

/// A project root's setup, read when a session opens there (once: where the project stands
/// with the person decides both).
pub type ProjectOf = Arc<dyn Fn(&Path) -> ProjectSetup + Send + Sync>;

/// Opens sessions on `host` for a front end that chooses for each.
pub struct Opener {
    host: Arc<Host>,
    template: SessionConfig,
    root_of: RootOf,
    project_of: ProjectOf,
    /// The MCP servers each session opened here connected, ended with [`Opener::shut_down`].
    hubs: Mutex<Vec<Arc<McpHub>>>,
}

impl std::fmt::Debug for Opener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opener").finish_non_exhaustive()
    }
}

impl Opener {
    pub fn new(host: Arc<Host>, template: SessionConfig, root_of: RootOf, project_of: ProjectOf) -> Opener {
        Opener { host, template, root_of, project_of, hubs: Mutex::default() }
    }

    /// The configuration every session here starts from.
    pub(crate) fn template(&self) -> &SessionConfig {
        &self.template
    }

    /// The project root of the folder `cwd`.
    pub(crate) fn root_of(&self, cwd: &Path) -> PathBuf {
        (self.root_of)(cwd)
    }

    /// Roots as given, and no configured MCP servers or skills.
    pub fn plain(host: Arc<Host>, template: SessionConfig, root_of: RootOf) -> Opener {
        Opener::new(host, template, root_of, Arc::new(|_| ProjectSetup::default()))
    }

    /// The template with the client's choices over it: the mode; the model by id or by the name
    /// it is shown with (an unknown one refused, naming the login's); the effort as the model
    /// reads it (a level it does not offer is its start level); the team.
    fn configured(&self, request: &OpenRequest) -> Result<SessionConfig, String> {
        let mut cfg = self.template.clone();
        let choices = &request.choices;
        if let Some(mode) = choices.mode {
            cfg.mode = mode;
        }
        cfg.display = choices.display;
        if let Some(widest) = choices.widest_mode {
            cfg.widest_mode = Some(widest);
            cfg.mode = cfg.mode.at_most(widest);
        }
        if let Some(name) = &choices.model {
            cfg.model = cfg.model_named(name)?;
        }
        if let Some(level) = &choices.effort {
            cfg.effort = Some(cfg.model.effective_level(level));
        }
        if let Some(agents) = choices.agents {
            crate::check_agents(agents.0, agents.1)?;
            cfg.agents = agents;
        }
        if choices.subagents_off {
            cfg.subagents = false;
        }
        cfg.said = choices.said.clone();
        cfg.memory_scoped = choices.scoped;
        if choices.knowledge_scope.is_some() {
            cfg.knowledge_scope = choices.knowledge_scope.clone();
        }
        // A chat's personalization and system prompt stand over the device's own.
        if let Some(personality) = &choices.personality {
            cfg.personality = personality.clone();
        }
        if let Some(given) = &choices.given_instructions {
            cfg.given_instructions = given.clone();
        }
        cfg.editor_files = request.editor_files.clone();
        Ok(cfg)
    }
}

impl lembas_client::Sessions for Opener {
    fn sessions(&self, project: Option<&str>) -> Result<Vec<StoredSession>, Failure> {
        lembas_client::Sessions::sessions(self.host.as_ref(), project)
    }

    fn search(&self, words: &str) -> Result<Vec<Found>, Failure> {
        lembas_client::Sessions::search(self.host.as_ref(), words)
    }

    fn session(&self, id: &str) -> Result<Option<StoredSession>, Failure> {
        lembas_client::Sessions::session(self.host.as_ref(), id)
    }

    fn subagents(&self, id: &str) -> Result<Vec<StoredSession>, Failure> {
        lembas_client::Sessions::subagents(self.host.as_ref(), id)
    }

    fn transcript(&self, id: &str) -> Result<Vec<Event>, Failure> {
        lembas_client::Sessions::transcript(self.host.as_ref(), id)
    }

    fn delete(&self, id: &str) -> Result<(), Failure> {
        lembas_client::Sessions::delete(self.host.as_ref(), id)
    }
}

impl lembas_client::Host for Opener {
    fn open(&self, request: OpenRequest) -> Result<OpenedSession, Failure> {
        let mut cfg = self.configured(&request)?;
        let root = (self.root_of)(&request.cwd);
        let ProjectSetup { mcp: mut entries, skills, agent_files, hooks, notes } = (self.project_of)(&root);
        for server in request.mcp_servers.iter().map(ServerEntry::from_client) {
            entries.retain(|e| e.name != server.name);
            entries.push(server);
        }
        // They connect while the session opens; its first request waits for them a little.
        cfg.mcp = crate::connect_mcp(entries, &root);
        cfg.skills = skills;
        cfg.agent_files = agent_files;
        cfg.hooks = hooks;
        cfg.notes = notes;
        if let Some(hub) = &cfg.mcp {
            self.hubs.lock().expect("hubs").push(hub.clone());
        }
        let start = match request.resume {
            Some(id) => Start::Resume(id),
            None => Start::New { root, cwd: request.cwd },
        };
        let (mode, model, models, effort, agents) =
            (cfg.mode, cfg.model.clone(), cfg.models.clone(), cfg.effort.clone(), cfg.agents);
        let opened = self.host.open(OpenSession { cfg, start, attended: request.attended })?;
        Ok(OpenedSession { opened, mode, model, models, effort, agents })
    }

    fn handle(&self, id: &str) -> Option<SessionHandle> {
        self.host.handle(id)
    }

    fn held_elsewhere(&self, id: &str) -> bool {
        self.host.held_elsewhere(id)
    }

    fn kept_tree(&self, id: &str) -> Result<Option<lembas_protocol::team::TeamTree>, Failure> {
        Ok(self.host.kept_tree(id)?)
    }

    fn last_turn(&self, id: &str) -> Result<Option<String>, Failure> {
        Ok(self.host.last_turn(id)?)
    }

    fn watch(
        &self,
        request: lembas_client::WatchRequest,
    ) -> Pin<Box<dyn Future<Output = Result<lembas_client::Watched, lembas_client::WatchRefused>> + Send + '_>> {
        Box::pin(self.run_watch(request))
    }

    fn shut_down(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let hubs = std::mem::take(&mut *self.hubs.lock().expect("hubs"));
            for hub in hubs {
                hub.shutdown().await;
            }
        })
    }
}
