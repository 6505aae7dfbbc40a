//! The terminal UI: `lembas` with no arguments. It drives the same engine as `lembas run`,
//! through the same `Session` and its events, and draws them.
//!
//! The conversation goes into the terminal's own scrollback as it finishes (an inline viewport:
//! the scrollback keeps working after the UI exits); the live area below it shows what streams
//! now, the progress line, the input (or an approval card) and the status bar.

pub mod app;
mod subagents;
mod text;
pub mod view;

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange, Event as Term, EventStream,
    KeyEventKind,
};
use crossterm::terminal::{Clear, ClearType};
use futures::StreamExt;
use lembas_core::{Approval, ApprovalRequest, Approver, Event, Session};
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use ratatui::backend::CrosstermBackend;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::{mpsc, oneshot};

pub use app::{Action, App, Block, Card};
pub use text::{markdown, plain, wrap};
pub use view::{Theme, block_lines, draw, status_line};

/// Height of the live area, in rows.
pub const LIVE_HEIGHT: u16 = 10;

/// Something the engine waits on the person for.
#[derive(Debug)]
pub enum Ask {
    Approval(ApprovalRequest, oneshot::Sender<Approval>),
    Question(lembas_core::Question, oneshot::Sender<Option<String>>),
    Plan(String, oneshot::Sender<Approval>),
}

/// Opens a session: a new one (`None`) or a stored one by id. The front end's, since it knows
/// the person's settings.
pub type Open = Box<dyn Fn(Option<&str>) -> Result<Session, String> + Send + Sync>;

/// Asks the server for the month's use (a LLeMbas login); asked when the UI opens and after
/// each turn.
pub type MonthSource =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Option<lembas_login::MonthUsage>> + Send>> + Send + Sync>;

/// Approvals shown as cards in the UI.
#[derive(Debug, Clone)]
pub struct TuiApprover {
    asks: mpsc::UnboundedSender<Ask>,
}

impl TuiApprover {
    /// The approver and the receiving end the UI reads cards from.
    pub fn new() -> (TuiApprover, mpsc::UnboundedReceiver<Ask>) {
        let (asks, rx) = mpsc::unbounded_channel();
        (TuiApprover { asks }, rx)
    }
}

impl Approver for TuiApprover {
    fn present(&self) -> bool {
        true
    }

    fn ask(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            if self.asks.send(Ask::Approval(request, reply)).is_err() {
                return Approval::Deny { feedback: None };
            }
            answer.await.unwrap_or(Approval::Deny { feedback: None })
        })
    }

    fn question(&self, question: lembas_core::Question) -> Pin<Box<dyn Future<Output = Option<String>> + Send + '_>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.asks.send(Ask::Question(question, reply)).ok()?;
            answer.await.ok().flatten()
        })
    }

    fn approve_plan(&self, plan: String) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            if self.asks.send(Ask::Plan(plan, reply)).is_err() {
                return Approval::Deny { feedback: None };
            }
            answer.await.unwrap_or(Approval::Deny { feedback: None })
        })
    }
}

/// What the session task is asked to do.
enum Command {
    /// Start a new session (`None`) or resume a stored one.
    Open(Option<String>),
    Prompt(String),
    SetMode(Mode),
    Compact,
    SetModel(lembas_models::ModelInfo),
    SetEffort(Option<String>),
    Rename(String),
    Mcp,
    Undo,
    /// A background job ended while nothing ran: its note wakes the session.
    JobEnded,
}

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

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Runs the UI until the person quits. `events` is the session's event stream and `asks` the
/// approver's cards.
pub async fn run(
    open: Open,
    store: Arc<lembas_store::Store>,
    events_tx: mpsc::UnboundedSender<Event>,
    mut events: mpsc::UnboundedReceiver<Event>,
    mut asks: mpsc::UnboundedReceiver<Ask>,
    mut app: App,
    month: Option<MonthSource>,
) -> std::io::Result<()> {
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
    let session = open(None).map_err(std::io::Error::other)?;
    // The first session is not announced (the screen starts clean), but `/subagents` needs its id.
    app.session_id = session.id().to_owned();
    // How full the window starts, for `/context` and the status bar before the first request.
    session.report_context();
    // Words typed during a turn go to the current session's queue (it changes with /resume).
    let steer: Arc<Mutex<Arc<Mutex<Vec<String>>>>> = Arc::new(Mutex::new(session.steer_handle()));
    let steer_slot = steer.clone();
    let cancel: Arc<Mutex<CancellationToken>> = Arc::default();
    let (commands, mut queue) = mpsc::unbounded_channel::<Command>();
    let turn_cancel = cancel.clone();
    let driver = tokio::spawn(async move {
        let mut session = session;
        let say = |message: String| {
            let _ = events_tx.send(Event::Error { message });
        };
        loop {
            // Between commands, a background job that ends wakes the session with its note.
            let command = tokio::select! {
                command = queue.recv() => match command {
                    Some(command) => command,
                    None => break,
                },
                () = session.job_ended() => Command::JobEnded,
            };
            match command {
                Command::JobEnded => {
                    let token = CancellationToken::new();
                    *turn_cancel.lock().expect("cancel") = token.clone();
                    session.deliver_job_notes(&token).await;
                }
                // The session already open here is shown again rather than opened twice (this
                // process holds it).
                Command::Open(id) => {
                    match if id.as_deref() == Some(session.id()) { Ok(None) } else { open(id.as_deref()).map(Some) } {
                        Ok(next) => {
                            if let Some(next) = next {
                                session = next;
                            }
                            *steer_slot.lock().expect("steer") = session.steer_handle();
                            session.announce(id.is_some());
                            // A resumed session is drawn as it was.
                            for event in session.transcript() {
                                let _ = events_tx.send(event);
                            }
                            // The replay is not a turn: it ends as one that did nothing.
                            let _ = events_tx.send(Event::Done {
                                reason: lembas_core::DoneReason::Answered,
                                text: String::new(),
                                steps: 0,
                                session: session.id().to_owned(),
                                usage: Default::default(),
                            });
                        }
                        Err(e) => say(e),
                    }
                }
                Command::Prompt(words) => {
                    let token = CancellationToken::new();
                    *turn_cancel.lock().expect("cancel") = token.clone();
                    session.prompt(&words, &token).await;
                }
                Command::SetMode(mode) => session.set_mode(mode),
                Command::SetModel(model) => {
                    if let Err(e) = session.set_model(model) {
                        say(e.to_string());
                    }
                }
                Command::SetEffort(level) => session.set_effort(level),
                Command::Rename(title) => match session.rename(&title) {
                    Ok(()) => session.announce(false),
                    Err(e) => say(e.to_string()),
                },
                Command::Mcp => session.report_mcp(),
                Command::Undo => {
                    if let Err(e) = session.undo() {
                        say(e.to_string());
                    }
                }
                Command::Compact => {
                    let token = CancellationToken::new();
                    *turn_cancel.lock().expect("cancel") = token.clone();
                    if let Err(e) = session.compact(&token).await {
                        say(e.to_string());
                    }
                }
            }
        }
    });

    crossterm::terminal::enable_raw_mode()?;
    let mut stdout = std::io::stdout();
    crossterm::execute!(stdout, EnableBracketedPaste, EnableFocusChange)?;
    let mut terminal = inline_terminal()?;
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut answer: Option<oneshot::Sender<Approval>> = None;
    let mut reply_to: Option<oneshot::Sender<Option<String>>> = None;
    let mut known_size = terminal.size()?;
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
                terminal = inline_terminal()?;
                known_size = size;
            }
            let width = size.width;
            for block in app.finished.drain(..) {
                let lines = block_lines(&block, width, theme);
                let height = u16::try_from(lines.len()).unwrap_or(u16::MAX);
                terminal.insert_before(height, |buf| Paragraph::new(lines).render(buf.area, buf))?;
            }
            terminal.draw(|frame| draw(frame, &app, now_ms(), theme))?;
            // (A completed frame's `area` is the whole terminal; a frame's is the live area.)
            let top = terminal.get_frame().area().y;
            terminal.set_cursor_position((0, top))?;
            ratatui::backend::Backend::flush(terminal.backend_mut())?;
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
                    let mut turn_ended = matches!(event, Event::Done { .. });
                    app.apply(&event);
                    while let Ok(more) = events.try_recv() {
                        turn_ended |= matches!(more, Event::Done { .. });
                        app.apply(&more);
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
                // One card at a time: subagents working side by side may ask together, and the
                // next waits until this one is answered.
                Some(ask) = asks.recv(), if answer.is_none() && reply_to.is_none() => {
                    match ask {
                        Ask::Approval(request, reply) => {
                            app.ask(request);
                            answer = Some(reply);
                        }
                        Ask::Plan(plan, reply) => {
                            app.plan(plan);
                            answer = Some(reply);
                        }
                        Ask::Question(question, reply) => {
                            app.question(question);
                            reply_to = Some(reply);
                        }
                    }
                    None
                }
                _ = tick.tick() => None,
            };
            match action {
                None => {}
                Some(Action::Quit) => return Ok(()),
                Some(Action::Prompt(words)) => {
                    let _ = commands.send(Command::Prompt(words));
                }
                Some(Action::Steer(words)) => {
                    app.finished.push(Block::User(words.clone()));
                    steer.lock().expect("steer").lock().expect("steer queue").push(words);
                }
                Some(Action::Open(id)) => {
                    let _ = commands.send(Command::Open(id));
                }
                Some(Action::List(words)) => app.show_sessions(&store, words.as_deref()),
                Some(Action::Subagents(pick)) => app.show_subagents(&store, pick),
                Some(Action::Cancel) => cancel.lock().expect("cancel").cancel(),
                Some(Action::Answer(approval)) => {
                    if let Some(reply) = answer.take() {
                        let _ = reply.send(approval);
                    }
                }
                Some(Action::Reply(words)) => {
                    if let Some(reply) = reply_to.take() {
                        let _ = reply.send(Some(words));
                    }
                }
                Some(Action::SetMode(mode)) => {
                    let _ = commands.send(Command::SetMode(mode));
                }
                Some(Action::Compact) => {
                    let _ = commands.send(Command::Compact);
                }
                Some(Action::Undo) => {
                    let _ = commands.send(Command::Undo);
                }
                Some(Action::SetModel(model)) => {
                    let _ = commands.send(Command::SetModel(model));
                }
                Some(Action::SetEffort(level)) => {
                    let _ = commands.send(Command::SetEffort(level));
                }
                Some(Action::Rename(title)) => {
                    let _ = commands.send(Command::Rename(title));
                }
                Some(Action::Mcp) => {
                    let _ = commands.send(Command::Mcp);
                }
            }
        }
    }
    .await;
    // Leave the scrollback as it is: blank the live area and put the cursor at its top, so the
    // shell's prompt comes right after the conversation.
    drop(keys);
    cancel.lock().expect("cancel").cancel();
    terminal.draw(|frame| frame.render_widget(ratatui::widgets::Clear, frame.area()))?;
    let top = terminal.get_frame().area().y;
    terminal.set_cursor_position((0, top))?;
    crossterm::execute!(std::io::stdout(), DisableBracketedPaste, DisableFocusChange)?;
    crossterm::terminal::disable_raw_mode()?;
    driver.abort();
    result
}
