//! `/team`: the tree of the session's subagents as the engine last said it (`subagents.md` §12),
//! `/team size MIN MAX`, `/team stop NAME`, `/team open NAME` (its transcript, read-only, live
//! or ended), `/team findings NAME`, and `/context NAME`.

use serde_json::Value;

use crate::app::{Action, App, Block};

/// How many of the room's messages `/team` shows (the latest).
const ROOM_SHOWN: usize = 10;

/// One agent's line: name (id) — position · state · model · mode · context.
fn agent_line(agent: &Value, depth: usize) -> String {
    let text = |k: &str| agent[k].as_str().unwrap_or_default().to_owned();
    let (used, window) = (agent["context"]["used"].as_u64().unwrap_or(0), agent["context"]["window"].as_u64());
    let context = match window.filter(|w| *w > 0) {
        Some(w) => format!(" · {}% context", used * 100 / w),
        None => String::new(),
    };
    let mut mode = text("mode");
    if let Some(kinds) = agent["request"].as_array().filter(|k| !k.is_empty()) {
        let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
        mode.push_str(&format!(" + {}", kinds.join(", ")));
    }
    let state = text("state").replace('_', " ");
    let who = if text("id") == "lead" { "lead".to_owned() } else { format!("{} ({})", text("name"), text("id")) };
    // What it does now: its progress line (`progress.md`), as the main agent's is drawn.
    let doing = serde_json::from_value::<lembas_protocol::Progress>(agent["progress"].clone())
        .map(|p| format!(" · {}", p.line(crate::now_ms())))
        .unwrap_or_default();
    format!("{}{who} — {} · {state} · {} · {mode}{context}{doing}", "  ".repeat(depth), text("position"), text("model"))
}

fn depth_of(agents: &[Value], agent: &Value) -> usize {
    let mut depth = 0;
    let mut parent = agent["parent"].as_str().map(str::to_owned);
    while let Some(p) = parent {
        depth += 1;
        parent = agents.iter().find(|a| a["id"] == p.as_str()).and_then(|a| a["parent"].as_str().map(str::to_owned));
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
        let agents = tree["agents"].as_array().cloned().unwrap_or_default();
        let mut lines = vec![format!(
            "Team: {} of {} agents (Subagents: Min {}, Max {}; the count includes the main agent)",
            tree["size"], tree["max"], tree["min"], tree["max"]
        )];
        lines.extend(agents.iter().map(|a| agent_line(a, depth_of(&agents, a))));
        if let Some(open) = tree["open_slots"].as_u64().filter(|n| *n > 0) {
            lines.push(format!("{open} open slots"));
        }
        let ended = tree["ended"].as_array().cloned().unwrap_or_default();
        if !ended.is_empty() {
            lines.push("Ended:".into());
            for a in &ended {
                let state = a["state"].as_str().unwrap_or_default().replace('_', " ");
                lines.push(format!(
                    "  {} ({}) — {} · {state} · {} findings",
                    a["name"].as_str().unwrap_or_default(),
                    a["id"].as_str().unwrap_or_default(),
                    a["position"].as_str().unwrap_or_default(),
                    a["findings"]
                ));
            }
        }
        lines.push("/team stop NAME stops one and those under it · /team size MIN MAX".into());
        lines.join("\n")
    }

    /// The agent called `name` (the latest to hold it, ended ones included).
    fn team_agent(&self, name: &str) -> Option<Value> {
        let tree = self.team.as_ref()?;
        let all = tree["agents"].as_array().into_iter().flatten().chain(tree["ended"].as_array().into_iter().flatten());
        all.filter(|a| a["name"] == name || a["id"] == name).max_by_key(|a| a["id"].as_str().map(id_number)).cloned()
    }

    /// `/context NAME`: how full a subagent's context is.
    pub(crate) fn agent_context(&mut self, name: &str) {
        let Some(agent) = self.team_agent(name) else {
            return self.finished.push(Block::Error(format!("No subagent called {name}: /team shows the tree.")));
        };
        let used = agent["context"]["used"].as_u64().unwrap_or(0);
        let line = match agent["context"]["window"].as_u64().filter(|w| *w > 0) {
            Some(w) => format!("{name}: {used} of {w} tokens in its context ({}%).", used * 100 / w),
            None => format!("{name}: {used} tokens in its context; its model's window is not known."),
        };
        self.finished.push(Block::Notice(line));
    }

    /// `/team`: the tree, then the room's last messages (`room`: every message, oldest first,
    /// as the host keeps them).
    pub fn show_team(&mut self, room: Option<Value>) {
        let mut text = self.team_view();
        let messages = room.as_ref().and_then(Value::as_array).cloned().unwrap_or_default();
        if !messages.is_empty() {
            let shown = messages.len().min(ROOM_SHOWN);
            let count = match messages.len() {
                1 => "1 message".to_owned(),
                n if n == shown => format!("{n} messages"),
                n => format!("{n} messages, the last {shown}"),
            };
            text.push_str(&format!("\nRoom ({count}):"));
            for m in &messages[messages.len() - shown..] {
                let first = m["text"].as_str().unwrap_or_default().lines().next().unwrap_or_default().to_owned();
                let report = if m["kind"].as_str() == Some("report") { " (report)" } else { "" };
                text.push_str(&format!(
                    "\n  #{} {} → {}{report}: {first}",
                    m["n"],
                    m["from"].as_str().unwrap_or_default(),
                    m["to"].as_str().unwrap_or_default()
                ));
            }
        }
        self.finished.push(Block::Notice(text));
    }

    /// Subagents of the team working now (or waiting for a slot); the main agent aside.
    pub fn team_working(&self) -> Option<(u64, u64, usize)> {
        let tree = self.team.as_ref()?;
        let working = tree["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["id"] != "lead" && matches!(a["state"].as_str(), Some("working" | "waiting" | "paused")))
            .count();
        Some((tree["size"].as_u64().unwrap_or(1), tree["max"].as_u64().unwrap_or(1), working))
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
                    let found: Vec<String> = agent["found"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(i, f)| format!("{}. {}", i + 1, f.as_str().unwrap_or_default()))
                        .collect();
                    let body = if found.is_empty() { "(no findings)".to_owned() } else { found.join("\n") };
                    self.finished.push(Block::Notice(format!(
                        "Findings of {name} ({}):\n{body}",
                        agent["id"].as_str().unwrap_or_default()
                    )));
                    return None;
                }
                match agent["session"].as_str() {
                    Some(session) => Some(Action::Transcript { name: name.to_owned(), session: session.to_owned() }),
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
