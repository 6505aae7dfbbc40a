//! The team on the device (`team.md`, `subagents.md` §5–§13): the tree's rules are
//! `lembas-team`'s; here they meet running sessions. One [`Hub`] per main session holds the tree,
//! the subagents' sessions (running, or parked between turns), the main agent's mail, and who
//! waits for a slot.
//!
//! - A subagent's turn runs as a task of its own; its events reach the main session's front
//!   ends marked with its name; its final reply is its report, posted to its parent.
//! - A message reaches a running agent at its next step (its steer queue), wakes a finished one
//!   as a turn of its own, and waits for the main agent in its mail — delivered at its next step,
//!   or waking it when idle (the host and `settle` watch [`Hub::changed`]).
//! - Slots: every turn — the main agent's too — takes a slot of its model first; one that has
//!   none waits in line, the main agent first.

mod keep;
mod member;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lembas_model::CancellationToken;
use lembas_team::{Delivery, LEAD, State, Team};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::Event;
use crate::session::Session;

pub(crate) use keep::{Kept, kept_tree};
pub(crate) use member::member_tools;

/// Registers a wait for the team's next change (`Hub::changed`) before anything is looked at, so
/// a change in between is not missed.
pub(crate) fn watch_changes(notified: std::pin::Pin<&mut Option<tokio::sync::futures::Notified<'_>>>) {
    if let Some(registered) = notified.as_pin_mut() {
        registered.enable();
    }
}

/// The team changed since [`watch_changes`]; without a team, never.
pub(crate) async fn changed(notified: std::pin::Pin<&mut Option<tokio::sync::futures::Notified<'_>>>) {
    match notified.as_pin_mut() {
        Some(registered) => registered.await,
        None => std::future::pending().await,
    }
}

/// Milliseconds since the epoch: the team's clock.
pub(crate) fn now() -> u64 {
    crate::now_ms().max(0) as u64
}

/// One subagent's running parts.
struct Member {
    /// Its session's steer queue: messages for its next step.
    inbox: Arc<Mutex<Vec<String>>>,
    stop: CancellationToken,
    /// Its session while no turn runs (`None` while one does).
    parked: Option<(Session, UnboundedReceiver<lembas_protocol::Said>)>,
    /// What its next turn starts with when nothing else waits (its brief).
    brief: Option<String>,
    /// The call that made it: its events are marked with it.
    call_id: String,
    /// Its session's settings queue: a mode made stricter reaches it at its next step.
    changes: Arc<Mutex<Vec<lembas_protocol::Submission>>>,
}

/// What the front ends were last told of the tree.
#[derive(Default)]
struct Told {
    tree: Option<lembas_team::TeamTree>,
    at: Option<std::time::Instant>,
    /// A later telling waits for the pace.
    pending: bool,
}

/// The team of one main session.
pub(crate) struct Hub {
    pub team: Mutex<Team>,
    /// Marked messages for the main agent.
    mail: Mutex<Vec<String>>,
    members: Mutex<HashMap<String, Member>>,
    /// Something the main agent may wait on changed: mail, a slot, a subagent's state.
    pub changed: tokio::sync::Notify,
    /// The main session's events: the subagents' are passed on there.
    events: crate::sink::EventSink,
    /// The tree as the front ends were last told it, when, and whether a later telling is
    /// already on its way (`acp.md`: at most four a second).
    told: Mutex<Told>,
    /// The subagents the person stopped this session, for the main agent's note.
    stopped_by_person: Mutex<Vec<String>>,
    /// Where the team is kept (`keep.rs`): the store, the main session's id, what was kept
    /// last, and whether the session closed (nothing is kept after).
    store: Arc<lembas_store::Store>,
    session: String,
    kept: Mutex<Option<String>>,
    closed: std::sync::atomic::AtomicBool,
    /// What reopening the kept team did, for the person (`Hub::say_pending`).
    pending_notice: Mutex<Option<String>>,
    /// The main agent's progress while, between its turns, it has nothing to do but wait for
    /// its subagents' reports (`progress.md`: `waiting_for_subagents`), as last said.
    lead_waiting: Mutex<Option<lembas_progress::Progress>>,
    /// Subagents' turns under way (each holds its subagent's session), and a wake when one ends.
    turns_running: std::sync::atomic::AtomicUsize,
    turn_over: tokio::sync::Notify,
}

/// Where a session sits in a team: the hub, and its own id there.
#[derive(Clone)]
pub(crate) struct Seat {
    pub hub: Arc<Hub>,
    pub me: String,
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seat").field("me", &self.me).finish_non_exhaustive()
    }
}

impl Seat {
    /// The main agent's seat in session `session`'s team — a new one (the session's size
    /// setting), or the one it kept: its model and mode as the session has them now, and what
    /// each model the person may use serves at once.
    pub(crate) fn lead(
        cfg: &crate::SessionConfig,
        events: &crate::sink::EventSink,
        session: &str,
        kept: Option<Team>,
    ) -> Seat {
        let mut team = kept.unwrap_or_else(|| Team::new(cfg.agents.0, cfg.agents.1, &cfg.model.id, cfg.mode, now()));
        team.set_lead_model(&cfg.model.id);
        team.set_lead_mode(cfg.mode);
        for model in std::iter::once(&cfg.model).chain(&cfg.models) {
            team.set_slots(&model.id, slots_of(model));
        }
        Seat { hub: Hub::new(team, events.clone(), cfg.store.clone(), session), me: LEAD.into() }
    }
}

/// What a model serves at once, as the tree counts it.
fn slots_of(model: &lembas_models::ModelInfo) -> lembas_team::ModelSlots {
    let capacity = model.capacity.clone().unwrap_or_default();
    lembas_team::ModelSlots { parallel: capacity.parallel(), group: capacity.group.clone() }
}

/// A `task` subagent of a session that leads a team: it counts toward the size and holds a slot
/// of its model while it runs (`team.md` §3, §8); dropped, both free.
pub(crate) struct TaskSeat {
    hub: Arc<Hub>,
    model: String,
}

impl TaskSeat {
    pub(crate) fn take(hub: &Arc<Hub>, model: &str) -> TaskSeat {
        hub.team().task_started(model);
        hub.tell();
        TaskSeat { hub: hub.clone(), model: model.to_owned() }
    }
}

impl Drop for TaskSeat {
    fn drop(&mut self) {
        self.hub.team().task_ended(&self.model);
        self.hub.schedule();
    }
}

impl Hub {
    pub(crate) fn new(
        team: Team,
        events: crate::sink::EventSink,
        store: Arc<lembas_store::Store>,
        session: &str,
    ) -> Arc<Hub> {
        let hub = Arc::new(Hub {
            team: Mutex::new(team),
            mail: Mutex::default(),
            members: Mutex::default(),
            changed: tokio::sync::Notify::new(),
            events,
            told: Mutex::default(),
            stopped_by_person: Mutex::default(),
            store,
            session: session.to_owned(),
            kept: Mutex::default(),
            closed: Default::default(),
            pending_notice: Mutex::default(),
            lead_waiting: Mutex::default(),
            turns_running: Default::default(),
            turn_over: tokio::sync::Notify::new(),
        });
        *hub.kept.lock().expect("kept") = Some(hub.kept_text());
        hub
    }

    /// The main agent moved to `model`: its turns take that model's slots.
    pub(crate) fn lead_moved(self: &Arc<Self>, model: &lembas_models::ModelInfo) {
        {
            let mut team = self.team();
            team.set_lead_model(&model.id);
            team.set_slots(&model.id, slots_of(model));
        }
        self.tell();
    }

    pub(crate) fn team(&self) -> std::sync::MutexGuard<'_, Team> {
        self.team.lock().expect("team")
    }

    /// The team changed: it is kept, the idle main agent's progress says whom it waits on, and
    /// the front ends are told how the tree stands — only once it has had a subagent: the main
    /// agent alone is no team to draw.
    pub(crate) fn tell(self: &Arc<Self>) {
        self.keep();
        self.say_lead_waiting();
        self.draw();
    }

    /// The part of [`Hub::tell`] a subagent's progress needs (progress is never kept): waiters
    /// woken, and the tree sent at the pace.
    pub(crate) fn draw(self: &Arc<Self>) {
        self.changed.notify_waiters();
        let pace = std::time::Duration::from_millis(
            1000 / u64::from(lembas_spec::loop_spec().progress.pace_per_second.max(1)),
        );
        let mut told = self.told.lock().expect("told");
        if told.pending {
            return;
        }
        let since = told.at.map(|at| at.elapsed());
        let runtime = tokio::runtime::Handle::try_current().ok();
        if let (Some(wait), Some(runtime)) = (since.filter(|s| *s < pace).map(|s| pace - s), runtime) {
            // Told a moment ago: the tree as it stands then goes once the pace allows.
            told.pending = true;
            let hub = self.clone();
            runtime.spawn(async move {
                tokio::time::sleep(wait).await;
                hub.told.lock().expect("told").pending = false;
                hub.draw();
            });
            return;
        }
        let (tree, members) = {
            let team = self.team();
            (team.data(), team.agents().len() > 1)
        };
        if members && told.tree.as_ref() != Some(&tree) {
            told.tree = Some(tree.clone());
            told.at = Some(std::time::Instant::now());
            let _ = self.events.send(Event::Team { tree });
        }
    }

    /// Between the main agent's turns, its progress says how many subagents it waits on
    /// (`waiting_for_subagents`, kept since it began), and goes back to nothing when none is
    /// left; while its turn runs, the turn says its own.
    fn say_lead_waiting(&self) {
        let (idle, running) = {
            let team = self.team();
            (team.lead().state == State::Idle, team.subagents_at_work() as u64)
        };
        let mut said = self.lead_waiting.lock().expect("lead waiting");
        if !idle {
            *said = None;
            return;
        }
        let now = (running > 0).then(|| {
            let phase = lembas_progress::Phase::WaitingForSubagents { running };
            match said.clone() {
                Some(since) => lembas_progress::Progress { phase, ..since },
                None => lembas_progress::Progress::new(phase, crate::now_ms()),
            }
        });
        if now.as_ref().map(|p| &p.phase) != said.as_ref().map(|p| &p.phase) {
            let _ = self.events.send(Event::Phase { progress: now.clone() });
        }
        *said = now;
    }

    /// The main agent's mail, in room order, one message apart from the next by a blank line.
    pub(crate) fn take_mail(&self) -> Option<String> {
        let mail = std::mem::take(&mut *self.mail.lock().expect("mail"));
        (!mail.is_empty()).then(|| mail.join("\n\n"))
    }

    pub(crate) fn has_mail(&self) -> bool {
        !self.mail.lock().expect("mail").is_empty()
    }

    /// Whether any subagent works, waits for a slot, or has mail to wake it: the main agent's
    /// run is not over while one does.
    pub(crate) fn active(&self) -> bool {
        self.team().subagents_at_work() > 0
    }

    /// Hands each message to its recipient, and wakes a parked subagent that got one.
    pub(crate) fn route(self: &Arc<Self>, deliveries: Vec<Delivery>) {
        for id in self.deliver(deliveries) {
            self.wake_if_waiting(&id);
        }
        self.tell();
    }

    /// Puts the messages for the main agent in its mail now; answers the others.
    pub(crate) fn post_lead_mail(&self, deliveries: Vec<Delivery>) -> Vec<Delivery> {
        let (lead, others): (Vec<Delivery>, Vec<Delivery>) = deliveries.into_iter().partition(|d| d.to == LEAD);
        self.mail.lock().expect("mail").extend(lead.into_iter().map(|d| d.text));
        others
    }

    /// Puts each message where its recipient takes it — the main agent's mail, a subagent's
    /// inbox — without waking anyone; answers the subagents that got one.
    fn deliver(&self, deliveries: Vec<Delivery>) -> Vec<String> {
        let mut got = Vec::new();
        for d in deliveries {
            if d.to == LEAD {
                self.mail.lock().expect("mail").push(d.text);
            } else if let Some(member) = self.members.lock().expect("members").get(&d.to) {
                member.inbox.lock().expect("inbox").push(d.text);
                got.push(d.to);
            }
        }
        got
    }

    /// Wakes subagent `id` when it is parked with something to do — its brief, or messages: its
    /// turn starts once it has a slot.
    fn wake_if_waiting(self: &Arc<Self>, id: &str) {
        let has_work =
            self.members.lock().expect("members").get(id).is_some_and(|m| {
                m.parked.is_some() && (m.brief.is_some() || !m.inbox.lock().expect("inbox").is_empty())
            });
        if has_work && self.team().wake(id) {
            self.start(id);
        }
    }

    /// The slots freed: whoever waits and may start now, starts.
    pub(crate) fn schedule(self: &Arc<Self>) {
        let started = self.team().start_waiting();
        for id in started {
            if id != LEAD {
                self.start(&id);
            }
        }
        self.tell();
    }

    /// Waits until the main agent holds a slot for its turn (at once, unless its model is busy
    /// with subagents).
    pub(crate) async fn lead_turn_begins(&self, waiting: impl FnOnce()) {
        let mut waiting = Some(waiting);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.team().lead_wants_turn() {
                return;
            }
            if let Some(say) = waiting.take() {
                say();
            }
            changed.await;
        }
    }

    /// The main agent's turn ended: its slot frees.
    pub(crate) fn lead_turn_ends(self: &Arc<Self>) {
        self.team().turn_ended(LEAD, "", None, now());
        self.schedule();
    }

    /// Stops these subagents where they are; their slots free.
    pub(crate) fn halt(self: &Arc<Self>, ids: &[String]) {
        let mut members = self.members.lock().expect("members");
        for id in ids {
            if let Some(member) = members.get_mut(id) {
                member.stop.cancel();
                // A parked one is dropped now; a running one when its turn gives up.
                member.parked = None;
                member.inbox.lock().expect("inbox").clear();
            }
        }
    }

    /// The main agent's mode changed: subagents looser than their parents are made as strict,
    /// down the tree, at their next step.
    pub(crate) fn lead_mode(self: &Arc<Self>, mode: lembas_spec::Mode) {
        let changed = self.team().set_lead_mode(mode);
        let members = self.members.lock().expect("members");
        for id in &changed {
            let strict = self.team().agent(id).map(|a| a.mode);
            if let (Some(member), Some(mode)) = (members.get(id), strict) {
                member.changes.lock().expect("changes").push(lembas_protocol::Submission {
                    id: lembas_protocol::SubmissionId::fresh("lead-mode"),
                    command: crate::Command::SetMode { mode },
                });
            }
        }
        drop(members);
        if !changed.is_empty() {
            self.tell();
        }
    }

    pub(crate) fn person_stopped(&self, names: &[String]) {
        self.stopped_by_person.lock().expect("stopped").extend(names.iter().cloned());
    }

    /// What the main agent is told of the subagents the person stopped (`team_stopped`): every
    /// one so far, so a note says it again only when another was stopped.
    pub(crate) fn stopped_note(&self) -> Option<String> {
        let names = self.stopped_by_person.lock().expect("stopped");
        (!names.is_empty()).then(|| {
            lembas_spec::render(
                lembas_spec::loop_spec().context.note.text("team_stopped"),
                &[("names", &names.join(", "))],
            )
        })
    }

    /// Stops every subagent: the main session is closing or deleted.
    pub(crate) fn stop_all(self: &Arc<Self>) {
        let live = self.team().live_subtree(LEAD);
        if live.is_empty() {
            return;
        }
        self.team().stop_ids(&live, now());
        self.halt(&live);
        self.schedule();
    }
}

/// The host's hold on a session's team, for what it answers at once, during a turn too: the
/// tree and the room as a front end asks for them (`Command::ReportTeam`), and the person's stop.
#[derive(Clone)]
pub(crate) struct TeamView {
    hub: Arc<Hub>,
}

impl TeamView {
    pub(crate) fn of(seat: &Seat) -> TeamView {
        TeamView { hub: seat.hub.clone() }
    }

    /// The tree (`subagents.md` §12's data); `None` while the session has had no subagent.
    pub fn tree(&self) -> Option<lembas_team::TeamTree> {
        let team = self.hub.team();
        (team.agents().len() > 1).then(|| team.data())
    }

    /// Every message of the room numbered above `since` (the person sees the whole room).
    pub fn room(&self, since: u64) -> Vec<lembas_team::RoomMessage> {
        self.hub.team().room_since(since)
    }

    /// The person stops a working subagent, by its id or its name (its subtree with it): the ids
    /// stopped.
    pub fn stop_named(&self, name: &str) -> Result<Vec<String>, String> {
        let name = name.trim();
        let id = {
            let team = self.hub.team();
            let by_id = team.agent(name).filter(|a| a.id != LEAD && !a.state.ended());
            let agent = by_id
                .or_else(|| team.live_named(name).filter(|a| a.id != LEAD))
                .ok_or_else(|| format!("No subagent called {name} is working; the team: {}.", team.live_names()))?;
            agent.id.clone()
        };
        self.stop(&id)
    }

    /// The person stops a subagent (by id) and its subtree: the ids stopped; the main agent is
    /// told on its next message.
    fn stop(&self, id: &str) -> Result<Vec<String>, String> {
        let ids = {
            let team = self.hub.team();
            let agent = team
                .agent(id)
                .filter(|a| a.id != LEAD && !a.state.ended())
                .ok_or_else(|| format!("no working subagent {id}"))?;
            team.live_subtree(&agent.id)
        };
        let names: Vec<String> = ids.iter().filter_map(|i| self.hub.team().agent(i).map(|a| a.name.clone())).collect();
        self.hub.team().stop_ids(&ids, now());
        self.hub.halt(&ids);
        self.hub.person_stopped(&names);
        self.hub.schedule();
        Ok(ids)
    }
}
