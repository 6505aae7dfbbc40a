//! Slash commands: what `/help` lists, what Tab completes, and what each does when submitted.

use lembas_protocol::{Mode, ModelInfo};

use crate::app::{Action, App, Block};
use crate::picker::{Item, Pick, Picker, session_items};

/// The slash commands: name, what it takes, what it does — what `/help` lists and Tab completes.
pub const COMMANDS: [(&str, &str, &str); 21] = [
    ("help", "", "these commands and keys"),
    ("mode", "[manual|edit|auto|plan]", "how much is asked before acting (a list without one)"),
    ("model", "[NAME]", "another of the login's models (a list without one)"),
    ("effort", "[LEVEL]", "how hard the model thinks (a list without one)"),
    ("context", "[NAME]", "what fills the context window (a subagent's: by name)"),
    ("usage", "", "the tokens used"),
    ("compact", "", "summarise the conversation to make room"),
    ("undo", "", "take the last turn back, and the files it changed"),
    ("rename", "TITLE", "name this session"),
    ("init", "", "write or update AGENTS.md for this project"),
    ("sessions", "[all]", "this project's stored sessions (all: every project's)"),
    ("search", "[all] WORDS", "this project's sessions by what was said in them (all: every project's)"),
    ("resume", "[N|ID]", "go back to a stored session (a list without one)"),
    ("new", "", "start a new session"),
    ("subagents", "[N]", "this session's subagents, or one's transcript"),
    ("team", "[size|stop|open|findings]", "the team's tree; its size; stop, read or see a subagent's findings"),
    ("mcp", "", "where the MCP servers stand"),
    ("settings", "", "change and keep settings in config.toml"),
    ("clear", "", "start a new session (as /new)"),
    ("exit", "", "leave (asks first while jobs run)"),
    ("quit", "", "the same as /exit"),
];

const KEYS: &str = "Enter sends · Shift-Enter or Ctrl-J a new line · Esc stops the turn · Ctrl-C clears, then stops, then quits · Ctrl-D on an empty line quits · Shift-Tab changes the mode · Ctrl-O the transcript · Up and Down the history · Tab completes · @path attaches a file · !command runs a shell command";

/// `/init` where an AGENTS.md is already there: look again and bring it up to date. (Where there
/// is none, the session's first message already carries the spec's own task, `tasks/init.md`.)
/// The modes, and what each asks before it acts.
const MODE_WORDS: [(Mode, &str); 4] = [
    (Mode::Manual, "asks before what the rules do not already allow"),
    (Mode::Edit, "changes files, asks before commands"),
    (Mode::Auto, "acts, asking only where the rules say"),
    (Mode::Plan, "reads and plans; changes nothing"),
];

const INIT: &str = include_str!("../../../spec/prompts/tasks/init_update.md");

impl App {
    pub(crate) fn submit(&mut self) -> Option<Action> {
        self.menu = None;
        self.menu_closed = None;
        let text = self.input.take();
        let words = text.trim();
        if words.is_empty() {
            return None;
        }
        self.history.push(text.clone());
        self.history_at = None;
        self.draft = None;
        if let Some(line) = words.strip_prefix('!') {
            let line = line.trim();
            if line.is_empty() {
                self.finished.push(Block::Notice("Write a shell command after the !: !git status".into()));
                return None;
            }
            self.finished.push(Block::User(format!("!{line}")));
            return Some(Action::Shell(line.to_owned()));
        }
        if let Some(command) = words.strip_prefix('/') {
            let (name, arg) = command.split_once(' ').map_or((command, ""), |(n, a)| (n, a.trim()));
            // Said above what it answers, so one command's output does not run into the next.
            if !matches!(name, "exit" | "quit") {
                self.finished.push(Block::User(words.to_owned()));
            }
            return self.slash(name, arg);
        }
        Some(if self.busy { Action::Steer(text) } else { Action::Prompt(text) })
    }

    /// A slash command the person typed, by name, with what followed it.
    fn slash(&mut self, name: &str, arg: &str) -> Option<Action> {
        match name {
            "exit" | "quit" => self.leave("/exit again"),
            "help" => {
                self.finished.push(Block::Notice(self.help()));
                None
            }
            "compact" => Some(Action::Compact),
            "undo" if self.busy => {
                self.finished.push(Block::Notice("A turn is running: stop it (Esc) first, then /undo.".into()));
                None
            }
            "undo" => Some(Action::Undo),
            "mcp" => Some(Action::Mcp),
            "team" => self.team_command(arg),
            "context" if !arg.is_empty() => {
                self.agent_context(arg);
                None
            }
            "context" => {
                self.finished.push(Block::Notice(self.context_report()));
                None
            }
            "usage" => {
                self.finished.push(Block::Notice(self.usage_report()));
                None
            }
            "rename" if !arg.is_empty() => Some(Action::Rename(arg.to_owned())),
            "init" => Some(Action::Prompt(INIT.trim().to_owned())),
            // Claude Code's /clear: a fresh conversation (the old one stays stored).
            "new" | "clear" => Some(Action::Open(None)),
            "settings" => {
                self.open_settings();
                None
            }
            "sessions" => Some(Action::List { words: None, all: arg == "all" }),
            "subagents" => match arg {
                "" => Some(Action::Subagents(None)),
                n => match n.parse::<usize>() {
                    Ok(n) if n > 0 => Some(Action::Subagents(Some(n))),
                    _ => {
                        self.finished.push(Block::Error("/subagents N: N is a number from the list.".into()));
                        None
                    }
                },
            },
            "search" if !arg.is_empty() => match arg.strip_prefix("all ") {
                Some(words) => Some(Action::List { words: Some(words.trim().to_owned()), all: true }),
                None => Some(Action::List { words: Some(arg.to_owned()), all: false }),
            },
            "resume" => Some(self.resume_command(arg)),
            "model" if arg.is_empty() => {
                self.model_picker();
                None
            }
            "model" => self.choose_model(arg),
            "effort" => self.effort_command(arg),
            "mode" if arg.is_empty() => {
                self.mode_picker();
                None
            }
            "mode" => match Mode::parse(arg) {
                Some(mode) => self.switch_mode(mode),
                None => {
                    self.finished.push(Block::Error("Use /mode manual, edit, auto or plan.".into()));
                    None
                }
            },
            other => match self.customs.iter().find(|c| c.name == other) {
                Some(custom) => {
                    let prompt = crate::custom::expand(custom, arg);
                    Some(if self.busy { Action::Steer(prompt) } else { Action::Prompt(prompt) })
                }
                None => {
                    self.finished.push(Block::Error(format!("No command /{other}: /help lists them.")));
                    None
                }
            },
        }
    }

    /// `/model` alone: a picker of the login's models, the one in use marked.
    fn model_picker(&mut self) {
        let current = self.models.iter().find(|m| m.display_name() == self.model).map(|m| m.id.clone());
        let items = self
            .models
            .iter()
            .map(|m| {
                let window = m.context.map_or("window unknown".to_owned(), |c| format!("{c} tokens"));
                let levels = m.levels();
                let detail = match levels.len() {
                    0 | 1 => window,
                    _ => format!("{window} · effort {}", levels.join("/")),
                };
                Item { label: m.id.clone(), detail, pick: Pick::Model(m.id.clone()) }
            })
            .collect();
        self.open_picker(Picker::new("Model", items, current.as_deref()));
    }

    /// `/effort`: alone, a picker of the model's levels (the one in use marked); with a level,
    /// that level; else the levels there are.
    fn effort_command(&mut self, arg: &str) -> Option<Action> {
        let levels = self.effort_levels();
        if arg.is_empty() && !levels.is_empty() {
            let items = levels
                .iter()
                .map(|l| Item { label: l.clone(), detail: String::new(), pick: Pick::Effort(l.clone()) })
                .collect();
            // The level in use: the one chosen, else the model's start level.
            let current = self
                .effort
                .clone()
                .or_else(|| self.models.iter().find(|m| m.is_named(&self.model)).and_then(|m| m.effort.clone()));
            self.open_picker(Picker::new("Effort", items, current.as_deref()));
            None
        } else if levels.iter().any(|l| l == arg) {
            self.effort = Some(arg.to_owned());
            Some(Action::SetEffort(Some(arg.to_owned())))
        } else {
            self.finished
                .push(Block::Notice(format!("Effort levels: {}. Choose one with /effort LEVEL.", levels.join(", "))));
            None
        }
    }

    /// `/mode` alone: a picker of the four modes, what each asks, the one in use marked.
    fn mode_picker(&mut self) {
        let items = MODE_WORDS
            .iter()
            .map(|(mode, what)| Item { label: mode.to_string(), detail: (*what).to_owned(), pick: Pick::Mode(*mode) })
            .collect();
        let current = self.mode.map(|m| m.to_string());
        self.open_picker(Picker::new("Mode", items, current.as_deref()));
    }

    /// `/resume`: a session by its number in the last list, or by id; alone, the list.
    fn resume_command(&self, arg: &str) -> Action {
        let id = arg
            .parse::<usize>()
            .ok()
            .and_then(|n| self.listed.get(n.wrapping_sub(1)).cloned())
            .unwrap_or_else(|| arg.to_owned());
        if id.is_empty() { Action::List { words: None, all: false } } else { Action::Open(Some(id)) }
    }

    /// Leaving: at once, unless jobs or background subagents run — then the first ask names
    /// them, and `again` (said the same way) leaves.
    pub(crate) fn leave(&mut self, again: &str) -> Option<Action> {
        match self.quit_warning() {
            Some(running) if !self.exit_asked => {
                self.exit_asked = true;
                self.finished.push(Block::Notice(format!("{running} {again} stops them and quits.")));
                None
            }
            _ => Some(Action::Quit),
        }
    }

    /// `/help`: the keys, the commands, and the custom commands with where each comes from.
    fn help(&self) -> String {
        let mut lines = vec![KEYS.to_owned(), String::new()];
        for (name, args, what) in COMMANDS {
            let call = if args.is_empty() { format!("/{name}") } else { format!("/{name} {args}") };
            lines.push(format!("  {call:<34}{what}"));
        }
        if !self.customs.is_empty() {
            lines.push(String::new());
            lines.push("Custom commands:".into());
            for custom in &self.customs {
                lines.push(format!("  {:<34}{} ({})", format!("/{}", custom.name), custom.description, custom.origin));
            }
        }
        lines.join("\n")
    }

    /// `/model ID`: the model by its id or name.
    pub(crate) fn choose_model(&mut self, name: &str) -> Option<Action> {
        match self.models.iter().find(|m| m.is_named(name)) {
            Some(model) => {
                self.model = model.display_name().to_owned();
                self.context.1 = model.context.unwrap_or(self.context.1);
                Some(Action::SetModel(model.clone()))
            }
            None => {
                let names: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
                let closest = closest(name, &names);
                let offer = if closest.is_empty() {
                    format!("The login offers {}.", names.join(", "))
                } else {
                    format!("The closest: {}.", closest.join(", "))
                };
                self.finished.push(Block::Error(format!("No model {name}. {offer} /model lists them all.")));
                None
            }
        }
    }

    /// The effort levels of the model in use: those its server takes, once a refusal narrowed
    /// them, else those it offers.
    pub(crate) fn effort_levels(&self) -> Vec<String> {
        self.levels.clone().unwrap_or_else(|| {
            self.models.iter().find(|m| m.is_named(&self.model)).map(ModelInfo::levels).unwrap_or_default()
        })
    }

    /// `/sessions` and `/search`: a picker of the stored sessions (newest first), or of those
    /// whose words match (with the words around the match); `/resume N` takes the Nth.
    pub fn show_sessions(&mut self, found: Result<Vec<(lembas_protocol::StoredSession, Option<String>)>, String>) {
        match found {
            Ok(found) if found.is_empty() => self.finished.push(Block::Notice("No session found.".into())),
            Ok(found) => {
                let matched = found.iter().any(|(_, snippet)| snippet.is_some());
                self.listed = found.iter().map(|(s, _)| s.id.clone()).collect();
                let title = if matched { "Sessions that match" } else { "Sessions" };
                self.open_picker(Picker::new(title, session_items(&found, crate::now_ms()), None));
            }
            Err(e) => self.finished.push(Block::Error(e)),
        }
    }
}

/// The names nearest to `wanted`, by edit distance (a third of the longer name at most), nearest
/// first; at most three.
fn closest<'a>(wanted: &str, names: &[&'a str]) -> Vec<&'a str> {
    let wanted = wanted.to_lowercase();
    let mut near: Vec<(usize, &str)> = names
        .iter()
        .map(|name| (strsim::damerau_levenshtein(&wanted, &name.to_lowercase()), *name))
        .filter(|(d, name)| *d <= wanted.chars().count().max(name.chars().count()).div_ceil(3))
        .collect();
    near.sort();
    near.into_iter().take(3).map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_name_finds_the_names_nearest_it() {
        let names = ["gpt-4o", "gpt-4o-mini", "qwen3-coder", "llama-3.1-8b"];
        assert_eq!(closest("gpt-40", &names), ["gpt-4o"]);
        assert_eq!(closest("qwen-coder", &names), ["qwen3-coder"]);
        assert!(closest("gpt-9", &names).iter().all(|n| n.starts_with("gpt")));
        assert!(closest("mistral", &names).is_empty());
    }
}
