//! A session made or reopened — the one constructor for a new and a resumed one, the tools it is
//! offered — and said to the front ends.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use lembas_context::IdCounter;
use lembas_context::note::Told;
use lembas_model::ToolSchema;
use lembas_permissions::{Context, Judge};
use lembas_store::SessionRecord;
use lembas_tools::sandbox::{self, Shortfall};
use lembas_tools::{Jobs, Workspace};

use crate::session::history::Entry;
use crate::session::memory::MemoryLink;
use crate::session::subagent::SubagentOf;
use crate::session::team::{Kept, Seat, member_tools};
use crate::session::{Role, Session, SessionConfig, State};
use crate::transcript::{repair, stored_history};
use crate::{EngineError, Event, now_ms};

/// What makes a session this one: what [`Session::assemble`] is given.
struct Parts {
    lock: lembas_store::SessionLock,
    id: String,
    title: String,
    cfg: SessionConfig,
    ws: Workspace,
    system_prompt: String,
    tools: Arc<Vec<ToolSchema>>,
    history: Vec<Entry>,
    state: State,
    events: crate::sink::EventSink,
    /// Not yet given a title from the person's first words.
    fresh: bool,
    role: Role,
}

impl Session {
    /// A new session in the project at `root`, started in `started`, saying its events to
    /// `events` (a sink the host marks with what it carries out).
    pub(crate) fn start_saying(
        cfg: SessionConfig,
        root: &Path,
        started: &Path,
        events: crate::sink::EventSink,
    ) -> Result<Session, EngineError> {
        let (mut ws, note) = Workspace::new(root, started);
        ws.editor = cfg.editor_files.clone();
        ws.private = cfg.walk_private.clone();
        ws.home = cfg.user_home.clone();
        if let Some(note) = note {
            // Said once, as the session starts.
            let _ = events.send(Event::Notice { message: note });
        }
        Session::create(cfg, ws, events, None)
    }

    /// A new session in `ws`: the person's own, or a subagent's working for another session.
    pub(crate) fn create(
        cfg: SessionConfig,
        ws: Workspace,
        events: crate::sink::EventSink,
        subagent: Option<SubagentOf>,
    ) -> Result<Session, EngineError> {
        let state = State {
            learned_window: None,
            agents_nudged: false,
            ledger: crate::room::ledger_for(&cfg),
            ids: IdCounter::default(),
            told: Told::default(),
            mode: cfg.bounded(cfg.mode),
            effort: cfg.effort.clone(),
            last_input: 0,
            bytes_per_token: None,
            counted: None,
            always: Vec::new(),
            plan: None,
            mode_before_plan: None,
            mcp_listed: Vec::new(),
            mcp_instructions: Default::default(),
            named: Vec::new(),
            offer: None,
            cache_miss: None,
            memory: None,
        };
        let offer = crate::offer::Offer::looking(
            &cfg,
            subagent.is_none() && cfg.subagents && lembas_models::subagent_offered(&cfg.model, &cfg.models),
            subagent.is_none() && cfg.display,
        );
        let mut tools = crate::offer::offered_tools(&cfg.model, offer);
        if subagent.is_none() {
            crate::agents::offer(&mut tools, &cfg.agent_files);
        }
        if let Some(of) = &subagent {
            let def = |name: &str| lembas_spec::tool(name);
            tools.retain(|t| def(&t.name).is_none_or(|d| d.for_subagents()));
            if of.read_only {
                tools.retain(|t| def(&t.name).is_some_and(|d| d.only_reads()));
            }
            // A custom agent's own list: what it names of what a subagent could have.
            if let Some(only) = &of.tools {
                tools.retain(|t| only.contains(&t.name));
            }
            if let Some((_, may_request)) = &of.team {
                tools.extend(member_tools(*may_request).into_iter().filter_map(def).map(|d| ToolSchema {
                    name: d.name.clone(),
                    description: d.description.clone(),
                    parameters: d.parameters.clone(),
                }));
            }
        }
        let id = uuid::Uuid::now_v7().to_string();
        let title = subagent.as_ref().map_or_else(|| "New session".into(), |s| s.label.clone());
        let role = match subagent {
            Some(of) => Role::Subagent(of),
            None => Role::Main {
                team: crate::handlers::offers(&tools, "team_add").then(|| Seat::lead(&cfg, &events, &id, None)),
                memory: None,
            },
        };
        let mut session = Session::assemble(Parts {
            lock: cfg.store.lock_session(&id)?,
            title,
            id,
            ws,
            system_prompt: String::new(),
            tools: Arc::new(tools),
            history: Vec::new(),
            state,
            events,
            fresh: !role.is_subagent(),
            role,
            cfg,
        });
        // The servers connected by now are in the first list and the prompt (context.md §10
        // rule 4); the front end waited up to `mcp_wait_ms` for them.
        if !session.role.is_subagent() {
            for words in session.cfg.said.clone() {
                session.note_named(&words);
            }
        }
        session.adopt_mcp_servers();
        session.remake_prompt(None);
        if !session.role.is_subagent() {
            session.state.offer = session.fit_the_window();
        }
        let now = now_ms();
        session.cfg.store.create_session(&SessionRecord {
            id: session.id.clone(),
            title: session.title.clone(),
            project: session.ws.root.display().to_string(),
            started: session.ws.started.display().to_string(),
            model: session.cfg.model.id.clone(),
            created_at: now,
            updated_at: now,
            system_prompt: session.system_prompt.clone(),
            tools: serde_json::to_string(&session.tools).expect("tools serialize"),
            state: session.state_value().to_string(),
            parent: session.role.subagent().map(|s| s.parent.clone()),
        })?;
        Ok(session)
    }

    /// The one constructor: a session from what makes it this session; the rest (what a turn
    /// builds up as it runs) starts empty, the same for a new session and a resumed one.
    fn assemble(parts: Parts) -> Session {
        let Parts { lock, id, title, cfg, ws, system_prompt, tools, history, state, events, fresh, mut role } = parts;
        if let Role::Main { memory, .. } = &mut role {
            *memory = MemoryLink::for_session(&cfg, &id);
        }
        let mut session = Session {
            _lock: lock,
            jobs: Jobs::new(cfg.jobs_dir.join(&id)),
            id,
            title,
            ws,
            system_prompt,
            tools,
            history,
            state,
            events,
            steer: Arc::default(),
            person_ran: Vec::new(),
            person_runs: 0,
            changes: Arc::default(),
            fresh,
            judge: Judge::with_defaults(Context::default()),
            prompt_tokens: 0,
            stopped_by: None,
            levels_told: None,
            sent: Default::default(),
            parked: Default::default(),
            turn_usage: Default::default(),
            nearby_seen: HashSet::new(),
            jobs_told: Default::default(),
            mcp_seen: 0,
            mcp_failures_told: HashSet::new(),
            turn_seq: None,
            hooks_started: false,
            sandbox_unprepared: false,
            snapshot: Default::default(),
            granted: Arc::default(),
            role,
            cfg,
        };
        session.judge = session.make_judge();
        session
    }

    /// A stored session reopened, exactly as it was (its system prompt, tools and history unchanged,
    /// its team as it was kept, `session/team/keep.rs`): the person's own, or a team subagent's
    /// working for another.
    pub(crate) fn reopen(
        cfg: SessionConfig,
        id: &str,
        events: crate::sink::EventSink,
        subagent: Option<SubagentOf>,
    ) -> Result<Session, EngineError> {
        let store = cfg.store.clone();
        if !store.has_session(id)? {
            return Err(EngineError::NoSession(id.to_owned()));
        }
        // Before anything is read: another process appending meanwhile would interleave turns.
        let lock = store.lock_session(id)?;
        let (record, mut state) =
            store.held_session::<State>(&lock, id)?.ok_or_else(|| EngineError::NoSession(id.to_owned()))?;
        let (mut ws, _) = Workspace::new(Path::new(&record.project), Path::new(&record.started));
        ws.editor = cfg.editor_files.clone();
        ws.private = cfg.walk_private.clone();
        ws.home = cfg.user_home.clone();
        let tools: Arc<Vec<ToolSchema>> =
            Arc::new(serde_json::from_str(&record.tools).map_err(|e| EngineError::Corrupt(e.to_string()))?);
        let history = stored_history(&store, id)?;
        // A resumed session is asked with its own mode unless the person set another.
        state.mode = cfg.bounded(cfg.mode);
        let mut kept = None;
        let role = match subagent {
            Some(of) => Role::Subagent(of),
            None if crate::handlers::offers(&tools, "team_add") => {
                let (team, rest) = Kept::load(&store, &record.id, &events).map(|k| k.into_team()).unzip();
                kept = rest;
                Role::Main { team: Some(Seat::lead(&cfg, &events, &record.id, team)), memory: None }
            }
            None => Role::Main { team: None, memory: None },
        };
        let mut session = Session::assemble(Parts {
            lock,
            id: record.id.clone(),
            title: record.title.clone(),
            cfg,
            ws,
            system_prompt: record.system_prompt.clone(),
            tools,
            history: repair(history),
            state,
            events,
            fresh: false,
            role,
        });
        if session.cfg.model.id != record.model && !session.role.is_subagent() {
            // Resumed on another model: that is a move, made the one way moves are made. (A
            // team subagent reopened keeps its tool list: its requests go to the model the tree
            // gives it.)
            let model = session.cfg.model.clone();
            session.set_model(model)?;
        }
        if let Some(rest) = kept {
            session.reopen_team(rest);
        }
        Ok(session)
    }

    /// Says which session this is (an `Event::Session`), for a front end that shows it.
    pub fn announce(&self, resumed: bool) {
        self.emit(Event::Session {
            id: self.id.clone(),
            title: self.title.clone(),
            model: self.cfg.model.id.clone(),
            mode: self.state.mode,
            resumed,
            sandbox: self.sandbox_state(),
        });
        let shortfall = self.cfg.sandbox.then(|| sandbox::state(self.cfg.sandbox_launcher.as_deref()).err()).flatten();
        match shortfall {
            Some(Shortfall::Unavailable(why)) => self.emit(Event::Notice {
                message: format!(
                    "Commands run without a sandbox: {why}. Only lembas' judgement of each command stands."
                ),
            }),
            Some(Shortfall::LandlockOnly(why)) => self.emit(Event::Notice {
                message: format!(
                    "Commands run in a sandbox that cannot keep git's hooks, the project's agent settings or a home folder in /tmp read-only ({why}); writes there that lembas can read are asked."
                ),
            }),
            None => {}
        }
        if let Some(offer) = &self.state.offer {
            self.emit(Event::Notice { message: offer.told(self.cfg.model.display_name()) });
        }
        self.report_context();
        if let Some(seat) = self.leads_team() {
            seat.hub.say_pending();
        }
    }

    /// Says the custom agents this session may start.
    pub(crate) fn report_agent_files(&self) {
        let agents = self
            .cfg
            .agent_files
            .iter()
            .map(|a| lembas_protocol::agents::AgentFileInfo {
                name: a.name.clone(),
                description: a.description.clone(),
                tools: a.tools.clone(),
                mode: a.mode.clone(),
                file: a.file.display().to_string(),
            })
            .collect();
        self.emit(Event::AgentFiles { agents });
    }
}
