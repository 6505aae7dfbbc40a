//! What `team_read` and `team_whoami` answer (`loop.json` `team.read`, `team.whoami`).

use lembas_spec::render;

use crate::room::Kind;
use crate::{Agent, LEAD, State, Team, spec_text};

/// Floor of used × 100 / window.
fn percent(used: u64, window: Option<u64>) -> String {
    match window {
        Some(w) if w > 0 => (used * 100 / w).to_string(),
        _ => "?".into(),
    }
}

impl Team {
    /// An agent's mode as the tree shows it: its name, and request options as `+ write`.
    fn mode_shown(agent: &Agent) -> String {
        if agent.request.is_empty() {
            agent.mode.as_str().to_owned()
        } else {
            let kinds = render(spec_text("read.request"), &[("kinds", &agent.request.join(", "))]);
            format!("{} {kinds}", agent.mode.as_str())
        }
    }

    fn last(agent: &Agent, now: u64) -> String {
        if agent.state.holds_slot() {
            return spec_text("read.active").to_owned();
        }
        let seconds = now.saturating_sub(agent.last_active) / 1000;
        format!("{} ago", lembas_progress::elapsed(seconds as i64))
    }

    /// `team_read`: the tree, open slots, ended subagents, then the room's messages after
    /// `since` that `caller` may see, at most `read_max`. `models` names a model by its id.
    pub fn read(&self, caller: &str, since: u64, now: u64, model_name: &dyn Fn(&str) -> String) -> String {
        let mut out =
            vec![render(spec_text("read.tree"), &[("size", &self.size().to_string()), ("max", &self.max.to_string())])];
        for id in self.tree_order() {
            let agent = self.agent(&id).expect("in the tree");
            if agent.state.ended() {
                continue;
            }
            let indent = "  ".repeat(self.depth(&id));
            let context = render(spec_text("read.context"), &[("percent", &percent(agent.context.0, agent.context.1))]);
            out.push(render(
                spec_text("read.agent"),
                &[
                    ("indent", &indent),
                    ("name", &agent.name),
                    ("id", &agent.id),
                    ("role", &agent.role),
                    ("state", agent.state.word()),
                    ("model", &model_name(&agent.model)),
                    ("mode", &Self::mode_shown(agent)),
                    ("context", &context),
                    ("last", &Self::last(agent, now)),
                ],
            ));
        }
        let open = self.open_slots();
        if open > 0 {
            out.push(render(spec_text("read.slots"), &[("n", &open.to_string())]));
        }
        let ended: Vec<&Agent> = self.agents.iter().filter(|a| a.state.ended()).collect();
        if !ended.is_empty() {
            out.push(spec_text("read.ended").to_owned());
            for agent in ended {
                out.push(render(
                    spec_text("read.ended_agent"),
                    &[
                        ("name", &agent.name),
                        ("id", &agent.id),
                        ("role", &agent.role),
                        ("state", agent.state.word()),
                        ("findings", &agent.findings.len().to_string()),
                    ],
                ));
            }
        }
        out.push(String::new());
        let max = crate::spec_number("read_max") as usize;
        let seen: Vec<&crate::Message> = self.room.iter().filter(|m| m.n > since && self.visible(caller, m)).collect();
        let since_text = since.to_string();
        if seen.is_empty() {
            out.push(render(spec_text("read.none"), &[("since", &since_text)]));
            return out.join("\n");
        }
        out.push(render(spec_text("read.room"), &[("since", &since_text)]));
        for m in seen.iter().take(max) {
            let key = if m.kind == Kind::Report { "read.report" } else { "read.message" };
            let text = m.text.lines().collect::<Vec<_>>().join("\n  ");
            out.push(render(
                spec_text(key),
                &[("n", &m.n.to_string()), ("from", &m.from), ("to", &m.to), ("text", &text)],
            ));
        }
        if seen.len() > max {
            out.push(render(spec_text("read.more"), &[("last", &seen[max - 1].n.to_string())]));
        }
        out.join("\n")
    }

    /// `team_whoami`: who the caller is, one line each.
    pub fn whoami(&self, caller: &str, model_name: &str) -> String {
        let Some(agent) = self.agent(caller) else { return String::new() };
        let line = |key: &str, vars: &[(&str, &str)]| render(spec_text(&format!("whoami.lines.{key}")), vars);
        let mut out = vec![line("who", &[("name", &agent.name), ("id", &agent.id), ("role", &agent.role)])];
        if caller != LEAD {
            out.push(line("parent", &[("parent", &self.parent_name(caller))]));
            out.push(line("task", &[("task", &agent.task)]));
        }
        out.push(line("mode", &[("mode", agent.mode.as_str())]));
        if !agent.request.is_empty() {
            out.push(line("request", &[("kinds", &agent.request.join(", "))]));
        }
        out.push(line("model", &[("model", model_name)]));
        let steps = if caller == LEAD {
            lembas_spec::loop_spec().steps.max.to_string()
        } else {
            self.subagent_steps.to_string()
        };
        let spawn = spec_text(if caller == LEAD { "whoami.lines.spawn_yes" } else { "whoami.lines.spawn_no" });
        out.push(line(
            "limits",
            &[("size", &self.size().to_string()), ("max", &self.max.to_string()), ("steps", &steps), ("spawn", spawn)],
        ));
        let (used, window) = agent.context;
        out.push(line(
            "context",
            &[
                ("used", &used.to_string()),
                ("window", &window.map_or_else(|| "?".into(), |w| w.to_string())),
                ("percent", &percent(used, window)),
            ],
        ));
        out.join("\n")
    }

    /// How many agents are working now, the main agent aside (the status bar's count).
    pub fn working(&self) -> usize {
        self.agents[1..].iter().filter(|a| matches!(a.state, State::Working | State::Paused | State::Waiting)).count()
    }
}
