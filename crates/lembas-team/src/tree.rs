//! The tree's shape: its order, subtrees, and the capacity of the models its agents run on.

use crate::{Delivery, LEAD, State, Team};

impl Team {
    /// Every agent's id in tree order: an agent, then its subagents in the order added, depth
    /// first, from the main agent.
    pub fn tree_order(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.agents.len());
        self.walk(LEAD, &mut out);
        out
    }

    fn walk(&self, id: &str, out: &mut Vec<String>) {
        out.push(id.to_owned());
        for child in self.agents.iter().filter(|a| a.parent.as_deref() == Some(id)) {
            self.walk(&child.id, out);
        }
    }

    /// How deep `id` is: 0 for the main agent.
    pub fn depth(&self, id: &str) -> usize {
        let mut depth = 0;
        let mut at = self.agent(id).and_then(|a| a.parent.clone());
        while let Some(parent) = at {
            depth += 1;
            at = self.agent(&parent).and_then(|a| a.parent.clone());
        }
        depth
    }

    /// `id` and every agent under it, in tree order.
    pub fn subtree(&self, id: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(id, &mut out);
        out
    }

    /// The agents under `id` that have not ended, in tree order — `id` itself first, unless it
    /// is the main agent (which is never stopped).
    pub fn live_subtree(&self, id: &str) -> Vec<String> {
        self.subtree(id).into_iter().filter(|i| i != LEAD && self.agent(i).is_some_and(|a| !a.state.ended())).collect()
    }

    /// Whether `id` is `of` or under it.
    pub fn in_subtree(&self, of: &str, id: &str) -> bool {
        let mut at = Some(id.to_owned());
        while let Some(current) = at {
            if current == of {
                return true;
            }
            at = self.agent(&current).and_then(|a| a.parent.clone());
        }
        false
    }

    /// The names of the agents on the team now, in tree order.
    pub fn live_names(&self) -> String {
        self.tree_order()
            .iter()
            .filter_map(|id| self.agent(id))
            .filter(|a| !a.state.ended())
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The name of `id`'s parent (`lead` for the main agent's own).
    pub fn parent_name(&self, id: &str) -> String {
        let parent = self.agent(id).and_then(|a| a.parent.clone()).unwrap_or_else(|| LEAD.into());
        self.agent(&parent).map_or_else(|| LEAD.into(), |a| a.name.clone())
    }

    /// A sub-manager that ended by itself leaves its subagents to its parent, until the main
    /// agent replaces it.
    pub(crate) fn hand_up(&mut self, id: &str) {
        let parent = self.agent(id).and_then(|a| a.parent.clone());
        for agent in self.agents.iter_mut() {
            if agent.parent.as_deref() == Some(id) && !agent.state.ended() {
                agent.moved_from = Some(id.to_owned());
                agent.parent = parent.clone();
            }
        }
    }

    /// Whether an agent on `model` could start now: a slot of the model is free, and no other
    /// model of its one-model server is busy.
    pub fn slot_free(&self, model: &str) -> bool {
        let slots = self.slots.get(model).cloned().unwrap_or_default();
        let busy = |m: &str| {
            self.agents.iter().filter(|a| a.model == m && a.state.holds_slot()).count()
                + self.tasks.iter().filter(|t| *t == m).count()
        };
        if slots.parallel.is_some_and(|p| busy(model) >= p as usize) {
            return false;
        }
        match &slots.group {
            Some(group) => {
                !self.slots.iter().any(|(m, s)| m != model && s.group.as_ref() == Some(group) && busy(m) > 0)
            }
            None => true,
        }
    }

    /// The agent has work: it starts when a slot is free, else it waits in line.
    pub(crate) fn want_slot(&mut self, id: &str) {
        let free = self.agent(id).is_some_and(|a| self.slot_free(&a.model));
        let order = self.next_wait;
        let Some(agent) = self.agent_mut(id) else { return };
        if agent.state.ended() || agent.state.holds_slot() {
            return;
        }
        if free {
            agent.state = State::Working;
            agent.waiting_since = None;
        } else if agent.state != State::Waiting {
            agent.state = State::Waiting;
            agent.waiting_since = Some(order);
            self.next_wait += 1;
        }
    }

    /// The main agent moved to another model: its slots are that model's from its next turn.
    pub fn set_lead_model(&mut self, model: &str) {
        self.agents[0].model = model.to_owned();
    }

    /// The main agent has work (the person's words, a report): whether it may run now. When it
    /// may not, it waits in line — first.
    pub fn lead_wants_turn(&mut self) -> bool {
        self.want_slot(LEAD);
        self.agents[0].state == State::Working
    }

    /// An agent's turn ended (or it was stopped): its slot frees. The main agent goes idle; a
    /// subagent takes `then`.
    pub fn release(&mut self, id: &str, then: State, now: u64) {
        if let Some(agent) = self.agent_mut(id) {
            agent.state = then;
            agent.last_active = now;
            agent.waiting_since = None;
            agent.progress = None;
        }
    }

    /// The tree as a resumed session finds it, its turns having stopped with the process that
    /// ran them: the main agent is idle; a subagent that was working or waiting for a slot is
    /// `finished` — answered, in the order they started or lined up, for the engine to wake with
    /// what it missed; a paused one (its context full, its last turn cut short) has ended out of
    /// context, and its parent is told `gone` — what is answered beside.
    pub fn reopen(&mut self, now: u64) -> (Vec<String>, Vec<Delivery>) {
        self.release(LEAD, State::Idle, now);
        let mut cut_short: Vec<(u64, String)> = Vec::new();
        let mut paused = Vec::new();
        for agent in &self.agents[1..] {
            match agent.state {
                State::Working => cut_short.push((0, agent.id.clone())),
                State::Waiting => cut_short.push((agent.place_in_line(), agent.id.clone())),
                State::Paused => paused.push(agent.id.clone()),
                _ => {}
            }
        }
        // A stable sort: the ones that were working keep the order they were added in, ahead of
        // those in line.
        cut_short.sort_by_key(|(order, _)| *order);
        let mut deliveries = Vec::new();
        for id in &paused {
            deliveries.extend(self.turn_ended(id, "", None, now));
        }
        let ids: Vec<String> = cut_short.into_iter().map(|(_, id)| id).collect();
        for id in &ids {
            let last_active = self.agent(id).map_or(now, |a| a.last_active);
            self.release(id, State::Finished, last_active);
        }
        (ids, deliveries)
    }

    /// Who may start now that slots are free, in order: the main agent first, then the others
    /// in the order they began waiting. Each answered is `working` from here on.
    pub fn start_waiting(&mut self) -> Vec<String> {
        let mut waiting: Vec<(u64, String)> = self
            .agents
            .iter()
            .filter(|a| a.state == State::Waiting)
            .map(|a| (a.place_in_line(), a.id.clone()))
            .collect();
        waiting.sort();
        let mut started = Vec::new();
        for (_, id) in waiting {
            let model = self.agent(&id).map(|a| a.model.clone()).unwrap_or_default();
            if self.slot_free(&model) {
                let agent = self.agent_mut(&id).expect("waiting agent");
                agent.state = State::Working;
                agent.waiting_since = None;
                started.push(id);
            }
        }
        started
    }
}
