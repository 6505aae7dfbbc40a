//! A session: its fixed prefix (system prompt and tools), its history, and its state, kept in
//! the store as it goes.

pub(crate) mod history;
pub(crate) mod memory;
pub(crate) mod sent;
pub(crate) mod snapshots;
pub(crate) mod subagent;
pub(crate) mod team;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use lembas_permissions::Judge;
use std::sync::{Arc, Mutex};

use lembas_context::{IdCounter, Ledger};
use lembas_model::ToolSchema;
use lembas_permissions::Mode;
use lembas_tools::{Jobs, Workspace};
use serde::{Deserialize, Serialize};

use crate::Event;
pub use crate::config::{SessionConfig, local_today};
use crate::session::history::Entry;
use crate::session::memory::MemoryLink;
use crate::session::subagent::SubagentOf;
use crate::session::team::Seat;
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
    /// How many bytes of a request one token held, as the server counted the last one
    /// (the room in the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_token: Option<f64>,
    /// The last request the server counted, which the next one is reckoned from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<crate::counted::Counted>,
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
    /// The last cache miss explained, for `/context`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_miss: Option<String>,
    /// What a small window left out of the offer as the session was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<WindowFit>,
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
pub(crate) struct Session {
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
    pub(crate) parked: crate::session::subagent::ParkedAgents,
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
    /// The SessionStart hooks ran for this session in this process.
    pub(crate) hooks_started: bool,
    /// The sandbox for this turn's commands is still to be made ready (once the model is
    /// asked: [`Session::sandbox_preparation`]).
    pub(crate) sandbox_unprepared: bool,
    /// Where the running turn the person started began (the checkpoint its snapshots are
    /// kept under, for an undo).
    pub(crate) turn_seq: Option<i64>,
    /// How far this turn's snapshot went.
    pub(crate) snapshot: crate::session::snapshots::TurnSnapshot,
    /// What the person allowed "for this session" on a subagent's card, for the session itself
    /// to take up (the subagent has it at once; the session at its next step).
    pub(crate) granted: Grants,
    /// What the last request sent, for the next one's cache to be checked against.
    pub(crate) sent: sent::LastSent,
    /// Whom it works for: the person, or another session.
    pub(crate) role: Role,
}

/// What a small window left out of the offer, as the session was made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WindowFit {
    /// The window, in tokens.
    pub window: u64,
    /// What was left out, as the person is told it ("team and subagents not offered").
    pub left_out: Vec<String>,
    /// The first request's size with what is offered, in tokens (by the model's tokenizer, or
    /// estimated).
    pub first_request: u64,
    /// Even the smallest offer is more than half the window: nothing is sent.
    pub too_small: bool,
}

/// `text` with its first letter a capital.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// How a person gets a window of at least `tokens` from the local servers they run (the next
/// power of two, as `-c` is usually given).
pub(crate) fn larger_window(tokens: u64) -> String {
    format!(
        "llama-server -c {}; Ollama: OLLAMA_CONTEXT_LENGTH, or num_ctx in the model's Modelfile",
        tokens.next_power_of_two()
    )
}

impl WindowFit {
    /// The line the status bar and `/context` show.
    pub(crate) fn said(&self) -> String {
        if self.too_small {
            return format!(
                "window too small: {} tokens; lembas needs {} (its instructions and tools take {}, at most half)",
                self.window,
                self.first_request * 2,
                self.first_request
            );
        }
        format!("small window: {} not offered", self.left_out.join(", "))
    }

    /// What the person is told as the session starts: what was left out, and the way back.
    pub(crate) fn trimmed(&self, model: &str) -> String {
        format!(
            "{model}'s context window ({} tokens) is small: so that lembas' instructions and tools take at most half of it, this session does without {}. A larger window brings them back ({}).",
            self.window,
            self.left_out.join(", "),
            larger_window(self.window * 2)
        )
    }

    /// What the person is told of it, once: that the window is too small, or what was left out.
    pub(crate) fn told(&self, model: &str) -> String {
        match self.too_small {
            true => format!("{}.", capitalized(&self.said())),
            false => self.trimmed(model),
        }
    }
}

/// Whom a session works for. What only one of them has lives here, so a subagent can never be
/// given the person's memory or a team of its own.
pub(crate) enum Role {
    /// The person's own agent: the lead of its team when the team is offered, reading the
    /// person's memory where their LLeMbas instance keeps one.
    Main { team: Option<Seat>, memory: Option<MemoryLink> },
    /// A subagent working for another session; its seat, when that session leads a team, is in
    /// what it works for.
    Subagent(SubagentOf),
}

impl Role {
    /// Whom it works for, when it is a subagent.
    pub(crate) fn subagent(&self) -> Option<&SubagentOf> {
        match self {
            Role::Subagent(of) => Some(of),
            Role::Main { .. } => None,
        }
    }

    pub(crate) fn is_subagent(&self) -> bool {
        matches!(self, Role::Subagent(_))
    }

    /// Its seat in a team: the lead's, or a team subagent's.
    pub(crate) fn seat(&self) -> Option<&Seat> {
        match self {
            Role::Main { team, .. } => team.as_ref(),
            Role::Subagent(of) => of.team.as_ref().map(|(seat, _)| seat),
        }
    }

    /// The person's memory, which only their own agent reads.
    pub(crate) fn memory(&self) -> Option<&MemoryLink> {
        match self {
            Role::Main { memory, .. } => memory.as_ref(),
            Role::Subagent(_) => None,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The session's background commands end with it, and its team.
        self.jobs.stop_all();
        if let Some(seat) = self.leads_team() {
            seat.hub.close();
        }
        // And the temporary folder its commands had in plan mode, with what they left there (it
        // is made again if the session is resumed and plans again). `remove_dir_all` takes away a
        // link put in its place, never what the link leads to.
        let _ = std::fs::remove_dir_all(self.private_tmp());
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).field("title", &self.title).finish_non_exhaustive()
    }
}

impl Session {
    pub fn id(&self) -> &str {
        &self.id
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

    /// The model's window: the server's word, else the configuration's — or what a refusal for
    /// length stated, where that is smaller (the server was restarted with a smaller window: the
    /// refusal is the newer word); `None` when nobody said (`quirks.json` `no-context-length`:
    /// never assume).
    pub(crate) fn window(&self) -> Option<u64> {
        let stated = self.cfg.model.context.or(self.cfg.context_window);
        match (stated, self.state.learned_window) {
            (Some(stated), Some(learned)) => Some(stated.min(learned)),
            (stated, learned) => stated.or(learned),
        }
    }
}
