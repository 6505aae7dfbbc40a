//! The terminal UI: `lembas` with no arguments. It drives the same engine as `lembas run`,
//! through the same `Session` and its events, and draws them.
//!
//! The conversation goes into the terminal's own scrollback as it finishes (an inline viewport:
//! the scrollback keeps working after the UI exits); the live area below it shows what streams
//! now, the progress line, the input (or an approval card) and the status bar.

pub mod app;
mod commands;
pub mod custom;
pub mod editor;
mod highlight;
pub mod keys;
pub mod live;
pub mod markdown;
pub mod menu;
pub mod picker;
pub mod rows;
mod scrollback;
pub mod settings;
mod subagents;
mod team;
pub mod tools;
pub mod transcript;
pub mod view;

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange, Event as Term, EventStream,
    KeyEventKind,
};
use crossterm::terminal::{Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen};
use futures::StreamExt;
use lembas_client::{Opened, Sessions};
use lembas_protocol::{Answer, Command, Event, Said, SubmissionId};
use ratatui::backend::CrosstermBackend;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;

pub use app::{Action, App, Block, Card};
pub use commands::COMMANDS;
pub use live::{draw, hint_line, live_height};
pub use markdown::markdown_rows;
pub use rows::{Row, plain};
pub use view::{Theme, block_lines, block_rows, status_line};

/// A yes-or-no answer from one key (`y` or `n`; Enter, Esc and Ctrl-C say no), as a person
/// answers such a question in a terminal — no Enter needed after it. The answer is echoed.
pub fn yes_or_no() -> std::io::Result<bool> {
    use crossterm::event::{Event as Term, KeyCode, KeyEventKind, read};
    crossterm::terminal::enable_raw_mode()?;
    let answer = loop {
        match read() {
            Ok(Term::Key(k)) if k.kind == KeyEventKind::Press => match k.code {
                KeyCode::Char('y' | 'Y') => break Ok(true),
                KeyCode::Char('c') if k.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) => break Ok(false),
                KeyCode::Char('n' | 'N') | KeyCode::Enter | KeyCode::Esc => break Ok(false),
                _ => {}
            },
            Ok(_) => {}
            Err(e) => break Err(e),
        }
    };
    crossterm::terminal::disable_raw_mode()?;
    let answer = answer?;
    println!("{}", if answer { "y" } else { "n" });
    Ok(answer)
}

/// Height of the live area, in rows.
pub const LIVE_HEIGHT: u16 = 10;

/// Opens a session: a new one (`None`) or a stored one by id. The front end's, since it knows
/// the person's settings; the session runs on the host.
pub type Open = Box<dyn Fn(Option<&str>) -> Result<Opened, String> + Send + Sync>;

/// Asks the server for the month's use (a LLeMbas login); asked when the UI opens and after
/// each turn.
pub type MonthSource =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Option<lembas_protocol::MonthUsage>> + Send>> + Send + Sync>;

/// The bell and a desktop notification (OSC 9) naming the session — never the reply's text.
/// Inside tmux the notification is passed through to the outer terminal.
fn notify(message: &str) {
    let osc = format!("\x1b]9;{message}\x07");
    let wrapped = if std::env::var_os("TMUX").is_some() {
        format!("\x1bPtmux;{}\x1b\\", osc.replace('\x1b', "\x1b\x1b"))
    } else {
        osc
    };
    let mut out = std::io::stdout();
    let _ = write!(out, "\x07{wrapped}");
    let _ = out.flush();
}

/// The inline terminal. Making it asks the terminal where the cursor is; a terminal that has
/// just started may not answer yet, so it is asked a few times.
fn inline_terminal() -> std::io::Result<Terminal<CrosstermBackend<std::io::Stdout>>> {
    let mut tries = 0;
    loop {
        let options = TerminalOptions { viewport: Viewport::Inline(LIVE_HEIGHT) };
        match Terminal::with_options(CrosstermBackend::new(std::io::stdout()), options) {
            Ok(terminal) => return Ok(terminal),
            Err(_) if tries < 3 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A terminal drawing the live area where it is now (its place counted by the scrollback
/// writer, not asked of the terminal).
fn fixed_terminal(area: ratatui::layout::Rect) -> std::io::Result<Terminal<CrosstermBackend<std::io::Stdout>>> {
    Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions { viewport: Viewport::Fixed(area) },
    )
}

/// Milliseconds since the epoch: the clock progress lines are drawn against.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Keeps settings changed in `/settings` (in config.toml): where they were kept, or why not.
pub type SaveSettings = Arc<dyn Fn(&[settings::Change]) -> Result<String, String> + Send + Sync>;

/// How the UI begins: on a stored session or a new one, with a first prompt, or with the list
/// of sessions to choose from; and where `/settings` keeps what it changes.
#[derive(Clone, Default)]
pub struct Begin {
    pub resume: Option<String>,
    pub prompt: Option<String>,
    pub pick_session: bool,
    pub save: Option<SaveSettings>,
}

impl std::fmt::Debug for Begin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Begin")
            .field("resume", &self.resume)
            .field("prompt", &self.prompt)
            .field("pick_session", &self.pick_session)
            .field("save", &self.save.is_some())
            .finish()
    }
}

/// Runs the UI until the person quits, on sessions `open` opens on `host`. What it answers: the
/// session it was on when it closed, when that session holds a conversation to go on with.
pub async fn run(
    open: Open,
    host: Arc<dyn Sessions>,
    mut app: App,
    month: Option<MonthSource>,
    begin: Begin,
) -> std::io::Result<Option<String>> {
    let (month_tx, mut month_rx) = mpsc::unbounded_channel();
    let ask_month = move || {
        if let Some(source) = month.clone() {
            let tx = month_tx.clone();
            tokio::spawn(async move {
                if let Some(usage) = source().await {
                    let _ = tx.send(usage);
                }
            });
        }
    };
    ask_month();
    let theme = Theme { no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) };
    let opened = open(begin.resume.as_deref()).map_err(std::io::Error::other)?;
    let (mut session, mut events) = (opened.handle, opened.events);
    // `/subagents` needs its id before the announcement comes.
    app.session_id = session.id().to_owned();
    // How full the window starts, for `/context` and the status bar before the first request.
    session.send(Command::ReportContext);
    // A new session opens with its welcome line; a resumed one with its announcement, and its
    // conversation drawn under it once the announcement that answers this command comes.
    let announced = session.send(Command::Announce);
    // `/team` asked: the room that answers it is shown.
    let mut team_asked: Option<SubmissionId> = None;
    let mut replay: Option<(SubmissionId, String)> = begin.resume.clone().zip(announced).map(|(id, asked)| (asked, id));
    if let Some(prompt) = begin.prompt {
        app.history.push(prompt.clone());
        session.send(Command::prompt(prompt));
    }
    if begin.pick_session {
        app.show_sessions(listed(host.as_ref(), None, app.root.as_deref()));
    }

    crossterm::terminal::enable_raw_mode()?;
    let mut stdout = std::io::stdout();
    crossterm::execute!(stdout, EnableBracketedPaste, EnableFocusChange)?;
    let mut terminal = inline_terminal()?;
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut known_size = terminal.size()?;
    // The last block written was a tool call's.
    let mut after_tools = false;
    // The transcript view's screen while it is open, and its lines as last made (for what).
    let mut full: Option<Terminal<CrosstermBackend<std::io::Stdout>>> = None;
    let mut shown: Vec<ratatui::text::Line<'static>> = Vec::new();
    let mut shown_for: Option<(u16, usize, bool, usize)> = None;
    let result: std::io::Result<()> = async {
        loop {
            let size = terminal.size()?;
            if size != known_size {
                // The terminal changed size, and may have reflowed the live area's lines (a
                // narrower one wraps them). The cursor is parked on the live area's first line
                // after every frame, and the terminal moved it with that line: blank from there
                // down and start the live area there again. The conversation above stays as the
                // terminal keeps it, and no copy of the old live area is left behind.
                crossterm::execute!(std::io::stdout(), Clear(ClearType::FromCursorDown))?;
                terminal = match inline_terminal() {
                    Ok(terminal) => terminal,
                    // The terminal did not say where its cursor is (keys are being read): the
                    // live area goes to the bottom of the screen, blanked.
                    Err(_) => {
                        let height = LIVE_HEIGHT.min(size.height.max(1));
                        let live = ratatui::layout::Rect { x: 0, y: size.height - height, width: size.width, height };
                        scrollback::blank_from(&mut std::io::stdout(), live.y, size.height)?;
                        std::io::stdout().flush()?;
                        fixed_terminal(live)?
                    }
                };
                known_size = size;
            }
            let width = size.width;
            if app.viewing.is_some() {
                // The transcript view, on the alternate screen; the conversation waits under it.
                if full.is_none() {
                    crossterm::execute!(std::io::stdout(), EnterAlternateScreen)?;
                    full = Some(Terminal::new(CrosstermBackend::new(std::io::stdout()))?);
                }
                let key = (width, app.transcript.len() + app.finished.len(), app.live.is_some(), app.running.len());
                if shown_for != Some(key) {
                    shown = transcript::transcript_lines(&app, width, theme);
                    shown_for = Some(key);
                }
                let from_end = app.viewing.unwrap_or(0);
                let mut most = 0;
                if let Some(full) = full.as_mut() {
                    full.draw(|frame| most = transcript::draw(frame, &shown, from_end, theme))?;
                }
                app.view_size = (usize::from(size.height.saturating_sub(2)).max(1), most);
            } else if full.take().is_some() {
                crossterm::execute!(std::io::stdout(), LeaveAlternateScreen)?;
                shown_for = None;
                terminal.clear()?;
            }
            // The live area as tall as what it holds now (written blocks take no part in it).
            let want = live_height(&app, size.width, size.height);
            if app.viewing.is_none() && !app.finished.is_empty() {
                // Finished blocks go above the live area as text the terminal wraps itself: the
                // live area is blanked (the cursor is parked on its first row), the rows written
                // there, and the live area starts again under them.
                let mut rows: Vec<Row> = Vec::new();
                let blocks: Vec<Block> = app.finished.drain(..).collect();
                for block in &blocks {
                    // Words after tool calls stand apart from them.
                    if after_tools && matches!(block, Block::Assistant(_) | Block::User(_)) {
                        rows.push(Row::blank());
                    }
                    after_tools = matches!(block, Block::Tool { .. });
                    rows.extend(block_rows(block, width, theme));
                }
                app.transcript.extend(blocks);
                // Room under them for the live area.
                let top = terminal.get_frame().area().y;
                let live = scrollback::write_above(&mut std::io::stdout(), &rows, top, size, want)?;
                terminal = fixed_terminal(live)?;
            }
            let current = terminal.get_frame().area();
            if app.viewing.is_none() && want != current.height {
                let live = scrollback::place_live(&mut std::io::stdout(), current, want, size)?;
                terminal = fixed_terminal(live)?;
            }
            if app.viewing.is_none() {
                terminal.draw(|frame| draw(frame, &app, now_ms(), theme))?;
                // (A completed frame's `area` is the whole terminal; a frame's is the live area.)
                let top = terminal.get_frame().area().y;
                terminal.set_cursor_position((0, top))?;
                ratatui::backend::Backend::flush(terminal.backend_mut())?;
            }
            if let Some(message) = app.to_notify.take() {
                notify(&message);
            }
            let action = tokio::select! {
                key = keys.next() => match key {
                    Some(Ok(Term::Key(k))) if k.kind == KeyEventKind::Press => app.key(k),
                    Some(Ok(Term::Paste(text))) => {
                        app.paste(&text);
                        None
                    }
                    Some(Ok(Term::FocusGained)) => {
                        app.focused = true;
                        None
                    }
                    Some(Ok(Term::FocusLost)) => {
                        app.focused = false;
                        None
                    }
                    // Redrawn at the top of the loop, which sees the new size.
                    Some(Ok(Term::Resize(..))) => None,
                    Some(Ok(_)) => None,
                    Some(Err(e)) => return Err(e),
                    None => Some(Action::Quit),
                },
                Some(event) = events.recv() => {
                    let mut batch = vec![event];
                    while let Ok(more) = events.try_recv() {
                        batch.push(more);
                    }
                    let mut turn_ended = false;
                    for Said { submission, event } in batch {
                        turn_ended |= matches!(event, Event::Done { .. });
                        app.apply(&event);
                        if let Event::Room { messages } = &event
                            && submission.is_some()
                            && submission == team_asked
                        {
                            team_asked = None;
                            app.show_team((!messages.is_null()).then(|| messages.clone()));
                        }
                        if let Event::Session { id, .. } = &event
                            && replay.as_ref().is_some_and(|(asked, _)| submission.as_ref() == Some(asked))
                        {
                            replay = None;
                            match host.transcript(id) {
                                Ok(transcript) => transcript.iter().for_each(|e| app.apply(e)),
                                Err(e) => app.finished.push(Block::Error(e.to_string())),
                            }
                            app.end_replay();
                        }
                    }
                    if turn_ended {
                        ask_month();
                    }
                    None
                }
                Some(usage) = month_rx.recv() => {
                    app.month = Some(usage);
                    None
                }
                _ = tick.tick() => None,
            };
            let command = match action {
                None => None,
                Some(Action::Quit) => return Ok(()),
                Some(Action::Prompt(text)) => {
                    // `@path` of a project file goes with the words: the engine reads it as `read` would.
                    let attachments = app::mentioned_files(&text, &app.files)
                        .into_iter()
                        .map(|path| match &app.root {
                            Some(root) => root.join(path).display().to_string(),
                            None => path,
                        })
                        .map(|path| lembas_protocol::Attachment::File { path })
                        .collect();
                    Some(Command::Prompt { text, attachments })
                }
                Some(Action::Shell(line)) => Some(Command::Shell { line }),
                Some(Action::Settings(changes)) => {
                    match begin.save.as_ref().map(|save| save(&changes)) {
                        Some(Ok(path)) => app.finished.push(Block::Notice(format!("Settings kept in {path}."))),
                        Some(Err(e)) => app.finished.push(Block::Error(format!("The settings were not kept: {e}"))),
                        None => {}
                    }
                    for change in changes {
                        let command = match change {
                            settings::Change::Mode(mode) => Some(Command::SetMode { mode }),
                            settings::Change::Model(model) => Some(Command::SetModel { model }),
                            settings::Change::Effort(level) => Some(Command::SetEffort { level }),
                            settings::Change::Notify(on) => {
                                app.notify = on;
                                None
                            }
                            settings::Change::Agents(min, max) => {
                                app.agents = (min, max);
                                Some(Command::SetAgents { min, max })
                            }
                            settings::Change::CompactAt(share) => {
                                app.compact_at = share;
                                app.finished.push(Block::Notice(
                                    "Compaction starts at the new share from the next session on.".into(),
                                ));
                                None
                            }
                        };
                        if let Some(command) = command {
                            session.send(command);
                        }
                    }
                    None
                }
                Some(Action::Steer(text)) => {
                    // Shown as queued under the turn until the model takes them.
                    app.queued.push(text.clone());
                    Some(Command::Steer { text })
                }
                Some(Action::Open(id)) => {
                    // The session open here is shown again rather than opened twice (this
                    // process holds it).
                    if id.as_deref() != Some(session.id()) {
                        match open(id.as_deref()) {
                            Ok(next) => {
                                let before = std::mem::replace(&mut session, next.handle);
                                events = next.events;
                                tokio::spawn(async move { before.close().await });
                            }
                            Err(e) => app.finished.push(Block::Error(e)),
                        }
                    }
                    let announced = session.send(Command::Announce);
                    replay = id.zip(announced).map(|(id, asked)| (asked, id));
                    None
                }
                Some(Action::List { words, all }) => {
                    let project = if all { None } else { app.root.as_deref() };
                    app.show_sessions(listed(host.as_ref(), words.as_deref(), project));
                    None
                }
                Some(Action::Team) => {
                    // The tree and room as they stand now (the tree's own events come at most
                    // four a second), shown when the room that answers this comes.
                    team_asked = session.send(Command::ReportTeam);
                    None
                }
                Some(Action::Transcript { name, session }) => {
                    app.show_transcript(&name, host.transcript(&session).map_err(|e| e.to_string()));
                    None
                }
                Some(Action::Subagents(pick)) => {
                    let children = host.subagents(&app.session_id).map_err(|e| e.to_string());
                    app.show_subagents(children, pick, |id| host.transcript(id).map_err(|e| e.to_string()));
                    None
                }
                Some(Action::Cancel) => Some(Command::Cancel),
                Some(Action::StopAtCard) => {
                    // Stopped first, so the declined call's turn does not go on to the model.
                    session.send(Command::Cancel);
                    let decline = Answer::Approval(lembas_protocol::Approval::Deny { feedback: None });
                    app.answered().map(|id| Command::Answer { id, answer: decline })
                }
                Some(Action::Answer(approval)) => {
                    app.answered().map(|id| Command::Answer { id, answer: Answer::Approval(approval) })
                }
                Some(Action::Plan(verdict)) => {
                    app.answered().map(|id| Command::Answer { id, answer: Answer::Plan(verdict) })
                }
                Some(Action::Reply(words)) => {
                    app.answered().map(|id| Command::Answer { id, answer: Answer::Reply { words: Some(words) } })
                }
                Some(Action::SetMode(mode)) => Some(Command::SetMode { mode }),
                Some(Action::Compact) => Some(Command::Compact),
                Some(Action::Undo) => Some(Command::Undo),
                Some(Action::SetModel(model)) => Some(Command::SetModel { model: model.id }),
                Some(Action::SetEffort(level)) => Some(Command::SetEffort { level }),
                // The engine says the new title (`Event::Title`); the status bar shows it.
                Some(Action::Rename(title)) => Some(Command::Rename { title }),
                Some(Action::Mcp) => Some(Command::ReportMcp),
                Some(Action::SetAgents(min, max)) => {
                    app.agents = (min, max);
                    Some(Command::SetAgents { min, max })
                }
                Some(Action::StopSubagent(name)) => Some(Command::StopSubagent { name }),
            };
            if let Some(command) = command {
                session.send(command);
            }
        }
    }
    .await;
    // Leave the scrollback as it is: blank the live area and put the cursor at its top, so the
    // shell's prompt comes right after the conversation.
    drop(keys);
    if full.take().is_some() {
        crossterm::execute!(std::io::stdout(), LeaveAlternateScreen)?;
    }
    session.send(Command::Cancel);
    terminal.draw(|frame| frame.render_widget(ratatui::widgets::Clear, frame.area()))?;
    let top = terminal.get_frame().area().y;
    terminal.set_cursor_position((0, top))?;
    crossterm::execute!(std::io::stdout(), DisableBracketedPaste, DisableFocusChange)?;
    crossterm::terminal::disable_raw_mode()?;
    // What the turn answered is stored; the session's hold on it is let go.
    let id = session.id().to_owned();
    let _ = tokio::time::timeout(Duration::from_secs(5), session.close()).await;
    let said = host.session(&id).ok().flatten().is_some_and(|s| s.messages > 0);
    result.map(|()| said.then_some(id))
}

/// The stored sessions (newest first), or those whose words match (best first): the project's
/// at `project`, or every project's.
fn listed(
    host: &dyn Sessions,
    words: Option<&str>,
    project: Option<&std::path::Path>,
) -> Result<Vec<(lembas_protocol::StoredSession, Option<String>)>, String> {
    let project = project.map(|p| p.display().to_string());
    let found: Result<Vec<_>, _> = match words {
        Some(w) => host.search(w).map(|hits| {
            hits.into_iter()
                .filter(|h| project.as_ref().is_none_or(|p| &h.session.project == p))
                .map(|h| (h.session, Some(h.snippet)))
                .collect()
        }),
        None => host.sessions(project.as_deref()).map(|list| list.into_iter().map(|s| (s, None)).collect()),
    };
    found.map_err(|e| e.to_string())
}
