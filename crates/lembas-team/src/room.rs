//! The room (`team.md` §5, §7): who receives what, and the marks messages arrive under.

use lembas_spec::render;
use serde::{Deserialize, Serialize};

use crate::{LEAD, State, Team, render_text, spec_text, text};

/// What a room message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Message,
    /// A subagent's final reply (or `team_finish`) to its parent.
    Report,
    /// `team_assign`'s new task.
    Assignment,
    /// `team_request`, to the main agent.
    Request,
    /// `team_decide`'s answer.
    Decision,
}

/// One message of the room.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message {
    pub n: u64,
    /// The sender's name, and its id.
    pub from: String,
    pub from_id: String,
    /// As addressed: the names joined with ", ", or `all`.
    pub to: String,
    /// The recipients' ids, resolved when it was posted.
    pub recipients: Vec<String>,
    pub text: String,
    pub at: u64,
    pub kind: Kind,
    /// A request's or decision's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

impl Message {
    /// The mark it arrives under (`team.marks`), then its text.
    pub fn marked(&self) -> String {
        let (key, vars): (&str, Vec<(&str, &str)>) = match self.kind {
            Kind::Message => ("message", vec![]),
            Kind::Report => ("report", vec![]),
            Kind::Assignment => ("assignment", vec![]),
            Kind::Request => ("request", vec![("id", self.request.as_deref().unwrap_or_default())]),
            Kind::Decision => ("decision", vec![("id", self.request.as_deref().unwrap_or_default())]),
        };
        let mut all = vec![("from", self.from.as_str()), ("to", self.to.as_str())];
        all.extend(vars);
        format!("{}\n{}", render(spec_text(&format!("marks.{key}")), &all), self.text)
    }
}

/// A message to hand to an agent: at its next step while its turn runs, or as a turn of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The recipient's id.
    pub to: String,
    /// The mark and the text.
    pub text: String,
}

/// The names a call gives (`team_send`'s `to`, `request`'s kinds): a list, or a lone string read
/// as a one-name list (`team.md` §5).
pub fn names_of(value: Option<&serde_json::Value>) -> Vec<String> {
    match value {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(items)) => items.iter().filter_map(|v| v.as_str()).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

impl Team {
    /// Posts a message and answers what to deliver: to every recipient but a paused one (its
    /// last turn is its own; whoever replaces it reads the room).
    pub(crate) fn post(
        &mut self,
        from_id: &str,
        (to, recipients): (String, Vec<String>),
        body: String,
        kind: Kind,
        request: Option<String>,
        now: u64,
    ) -> Vec<Delivery> {
        let from = self.agent(from_id).map_or_else(|| from_id.to_owned(), |a| a.name.clone());
        let message = Message {
            n: self.room.len() as u64 + 1,
            from,
            from_id: from_id.to_owned(),
            to,
            recipients,
            text: body,
            at: now,
            kind,
            request,
        };
        let marked = message.marked();
        let deliveries = message
            .recipients
            .iter()
            .filter(|id| self.agent(id).is_some_and(|a| a.state != State::Paused && !a.state.ended()))
            .map(|id| Delivery { to: id.clone(), text: marked.clone() })
            .collect();
        self.room.push(message);
        deliveries
    }

    /// `team_send`: one message to names, `parent` or `all`.
    pub fn send(&mut self, from_id: &str, to: &[String], message: &str, now: u64) -> Result<Vec<Delivery>, String> {
        let mut names: Vec<String> = Vec::new();
        for name in to.iter().map(|n| n.trim()) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        let all = names.iter().any(|n| n == "all");
        let (addressed, recipients) = if all {
            let others: Vec<String> = self
                .tree_order()
                .into_iter()
                .filter(|id| *id != from_id && self.agent(id).is_some_and(|a| !a.state.ended()))
                .collect();
            if others.is_empty() {
                return Err(text("nobody"));
            }
            ("all".to_owned(), others)
        } else {
            let mut ids = Vec::new();
            let mut shown = Vec::new();
            for name in &names {
                let id = if name == spec_text("names.parent") {
                    if from_id == LEAD {
                        return Err(text("no_parent"));
                    }
                    self.agent(from_id).and_then(|a| a.parent.clone()).unwrap_or_else(|| LEAD.into())
                } else {
                    match self.live_named(name) {
                        Some(agent) => agent.id.clone(),
                        None => {
                            return Err(render_text("unknown", &[("name", name), ("names", &self.live_names())]));
                        }
                    }
                };
                let name = self.agent(&id).map(|a| a.name.clone()).unwrap_or_default();
                if !ids.contains(&id) {
                    ids.push(id);
                    shown.push(name);
                }
            }
            if ids.iter().any(|id| id == from_id) {
                return Err(text("self"));
            }
            if ids.is_empty() {
                return Err(render_text("unknown", &[("name", ""), ("names", &self.live_names())]));
            }
            (shown.join(", "), ids)
        };
        Ok(self.post(from_id, (addressed, recipients), message.trim().to_owned(), crate::Kind::Message, None, now))
    }

    /// What `team_send` answers once posted.
    pub fn sent_text(&self) -> String {
        let to = self.room.last().map(|m| m.to.clone()).unwrap_or_default();
        render_text("sent", &[("to", &to)])
    }

    /// A subagent's report to its parent: its final reply, or what it gave `team_finish`.
    pub(crate) fn report(&mut self, id: &str, body: String, now: u64) -> Vec<Delivery> {
        let parent = self.agent(id).and_then(|a| a.parent.clone()).unwrap_or_else(|| LEAD.into());
        let to = self.agent(&parent).map_or_else(|| LEAD.into(), |a| a.name.clone());
        self.post(id, (to, vec![parent]), body, Kind::Report, None, now)
    }

    /// Whether `viewer` may see message `m` in `team_read`: the main agent every one; anyone
    /// else those whose sender or one of whose recipients is in its subtree.
    pub fn visible(&self, viewer: &str, m: &Message) -> bool {
        viewer == LEAD || self.in_subtree(viewer, &m.from_id) || m.recipients.iter().any(|r| self.in_subtree(viewer, r))
    }

    /// A subagent's turn ended: how it is told to its parent (`team.md` §5), and its new state.
    /// `ended` is the reason a turn stopped otherwise than by the model (`steps`, `budget`,
    /// `error — text`). A paused one's last turn makes it out of context; one that finished or
    /// was stopped meanwhile sends nothing more.
    pub fn turn_ended(&mut self, id: &str, reply: &str, ended: Option<&str>, now: u64) -> Vec<Delivery> {
        let Some(agent) = self.agent(id) else { return Vec::new() };
        if id == LEAD {
            self.release(LEAD, State::Idle, now);
            return Vec::new();
        }
        let state = agent.state;
        if state.ended() {
            return Vec::new();
        }
        let reply = reply.trim();
        let body = if state == State::Paused {
            let gone = render_text("gone", &[("name", &agent.name), ("id", &agent.id)]);
            if reply.is_empty() { gone } else { format!("{gone}\n\n{reply}") }
        } else {
            let mut body = if reply.is_empty() { text("no_report") } else { reply.to_owned() };
            if let Some(reason) = ended {
                body.push_str("\n\n");
                body.push_str(&render_text("ended", &[("reason", reason)]));
            }
            body
        };
        let deliveries = self.report(id, body, now);
        if state == State::Paused {
            self.release(id, State::OutOfContext, now);
            self.end(id, now);
        } else {
            self.release(id, State::Finished, now);
        }
        deliveries
    }

    /// Marks `id` ended now; a sub-manager's subagents go up to its parent.
    pub(crate) fn end(&mut self, id: &str, now: u64) {
        if let Some(agent) = self.agent_mut(id) {
            agent.ended_at = Some(now);
        }
        for request in self.requests.iter_mut().filter(|r| r.from == id) {
            request.open = false;
        }
        self.hand_up(id);
    }

    /// A subagent's context reached `pause_at`: it is paused, and its last turn's user message
    /// is the notice. `None` when it is not working (nothing to pause).
    pub fn pause(&mut self, id: &str) -> Option<String> {
        let agent = self.agent_mut(id)?;
        if agent.state != State::Working || id == LEAD {
            return None;
        }
        agent.state = State::Paused;
        let mark = render(spec_text("marks.context_full"), &[("to", &agent.name)]);
        let steps = crate::spec_number("context.final_steps").to_string();
        Some(format!("{mark}\n{}", render_text("context_full", &[("steps", &steps)])))
    }

    /// The steps a paused subagent's last turn may take.
    pub fn final_steps() -> u64 {
        crate::spec_number("context.final_steps")
    }

    /// Messages for a finished subagent wake it: it has work again, and starts when a slot is
    /// free. Answers whether it is working now.
    pub fn wake(&mut self, id: &str) -> bool {
        if self.agent(id).is_some_and(|a| a.state == State::Finished) {
            self.want_slot(id);
        }
        self.agent(id).is_some_and(|a| a.state == State::Working)
    }
}
