//! The UI's state, and what engine events and keys do to it — no terminal here, so every
//! behaviour is a plain test.

use lembas_core::Mode;
use lembas_core::ModelInfo;
use lembas_core::Progress;
use lembas_core::{Approval, ApprovalRequest, DoneReason, Event};

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
    /// Words added to the running turn.
    Steer(String),
    /// A shell command the person runs themselves (`!command`).
    Shell(String),
    Cancel,
    Quit,
    Answer(Approval),
    /// Esc on an approval card: the call declined and the turn stopped.
    StopAtCard,
    /// The answer to a question card.
    Reply(String),
    /// The answer to the plan card.
    Plan(lembas_core::PlanVerdict),
    /// Settings changed in `/settings`: kept in config.toml and applied.
    Settings(Vec<crate::settings::Change>),
    SetMode(Mode),
    Compact,
    SetModel(ModelInfo),
    SetEffort(Option<String>),
    Rename(String),
    /// Show where the session's MCP servers stand.
    Mcp,
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
}

/// A card waiting for the person: an approval, or a switch to a looser mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Card {
    Approval(ApprovalRequest),
    LooserMode(Mode),
    /// `ask_user`: a number picks an option; words typed and Enter answer freely.
    Question(lembas_core::Question),
    /// Plan mode's `plan_submit`: the plan, to approve or not.
    Plan(String),
    /// A list to choose from (a model, a level, a mode, a session).
    Pick(crate::picker::Picker),
    /// `/settings`.
    Settings(crate::settings::Form),
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
    pub writing: Option<crate::keys::Writing>,
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
    pub team: Option<serde_json::Value>,
    /// What fills the window, by category, as the engine last measured it.
    pub shares: Vec<lembas_core::ContextShare>,
    /// What a small window left out of the session's offer, as the engine says it.
    pub offer: Option<String>,
    /// Words added while a turn runs, waiting for its next step (shown under it).
    pub queued: Vec<String>,
    /// The opening line was shown (a session opened later is announced as such).
    pub welcomed: bool,
    /// The option ↑↓ marked on a question card (Enter with nothing written takes it).
    pub choice: usize,
    /// The completion menu, while a `/command` or an `@path` is being typed.
    pub menu: Option<crate::menu::Menu>,
    /// The word whose menu Esc closed: not opened again until the word changes.
    pub menu_closed: Option<String>,
    /// Cached input tokens of the last request.
    pub last_cached: Option<u64>,
    /// Tokens used in this run of the UI (in, out).
    pub used: (u64, u64),
    /// The month's use on a LLeMbas server that counts it (none on a plain model server).
    pub month: Option<lembas_core::MonthUsage>,
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
    asks: std::collections::VecDeque<(u64, lembas_core::Ask)>,
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
    turn_started: Option<std::time::Instant>,
    turn_tokens: u64,
}

pub(crate) const MODES: [Mode; 4] = [Mode::Manual, Mode::Edit, Mode::Auto, Mode::Plan];

/// The marks that tell the categories apart in `/context`'s bar (colour is not always there).
const SHARE_MARKS: [char; 6] = ['█', '▓', '▒', '■', '▪', '◆'];

/// `/mcp`: each server and where it stands.
fn mcp_report(servers: &[lembas_core::ServerStatus]) -> String {
    if servers.is_empty() {
        return "No MCP servers are configured: add them under [mcp_servers.NAME] in config.toml, or in the project's .mcp.json (read once you trust the project).".into();
    }
    let mut lines = vec!["MCP servers:".to_owned()];
    for server in servers {
        let state = match &server.state {
            lembas_core::ServerState::Connecting => "connecting…".to_owned(),
            lembas_core::ServerState::Ready { tools } => {
                format!("connected, {tools} tool{}", if *tools == 1 { "" } else { "s" })
            }
            lembas_core::ServerState::Failed { reason } => format!("not connected: {reason}"),
        };
        lines.push(format!("  {} — {state}", server.name));
    }
    lines.join("\n")
}

impl App {
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
        if let Some(offer) = &self.offer {
            report.push_str(&format!("\n{offer}"));
        }
        report
    }

    fn flush_live(&mut self) {
        if let Some(block) = self.live.take() {
            self.finished.push(block);
        }
    }

    /// A reply streams into the live area; what of it is settled — whole blocks before a blank
    /// line, outside code, with the next block begun — goes on to the scrollback, so the live
    /// area holds (and redraws) only the block being written.
    fn settle_streamed(&mut self) {
        let Some(Block::Assistant(text)) = &mut self.live else { return };
        if let Some(at) = settled_len(text) {
            let rest = text.split_off(at);
            let settled = std::mem::replace(text, rest);
            self.finished.push(Block::Assistant(settled.trim_end().to_owned()));
        }
    }

    /// Ctrl-O: opens the transcript view (every block whole, scrolled to its end), or closes it.
    pub(crate) fn expand(&mut self) {
        self.viewing = match self.viewing {
            Some(_) => None,
            None => Some(0),
        };
    }

    /// What a subagent's event changes: its task's block shows what it does now, and its
    /// tokens count toward the turn's (never toward the main agent's window).
    fn apply_subagent(&mut self, call_id: &str, event: &Event) {
        match event {
            Event::ToolStart { tool, title, .. } => {
                let block =
                    self.running.iter_mut().find(|b| matches!(b, Block::Tool { call_id: id, .. } if id == call_id));
                if let Some(Block::Tool { summary, .. }) = block {
                    *summary = if title.is_empty() { format!("→ {tool}") } else { format!("→ {tool} {title}") };
                }
            }
            Event::Usage { input, output, .. } => {
                self.turn_tokens += input + output;
                self.used.0 += input;
                self.used.1 += output;
            }
            _ => {}
        }
    }

    /// Subagents working now: those the turn waits for, and those in the background.
    pub fn subagents_running(&self) -> usize {
        let waited = self.running.iter().filter(|b| matches!(b, Block::Tool { tool, .. } if tool == "task")).count();
        waited + self.background_subagents
    }

    /// What an engine event changes.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Prompt { text, machine } => {
                self.flush_live();
                // Words queued while the last turn ran, now a turn of their own.
                if !machine {
                    self.queued.retain(|q| !text.contains(q.as_str()));
                }
                if !machine && (self.title.is_empty() || self.title == "New session") {
                    self.title = lembas_core::title_from(text);
                }
                self.finished.push(if *machine { Block::Notice(text.clone()) } else { Block::User(text.clone()) });
                self.busy = true;
                self.turn_started = Some(std::time::Instant::now());
                self.turn_tokens = 0;
            }
            Event::Text { delta } => {
                match &mut self.live {
                    Some(Block::Assistant(text)) => text.push_str(delta),
                    _ => {
                        self.flush_live();
                        self.live = Some(Block::Assistant(delta.clone()));
                    }
                }
                self.settle_streamed();
            }
            Event::Reasoning { delta } => match &mut self.live {
                Some(Block::Thinking(text)) => text.push_str(delta),
                _ => {
                    self.flush_live();
                    self.live = Some(Block::Thinking(delta.clone()));
                }
            },
            Event::ToolStart { call_id, tool, title, args, .. } => {
                self.flush_live();
                // A command the person runs themselves is not a turn: words sent meanwhile are a
                // prompt of their own, and Esc stops the command.
                if call_id.starts_with("person-") {
                    self.shell_running = true;
                }
                self.running.push(Block::Tool {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    title: crate::tools::title(tool, title, args),
                    state: ToolState::Running,
                    summary: String::new(),
                    shown: String::new(),
                    body: String::new(),
                });
            }
            Event::ToolEnd { call_id, text, .. } | Event::ToolDenied { call_id, reason: text, .. } => {
                // A refused call failed; an ended one says whether it did.
                let failed = !matches!(event, Event::ToolEnd { is_error: false, .. });
                if call_id.starts_with("person-") {
                    self.shell_running = false;
                }
                let position =
                    self.running.iter().position(|b| matches!(b, Block::Tool { call_id: id, .. } if id == call_id));
                if let Some(position) = position {
                    let mut block = self.running.remove(position);
                    if let Block::Tool { tool, state, summary, shown, body, .. } = &mut block {
                        *summary = crate::tools::summary(tool, text, failed);
                        let ran_badly = failed || crate::tools::summary_fails(tool, summary);
                        *state = if ran_badly { ToolState::Failed } else { ToolState::Done };
                        *body = crate::tools::body(text).to_owned();
                        // A change shows its diff and a command its output, folded past a dozen
                        // lines; anything else its summary alone.
                        if !failed && (is_change(tool) || tool == "bash") {
                            *shown = fold(&without_ending(tool, text));
                        }
                    }
                    self.finished.push(block);
                }
            }
            Event::Usage { input, output, cached } => {
                self.context.0 = *input;
                self.turn_tokens += input + output;
                self.used.0 += input;
                self.used.1 += output;
                self.last_cached = *cached;
            }
            Event::Team { tree } => self.team = Some(tree.clone()),
            Event::Jobs { running, subagents } => {
                self.jobs = running - subagents;
                self.background_subagents = *subagents;
            }
            Event::Context { window, shares, offer } => {
                self.shares = shares.clone();
                self.offer = offer.clone();
                // Before the first counted request (a new or resumed session) the engine's
                // estimate is all there is.
                if self.context.0 == 0 {
                    self.context = (shares.iter().map(|s| s.tokens).sum(), *window);
                }
            }
            Event::Phase { progress } => self.progress = progress.clone(),
            Event::Mode { mode } => self.mode = Some(*mode),
            Event::Model { model, effort } => {
                if *model != self.model {
                    self.levels = None;
                }
                self.model = model.clone();
                self.effort = effort.clone();
            }
            Event::Title { title } => self.title = title.clone(),
            Event::Ask { id, ask } => {
                self.asks.push_back((*id, ask.clone()));
                self.next_card();
            }
            // Answered (here, or elsewhere) or given up: its card goes.
            Event::Answered { id } => {
                if self.asking == Some(*id) {
                    self.asking = None;
                    if !matches!(self.card, Some(Card::LooserMode(_))) {
                        self.card = None;
                    }
                    self.next_card();
                } else {
                    self.asks.retain(|(waiting, _)| waiting != id);
                }
            }
            Event::Closed => {}
            Event::Levels { levels } => {
                self.levels = Some(levels.clone());
                if self.effort.as_ref().is_some_and(|e| !levels.contains(e)) {
                    self.effort = None;
                }
            }
            Event::Plan { plan } => {
                self.flush_live();
                let shown = plan_update(self.last_plan.as_deref(), &plan.render());
                self.last_plan = Some(plan.render());
                self.finished.push(Block::Notice(shown));
            }
            Event::Compacted { .. } => {
                self.flush_live();
                self.finished.push(Block::Notice("The conversation was summarised to make room.".into()));
            }
            Event::Notice { message } => {
                self.flush_live();
                self.finished.push(Block::Notice(message.clone()));
            }
            Event::Steered { text } => {
                // Taken by the model at this step: out of the queue, into the conversation.
                if let Some(at) = self.queued.iter().position(|q| q == text) {
                    self.queued.remove(at);
                }
                self.flush_live();
                self.finished.push(Block::User(text.clone()));
            }
            Event::SteerReturned { texts } => {
                // The turn was stopped before they went: back to the person, not sent.
                self.queued.retain(|q| !texts.contains(q));
                let mut words = texts.join("\n");
                if !self.input.is_empty() {
                    words = format!("{words}\n{}", self.input.text());
                }
                self.input.set(&words);
            }
            Event::Subagent { call_id, event, .. } => self.apply_subagent(call_id, event),
            Event::Undone { prompt, files, ran_commands } => {
                let mut said = match files.len() {
                    0 => "Undone: the last turn is out of the conversation; it changed no file.".to_owned(),
                    _ => {
                        format!("Undone: the last turn is out of the conversation, and put back: {}.", files.join(", "))
                    }
                };
                if *ran_commands {
                    said.push_str(" What its commands changed is not undone.");
                }
                // Out of the transcript too (Ctrl-O): from the turn's words on. (The terminal's
                // scrollback keeps what it was shown.)
                let first_line = prompt.lines().next().unwrap_or_default();
                if let Some(at) =
                    self.transcript.iter().rposition(|b| matches!(b, Block::User(text) if text.starts_with(first_line)))
                {
                    self.transcript.truncate(at);
                }
                self.finished.push(Block::Notice(said));
                // Its words come back to the input, to change and send again.
                if self.input.is_empty() {
                    self.input.set(prompt);
                }
            }
            Event::McpServers { servers } => self.finished.push(Block::Notice(mcp_report(servers))),
            Event::Error { message } => {
                self.flush_live();
                self.finished.push(Block::Error(message.clone()));
            }
            Event::Done { reason, .. } => {
                self.close_blocks();
                // The footer says how the turn ended; its last phase ("Stopped", "Retrying") goes.
                self.progress = None;
                let took = self
                    .turn_started
                    .take()
                    .map(|t| lembas_core::progress::elapsed(t.elapsed().as_secs() as i64))
                    .unwrap_or_default();
                let ended = match reason {
                    DoneReason::Answered => "",
                    DoneReason::Limit => " · stopped at a limit",
                    DoneReason::Cancelled => " · stopped by you",
                    DoneReason::Failed => " · failed",
                };
                self.last_turn = Some(format!("{took} · {} tokens{ended}", self.turn_tokens));
                // Said where the turn's words are, too: the scrollback and the transcript.
                if *reason == DoneReason::Cancelled {
                    self.finished.push(Block::Notice("(stopped by you)".into()));
                }
                if self.notify && !self.focused {
                    self.to_notify = Some(format!("lembas: {} — the reply is ready", self.title));
                }
            }
            Event::Session { id, model, mode, title, resumed, sandbox } => {
                self.session_id = id.clone();
                self.title = title.clone();
                self.context.0 = 0;
                if !self.welcomed && !*resumed {
                    // The first thing a person sees: what runs, where, on what, how freely.
                    self.finished.push(Block::Notice(self.welcome(model, *mode, sandbox)));
                } else {
                    let what = if *resumed { "Resumed" } else { "Session" };
                    self.finished.push(Block::Notice(format!("── {what}: {title} ──")));
                }
                self.welcomed = true;
                self.model = model.clone();
                self.mode = Some(*mode);
            }
            Event::Step { .. } => {}
        }
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
            lembas_core::Ask::Approval(request) => self.ask(request),
            lembas_core::Ask::Question(question) => self.question(question),
            lembas_core::Ask::Plan { plan, .. } => self.plan(plan),
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

    /// What streamed is finished; calls that never ended (a cancelled turn) are finished as
    /// stopped.
    fn close_blocks(&mut self) {
        self.flush_live();
        for mut block in std::mem::take(&mut self.running) {
            if let Block::Tool { state, .. } = &mut block {
                *state = ToolState::Failed;
            }
            self.finished.push(block);
        }
        self.busy = false;
    }

    /// Gives the running call `call_id`'s block another title (a command the person corrected).
    pub(crate) fn retitle(&mut self, call_id: &str, title: &str) {
        for block in self.running.iter_mut() {
            if let Block::Tool { call_id: id, title: shown, .. } = block
                && id == call_id
            {
                *shown = title.to_owned();
            }
        }
    }

    /// The opening line: lembas' version, the project, the model and the mode — and the sandbox
    /// when it is less than whole.
    fn welcome(&self, model: &str, mode: Mode, sandbox: &str) -> String {
        let folder = match (&self.root, std::env::var_os("HOME").map(std::path::PathBuf::from)) {
            (Some(root), Some(home)) if root.starts_with(&home) && root != &home => {
                format!("~/{}", root.strip_prefix(&home).unwrap_or(root).display())
            }
            (Some(root), _) => root.display().to_string(),
            (None, _) => String::new(),
        };
        let mut line = format!("lembas {} · {folder} · model {model} · {mode} mode", env!("CARGO_PKG_VERSION"));
        if !sandbox.is_empty() && sandbox != "active" {
            line.push_str(&format!("\nsandbox: {sandbox}"));
        }
        line
    }

    /// Shows a question card (the engine waits for [`Action::Reply`]).
    pub fn question(&mut self, question: lembas_core::Question) {
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

/// How much of a streaming reply is settled: up to the start of the last line that begins a
/// new block at the margin after a blank line, outside a code fence. `None` when nothing is.
pub(crate) fn settled_len(text: &str) -> Option<usize> {
    let mut in_fence = false;
    let mut after_blank = false;
    let mut offset = 0;
    let mut settled = None;
    for line in text.split_inclusive('\n') {
        let starts_block = line.chars().next().is_some_and(|c| !c.is_whitespace());
        if !in_fence && after_blank && starts_block && offset > 0 {
            settled = Some(offset);
        }
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence {
            in_fence = !in_fence;
        }
        after_blank = line.trim().is_empty() && line.ends_with('\n');
        offset += line.len();
    }
    settled
}

/// A plan as shown: whole the first time (or when it is another plan), then only the lines an
/// update changed or added.
pub(crate) fn plan_update(before: Option<&str>, now: &str) -> String {
    let Some(before) = before.filter(|b| b.lines().next() == now.lines().next()) else { return now.to_owned() };
    let old: std::collections::HashSet<&str> = before.lines().collect();
    let changed: Vec<&str> = now.lines().filter(|l| !l.trim().is_empty() && !old.contains(l)).collect();
    let title = now.lines().next().unwrap_or("Plan");
    match changed.len() {
        0 => format!("{title} — unchanged"),
        _ => format!("{title} — updated:\n{}", changed.join("\n")),
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
    lembas_core::tools::changes_files(tool)
}

/// Lines of a diff or a command's output shown before the rest folds.
const SHOWN_LINES: usize = 12;

/// A command's output without the line saying how it ended (`(exit code 4)`, `(no output)`),
/// which the block's summary already says.
fn without_ending(tool: &str, text: &str) -> String {
    if tool != "bash" {
        return text.to_owned();
    }
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.last().is_some_and(|l| (l.starts_with("(exit code ") || *l == "(no output)") && l.ends_with(')')) {
        lines.pop();
    }
    lines.join("\n")
}

/// A diff or a command's output (without its bracket), its first lines, and a line saying how
/// many more there are (the transcript view, Ctrl-O, shows them). One line more is shown rather
/// than folded.
fn fold(text: &str) -> String {
    let lines: Vec<&str> = crate::tools::body(text).lines().collect();
    let keep = if lines.len() == SHOWN_LINES + 1 { lines.len() } else { SHOWN_LINES };
    let mut shown: Vec<String> = lines.iter().take(keep).map(|l| (*l).to_owned()).collect();
    if lines.len() > keep {
        shown.push(format!("… {} more lines (Ctrl-O shows all)", lines.len() - keep));
    }
    shown.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_block_says_its_ending_once_and_folds_no_single_line() {
        assert_eq!(without_ending("bash", "[#0001]\nbuilt\n(exit code 4)"), "[#0001]\nbuilt");
        assert_eq!(without_ending("bash", "[#0001]\n(no output)"), "[#0001]");
        assert_eq!(without_ending("read", "[#0001]\n(no output)"), "[#0001]\n(no output)");
        let thirteen: String = (1..=13).map(|i| format!("line {i}\n")).collect();
        assert!(!fold(&thirteen).contains("more line"), "{}", fold(&thirteen));
        let twenty: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        assert!(fold(&twenty).ends_with("… 8 more lines (Ctrl-O shows all)"));
    }

    #[test]
    fn a_streaming_reply_settles_at_blank_lines_outside_code() {
        assert_eq!(settled_len("one\n\ntw"), Some(5));
        assert_eq!(settled_len("one\n\n"), None, "the next block has not begun");
        assert_eq!(settled_len("one\n\n  indented"), None, "an indented line may belong to what came before");
        assert_eq!(settled_len("```\ncode\n\nmore"), None, "a blank line in code settles nothing");
        assert_eq!(settled_len("```\ncode\n```\n\nafter"), Some(14));
        let mut app = App::default();
        for delta in ["# Title\n\nfirst para", "graph\n\n2. second", " item"] {
            app.apply(&Event::Text { delta: delta.into() });
        }
        assert_eq!(app.finished, [Block::Assistant("# Title".into()), Block::Assistant("first paragraph".into())]);
        assert_eq!(app.live, Some(Block::Assistant("2. second item".into())));
    }

    #[test]
    fn a_plan_update_shows_what_changed() {
        let first = "Plan: store\n\n1. Schema\n   [ ] 1.1 tables\n   [ ] 1.2 indexes";
        assert_eq!(plan_update(None, first), first);
        let later = "Plan: store\n\n1. Schema\n   [x] 1.1 tables\n   [ ] 1.2 indexes\n   [ ] 1.3 migrations";
        assert_eq!(plan_update(Some(first), later), "Plan: store — updated:\n   [x] 1.1 tables\n   [ ] 1.3 migrations");
        assert_eq!(plan_update(Some(first), "Plan: another\n1. x"), "Plan: another\n1. x");
    }

    #[test]
    fn only_the_projects_files_are_attached_once_each() {
        let files = vec!["src/main.rs".to_owned(), "README.md".to_owned()];
        assert_eq!(
            mentioned_files("look at @src/main.rs, and @README.md. Again @src/main.rs; not @nope.rs or me@x", &files),
            ["src/main.rs", "README.md"]
        );
    }
}
