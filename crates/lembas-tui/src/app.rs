//! The UI's state, and what engine events and keys do to it — no terminal here, so every
//! behaviour is a plain test.

use lembas_protocol::Mode;
use lembas_protocol::ModelInfo;
use lembas_protocol::Progress;
use lembas_protocol::tools::{ToolKind, kind};
use lembas_protocol::{Approval, ApprovalRequest};

pub(crate) mod commands;
mod events;
pub mod keys;
pub mod menu;
pub mod picker;
pub mod settings;

/// How a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Running,
    Done,
    Failed,
}

/// One piece of the conversation as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    User(String),
    Assistant(String),
    Thinking(String),
    Tool {
        call_id: String,
        tool: String,
        title: String,
        state: ToolState,
        /// What came of it, in a line (while it runs: what a subagent does now).
        summary: String,
        /// What is shown under the summary: a change's diff or a command's output, folded.
        shown: String,
        /// The result whole (without its id bracket), for the transcript view.
        body: String,
    },
    Notice(String),
    Error(String),
}

/// What a key asks the session to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Prompt(String),
    /// `/plan TASK`: plan mode, then the task as a prompt.
    PlanPrompt(String),
    /// Words added to the running turn.
    Steer(String),
    /// A shell command the person runs themselves (`!command`).
    Shell(String),
    Cancel,
    Quit,
    Answer(Approval),
    /// Esc on an approval card: the call declined and the turn stopped.
    StopAtCard,
    /// Esc on a question card: the turn stopped, the question unanswered.
    StopAtQuestion,
    /// The answer to a question card.
    Reply(String),
    /// The answer to the plan card.
    Plan(lembas_protocol::PlanVerdict),
    /// Settings changed in `/settings`: kept in config.toml and applied.
    Settings(Vec<crate::app::settings::Change>),
    SetMode(Mode),
    Compact,
    SetModel(ModelInfo),
    SetEffort(Option<String>),
    Rename(String),
    /// Show where the session's MCP servers stand.
    Mcp,
    /// Show the custom agents the session may start.
    AgentFiles,
    /// Show the notes: the list, one, or a search's passages.
    Notes(lembas_protocol::notes::NotesAsk),
    /// Start a new session, or resume one by id.
    Open(Option<String>),
    /// Show the stored sessions (or those that mention these words): this project's, or all.
    List {
        words: Option<String>,
        all: bool,
    },
    /// Show this session's subagents, or one's transcript (by its number in that list).
    Subagents(Option<usize>),
    /// Take back the last turn.
    Undo,
    /// Put back what the last undo left, over the person's later changes.
    OverwriteKept,
    /// List the turns one can go back to (a picker).
    Turns,
    /// Go back to before a turn, or fork a new session from there: the host's own command
    /// (`Rewind` or `Fork`), sent as it is.
    GoBack(lembas_protocol::Command),
    /// The team's size setting: Min and Max, the main agent included.
    SetAgents(u32, u32),
    /// The person stops a subagent, by name.
    StopSubagent(String),
    /// A team subagent's transcript, read-only: its name, and its stored session.
    Transcript {
        name: String,
        session: String,
    },
    /// `/team`: the tree, and the room's latest messages.
    Team,
    /// `/schedule`: ask the server about its schedules.
    Schedule(lembas_protocol::schedules::ScheduleAsk),
    /// `/share` (true) or `/share off`.
    Share(bool),
}

/// A card waiting for the person: an approval, or a switch to a looser mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Card {
    Approval(ApprovalRequest),
    LooserMode(Mode),
    /// An undo or rewind left these files, changed after their turn: overwrite them?
    Overwrite(Vec<String>),
    /// `ask_user`: a number picks an option; words typed and Enter answer freely.
    Question(lembas_protocol::Question),
    /// Plan mode's `plan_submit`: the plan, to approve or not.
    Plan(String),
    /// A list to choose from (a model, a level, a mode, a session).
    Pick(crate::app::picker::Picker),
    /// `/settings`.
    Settings(crate::app::settings::Form),
}

/// The whole UI state.
#[derive(Debug, Default)]
pub struct App {
    /// Finished blocks not yet written above the live area (into the terminal's scrollback).
    pub finished: Vec<Block>,
    /// The block streaming now.
    pub live: Option<Block>,
    /// Tool calls in flight.
    pub running: Vec<Block>,
    pub progress: Option<Progress>,
    /// The prompt being written (or a question card's answer).
    pub input: crate::editor::Editor,
    pub model: String,
    pub mode: Option<Mode>,
    pub effort: Option<String>,
    /// The model's effort levels when its server narrowed them (`None`: as the model says).
    pub levels: Option<Vec<String>>,
    /// Input tokens of the last request, and the model's window.
    pub context: (u64, u64),
    pub card: Option<Card>,
    /// A turn runs.
    pub busy: bool,
    /// A command the person typed (`!`) runs.
    pub shell_running: bool,
    /// After a turn: how long it took and its tokens.
    pub last_turn: Option<String>,
    pub quit_armed: bool,
    /// Leaving was asked for while jobs ran, and they were named: asked again, it leaves.
    pub exit_asked: bool,
    /// A word about the last key that goes with the next ("Press Ctrl-C again to quit.").
    pub hint: Option<String>,
    pub history: Vec<String>,
    pub(crate) history_at: Option<usize>,
    /// What was being written before Up walked into the history; Down past the newest brings it back.
    pub(crate) draft: Option<String>,
    /// Words being written for the card shown (a refusal's reason, a corrected command).
    pub writing: Option<crate::app::keys::Writing>,
    /// What was being written when the card asked for words; it comes back after.
    pub(crate) held: Option<String>,
    /// The login's models, for `/model`.
    pub models: Vec<ModelInfo>,
    /// The share of the window at which compaction starts.
    pub compact_at: f64,
    /// The team's size setting, Min and Max, the main agent included.
    pub agents: (u32, u32),
    /// Every block written so far, for the transcript view (Ctrl-O), which shows each whole.
    pub transcript: Vec<Block>,
    /// The transcript view is open, scrolled this many rows up from its end.
    pub viewing: Option<usize>,
    /// The transcript view's page (rows on screen) and how far up it can scroll, as last drawn.
    pub view_size: (usize, usize),
    /// Background jobs running (commands; subagents are counted apart).
    pub jobs: usize,
    /// Subagents working in the background.
    pub background_subagents: usize,
    /// The team tree as the engine last said it (`subagents.md` §12's data).
    pub team: Option<lembas_protocol::team::TeamTree>,
    /// What fills the window, by category, as the engine last measured it.
    pub shares: Vec<lembas_protocol::ContextShare>,
    /// What a small window left out of the session's offer, as the engine says it.
    pub offer: Option<String>,
    /// The last cache miss the engine explained.
    pub cache_miss: Option<String>,
    /// Words added while a turn runs, waiting for its next step (shown under it).
    pub queued: Vec<String>,
    /// The opening line was shown (a session opened later is announced as such).
    pub welcomed: bool,
    /// The option ↑↓ marked on a question card (Enter with nothing written takes it).
    pub choice: usize,
    /// The completion menu, while a `/command` or an `@path` is being typed.
    pub menu: Option<crate::app::menu::Menu>,
    /// The word whose menu Esc closed: not opened again until the word changes.
    pub menu_closed: Option<String>,
    /// Cached input tokens of the last request.
    pub last_cached: Option<u64>,
    /// Tokens used in this run of the UI (in, out).
    pub used: (u64, u64),
    /// The month's use on a LLeMbas server that counts it (none on a plain model server).
    pub month: Option<lembas_protocol::MonthUsage>,
    /// The project's snapshot store as last said: its size and its cap, in bytes (`/usage`).
    pub snapshots: Option<(u64, u64)>,
    /// The terminal has focus (for notifications).
    pub focused: bool,
    /// Notify (bell and OSC 9) when a reply finishes or a card waits while unfocused.
    pub notify: bool,
    /// A notice to send to the desktop now.
    pub to_notify: Option<String>,
    /// The session's title, for notices.
    pub title: String,
    /// The session's id (its subagents are found by it).
    pub session_id: String,
    /// What the session asked that waits for a card, and the ask the card shown answers.
    asks: std::collections::VecDeque<(u64, lembas_protocol::Ask)>,
    asking: Option<u64>,
    /// The sessions last listed, by number, for `/resume N`.
    pub listed: Vec<String>,
    /// The project's files (relative to its root), for completing and attaching `@path`.
    pub files: Vec<String>,
    /// The plan as last shown, so an update shows what changed.
    pub(crate) last_plan: Option<String>,
    /// Custom slash commands (the person's own, and a trusted project's).
    pub customs: Vec<crate::custom::Custom>,
    /// The project's root, where `@path` is found.
    pub root: Option<std::path::PathBuf>,
    /// The server's schedules as `/schedule` last listed them (named by their number there).
    pub schedules: Vec<lembas_protocol::schedules::Schedule>,
    /// The session is shared with the LLeMbas server's web UI (`/share`).
    pub shared: bool,
    /// The personality chosen, by name (empty: the default), and the person's own text for
    /// `custom`.
    pub personality: String,
    pub personality_custom: Option<String>,
    turn_started: Option<std::time::Instant>,
    turn_tokens: u64,
}

pub(crate) const MODES: [Mode; 4] = [Mode::Manual, Mode::Edit, Mode::Auto, Mode::Plan];

/// The marks that tell the categories apart in `/context`'s bar (colour is not always there).
const SHARE_MARKS: [char; 6] = ['█', '▓', '▒', '■', '▪', '◆'];

impl App {
    /// The login's model called `name`: by its id or the name it is shown by.
    pub(crate) fn model_named(&self, name: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| m.is_named(name))
    }

    /// The model in use, as the login lists it.
    pub(crate) fn model_in_use(&self) -> Option<&ModelInfo> {
        self.model_named(&self.model)
    }

    pub fn new(model: &str, mode: Mode, effort: Option<String>, window: u64) -> App {
        App {
            model: model.to_owned(),
            mode: Some(mode),
            effort,
            levels: None,
            context: (0, window),
            compact_at: 0.85,
            agents: (1, 4),
            focused: true,
            notify: true,
            ..App::default()
        }
    }

    /// `/usage`: this session's tokens, and on a server that counts them the month's tokens, its
    /// cost in each currency, and this device's share.
    pub fn usage_report(&self) -> String {
        let mut lines = vec![format!("This session so far: {} tokens in, {} out.", self.used.0, self.used.1)];
        if let Some(month) = &self.month {
            let since = month.from.as_deref().map(|f| format!(" (since {f})")).unwrap_or_default();
            lines.push(format!(
                "This month{since}: {} tokens in, {} out; cost {}.",
                month.tokens_in,
                month.tokens_out,
                month.cost_text().unwrap_or_else(|| "nothing priced".into())
            ));
            lines.push(format!(
                "This device this month: {} tokens in, {} out.",
                month.device_tokens_in, month.device_tokens_out
            ));
        }
        lines.push(match self.snapshots {
            Some((bytes, cap)) => format!(
                "Snapshots of this project (for /undo and /rewind): {} of at most {}; the oldest go past that.",
                megabytes(bytes),
                megabytes(cap)
            ),
            None => "Snapshots of this project (for /undo and /rewind): none kept yet in this session.".into(),
        });
        lines.join("\n")
    }

    /// `/context`: how full the window is — one bar split by category when the engine has
    /// measured them, each category's tokens and share — what is free, how far compaction is,
    /// and what the last request read from the server's cache.
    pub fn context_report(&self) -> String {
        const CELLS: u64 = 30;
        let (used, window) = self.context;
        if window == 0 {
            return "The model's context window is not known.".into();
        }
        if let Some(offer) = self.offer.as_ref().filter(|o| o.starts_with("window too small")) {
            return format!("Context: {offer}.");
        }
        let mut bar = String::new();
        let mut legend = String::new();
        if self.shares.iter().any(|s| s.tokens > 0) {
            // Each category in its own mark, so the split reads without colour too.
            for (share, mark) in self.shares.iter().zip(SHARE_MARKS.iter().cycle()) {
                bar.push_str(&mark.to_string().repeat((share.tokens * CELLS / window) as usize));
                legend.push_str(&format!(
                    "\n  {mark} {:<17}{:>8} tokens {:>3}%",
                    share.category,
                    share.tokens,
                    share.tokens * 100 / window
                ));
            }
        } else {
            bar = "█".repeat((used * CELLS / window).min(CELLS) as usize);
        }
        let free_cells = (CELLS as usize).saturating_sub(bar.chars().count());
        let compact_at = (window as f64 * self.compact_at) as u64;
        let mut report = format!(
            "Context: {used} of {window} tokens ({}%)\n[{bar}{}]{legend}\nFree: {} tokens · compaction at {}%: {} tokens away",
            used * 100 / window,
            "░".repeat(free_cells),
            window.saturating_sub(used),
            (self.compact_at * 100.0).round(),
            compact_at.saturating_sub(used)
        );
        if let Some(cached) = self.last_cached {
            report.push_str(&format!("\nLast request: {cached} tokens read from the server's cache"));
        }
        if let Some(miss) = &self.cache_miss {
            report.push_str(&format!("\n{miss}"));
        }
        if let Some(offer) = &self.offer {
            report.push_str(&format!("\n{offer}"));
        }
        report
    }

    /// Ctrl-O: opens the transcript view (every block whole, scrolled to its end), or closes it.
    pub(crate) fn expand(&mut self) {
        self.viewing = match self.viewing {
            Some(_) => None,
            None => Some(0),
        };
    }

    /// Subagents working now: those the turn waits for, and those in the background.
    pub fn subagents_running(&self) -> usize {
        let waited = self
            .running
            .iter()
            .filter(|b| matches!(b, Block::Tool { tool, .. } if kind(tool) == ToolKind::Agent))
            .count();
        waited + self.background_subagents
    }

    /// The next waiting ask as a card, when none is shown: one card at a time (subagents side by
    /// side may ask together).
    pub(crate) fn next_card(&mut self) {
        if self.card.is_some() || self.asking.is_some() {
            return;
        }
        let Some((id, ask)) = self.asks.pop_front() else { return };
        self.asking = Some(id);
        match ask {
            lembas_protocol::Ask::Approval(request) => self.ask(request),
            lembas_protocol::Ask::Question(question) => self.question(question),
            lembas_protocol::Ask::Plan { plan, .. } => self.plan(plan),
            // Never asked of a terminal: `show` is offered only to a client that shows files.
            lembas_protocol::Ask::Show(_) => {
                self.asking = None;
                self.next_card();
            }
        }
    }

    /// The card shown was answered: the id of the ask it answers, and the next card.
    pub fn answered(&mut self) -> Option<u64> {
        let id = self.asking.take();
        self.next_card();
        id
    }

    /// A replayed conversation is drawn: what it left open is finished, and it counts as no turn.
    pub fn end_replay(&mut self) {
        self.close_blocks();
        self.last_turn = None;
    }

    /// Shows a question card (the engine waits for [`Action::Reply`]).
    pub fn question(&mut self, question: lembas_protocol::Question) {
        self.card = Some(Card::Question(question));
        self.choice = 0;
        if self.notify && !self.focused {
            self.to_notify = Some(format!("lembas: {} — a question for you", self.title));
        }
    }

    /// Shows the plan for approval (the engine waits for [`Action::Answer`]).
    pub fn plan(&mut self, plan: String) {
        self.card = Some(Card::Plan(plan));
        if self.notify && !self.focused {
            self.to_notify = Some(format!("lembas: {} — the plan waits for approval", self.title));
        }
    }

    /// Shows an approval card (the engine waits for [`Action::Answer`]).
    pub fn ask(&mut self, request: ApprovalRequest) {
        self.card = Some(Card::Approval(request));
        if self.notify && !self.focused {
            self.to_notify = Some(format!("lembas: {} — waiting for your answer", self.title));
        }
    }

    pub(crate) fn switch_mode(&mut self, mode: Mode) -> Option<Action> {
        // Only auto is asked first: it acts without asking. The other steps are the person's
        // to take freely, as they cycle with Shift-Tab.
        match self.mode {
            Some(current) if mode == Mode::Auto && mode.is_looser_than(current) => {
                self.card = Some(Card::LooserMode(mode));
                None
            }
            _ => Some(Action::SetMode(mode)),
        }
    }
}

/// The files a prompt mentions as `@path` that the project has (its root-relative paths), each
/// once, in order.
pub fn mentioned_files(text: &str, files: &[String]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        let path = path.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
        if !path.is_empty() && files.iter().any(|f| f == path) && !found.iter().any(|f| f == path) {
            found.push(path.to_owned());
        }
    }
    found
}

/// Whether a tool changes files (its block shows a coloured diff), as its definition says.
pub fn is_change(tool: &str) -> bool {
    lembas_protocol::tools::changes_files(tool)
}

/// A size on disk as a person reads it: megabytes with one decimal below 10.
fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / 1_000_000.0;
    if mb < 10.0 { format!("{mb:.1} MB") } else { format!("{mb:.0} MB") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_projects_files_are_attached_once_each() {
        let files = vec!["src/main.rs".to_owned(), "README.md".to_owned()];
        assert_eq!(
            mentioned_files("look at @src/main.rs, and @README.md. Again @src/main.rs; not @nope.rs or me@x", &files),
            ["src/main.rs", "README.md"]
        );
    }
}
