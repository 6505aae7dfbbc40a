//! A subagent of the team: its session made once when it is added, its turns run in the
//! background, its final reply posted as its report.

use std::sync::Arc;

use lembas_model::CancellationToken;
use lembas_spec::{loop_spec, render};
use lembas_team::{LEAD, State};
use tokio::sync::mpsc::UnboundedReceiver;

use super::{Hub, Member, Seat, now};
use crate::DoneReason;
use crate::session::Session;
use crate::session::subagent::{OnBehalf, SubagentOf, Watch, forward, forwarded};

/// The tools a subagent of the team has besides its agent's: the room, who it is, its findings,
/// ending; asking the main agent only with request options (`subagents.md` §8).
pub(crate) fn member_tools(may_request: bool) -> Vec<&'static str> {
    let mut tools = vec!["team_whoami", "team_read", "team_send", "team_findings", "team_finish", "report"];
    if may_request {
        tools.push("team_request");
    }
    tools
}

impl Session {
    /// Makes subagent `id`'s session, as the tree describes it, and parks it with its brief: it
    /// runs when the hub starts it.
    pub(crate) fn make_member(&self, seat: &Seat, id: &str, call_id: &str, brief: String) -> Result<(), String> {
        let hub = &seat.hub;
        let (cfg, of) = self.member_setup(seat, id, call_id)?;
        let (sender, events) = crate::sink::EventSink::channel();
        let child = Session::create(cfg, self.ws.clone(), sender, Some(of)).map_err(|e| e.to_string())?;
        if let Some(agent) = hub.team().agent_mut(id) {
            agent.session = Some(child.id.clone());
        }
        let member = Member {
            changes: child.changes.clone(),
            inbox: child.steer_handle(),
            stop: CancellationToken::new(),
            parked: Some((child, events)),
            brief: Some(brief),
            call_id: call_id.to_owned(),
        };
        hub.members.lock().expect("members").insert(id.to_owned(), member);
        Ok(())
    }

    /// What subagent `id`'s session is made (or reopened) with, as the tree describes it: its
    /// model, mode and step limit, approvals asked in its name, and its standing.
    pub(crate) fn member_setup(
        &self,
        seat: &Seat,
        id: &str,
        call_id: &str,
    ) -> Result<(crate::SessionConfig, SubagentOf), String> {
        let hub = &seat.hub;
        let (agent, manager) = {
            let team = hub.team();
            let agent = team.agent(id).cloned().ok_or("no such subagent")?;
            let manager = team.parent_name(id);
            (agent, manager)
        };
        let model = std::iter::once(&self.cfg.model)
            .chain(&self.cfg.models)
            .find(|m| m.id == agent.model)
            .cloned()
            .unwrap_or_else(|| self.cfg.model.clone());
        let mut cfg = self.cfg.clone();
        cfg.effort = if model.id == self.cfg.model.id { self.state.effort.clone() } else { None };
        cfg.model = model;
        // A custom agent: its instructions and tools (a file gone since it was added: general).
        let chosen = agent
            .custom
            .as_deref()
            .and_then(|name| crate::agents::Chosen::named(name, &self.cfg.agent_files).ok())
            .unwrap_or(crate::agents::Chosen::General);
        cfg.mode = chosen.mode(agent.mode);
        cfg.max_steps = loop_spec().steps.subagent_max;
        // Memory is the main agent's, who speaks with the person.
        cfg.memory = None;
        let label = format!("{} ({})", agent.name, agent.role);
        let named = lembas_protocol::SubagentRef {
            id: agent.id.clone(),
            name: agent.name.clone(),
            position: agent.role.clone(),
        };
        cfg.approver = Arc::new(OnBehalf::new(self.cfg.approver.clone(), label, call_id.to_owned(), Some(named)));
        cfg.rules = self.judge.rules.clone();
        let read_only = if agent.explore {
            "\n\nYou explore: you have tools to read and search, and none to change anything or run commands."
        } else {
            ""
        };
        let lead_block = if agent.sub_manager { crate::prompt::text("blocks/team_submanager.md") } else { "" };
        let instructions = format!(
            "Work on your part with your tools until it is done, deciding for yourself where the task leaves a choice.{}",
            chosen.instructions()
        );
        let block = render(
            crate::prompt::text("blocks/team_member.md"),
            &[
                ("name", &agent.name),
                ("id", &agent.id),
                ("manager", &manager),
                ("role", &agent.role),
                ("goal", &agent.goal),
                ("instructions", &instructions),
                ("read_only", read_only),
                ("lead", lead_block),
            ],
        )
        .trim_end()
        .to_owned();
        let of = SubagentOf {
            parent: self.id.clone(),
            label: agent.name.clone(),
            block,
            read_only: agent.explore,
            tools: chosen.tools(),
            granted: self.granted.clone(),
            team: Some((Seat { hub: hub.clone(), me: id.to_owned() }, !agent.request.is_empty())),
        };
        Ok((cfg, of))
    }
}

impl Hub {
    /// Runs subagent `id`'s next turn, if it is parked: its brief the first time, else the
    /// messages that woke it.
    pub(crate) fn start(self: &Arc<Self>, id: &str) {
        let (mut session, events, prompt, machine, stop, call_id) = {
            let mut members = self.members.lock().expect("members");
            let Some(member) = members.get_mut(id) else { return };
            let Some((session, events)) = member.parked.take() else { return };
            let (prompt, machine) = match member.brief.take() {
                // Messages that came meanwhile reach it at its first step.
                Some(brief) => (brief, false),
                None => (std::mem::take(&mut *member.inbox.lock().expect("inbox")).join("\n\n"), true),
            };
            (session, events, prompt, machine, member.stop.clone(), member.call_id.clone())
        };
        if prompt.is_empty() {
            self.park(id, session, events);
            self.team().release(id, State::Finished, now());
            return;
        }
        let hub = self.clone();
        let id = id.to_owned();
        let running = TurnRunning::new(self);
        tokio::spawn(async move {
            let (reason, reply, error, events) =
                hub.forwarded_turn(&id, &mut session, events, &call_id, &prompt, machine, &stop).await;
            hub.turn_done(&id, session, events, reason, reply, error, &stop).await;
            drop(running);
        });
    }

    /// One turn of subagent `id`, its events passed on to the main session's front ends (and its
    /// progress kept in the tree) as it runs: how it ended, its final reply, the last error it
    /// said, and its events' channel back for its next turn.
    #[allow(clippy::too_many_arguments)]
    async fn forwarded_turn(
        self: &Arc<Self>,
        id: &str,
        session: &mut Session,
        events: UnboundedReceiver<lembas_protocol::Said>,
        call_id: &str,
        prompt: &str,
        machine: bool,
        stop: &CancellationToken,
    ) -> (DoneReason, String, Option<String>, Option<UnboundedReceiver<lembas_protocol::Said>>) {
        let name = self.team().agent(id).map(|a| a.name.clone()).unwrap_or_default();
        let watch = self.watch(id);
        let forwarding = tokio::spawn(forward(events, self.events.clone(), call_id.to_owned(), name, Some(watch)));
        let (reason, reply) = Box::pin(session.turn(prompt, &[], machine, stop)).await;
        let (error, events) = forwarded(forwarding).await;
        (reason, reply, error, events)
    }

    fn park(&self, id: &str, session: Session, events: UnboundedReceiver<lembas_protocol::Said>) {
        if let Some(member) = self.members.lock().expect("members").get_mut(id) {
            member.parked = Some((session, events));
        }
    }

    /// A subagent's turn ended: its report goes to its parent, or — its context full — it gets
    /// its last turn first. Then it is parked (or dropped, ended), and whoever waits may start.
    #[allow(clippy::too_many_arguments)]
    async fn turn_done(
        self: &Arc<Self>,
        id: &str,
        mut session: Session,
        events: Option<UnboundedReceiver<lembas_protocol::Said>>,
        mut reason: DoneReason,
        mut reply: String,
        mut error: Option<String>,
        stop: &CancellationToken,
    ) {
        // What it started in the background ends with its turn (`jobs.lifecycle`).
        session.jobs.stop_all();
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            // The main session closed and kept the team as it was: this turn was cut short, and
            // its session is let go (a resume reopens it).
            return;
        }
        let state = self.team().agent(id).map(|a| a.state);
        if state.is_none_or(State::ended) {
            self.schedule();
            return;
        }
        let mut events = events;
        if state == Some(State::Working) && reason != DoneReason::Cancelled && session.context_full() {
            let notice = self.team().pause(id);
            if let (Some(notice), Some(rx)) = (notice, events.take()) {
                // Nothing new reaches it now: what waited is in the room, for whoever replaces it.
                if let Some(member) = self.members.lock().expect("members").get(id) {
                    member.inbox.lock().expect("inbox").clear();
                }
                self.tell();
                session.cfg.max_steps = lembas_team::Team::final_steps() as u32;
                let call_id = self.members.lock().expect("members").get(id).map(|m| m.call_id.clone());
                let last_error;
                (reason, reply, last_error, events) = Box::pin(self.forwarded_turn(
                    id,
                    &mut session,
                    rx,
                    &call_id.unwrap_or_default(),
                    &notice,
                    true,
                    stop,
                ))
                .await;
                error = last_error.or(error);
                session.jobs.stop_all();
            }
        }
        let ended = match reason {
            DoneReason::Answered => None,
            DoneReason::Limit if session.stopped_by == Some("steps") => Some("steps".to_owned()),
            DoneReason::Limit => Some("budget".to_owned()),
            DoneReason::Failed => Some(format!("error — {}", error.unwrap_or_else(|| "no reason given".into()))),
            DoneReason::Cancelled => Some("stopped".to_owned()),
        };
        let deliveries = {
            let mut team = self.team();
            let deliveries = team.turn_ended(id, &reply, ended.as_deref(), now());
            // The main agent's mail is in place before anyone sees this turn end: a session
            // settling before it closes reads "no subagent at work" and "no mail" under the
            // team's lock, so it never finds the turn over with its report not yet posted.
            self.post_lead_mail(deliveries)
        };
        let ended_now = self.team().agent(id).is_none_or(|a| a.state.ended());
        if !ended_now && let Some(events) = events {
            self.park(id, session, events);
        }
        self.route(deliveries);
        // Messages that came after its last step wake it again.
        self.wake_if_waiting(id);
        self.schedule();
    }

    /// What keeps subagent `id`'s progress in the tree as its events pass.
    fn watch(self: &Arc<Self>, id: &str) -> Watch {
        let (hub, id) = (self.clone(), id.to_owned());
        Watch::Phase(Box::new(move |progress| {
            hub.team().set_progress(&id, progress.cloned());
            hub.draw();
        }))
    }

    /// A subagent called `team_finish`: its turn stops after this call.
    pub(crate) fn finish_turn(&self, id: &str) {
        if let Some(member) = self.members.lock().expect("members").get(id) {
            member.stop.cancel();
        }
    }
}

/// A subagent's turn under way, counted by the hub until it has let go of the subagent's
/// session (also when its task is dropped).
struct TurnRunning(Arc<Hub>);

impl TurnRunning {
    fn new(hub: &Arc<Hub>) -> TurnRunning {
        hub.turns_running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        TurnRunning(hub.clone())
    }
}

impl Drop for TurnRunning {
    fn drop(&mut self) {
        self.0.turns_running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.0.turn_over.notify_waiters();
    }
}

impl Hub {
    /// Waits, at most `limit`, until no subagent's turn holds its session: after the main
    /// session closed, so that reopening it finds every subagent's session free.
    pub(crate) async fn let_go(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let over = self.turn_over.notified();
            tokio::pin!(over);
            over.as_mut().enable();
            if self.turns_running.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, over).await.is_err() {
                return;
            }
        }
    }
}

impl Session {
    /// A subagent does not compact: its context is full at `team.context.pause_at` of its
    /// window.
    pub(crate) fn context_full(&self) -> bool {
        let pause_at = lembas_spec::loop_spec().team["context"]["pause_at"].as_f64().unwrap_or(0.85);
        self.window().is_some_and(|w| self.state.last_input as f64 >= pause_at * w as f64)
    }

    /// For a subagent of a team: whether it is paused (its last turn runs); `None` for any other
    /// session.
    pub(crate) fn team_member_paused(&self) -> Option<bool> {
        let seat = self.role.seat().filter(|s| s.me != LEAD)?;
        let state = seat.hub.team().agent(&seat.me).map(|a| a.state);
        Some(state == Some(State::Paused))
    }

    /// Whether this session is the main agent of a team.
    pub(crate) fn leads_team(&self) -> Option<&Seat> {
        self.role.seat().filter(|s| s.me == LEAD)
    }
}
