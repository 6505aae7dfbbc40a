//! The terminal UI: `lembas` with no arguments. It drives the same engine as `lembas run`,
//! through the same `Session` and its events, and draws them.
//!
//! The conversation goes into the terminal's own scrollback as it finishes (an inline viewport:
//! the scrollback keeps working after the UI exits); the live area below it shows what streams
//! now, the progress line, the input (or an approval card) and the status bar.

pub mod app;
pub mod custom;
mod driver;
pub mod editor;
mod highlight;
pub mod live;
pub mod markdown;
mod notes;
pub mod rows;
mod schedules;
mod screen;
mod scrollback;
pub mod server;
mod subagents;
mod team;
pub mod transcript;
pub mod view;

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event as Term, EventStream, KeyEventKind};
use driver::{Driver, Flow};
use futures::StreamExt;
use lembas_client::{Opened, Sessions};
use ratatui::backend::CrosstermBackend;
use ratatui::{Terminal, TerminalOptions, Viewport};
use screen::Screen;
use tokio::sync::mpsc;

pub use app::commands::COMMANDS;
pub use app::{Action, App, Block, Card};
pub use live::{draw, hint_line, live_height};
pub use markdown::markdown_rows;
pub use rows::{Row, plain};
pub use view::{Theme, block_lines, block_rows, status_line};

/// A yes-or-no answer from one key (`y` or `n`; Enter, Esc and Ctrl-C say no), as a person
/// answers such a question in a terminal — no Enter needed after it. The answer is echoed.
///
/// A person who starts typing their prompt before they notice the question is not answering it:
/// once a key that is no answer comes, what follows is their words (a `y` or `n` in them
/// included), shown as they type, until Enter — then the question is put again. Those words are
/// answered back, for the editor to start with, so nothing typed is lost.
pub fn yes_or_no() -> std::io::Result<(bool, String)> {
    crossterm::terminal::enable_raw_mode()?;
    let answer = read_answer();
    crossterm::terminal::disable_raw_mode()?;
    let (answer, typed) = answer?;
    println!("{}", if answer { "y" } else { "n" });
    Ok((answer, typed))
}

fn read_answer() -> std::io::Result<(bool, String)> {
    use crossterm::event::{Event as Term, KeyEventKind, read};
    let mut question = TrustQuestion::default();
    let mut out = std::io::stdout();
    loop {
        let said = match read()? {
            Term::Key(k) if k.kind == KeyEventKind::Press => question.key(k),
            // A paste is words too.
            Term::Paste(text) => question.paste(&text),
            _ => continue,
        };
        match said {
            Heard::Answer(yes) => return Ok((yes, question.typed)),
            Heard::Echo(text) => {
                let _ = write!(out, "{text}");
                let _ = out.flush();
            }
        }
    }
}

/// The trust question as keys answer it: `y` or `n` (Enter, Esc, Ctrl-C: no) — unless the person
/// is typing words for lembas, kept for its input box from the first key that is no answer until
/// Enter, after which the question stands again.
#[derive(Debug, Default)]
struct TrustQuestion {
    typed: String,
    /// The line being typed holds words.
    words: bool,
}

/// What a key did to the question: answered it, or something to show.
#[derive(Debug, PartialEq)]
enum Heard {
    Answer(bool),
    Echo(String),
}

impl TrustQuestion {
    fn key(&mut self, key: crossterm::event::KeyEvent) -> Heard {
        use crossterm::event::{KeyCode, KeyModifiers};
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Heard::Answer(false),
            KeyCode::Char('y' | 'Y') if !self.words => Heard::Answer(true),
            KeyCode::Char('n' | 'N') | KeyCode::Esc if !self.words => Heard::Answer(false),
            KeyCode::Enter if !self.words => Heard::Answer(false),
            KeyCode::Enter => {
                self.words = false;
                self.typed.push('\n');
                Heard::Echo("\r\n(kept for when lembas opens) Trust this project? [y/n] ".to_owned())
            }
            KeyCode::Backspace if self.words => {
                self.typed.pop();
                // The line erased to nothing: the next key may answer again.
                self.words = !(self.typed.is_empty() || self.typed.ends_with('\n'));
                Heard::Echo("\u{8} \u{8}".to_owned())
            }
            KeyCode::Char(c) => {
                self.words = true;
                self.typed.push(c);
                Heard::Echo(c.to_string())
            }
            _ => Heard::Echo(String::new()),
        }
    }

    fn paste(&mut self, text: &str) -> Heard {
        self.typed.push_str(text);
        self.words = !text.is_empty() || self.words;
        Heard::Echo(text.to_owned())
    }
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
pub(crate) use lembas_protocol::progress::now_ms;

/// Keeps settings changed in `/settings` (in config.toml): where they were kept, or why not.
pub type SaveSettings = Arc<dyn Fn(&[app::settings::Change]) -> Result<String, String> + Send + Sync>;

/// How the UI begins: on a stored session or a new one, with a first prompt, or with the list
/// of sessions to choose from; and where `/settings` keeps what it changes.
#[derive(Clone, Default)]
pub struct Begin {
    pub resume: Option<String>,
    pub prompt: Option<String>,
    pub pick_session: bool,
    pub save: Option<SaveSettings>,
    /// The LLeMbas server's schedules (`/schedule`), on such a login.
    pub schedules: Option<server::ScheduleSource>,
    /// Sharing the session with the server's web UI (`/share`), on such a login.
    pub share: Option<server::ShareSource>,
}

impl std::fmt::Debug for Begin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Begin")
            .field("resume", &self.resume)
            .field("prompt", &self.prompt)
            .field("pick_session", &self.pick_session)
            .field("save", &self.save.is_some())
            .field("schedules", &self.schedules.is_some())
            .field("share", &self.share.is_some())
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
    let (server, mut heard) = server::ServerSide::new(begin.schedules.clone(), begin.share.clone());
    let mut driver = Driver::start(open, host, begin, server, &mut app)?;
    let mut screen = Screen::open(theme)?;
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    // One loop: a frame, then whichever comes first of a key, what the session said, the
    // month's use, or a tick (the progress line's clock).
    let result: std::io::Result<()> = loop {
        if let Err(e) = screen.draw(&mut app) {
            break Err(e);
        }
        if let Some(message) = app.to_notify.take() {
            notify(&message);
        }
        let action = tokio::select! {
            key = keys.next() => match key_action(&mut app, key) {
                Ok(action) => action,
                Err(e) => break Err(e),
            },
            Some(said) = driver.events.recv() => {
                if driver.take(&mut app, said) {
                    ask_month();
                }
                None
            }
            Some(usage) = month_rx.recv() => {
                app.month = Some(usage);
                None
            }
            Some(answer) = heard.recv() => {
                server::heard(&mut app, answer);
                None
            }
            _ = tick.tick() => None,
        };
        if let Some(action) = action
            && driver.act(&mut app, action) == Flow::Quit
        {
            break Ok(());
        }
    };
    drop(keys);
    driver.stop();
    screen.close()?;
    let id = driver.close().await;
    result.map(|()| id)
}

/// What a key (or a paste, or the terminal's focus) does; `Quit` when the terminal's input ended.
fn key_action(app: &mut App, key: Option<std::io::Result<Term>>) -> std::io::Result<Option<Action>> {
    Ok(match key {
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
        Some(Ok(_)) => None,
        Some(Err(e)) => return Err(e),
        None => Some(Action::Quit),
    })
}

#[cfg(test)]
mod tests {
    use super::{Heard, TrustQuestion};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn keys(question: &mut TrustQuestion, codes: &[KeyCode]) -> Vec<Heard> {
        codes.iter().map(|c| question.key(KeyEvent::new(*c, KeyModifiers::NONE))).collect()
    }

    #[test]
    fn y_answers_and_words_typed_ahead_are_kept() {
        let mut question = TrustQuestion::default();
        assert_eq!(keys(&mut question, &[KeyCode::Char('y')]), [Heard::Answer(true)]);
        let mut question = TrustQuestion::default();
        let heard = keys(&mut question, &[KeyCode::Char('h'), KeyCode::Char('y'), KeyCode::Enter, KeyCode::Char('y')]);
        assert_eq!(heard.last(), Some(&Heard::Answer(true)), "after Enter the question stands again");
        assert_eq!(question.typed, "hy\n");
    }

    #[test]
    fn words_erased_to_nothing_leave_the_question_to_answer() {
        // Typed ahead, thought better of it, answered: `y` is the answer, not a word.
        let mut question = TrustQuestion::default();
        let codes = [KeyCode::Char('/'), KeyCode::Char('m'), KeyCode::Backspace, KeyCode::Backspace];
        keys(&mut question, &codes);
        assert_eq!(keys(&mut question, &[KeyCode::Char('y')]), [Heard::Answer(true)]);
        assert_eq!(question.typed, "");
        // An earlier kept line stays when the next is erased.
        let mut question = TrustQuestion::default();
        keys(&mut question, &[KeyCode::Char('a'), KeyCode::Enter, KeyCode::Char('b'), KeyCode::Backspace]);
        assert_eq!(keys(&mut question, &[KeyCode::Char('n')]), [Heard::Answer(false)]);
        assert_eq!(question.typed, "a\n");
    }
}
