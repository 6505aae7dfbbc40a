//! Slash commands: what `/help` lists, what Tab completes, and what each does when submitted.

use lembas_protocol::{Command, Mode, ModelInfo};

use crate::app::menu::MenuItem;
use crate::app::picker::{Item, Pick, Picker, session_items};
use crate::app::{Action, App, Block};

/// One slash command: what `/help` lists and the menu offers, what it does with the words after
/// it, and — where it takes one of a known set — what Tab offers for them. Adding a command is
/// one entry in [`COMMANDS`].
pub struct SlashCommand {
    pub name: &'static str,
    /// What it takes, as `/help` writes it (`[NAME]`, `TITLE`); empty for nothing.
    pub takes: &'static str,
    pub does: &'static str,
    /// What it does with the words after it (trimmed; empty for none).
    run: fn(&mut App, &str) -> Option<Action>,
    /// The words it takes, for the menu: each with what it is.
    choices: Option<fn(&App) -> Vec<MenuItem>>,
    /// Said in the transcript above what it answers (leaving is not).
    echoed: bool,
}

impl std::fmt::Debug for SlashCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlashCommand").field("name", &self.name).finish_non_exhaustive()
    }
}

impl SlashCommand {
    const fn new(name: &'static str, takes: &'static str, does: &'static str, run: Run) -> Self {
        SlashCommand { name, takes, does, run, choices: None, echoed: true }
    }

    const fn unechoed(self) -> Self {
        SlashCommand { echoed: false, ..self }
    }

    const fn offering(self, choices: fn(&App) -> Vec<MenuItem>) -> Self {
        SlashCommand { choices: Some(choices), ..self }
    }

    /// Whether it takes words of the person's own after it (Enter in the menu then waits for
    /// them rather than running it).
    pub fn takes_words(&self) -> bool {
        self.takes.starts_with(|c: char| c.is_ascii_uppercase())
    }

    /// Whether it takes a word of a known set, which the menu offers.
    pub fn offers_words(&self) -> bool {
        self.choices.is_some()
    }

    /// What the menu offers after it, `None` when it takes nothing of a known set.
    pub fn choices(&self, app: &App) -> Option<Vec<MenuItem>> {
        self.choices.map(|choices| choices(app))
    }
}

type Run = fn(&mut App, &str) -> Option<Action>;

/// The slash commands, in the order `/help` lists them.
pub static COMMANDS: &[SlashCommand] = &[
    SlashCommand::new("help", "", "these commands and keys", |app, _| app.say(app.help())),
    SlashCommand::new("mode", "[manual|edit|auto|plan]", "how much is asked before acting (a list without one)", mode)
        .offering(mode_choices),
    // Unechoed: with a task, the task is shown as the prompt it becomes.
    SlashCommand::new(
        "plan",
        "[TASK]",
        "plan mode; with a task, that task planned (nothing changes until you approve)",
        plan,
    )
    .unechoed(),
    SlashCommand::new("model", "[NAME]", "another of the login's models (a list without one)", model)
        .offering(model_choices),
    SlashCommand::new("effort", "[LEVEL]", "how hard the model thinks (a list without one)", |app, arg| {
        app.effort_command(arg)
    })
    .offering(effort_choices),
    SlashCommand::new("context", "[NAME]", "what fills the context window (a subagent's: by name)", context)
        .offering(subagent_choices),
    SlashCommand::new("usage", "", "the tokens used", |app, _| app.say(app.usage_report())),
    SlashCommand::new("compact", "", "summarise the conversation to make room", |_, _| Some(Action::Compact)),
    SlashCommand::new("undo", "", "take the last turn back, and the files it changed", undo),
    SlashCommand::new("rewind", "[N]", "go back to before turn N, files and conversation (a list without one)", rewind),
    SlashCommand::new("rename", "TITLE", "name this session", rename),
    SlashCommand::new("init", "", "write or update AGENTS.md for this project", |_, _| {
        Some(Action::Prompt(INIT.trim().to_owned()))
    }),
    SlashCommand::new("sessions", "[all]", "this project's stored sessions (all: every project's)", |_, arg| {
        Some(Action::List { words: None, all: arg == "all" })
    })
    .offering(|_| vec![choice("all", "every project's", false)]),
    SlashCommand::new(
        "search",
        "[all] WORDS",
        "this project's sessions by what was said in them (all: every project's)",
        search,
    ),
    SlashCommand::new("resume", "[N|ID]", "go back to a stored session (a list without one)", |app, arg| {
        Some(app.resume_command(arg))
    }),
    // Claude Code's /clear: a fresh conversation (the old one stays stored).
    SlashCommand::new("new", "", "start a new session", |_, _| Some(Action::Open(None))),
    SlashCommand::new("subagents", "[N]", "this session's subagents, or one's transcript", subagents),
    SlashCommand::new(
        "team",
        "[size|stop|open|findings]",
        "the team's tree; its size; stop, read or see a subagent's findings",
        |app, arg| app.team_command(arg),
    )
    .offering(team_choices),
    SlashCommand::new("mcp", "", "where the MCP servers stand", |_, _| Some(Action::Mcp)),
    SlashCommand::new("agents", "", "the custom agents task and the team may start", |_, _| Some(Action::AgentFiles)),
    SlashCommand::new(
        "schedule",
        "[new WORDS|pause N|…]",
        "the server's schedules: new ones run here; resume, run, runs, delete N",
        schedule,
    ),
    SlashCommand::new(
        "share",
        "[off]",
        "let the LLeMbas server's web UI follow this session and answer it",
        |_, arg| Some(Action::Share(arg != "off")),
    ),
    SlashCommand::new(
        "tasks",
        "[add TITLE|done ID|…]",
        "the project's tasks; all, start, drop, reopen ID, or one by ID",
        |app, arg| asked(app, crate::notes::tasks_ask(arg)),
    ),
    SlashCommand::new("decisions", "[ID]", "the project's decision log, or one decision", |_, arg| {
        let id = (!arg.is_empty()).then(|| arg.to_owned());
        Some(Action::Notes(lembas_protocol::notes::NotesAsk::Decisions { id }))
    }),
    SlashCommand::new("kb", "[WORDS]", "the knowledge bases, or what they hold about these words", |_, arg| {
        let search = (!arg.is_empty()).then(|| arg.to_owned());
        Some(Action::Notes(lembas_protocol::notes::NotesAsk::Knowledge { search }))
    }),
    SlashCommand::new(
        "memory",
        "[add|change N|forget N]",
        "what the LLeMbas server remembers; change or forget an entry",
        |app, arg| asked(app, crate::notes::memory_ask(arg)),
    ),
    SlashCommand::new("notes", "[name|search words]", "the notes kept for this project and for you", |_, arg| {
        Some(Action::Notes(crate::notes::ask(arg)))
    }),
    SlashCommand::new("settings", "", "change and keep settings in config.toml", |app, _| {
        app.open_settings();
        None
    }),
    SlashCommand::new("clear", "", "start a new session (as /new)", |_, _| Some(Action::Open(None))),
    SlashCommand::new("exit", "", "leave (asks first while jobs run)", |app, _| app.leave("/exit again")).unechoed(),
    SlashCommand::new("quit", "", "the same as /exit", |app, _| app.leave("/exit again")).unechoed(),
];

/// What a library command asks the session, or why its words do not say it.
fn asked(app: &mut App, ask: Result<lembas_protocol::notes::NotesAsk, String>) -> Option<Action> {
    match ask {
        Ok(ask) => Some(Action::Notes(ask)),
        Err(e) => app.fail(&e),
    }
}

/// The command called `name`.
pub fn command(name: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.name == name)
}

fn choice(label: &str, detail: &str, takes_words: bool) -> MenuItem {
    MenuItem { label: label.to_owned(), detail: detail.to_owned(), takes_words }
}

fn mode(app: &mut App, arg: &str) -> Option<Action> {
    if arg.is_empty() {
        app.mode_picker();
        return None;
    }
    match Mode::parse(arg) {
        Some(mode) => {
            let switched = app.switch_mode(mode);
            app.confirm(switched)
        }
        None => app.fail("Use /mode manual, edit, auto or plan."),
    }
}

/// `/plan`: plan mode; `/plan TASK`: that task, in plan mode.
fn plan(app: &mut App, arg: &str) -> Option<Action> {
    if arg.is_empty() {
        let switched = app.switch_mode(Mode::Plan);
        return app.confirm(switched);
    }
    if app.busy {
        // Plan mode now would change the running turn's mode under it.
        return app.fail("A turn is running: stop it (Esc) or wait for it, then /plan the task.");
    }
    app.confirm(Some(Action::SetMode(Mode::Plan)));
    Some(Action::PlanPrompt(arg.to_owned()))
}

fn mode_choices(_: &App) -> Vec<MenuItem> {
    MODE_WORDS.iter().map(|(mode, what)| choice(mode.as_str(), what, false)).collect()
}

fn model(app: &mut App, arg: &str) -> Option<Action> {
    if arg.is_empty() {
        app.model_picker();
        return None;
    }
    let chosen = app.choose_model(arg);
    app.confirm(chosen)
}

fn model_choices(app: &App) -> Vec<MenuItem> {
    app.models.iter().map(|m| choice(&m.id, &window_words(m), false)).collect()
}

fn effort_choices(app: &App) -> Vec<MenuItem> {
    app.effort_levels().iter().map(|level| choice(level, "", false)).collect()
}

fn context(app: &mut App, arg: &str) -> Option<Action> {
    if arg.is_empty() {
        return app.say(app.context_report());
    }
    app.agent_context(arg);
    None
}

/// The subagents of the tree, for a command that takes one's name.
fn subagent_choices(app: &App) -> Vec<MenuItem> {
    let agents = app.team.iter().flat_map(|t| t.agents.iter().chain(&t.ended)).filter(|a| a.parent.is_some());
    agents.map(|a| choice(&a.name, &a.position, false)).collect()
}

fn team_choices(_: &App) -> Vec<MenuItem> {
    vec![
        choice("size", "MIN MAX: how many agents the team may have", true),
        choice("stop", "NAME: stop a subagent and those under it", true),
        choice("open", "NAME: read a subagent's transcript", true),
        choice("findings", "NAME: what a subagent found", true),
    ]
}

fn undo(app: &mut App, _: &str) -> Option<Action> {
    if app.busy {
        return app.say("A turn is running: stop it (Esc) first, then /undo.".into());
    }
    Some(Action::Undo)
}

fn rewind(app: &mut App, arg: &str) -> Option<Action> {
    if app.busy {
        return app.say("A turn is running: stop it (Esc) first, then /rewind.".into());
    }
    if arg.is_empty() {
        return Some(Action::Turns);
    }
    match arg.parse::<u32>() {
        Ok(to) if to > 0 => Some(Action::GoBack(Command::Rewind { to, files: true, conversation: true })),
        _ => app.fail("/rewind N: the turn to go back to before, by its number in /rewind's list."),
    }
}

fn schedule(app: &mut App, arg: &str) -> Option<Action> {
    let cwd = app.root.as_deref().map(|r| r.display().to_string()).unwrap_or_else(|| ".".into());
    let mode = app.mode.unwrap_or(Mode::Edit);
    match crate::schedules::ask(arg, &app.schedules, &cwd, mode) {
        Ok(ask) => Some(Action::Schedule(ask)),
        Err(e) => app.fail(&e),
    }
}

fn rename(app: &mut App, arg: &str) -> Option<Action> {
    if arg.is_empty() {
        return app.fail("/rename TITLE: the words to name this session by.");
    }
    app.confirm(Some(Action::Rename(arg.to_owned())))
}

fn search(app: &mut App, arg: &str) -> Option<Action> {
    match arg.strip_prefix("all") {
        _ if arg.is_empty() || arg == "all" => app.fail("/search [all] WORDS: the words to look for."),
        Some(words) if words.starts_with(' ') => Some(Action::List { words: Some(words.trim().to_owned()), all: true }),
        _ => Some(Action::List { words: Some(arg.to_owned()), all: false }),
    }
}

fn subagents(app: &mut App, arg: &str) -> Option<Action> {
    match arg {
        "" => Some(Action::Subagents(None)),
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => Some(Action::Subagents(Some(n))),
            _ => app.fail("/subagents N: N is a number from the list."),
        },
    }
}

/// A model's window (and its effort levels, where it has a choice of them), for a list.
fn window_words(m: &ModelInfo) -> String {
    let window = m.context.map_or("window unknown".to_owned(), |c| format!("{c} tokens"));
    let levels = m.levels();
    match levels.len() {
        0 | 1 => window,
        _ => format!("{window} · effort {}", levels.join("/")),
    }
}

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

const INIT: &str = include_str!("../../../../spec/prompts/tasks/init_update.md");

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
            if self::command(name).is_none_or(|c| c.echoed) {
                self.finished.push(Block::User(words.to_owned()));
            }
            return self.slash(name, arg);
        }
        Some(if self.busy { Action::Steer(text) } else { Action::Prompt(text) })
    }

    /// A slash command the person typed, by name, with what followed it: a command of the table,
    /// else one of the custom commands.
    fn slash(&mut self, name: &str, arg: &str) -> Option<Action> {
        if let Some(command) = command(name) {
            return (command.run)(self, arg);
        }
        match self.customs.iter().find(|c| c.name == name) {
            Some(custom) => {
                let prompt = crate::custom::expand(custom, arg);
                Some(if self.busy { Action::Steer(prompt) } else { Action::Prompt(prompt) })
            }
            None => self.fail(&format!("No command /{name}: /help lists them.")),
        }
    }

    /// Says `text` in the transcript; nothing to do besides.
    fn say(&mut self, text: String) -> Option<Action> {
        self.finished.push(Block::Notice(text));
        None
    }

    /// Says what went wrong; nothing to do besides.
    fn fail(&mut self, text: &str) -> Option<Action> {
        self.finished.push(Block::Error(text.to_owned()));
        None
    }

    /// `/model` alone: a picker of the login's models, the one in use marked.
    fn model_picker(&mut self) {
        let current = self.model_in_use().map(|m| m.id.clone());
        let items = self
            .models
            .iter()
            .map(|m| Item { label: m.id.clone(), detail: window_words(m), pick: Pick::Model(m.id.clone()) })
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
            let current = self.effort.clone().or_else(|| self.model_in_use().and_then(|m| m.effort.clone()));
            self.open_picker(Picker::new("Effort", items, current.as_deref()));
            None
        } else if levels.iter().any(|l| l == arg) {
            self.effort = Some(arg.to_owned());
            self.confirm(Some(Action::SetEffort(Some(arg.to_owned()))))
        } else {
            self.finished
                .push(Block::Notice(format!("Effort levels: {}. Choose one with /effort LEVEL.", levels.join(", "))));
            None
        }
    }

    /// A setting the person changed with a command, a picker or a card, said in one line (the
    /// status bar shows it too; Shift-Tab's quiet cycling does not come here).
    pub(crate) fn confirm(&mut self, action: Option<Action>) -> Option<Action> {
        let line = match &action {
            Some(Action::SetMode(mode)) => {
                let what = MODE_WORDS.iter().find(|(m, _)| m == mode).map_or("", |(_, what)| *what);
                format!("Mode: {mode} — {what}.")
            }
            Some(Action::SetModel(model)) => format!("Model: {}.", model.display_name()),
            Some(Action::SetEffort(Some(level))) => format!("Effort: {level}."),
            Some(Action::SetEffort(None)) => "Effort: the model's own.".to_owned(),
            Some(Action::Rename(title)) => format!("This session is now called \"{title}\"."),
            _ => return action,
        };
        self.finished.push(Block::Notice(line));
        action
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
        for command in COMMANDS {
            let call = match command.takes {
                "" => format!("/{}", command.name),
                takes => format!("/{} {takes}", command.name),
            };
            lines.push(format!("  {call:<34}{}", command.does));
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
        match self.model_named(name).cloned() {
            Some(model) => {
                self.model = model.display_name().to_owned();
                self.context.1 = model.context.unwrap_or(self.context.1);
                Some(Action::SetModel(model))
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
        self.levels.clone().unwrap_or_else(|| self.model_in_use().map(ModelInfo::levels).unwrap_or_default())
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
