//! `/team`: the tree of the session's subagents as the engine last said it (`subagents.md` §12),
//! `/team size MIN MAX`, `/team stop NAME`, `/team open NAME` (its transcript, read-only, live
//! or ended), `/team findings NAME`, and `/context NAME`.

use lembas_protocol::team::{AgentState, RoomMessage, TeamAgent};

use crate::app::{Action, App, Block};

/// How many of the room's messages `/team` shows (the latest).
const ROOM_SHOWN: usize = 10;

/// A state as a person reads it (`out of context`).
fn state_words(state: AgentState) -> String {
    state.word().replace('_', " ")
}

/// One agent's line: name (id) — position · state · model · mode · context.
fn agent_line(agent: &TeamAgent, depth: usize) -> String {
    let context = match agent.context.window.filter(|w| *w > 0) {
        Some(w) => format!(" · {}% context", agent.context.used * 100 / w),
        None => String::new(),
    };
    let mut mode = agent.mode.as_str().to_owned();
    if !agent.request.is_empty() {
        mode.push_str(&format!(" + {}", agent.request.join(", ")));
    }
    let state = state_words(agent.state);
    let who = if agent.parent.is_none() { "lead".to_owned() } else { format!("{} ({})", agent.name, agent.id) };
    // What it does now: its progress line (`progress.md`), as the main agent's is drawn.
    let doing = agent.progress.as_ref().map(|p| format!(" · {}", p.line(crate::now_ms()))).unwrap_or_default();
    format!("{}{who} — {} · {state} · {} · {mode}{context}{doing}", "  ".repeat(depth), agent.position, agent.model)
}

fn depth_of(agents: &[TeamAgent], agent: &TeamAgent) -> usize {
    let mut depth = 0;
    let mut parent = agent.parent.as_deref();
    while let Some(p) = parent {
        depth += 1;
        parent = agents.iter().find(|a| a.id == p).and_then(|a| a.parent.as_deref());
    }
    depth
}

impl App {
    /// The tree, as `/team` shows it.
    pub fn team_view(&self) -> String {
        let Some(tree) = &self.team else {
            return "No subagents in this session yet: the main agent adds them (team_add) when the work calls for it. /team size MIN MAX sets how many agents the team may have."
                .into();
        };
        let mut lines = vec![format!(
            "Team: {} of {} agents (Subagents: Min {}, Max {}; the count includes the main agent)",
            tree.size, tree.max, tree.min, tree.max
        )];
        lines.extend(tree.agents.iter().map(|a| agent_line(a, depth_of(&tree.agents, a))));
        if tree.open_slots > 0 {
            lines.push(format!("{} open slots", tree.open_slots));
        }
        if !tree.ended.is_empty() {
            lines.push("Ended:".into());
            for a in &tree.ended {
                let state = state_words(a.state);
                lines.push(format!("  {} ({}) — {} · {state} · {} findings", a.name, a.id, a.position, a.findings));
            }
        }
        lines.push("/team stop NAME stops one and those under it · /team size MIN MAX".into());
        lines.join("\n")
    }

    /// The agent called `name` (the latest to hold it, ended ones included).
    fn team_agent(&self, name: &str) -> Option<TeamAgent> {
        let tree = self.team.as_ref()?;
        let all = tree.agents.iter().chain(&tree.ended);
        all.filter(|a| a.name == name || a.id == name).max_by_key(|a| id_number(&a.id)).cloned()
    }

    /// `/context NAME`: how full a subagent's context is.
    pub(crate) fn agent_context(&mut self, name: &str) {
        let Some(agent) = self.team_agent(name) else {
            return self.finished.push(Block::Error(format!("No subagent called {name}: /team shows the tree.")));
        };
        let used = agent.context.used;
        let line = match agent.context.window.filter(|w| *w > 0) {
            Some(w) => format!("{name}: {used} of {w} tokens in its context ({}%).", used * 100 / w),
            None => format!("{name}: {used} tokens in its context; its model's window is not known."),
        };
        self.finished.push(Block::Notice(line));
    }

    /// `/team`: the tree, then the room's last messages (`room`: every message, oldest first,
    /// as the host keeps them).
    pub fn show_team(&mut self, room: Option<&[RoomMessage]>) {
        let mut text = self.team_view();
        let messages = room.unwrap_or_default();
        if !messages.is_empty() {
            let shown = messages.len().min(ROOM_SHOWN);
            let count = match messages.len() {
                1 => "1 message".to_owned(),
                n if n == shown => format!("{n} messages"),
                n => format!("{n} messages, the last {shown}"),
            };
            text.push_str(&format!("\nRoom ({count}):"));
            for m in &messages[messages.len() - shown..] {
                let first = m.text.lines().next().unwrap_or_default();
                let report = if m.report { " (report)" } else { "" };
                text.push_str(&format!("\n  #{} {} → {}{report}: {first}", m.n, m.from, m.to));
            }
        }
        self.finished.push(Block::Notice(text));
    }

    /// Subagents of the team working now (or waiting for a slot); the main agent aside.
    pub fn team_working(&self) -> Option<(u64, u64, usize)> {
        let tree = self.team.as_ref()?;
        let working = tree
            .agents
            .iter()
            .filter(|a| a.parent.is_some())
            .filter(|a| matches!(a.state, AgentState::Working | AgentState::Waiting | AgentState::Paused))
            .count();
        Some((u64::from(tree.size), u64::from(tree.max), working))
    }

    /// `/team`, `/team size MIN MAX`, `/team stop NAME`.
    pub(crate) fn team_command(&mut self, arg: &str) -> Option<Action> {
        let mut words = arg.split_whitespace();
        match words.next() {
            None => Some(Action::Team),
            Some("size") => {
                let numbers: Vec<Option<u32>> = words.map(|w| w.parse().ok()).collect();
                match numbers.as_slice() {
                    [Some(min), Some(max)] => Some(Action::SetAgents(*min, *max)),
                    _ => {
                        self.finished.push(Block::Error(
                            "/team size MIN MAX: two numbers, the main agent included (1 1 is the agent alone).".into(),
                        ));
                        None
                    }
                }
            }
            Some(which @ ("open" | "findings")) => {
                let Some(name) = words.next() else {
                    self.finished
                        .push(Block::Error(format!("/team {which} NAME: the subagent's name, as /team shows it.")));
                    return None;
                };
                let Some(agent) = self.team_agent(name) else {
                    self.finished.push(Block::Error(format!("No subagent called {name}: /team shows the tree.")));
                    return None;
                };
                if which == "findings" {
                    let found: Vec<String> =
                        agent.found.iter().enumerate().map(|(i, f)| format!("{}. {f}", i + 1)).collect();
                    let body = if found.is_empty() { "(no findings)".to_owned() } else { found.join("\n") };
                    self.finished.push(Block::Notice(format!("Findings of {name} ({}):\n{body}", agent.id)));
                    return None;
                }
                match agent.session {
                    Some(session) => Some(Action::Transcript { name: name.to_owned(), session }),
                    None => {
                        self.finished.push(Block::Error(format!("{name} has no transcript yet.")));
                        None
                    }
                }
            }
            Some("stop") => match words.next() {
                Some(name) => Some(Action::StopSubagent(name.to_owned())),
                None => {
                    self.finished.push(Block::Error("/team stop NAME: the subagent's name, as /team shows it.".into()));
                    None
                }
            },
            Some(other) => {
                self.finished.push(Block::Error(format!(
                    "/team {other}: use /team, /team size MIN MAX, /team stop NAME, /team open NAME or /team findings NAME."
                )));
                None
            }
        }
    }
}

/// `s12` → 12, to tell a name's latest holder.
fn id_number(id: &str) -> u64 {
    id.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().unwrap_or(0)
}
