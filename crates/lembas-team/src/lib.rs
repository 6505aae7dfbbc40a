//! The team tree (`team.md`, `subagents.md` §5–§13): the main agent at the root, the subagents it
//! adds under it or under a sub-manager, the room they talk in, their findings, the requests the
//! main agent decides, and the slots their models have.
//!
//! This crate holds the rules and nothing else: every operation takes the caller and its
//! arguments and answers the tool's text word for word (`loop.json` `team`), or the refusal, with
//! what has to be delivered to whom. Starting, waking and stopping the agents' sessions is the
//! engine's; so is the clock (every operation is given `now`, in milliseconds).

mod ops;
mod render;
mod room;
mod tree;
mod view;

use std::collections::BTreeMap;

use lembas_spec::{Mode, loop_spec};
use serde::{Deserialize, Serialize};

pub use lembas_permissions::delegation::team_text as text;
pub use ops::{AddArgs, Added, AssignArgs, Replaced};
pub use room::{Delivery, Kind, Message, names_of};
pub use view::{AgentContext, Finding, Findings, RoomMessage, TeamAgent, TeamTree};

/// The main agent's name and id.
pub const LEAD: &str = "lead";

/// A part of `loop.json` `team`, by its path (`read.tree`, `marks.report`).
pub fn spec_text(path: &str) -> &'static str {
    let mut at = &loop_spec().team;
    for key in path.split('.') {
        at = &at[key];
    }
    at.as_str().unwrap_or_else(|| panic!("loop.json team.{path}"))
}

fn spec_number(path: &str) -> u64 {
    let mut at = &loop_spec().team;
    for key in path.split('.') {
        at = &at[key];
    }
    at.as_u64().unwrap_or_else(|| panic!("loop.json team.{path}"))
}

/// `team.agents`: a new session's setting, and the cap nothing raises.
pub fn default_setting() -> (u32, u32) {
    (spec_number("agents.min") as u32, spec_number("agents.max") as u32)
}

/// An agent's state (`team.read.states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// A turn runs.
    Working,
    /// It has work and waits for a slot of its model.
    Waiting,
    /// Its last turn ended with its report; a message wakes it.
    Finished,
    /// The main agent between turns.
    Idle,
    /// Its context is full; its last turn runs.
    Paused,
    /// It called `team_finish`.
    Done,
    /// Its last turn after `paused` ended.
    OutOfContext,
    /// The main agent, a replacement or the person stopped it.
    Stopped,
}

impl State {
    /// Ended: it left the team, and keeps only its place in the tree, its findings and its
    /// transcript.
    pub fn ended(self) -> bool {
        matches!(self, State::Done | State::OutOfContext | State::Stopped)
    }

    /// A turn of its runs, holding a slot of its model.
    pub fn holds_slot(self) -> bool {
        matches!(self, State::Working | State::Paused)
    }

    pub fn word(self) -> &'static str {
        let key = match self {
            State::Working => "working",
            State::Waiting => "waiting",
            State::Finished => "finished",
            State::Idle => "idle",
            State::Paused => "paused",
            State::Done => "done",
            State::OutOfContext => "out_of_context",
            State::Stopped => "stopped",
        };
        spec_text(&format!("read.states.{key}"))
    }
}

/// One agent of the tree: the main agent (id and name `lead`) or a subagent. It serializes
/// whole, as the store keeps the tree; clients get [`Team::data`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Agent {
    pub id: String,
    pub name: String,
    /// Its position, one line.
    pub role: String,
    /// Its parent's id; `None` for the main agent.
    pub parent: Option<String>,
    /// Where it was before its sub-manager ended by itself: it goes back under the replacement.
    pub moved_from: Option<String>,
    /// Its brief, as given or as `team_assign` replaced it.
    pub task: String,
    /// The team's goal as it was told.
    pub goal: String,
    pub mode: Mode,
    /// Request options: risk classes it may ask the main agent for.
    pub request: Vec<String>,
    /// The model it runs on (its id).
    pub model: String,
    /// A sub-manager (`lead: true`): directs the subagents placed under it.
    pub sub_manager: bool,
    /// An `explore` agent: reading tools only.
    pub explore: bool,
    /// A custom agent (an agent file's), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
    pub state: State,
    pub findings: Vec<String>,
    /// Tokens in its context now, and its model's window.
    pub context: (u64, Option<u64>),
    /// When its last turn ended (or it was added): `team_read`'s last activity.
    pub last_active: u64,
    pub ended_at: Option<u64>,
    /// Rules the main agent allowed it (`team_decide`): (tool, pattern).
    pub grants: Vec<(String, String)>,
    /// Its place in the queue for a slot while it waits.
    pub waiting_since: Option<u64>,
    /// The stored session its conversation is kept in (a subagent's), for its transcript.
    pub session: Option<String>,
    /// Its progress as its session last said it (`progress.md` §1), while a turn runs: of this
    /// process only, never kept.
    #[serde(skip)]
    pub progress: Option<lembas_progress::Progress>,
}

impl Agent {
    /// Where it stands in line for a slot while it waits: the main agent first, then the others
    /// in the order they began waiting.
    pub(crate) fn place_in_line(&self) -> u64 {
        if self.id == LEAD { 0 } else { self.waiting_since.unwrap_or(u64::MAX) }
    }

    /// An agent with nothing done yet: no task, findings, grants or context; under the main
    /// agent, not yet working.
    pub(crate) fn new(id: &str, name: &str, role: &str, mode: Mode, model: &str, now: u64) -> Agent {
        Agent {
            id: id.to_owned(),
            name: name.to_owned(),
            role: role.to_owned(),
            parent: Some(LEAD.to_owned()),
            moved_from: None,
            task: String::new(),
            goal: String::new(),
            mode,
            request: Vec::new(),
            model: model.to_owned(),
            sub_manager: false,
            explore: false,
            custom: None,
            state: State::Finished,
            findings: Vec::new(),
            context: (0, None),
            last_active: now,
            ended_at: None,
            grants: Vec::new(),
            waiting_since: None,
            session: None,
            progress: None,
        }
    }
}

/// What a model can serve at once (`models/schema.json` `capacity`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSlots {
    /// Requests at once; `None` is no limit.
    pub parallel: Option<u32>,
    /// The one-model server it is on.
    pub group: Option<String>,
}

/// A request a subagent made with `team_request`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub id: String,
    /// The asking agent's id.
    pub from: String,
    pub tool: String,
    pub pattern: String,
    pub open: bool,
}

/// The tree of one session, its room and its numbers. It serializes as the store keeps it:
/// what runs in this process (`task` subagents, the models' slots) is left out, and given again
/// by whoever reopens it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Team {
    pub min: u32,
    pub max: u32,
    /// The main agent first, then every subagent in the order added.
    agents: Vec<Agent>,
    room: Vec<Message>,
    requests: Vec<Request>,
    /// The main agent's goal: the last one it gave.
    goal: Option<String>,
    next_id: u64,
    next_request: u64,
    next_wait: u64,
    /// `task` subagents running in the team, by the model each runs on.
    #[serde(skip)]
    tasks: Vec<String>,
    /// The models' capacity, by model id; a model not listed has no limit.
    #[serde(skip)]
    slots: BTreeMap<String, ModelSlots>,
    /// The steps a subagent's turn may take (`team_whoami`'s limits).
    pub subagent_steps: u64,
}

impl Team {
    /// A team whose main agent runs `model` in `mode`, with the size setting `min`–`max`.
    pub fn new(min: u32, max: u32, model: &str, mode: Mode, now: u64) -> Team {
        let mut lead = Agent::new(LEAD, LEAD, spec_text("read.lead_role"), mode, model, now);
        lead.parent = None;
        lead.state = State::Idle;
        Team {
            min,
            max,
            agents: vec![lead],
            room: Vec::new(),
            requests: Vec::new(),
            goal: None,
            next_id: 1,
            next_request: 1,
            next_wait: 1,
            tasks: Vec::new(),
            slots: BTreeMap::new(),
            subagent_steps: loop_spec().steps.subagent_max as u64,
        }
    }

    /// What `model` can serve at once.
    pub fn set_slots(&mut self, model: &str, slots: ModelSlots) {
        self.slots.insert(model.to_owned(), slots);
    }

    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }

    pub fn room(&self) -> &[Message] {
        &self.room
    }

    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.id == id)
    }

    pub fn agent_mut(&mut self, id: &str) -> Option<&mut Agent> {
        self.agents.iter_mut().find(|a| a.id == id)
    }

    pub fn lead(&self) -> &Agent {
        &self.agents[0]
    }

    /// The agent that holds `name` now (not ended), the main agent included.
    pub fn live_named(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name && !a.state.ended())
    }

    /// The latest agent to hold `name` or the one with id `key`, ended ones included.
    pub fn any_named(&self, key: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.id == key).or_else(|| self.agents.iter().rev().find(|a| a.name == key))
    }

    /// The team's size (`team.md` §3): the main agent, every subagent that has not ended, and
    /// every `task` subagent running.
    pub fn size(&self) -> u32 {
        1 + self.agents[1..].iter().filter(|a| !a.state.ended()).count() as u32 + self.tasks.len() as u32
    }

    /// Open slots: places for subagents the person asked for with Min, not filled yet.
    pub fn open_slots(&self) -> u32 {
        let live = self.agents[1..].iter().filter(|a| !a.state.ended()).count() as u32;
        (self.min.saturating_sub(1)).saturating_sub(live)
    }

    /// A manager does not do the work (`team.md` §6): a sub-manager; the main agent while it has
    /// a subagent that has not ended, or from the start when Min is 2 or more.
    pub fn is_manager(&self, id: &str) -> bool {
        let Some(agent) = self.agent(id) else { return false };
        if agent.sub_manager {
            return true;
        }
        if id == LEAD && self.min >= 2 {
            return true;
        }
        self.agents.iter().any(|a| a.parent.as_deref() == Some(id) && !a.state.ended())
    }

    /// Subagents at work: working, waiting for a slot, or paused for their last turn — what the
    /// main agent waits on between its turns.
    pub fn subagents_at_work(&self) -> usize {
        self.agents[1..].iter().filter(|a| matches!(a.state, State::Working | State::Waiting | State::Paused)).count()
    }

    /// Whether the tools need nothing more (`requires: team`): Max of 2 or more, or a subagent
    /// still on the team.
    pub fn available(&self) -> bool {
        self.max >= 2 || self.agents[1..].iter().any(|a| !a.state.ended())
    }

    /// Whether `task` may start one more subagent: the size it would make is within Max.
    pub fn task_refusal(&self) -> Option<String> {
        if self.max == 1 && !self.agents[1..].iter().any(|a| !a.state.ended()) {
            return Some(spec_text("unavailable.one_agent").to_owned());
        }
        (self.size() + 1 > self.max).then(|| render_text("full", &[("max", &self.max.to_string())]))
    }

    /// A `task` subagent on `model` started, or ended: it counts toward the size and holds a slot.
    pub fn task_started(&mut self, model: &str) {
        self.tasks.push(model.to_owned());
    }

    pub fn task_ended(&mut self, model: &str) {
        if let Some(i) = self.tasks.iter().position(|m| m == model) {
            self.tasks.remove(i);
        }
    }

    /// The main agent's mode changed: every subagent looser than its parent is made as strict,
    /// down the tree; a looser change changes nobody. Answers the ids whose mode changed.
    pub fn set_lead_mode(&mut self, mode: Mode) -> Vec<String> {
        self.agents[0].mode = mode;
        let mut tree: Vec<(String, String, Mode)> = self
            .tree_order()
            .into_iter()
            .filter_map(|id| self.agent(&id))
            .filter(|a| a.id != LEAD && !a.state.ended())
            .map(|a| (a.id.clone(), a.parent.clone().unwrap_or_else(|| LEAD.into()), a.mode))
            .collect();
        lembas_permissions::delegation::tighten(mode, &mut tree);
        let mut changed = Vec::new();
        for (id, _, new) in tree {
            let agent = self.agent_mut(&id).expect("in the tree");
            if agent.mode != new {
                agent.mode = new;
                changed.push(id);
            }
        }
        changed
    }

    /// Its progress now (`None`: nothing runs).
    pub fn set_progress(&mut self, id: &str, progress: Option<lembas_progress::Progress>) {
        if let Some(agent) = self.agent_mut(id) {
            agent.progress = progress;
        }
    }

    /// Its context now: tokens used, and the window.
    pub fn set_context(&mut self, id: &str, used: u64, window: Option<u64>) {
        if let Some(agent) = self.agent_mut(id) {
            agent.context = (used, window);
        }
    }

    /// The tree as clients draw it (`subagents.md` §12).
    pub fn data(&self) -> TeamTree {
        let row = |a: &Agent| TeamAgent {
            id: a.id.clone(),
            name: a.name.clone(),
            position: a.role.clone(),
            parent: a.parent.clone(),
            state: a.state,
            model: a.model.clone(),
            mode: a.mode,
            request: a.request.clone(),
            manager: self.is_manager(&a.id),
            context: AgentContext { used: a.context.0, window: a.context.1 },
            findings: a.findings.len(),
            progress: self.progress_of(a),
            found: a.findings.clone(),
            session: a.session.clone(),
            messages: self.room.iter().filter(|m| m.from_id == a.id || m.recipients.contains(&a.id)).count(),
            task: (a.id != LEAD).then(|| a.task.clone()),
            ended: a.ended_at,
        };
        let order = self.tree_order();
        TeamTree {
            min: self.min,
            max: self.max,
            size: self.size(),
            open_slots: self.open_slots(),
            agents: order.iter().filter_map(|id| self.agent(id)).filter(|a| !a.state.ended()).map(row).collect(),
            ended: self.agents.iter().filter(|a| a.state.ended()).map(row).collect(),
        }
    }

    /// The room's messages numbered above `since`, as the person reads them (recipients by name).
    pub fn room_since(&self, since: u64) -> Vec<RoomMessage> {
        let name = |id: &str| self.agent(id).map_or_else(|| id.to_owned(), |a| a.name.clone());
        self.room
            .iter()
            .filter(|m| m.n > since)
            .map(|m| RoomMessage {
                n: m.n,
                from: m.from.clone(),
                to: m.to.clone(),
                recipients: m.recipients.iter().map(|r| name(r)).collect(),
                text: m.text.clone(),
                time: m.at,
                report: m.kind == Kind::Report,
                kind: m.kind,
            })
            .collect()
    }
}

impl Team {
    /// What an agent's progress line says: its own phase while a turn runs, `queued` (with how
    /// many are ahead in line) while it waits for a slot, nothing otherwise.
    fn progress_of(&self, agent: &Agent) -> Option<lembas_progress::Progress> {
        match agent.state {
            State::Waiting => {
                let mine = agent.place_in_line();
                let ahead = self
                    .agents
                    .iter()
                    .filter(|a| a.state == State::Waiting && a.id != agent.id && a.place_in_line() < mine)
                    .count() as u64;
                Some(lembas_progress::Progress::new(
                    lembas_progress::Phase::Queued { ahead: Some(ahead) },
                    agent.last_active as i64,
                ))
            }
            State::Working | State::Paused => agent.progress.clone(),
            _ => None,
        }
    }
}

/// A `team.texts` text with its variables filled.
pub(crate) fn render_text(key: &str, vars: &[(&str, &str)]) -> String {
    lembas_spec::render(&text(key), vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds a subagent `name` under the main agent, on model `m`.
    fn add(team: &mut Team, name: &str) -> Added {
        let args = AddArgs {
            name: name.into(),
            role: "r".into(),
            task: "t".into(),
            goal: Some("g".into()),
            ..Default::default()
        };
        team.add(LEAD, args, || Ok((false, None, "m".into())), 0).unwrap()
    }

    #[test]
    fn the_tree_says_what_each_agent_does_and_how_many_wait_ahead() {
        let mut team = Team::new(1, 4, "m", Mode::Edit, 0);
        team.set_slots("m", ModelSlots { parallel: Some(1), group: None });
        assert!(add(&mut team, "a").working);
        assert!(!add(&mut team, "b").working);
        assert!(!add(&mut team, "c").working);
        team.set_progress("s1", Some(lembas_progress::Progress::new(lembas_progress::Phase::Thinking, 5)));
        // As the protocol carries it.
        let data = serde_json::to_value(team.data()).unwrap();
        let progress = |name: &str| {
            data["agents"].as_array().unwrap().iter().find(|a| a["name"] == name).unwrap()["progress"].clone()
        };
        assert_eq!(progress("a")["phase"], "thinking");
        assert_eq!((progress("b")["phase"].as_str(), progress("b")["ahead"].as_u64()), (Some("queued"), Some(0)));
        assert_eq!(progress("c")["ahead"], 1);
        assert!(progress("lead").is_null(), "the idle main agent does nothing");
        // Its turn over, an agent's phase goes with it.
        team.turn_ended("s1", "done", None, 1);
        assert!(team.agent("s1").unwrap().progress.is_none());
    }

    #[test]
    fn a_kept_tree_reopens_with_its_cut_short_turns_to_wake_and_its_paused_agent_gone() {
        let mut team = Team::new(1, 5, "m", Mode::Edit, 0);
        team.set_slots("m", ModelSlots { parallel: Some(2), group: None });
        for name in ["a", "b", "c", "d"] {
            add(&mut team, name);
        }
        // a and b work, c and d wait; a fills its context and pauses; b reports.
        assert!(team.pause("s1").is_some());
        team.turn_ended("s2", "b is done", None, 5);
        team.start_waiting();
        team.set_progress("s3", Some(lembas_progress::Progress::new(lembas_progress::Phase::Thinking, 0)));
        team.send("s3", &["lead".to_owned()], "halfway", 6).unwrap();

        let kept = serde_json::to_string(&team).unwrap();
        let mut reopened: Team = serde_json::from_str(&kept).unwrap();
        assert!(reopened.agent("s3").unwrap().progress.is_none(), "progress is this process's only");
        assert_eq!(reopened.room().len(), team.room().len());
        reopened.set_slots("m", ModelSlots { parallel: Some(2), group: None });
        let (woken, told) = reopened.reopen(9);
        assert_eq!(woken, ["s3", "s4"], "the one working first, then the one in line");
        assert_eq!(reopened.agent("s1").unwrap().state, State::OutOfContext);
        assert_eq!(told.len(), 1);
        assert!(told[0].to == LEAD && told[0].text.contains("[Team report from a to lead:]"), "{told:?}");
        assert!(woken.iter().all(|id| reopened.agent(id).unwrap().state == State::Finished));
        assert_eq!(reopened.lead().state, State::Idle);
        // The numbers go on where they were: the `gone` report follows the room, the next
        // subagent is s5.
        assert_eq!(reopened.room().last().unwrap().n, team.room().last().unwrap().n + 1);
        add(&mut reopened, "e");
        assert!(reopened.agent("s5").is_some());
    }
}
