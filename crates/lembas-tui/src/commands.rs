//! Slash commands: what `/help` lists, what Tab completes, and what each does when submitted.

use lembas_core::{Mode, ModelInfo};

use crate::app::{Action, App, Block};
use crate::picker::{Item, Pick, Picker, session_items};

const HELP: &str = "Enter sends; Esc stops the turn; Ctrl-C twice quits; Shift-Tab changes the mode; Ctrl-O shows the last folded block whole; Up and Down walk the history.\n\
/help · /mode manual|edit|auto|plan · /model NAME · /effort LEVEL · /context · /usage · /compact · /undo · /rename TITLE · /init\n\
/sessions · /search WORDS · /resume N · /new · /subagents [N] · /mcp · /clear · /exit";

/// The slash commands, for completion.
const COMMANDS: [&str; 20] = [
    "help",
    "mode",
    "model",
    "effort",
    "context",
    "usage",
    "compact",
    "undo",
    "rename",
    "init",
    "sessions",
    "search",
    "resume",
    "new",
    "subagents",
    "mcp",
    "settings",
    "clear",
    "exit",
    "quit",
];

/// `/init` where an AGENTS.md is already there: look again and bring it up to date. (Where there
/// is none, the session's first message already carries the spec's own task, `tasks/init.md`.)
/// The modes, and what each asks before it acts.
const MODE_WORDS: [(Mode, &str); 4] = [
    (Mode::Manual, "asks before any change and any command"),
    (Mode::Edit, "changes files, asks before commands"),
    (Mode::Auto, "acts, asking only where the rules say"),
    (Mode::Plan, "reads and plans; changes nothing"),
];

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

const INIT: &str = include_str!("../../../spec/prompts/tasks/init_update.md");

impl App {
    pub(crate) fn submit(&mut self) -> Option<Action> {
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
            return match name {
                "exit" | "quit" => Some(Action::Quit),
                "help" => {
                    self.finished.push(Block::Notice(HELP.into()));
                    None
                }
                "clear" => {
                    self.finished.clear();
                    None
                }
                "compact" => Some(Action::Compact),
                "undo" if self.busy => {
                    self.finished.push(Block::Notice("A turn is running: stop it (Esc) first, then /undo.".into()));
                    None
                }
                "undo" => Some(Action::Undo),
                "mcp" => Some(Action::Mcp),
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
                "new" => Some(Action::Open(None)),
                "settings" => {
                    self.finished.push(Block::Notice(format!(
                        "Model {} · effort {} · mode {} · window {} tokens · compaction at {:.0}% · notifications {}\nSettings live in config.toml (see the README).",
                        self.model,
                        self.effort.as_deref().unwrap_or("the model's"),
                        self.mode.map_or("?".to_owned(), |m| m.to_string()),
                        self.context.1,
                        self.compact_at * 100.0,
                        if self.notify { "on" } else { "off" }
                    )));
                    None
                }
                "sessions" => Some(Action::List(None)),
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
                "search" if !arg.is_empty() => Some(Action::List(Some(arg.to_owned()))),
                "resume" => {
                    let id = arg
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| self.listed.get(n.wrapping_sub(1)).cloned())
                        .unwrap_or_else(|| arg.to_owned());
                    if id.is_empty() { Some(Action::List(None)) } else { Some(Action::Open(Some(id))) }
                }
                "model" if arg.is_empty() => {
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
                    None
                }
                "model" => self.choose_model(arg),
                "effort" => {
                    let levels = self.effort_levels();
                    if arg.is_empty() && !levels.is_empty() {
                        let items = levels
                            .iter()
                            .map(|l| Item { label: l.clone(), detail: String::new(), pick: Pick::Effort(l.clone()) })
                            .collect();
                        self.open_picker(Picker::new("Effort", items, self.effort.clone().as_deref()));
                        None
                    } else if levels.iter().any(|l| l == arg) {
                        self.effort = Some(arg.to_owned());
                        Some(Action::SetEffort(Some(arg.to_owned())))
                    } else {
                        self.finished.push(Block::Notice(format!(
                            "Effort levels: {}. Choose one with /effort LEVEL.",
                            levels.join(", ")
                        )));
                        None
                    }
                }
                "mode" if arg.is_empty() => {
                    let items = MODE_WORDS
                        .iter()
                        .map(|(mode, what)| Item {
                            label: mode.to_string(),
                            detail: (*what).to_owned(),
                            pick: Pick::Mode(*mode),
                        })
                        .collect();
                    let current = self.mode.map(|m| m.to_string());
                    self.open_picker(Picker::new("Mode", items, current.as_deref()));
                    None
                }
                "mode" => match Mode::parse(arg) {
                    Some(mode) => self.switch_mode(mode),
                    None => {
                        self.finished.push(Block::Error("Use /mode manual, edit, auto or plan.".into()));
                        None
                    }
                },
                other => {
                    self.finished.push(Block::Error(format!("No command /{other}: /help lists them.")));
                    None
                }
            };
        }
        Some(if self.busy { Action::Steer(text) } else { Action::Prompt(text) })
    }

    /// `/model ID`: the model by its id or name.
    pub(crate) fn choose_model(&mut self, name: &str) -> Option<Action> {
        match self.models.iter().find(|m| m.id == name || m.display_name() == name) {
            Some(model) => {
                self.model = model.display_name().to_owned();
                self.context.1 = model.context.unwrap_or(self.context.1);
                Some(Action::SetModel(model.clone()))
            }
            None => {
                let names: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
                self.finished
                    .push(Block::Notice(format!("Models: {}. Choose one with /model NAME.", names.join(", "))));
                None
            }
        }
    }

    /// The effort levels of the model in use: those its server takes, once a refusal narrowed
    /// them, else those it offers.
    fn effort_levels(&self) -> Vec<String> {
        self.levels.clone().unwrap_or_else(|| {
            self.models
                .iter()
                .find(|m| m.display_name() == self.model || m.id == self.model)
                .map(ModelInfo::levels)
                .unwrap_or_default()
        })
    }

    /// `/sessions` and `/search`: a picker of the stored sessions (newest first), or of those
    /// whose words match (with the words around the match); `/resume N` takes the Nth.
    pub fn show_sessions(&mut self, found: Result<Vec<(lembas_core::StoredSession, Option<String>)>, String>) {
        match found {
            Ok(found) if found.is_empty() => self.finished.push(Block::Notice("No session found.".into())),
            Ok(found) => {
                let matched = found.iter().any(|(_, snippet)| snippet.is_some());
                self.listed = found.iter().map(|(s, _)| s.id.clone()).collect();
                let title = if matched { "Sessions that match" } else { "Sessions" };
                self.open_picker(Picker::new(title, session_items(&found, now_ms()), None));
            }
            Err(e) => self.finished.push(Block::Error(e)),
        }
    }

    /// Tab: completes a `/command` or an `@path` as far as it is unambiguous, and lists the
    /// choices when there are several.
    pub fn complete(&mut self) {
        let before = self.input.before_cursor();
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = before[start..].to_owned();
        let at_start = start == 0 && !self.input.text().contains('\n');
        let (prefix, choices): (&str, Vec<String>) = if let Some(typed) = word.strip_prefix('/').filter(|_| at_start) {
            ("/", COMMANDS.iter().filter(|c| c.starts_with(typed)).map(|c| (*c).to_owned()).collect())
        } else if let Some(typed) = word.strip_prefix('@') {
            ("@", self.files.iter().filter(|f| f.starts_with(typed)).take(200).cloned().collect())
        } else {
            return;
        };
        let Some(first) = choices.first() else { return };
        let common = choices.iter().fold(first.clone(), |acc, c| {
            acc.chars().zip(c.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a).collect()
        });
        self.input.delete_back(word.chars().count());
        self.input.push_str(prefix);
        self.input.push_str(&common);
        if choices.len() == 1 {
            self.input.push(' ');
        } else {
            let shown: Vec<String> = choices.iter().take(12).map(|c| format!("{prefix}{c}")).collect();
            let more = if choices.len() > 12 { format!(" … and {} more", choices.len() - 12) } else { String::new() };
            self.finished.push(Block::Notice(format!("{}{more}", shown.join("  "))));
        }
    }
}
