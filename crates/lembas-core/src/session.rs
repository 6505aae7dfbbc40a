//! A session: its fixed prefix (system prompt and tools), its history, and its state, kept in
//! the store as it goes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use lembas_permissions::{Context, Judge};
use std::sync::{Arc, Mutex};

use lembas_context::{IdCounter, Ledger};
use lembas_model::ToolSchema;
use lembas_permissions::Mode;
use lembas_store::SessionRecord;
use lembas_tools::{Jobs, Workspace};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

use crate::Event;
pub use crate::config::{SessionConfig, local_today};
use crate::history::Entry;
use crate::transcript::{repair, stored_history, transcript_of};
use crate::{EngineError, now_ms};
use lembas_context::note::Told;

/// What the person allowed for the rest of the session: (tool, pattern), shared with the
/// session's subagents.
pub(crate) type Grants = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// What a session keeps besides its messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    /// A window the server stated when it refused a request for its length.
    #[serde(default)]
    pub learned_window: Option<u64>,
    /// The task to make AGENTS.md was given (once a session).
    #[serde(default)]
    pub agents_nudged: bool,
    pub ledger: Ledger,
    pub ids: IdCounter,
    pub told: Told,
    pub mode: Mode,
    pub effort: Option<String>,
    /// Input tokens of the last request: how full the window is.
    pub last_input: u64,
    /// What the person allowed for the rest of the session: (tool, pattern).
    #[serde(default)]
    pub always: Vec<(String, Option<String>)>,
    /// The session's plan.
    #[serde(default)]
    pub plan: Option<crate::Plan>,
    /// The mode to return to when a plan made in plan mode is approved.
    #[serde(default)]
    pub mode_before_plan: Option<Mode>,
    /// The MCP servers whose tools are in the session's list, in the order they joined.
    #[serde(default)]
    pub mcp_listed: Vec<String>,
    /// Their instructions, by server.
    #[serde(default)]
    pub mcp_instructions: std::collections::BTreeMap<String, String>,
    /// The models the person named in their own words (`subagents.md` §2), by id: the only
    /// ones besides the session's own that a subagent may run on. Kept through compaction.
    #[serde(default)]
    pub named: Vec<String>,
    /// What a small window left out of the offer as the session was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<crate::fit::Offer>,
    /// The person's memory as last read from their LLeMbas instance (the prompt's, or newer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// Where plan mode may write plans in the project at `root`: `.agent/plans`, as plan mode's text
/// tells the model (`prompts/modes/plan.md`).
pub(crate) fn plans_dir(root: &Path) -> PathBuf {
    root.join(".agent").join("plans")
}

/// A running session.
pub struct Session {
    /// This process holds the session: no other lembas appends to it meanwhile.
    pub(crate) _lock: lembas_store::SessionLock,
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) cfg: SessionConfig,
    pub(crate) ws: Workspace,
    pub(crate) system_prompt: String,
    /// The tool list, fixed for the session; shared with every request.
    pub(crate) tools: Arc<Vec<ToolSchema>>,
    pub(crate) history: Vec<Entry>,
    pub(crate) state: State,
    pub(crate) events: crate::sink::EventSink,
    /// Words the person added while a turn runs, delivered at the next step.
    pub(crate) steer: Arc<Mutex<Vec<String>>>,
    /// The output of commands the person ran themselves (`!`), for the next prompt.
    pub(crate) person_ran: Vec<lembas_protocol::Attachment>,
    /// How many commands the person ran themselves (their calls' ids).
    pub(crate) person_runs: u64,
    /// Settings changed while a turn runs (mode, model, effort, title), applied at the next step.
    pub(crate) changes: Arc<Mutex<Vec<lembas_protocol::Submission>>>,
    pub(crate) fresh: bool,
    pub(crate) judge: Judge,
    pub(crate) jobs: Jobs,
    /// Tokens the running prompt has used so far (for its budget).
    pub(crate) prompt_tokens: u64,
    /// Tokens over the running prompt's requests, for its `Done`.
    pub(crate) turn_usage: crate::TurnUsage,
    /// Background subagents that reported, kept for `job_send` to wake (by job id).
    pub(crate) parked: crate::subagent::ParkedAgents,
    /// The effort levels front ends were last told of (when they narrowed).
    pub(crate) levels_told: Option<Vec<String>>,
    /// The limit that ended the last prompt (`loop.json` `budgets.limit` keys), if one did.
    pub(crate) stopped_by: Option<&'static str>,
    /// Instruction files below the start directory already handed to the model.
    pub(crate) nearby_seen: HashSet<PathBuf>,
    /// How many jobs, and of them subagents, the front ends were last told run (an
    /// `Event::Jobs` goes out on a change).
    pub(crate) jobs_told: Mutex<(usize, usize)>,
    /// The MCP hub's generation last looked at (a change may mean a server connected).
    pub(crate) mcp_seen: u64,
    /// The MCP servers whose failure the front ends were told of.
    pub(crate) mcp_failures_told: HashSet<String>,
    /// Whom this session works for, when it is a subagent's.
    pub(crate) subagent: Option<crate::subagent::SubagentOf>,
    /// Where the running turn the person started began (the checkpoint its snapshots are
    /// kept under, for an undo).
    /// The SessionStart hooks ran for this session in this process.
    pub(crate) hooks_started: bool,
    pub(crate) turn_seq: Option<i64>,
    /// How far this turn's snapshot went.
    pub(crate) snapshot: crate::snapshots::TurnSnapshot,
    /// What the person allowed "for this session" on a subagent's card, for the session itself
    /// to take up (the subagent has it at once; the session at its next step).
    pub(crate) granted: Grants,
    /// Its seat in a team: the main agent's when the team is offered, a subagent's of the team.
    pub(crate) team: Option<crate::team::Seat>,
    /// The person's memory on their LLeMbas instance, as the session reads it.
    pub(crate) memory: Option<crate::memory::MemoryLink>,
}

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
    subagent: Option<crate::subagent::SubagentOf>,
    team: Option<crate::team::Seat>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // The session's background commands end with it, and its team.
        self.jobs.stop_all();
        if let Some(seat) = self.leads_team() {
            seat.hub.close();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).field("title", &self.title).finish_non_exhaustive()
    }
}

impl Session {
    /// A new session in the project at `root`, started in `started`, saying its events to
    /// `events`.
    pub fn start(
        cfg: SessionConfig,
        root: &Path,
        started: &Path,
        events: UnboundedSender<lembas_protocol::Said>,
    ) -> Result<Session, EngineError> {
        Session::start_saying(cfg, root, started, crate::sink::EventSink::new(events))
    }

    /// [`Session::start`], into a sink the host marks with what it carries out.
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
        subagent: Option<crate::subagent::SubagentOf>,
    ) -> Result<Session, EngineError> {
        let state = State {
            learned_window: None,
            agents_nudged: false,
            ledger: Ledger::default(),
            ids: IdCounter::default(),
            told: Told::default(),
            mode: cfg.bounded(cfg.mode),
            effort: cfg.effort.clone(),
            last_input: 0,
            always: Vec::new(),
            plan: None,
            mode_before_plan: None,
            mcp_listed: Vec::new(),
            mcp_instructions: Default::default(),
            named: Vec::new(),
            offer: None,
            memory: None,
        };
        let offer = crate::offer::Offer::looking(
            &cfg,
            &ws.root,
            subagent.as_ref().map_or("", |of| of.parent.as_str()),
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
                tools.extend(crate::team::member_tools(*may_request).into_iter().filter_map(def).map(|d| ToolSchema {
                    name: d.name.clone(),
                    description: d.description.clone(),
                    parameters: d.parameters.clone(),
                }));
            }
        }
        let id = uuid::Uuid::now_v7().to_string();
        let team = match &subagent {
            Some(of) => of.team.as_ref().map(|(seat, _)| seat.clone()),
            None if crate::handlers::offers(&tools, "team_add") => {
                Some(crate::team::Seat::lead(&cfg, &events, &id, None))
            }
            None => None,
        };
        let mut session = Session::assemble(Parts {
            lock: cfg.store.lock_session(&id)?,
            title: subagent.as_ref().map_or_else(|| "New session".into(), |s| s.label.clone()),
            id,
            ws,
            system_prompt: String::new(),
            tools: Arc::new(tools),
            history: Vec::new(),
            state,
            events,
            fresh: subagent.is_none(),
            subagent,
            team,
            cfg,
        });
        // The servers connected by now are in the first list and the prompt (context.md §10
        // rule 4); the front end waited up to `mcp_wait_ms` for them.
        if session.subagent.is_none() {
            for words in session.cfg.said.clone() {
                session.note_named(&words);
            }
        }
        session.adopt_mcp_servers();
        session.remake_prompt(None);
        if session.subagent.is_none() {
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
            parent: session.subagent.as_ref().map(|s| s.parent.clone()),
        })?;
        Ok(session)
    }

    /// The one constructor: a session from what makes it this session; the rest (what a turn
    /// builds up as it runs) starts empty, the same for a new session and a resumed one.
    fn assemble(parts: Parts) -> Session {
        let Parts { lock, id, title, cfg, ws, system_prompt, tools, history, state, events, fresh, subagent, team } =
            parts;
        let memory = crate::memory::MemoryLink::for_session(&cfg, &id);
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
            parked: Default::default(),
            turn_usage: Default::default(),
            nearby_seen: HashSet::new(),
            jobs_told: Default::default(),
            mcp_seen: 0,
            mcp_failures_told: HashSet::new(),
            subagent,
            turn_seq: None,
            hooks_started: false,
            snapshot: Default::default(),
            granted: Arc::default(),
            team,
            memory,
            cfg,
        };
        session.judge = session.make_judge();
        session
    }

    /// A stored session, exactly as it was: its system prompt, tools and history unchanged, and
    /// its team as it was kept (`team/keep.rs`).
    pub fn resume(
        cfg: SessionConfig,
        id: &str,
        events: UnboundedSender<lembas_protocol::Said>,
    ) -> Result<Session, EngineError> {
        Session::reopen(cfg, id, crate::sink::EventSink::new(events), None)
    }

    /// A stored session reopened: the person's own, or a team subagent's working for another.
    pub(crate) fn reopen(
        cfg: SessionConfig,
        id: &str,
        events: crate::sink::EventSink,
        subagent: Option<crate::subagent::SubagentOf>,
    ) -> Result<Session, EngineError> {
        let store = cfg.store.clone();
        let record = store.session(id)?.ok_or_else(|| EngineError::NoSession(id.to_owned()))?;
        // Before anything is read: another process appending meanwhile would interleave turns.
        let lock = store.lock_session(&record.id)?;
        let (mut ws, _) = Workspace::new(Path::new(&record.project), Path::new(&record.started));
        ws.editor = cfg.editor_files.clone();
        ws.private = cfg.walk_private.clone();
        ws.home = cfg.user_home.clone();
        let tools: Arc<Vec<ToolSchema>> =
            Arc::new(serde_json::from_str(&record.tools).map_err(|e| EngineError::Corrupt(e.to_string()))?);
        let mut state: State = serde_json::from_str(&record.state).map_err(|e| EngineError::Corrupt(e.to_string()))?;
        let history = stored_history(&store, id)?;
        // A resumed session is asked with its own mode unless the person set another.
        state.mode = cfg.bounded(cfg.mode);
        let mut kept = None;
        let team = match &subagent {
            Some(of) => of.team.as_ref().map(|(seat, _)| seat.clone()),
            None if crate::handlers::offers(&tools, "team_add") => {
                let (team, rest) = crate::team::Kept::load(&store, &record.id, &events).map(|k| k.into_team()).unzip();
                kept = rest;
                Some(crate::team::Seat::lead(&cfg, &events, &record.id, team))
            }
            None => None,
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
            subagent,
            team,
        });
        if session.cfg.model.id != record.model && session.subagent.is_none() {
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

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn title(&self) -> &str {
        &self.title
    }

    pub fn mode(&self) -> Mode {
        self.state.mode
    }

    pub fn model_id(&self) -> &str {
        &self.cfg.model.id
    }

    /// The conversation so far as events (a client that opens the session draws it): the
    /// person's words without their notes, replies, reasoning, tool calls and their results.
    pub fn transcript(&self) -> Vec<Event> {
        transcript_of(&self.history)
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
        if self.cfg.sandbox
            && let Err(why) = lembas_tools::sandbox::support()
        {
            self.emit(Event::Notice {
                message: format!(
                    "Commands run without a sandbox: {why}. Only lembas' judgement of each command stands."
                ),
            });
        } else if self.cfg.sandbox
            && let Err(why) = lembas_tools::sandbox::state(self.cfg.sandbox_launcher.as_deref())
        {
            let why = why.trim_start_matches("landlock only: ");
            self.emit(Event::Notice {
                message: format!(
                    "Commands run in a sandbox that cannot keep git's hooks, the project's agent settings or a home folder in /tmp read-only ({why}); writes there that lembas can read are asked."
                ),
            });
        }
        if let Some(offer) = &self.state.offer {
            self.emit(Event::Notice { message: format!("{}.", capitalized(&offer.said())) });
        }
        self.report_context();
        if let Some(seat) = self.leads_team() {
            seat.hub.say_pending();
        }
    }

    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// Words to add to the running turn at its next step.
    pub fn steer_handle(&self) -> Arc<Mutex<Vec<String>>> {
        self.steer.clone()
    }

    pub(crate) fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// The engine's state as the store keeps it: a JSON value, never written out as text and
    /// parsed back at every step.
    pub(crate) fn state_value(&self) -> serde_json::Value {
        serde_json::to_value(&self.state).expect("state serializes")
    }

    /// The model's window: the server's word, else the configuration's, else what a refusal for
    /// length stated; `None` when nobody said (`quirks.json` `no-context-length`: never assume).
    pub(crate) fn window(&self) -> Option<u64> {
        self.cfg.model.context.or(self.cfg.context_window).or(self.state.learned_window)
    }
}

/// `text` with its first letter a capital.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
