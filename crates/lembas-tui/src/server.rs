//! What the UI asks the LLeMbas server itself, beside the session: its schedules (`/schedule`)
//! and sharing the session with its web UI (`/share`). The binary says how (the login's
//! token, the link); the answers come back to the main loop as [`Heard`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use lembas_protocol::schedules::{ScheduleAsk, ScheduleSaid};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::{App, Block};

/// Asks the server about its schedules.
pub type ScheduleSource = Arc<dyn Fn(ScheduleAsk) -> Pin<Box<dyn Future<Output = ScheduleSaid> + Send>> + Send + Sync>;

/// Starts or stops sharing a session with the server's web UI. The answer says how it went;
/// what happens to the share later (it dropped, it ended) is said on `later`.
pub type ShareSource = Arc<
    dyn Fn(ShareAsk, UnboundedSender<ShareNews>) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>>
        + Send
        + Sync,
>;

/// Something that happened to a share after it started: it dropped and came back, or ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareNews {
    pub text: String,
    /// The share is over (the session closed, the server refused it, `/share off`).
    pub ended: bool,
}

/// What `/share` asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareAsk {
    /// Share the session with this id (any other share ends).
    Start {
        session: String,
    },
    Stop,
}

/// What the server answered, for the main loop.
#[derive(Debug)]
pub(crate) enum Heard {
    Schedules(ScheduleSaid),
    /// The share started (`true`) or stopped, or failed to.
    Share {
        on: bool,
        said: Result<String, String>,
    },
    /// Something later about the share.
    ShareNews(ShareNews),
}

/// The UI's ways to the server, and where their answers go.
pub(crate) struct ServerSide {
    schedules: Option<ScheduleSource>,
    share: Option<ShareSource>,
    tell: UnboundedSender<Heard>,
    later: UnboundedSender<ShareNews>,
}

impl ServerSide {
    pub(crate) fn new(
        schedules: Option<ScheduleSource>,
        share: Option<ShareSource>,
    ) -> (ServerSide, UnboundedReceiver<Heard>) {
        let (tell, heard) = unbounded_channel();
        let (later, mut notices) = unbounded_channel::<ShareNews>();
        let forward = tell.clone();
        tokio::spawn(async move {
            while let Some(notice) = notices.recv().await {
                if forward.send(Heard::ShareNews(notice)).is_err() {
                    return;
                }
            }
        });
        (ServerSide { schedules, share, tell, later }, heard)
    }

    /// `/schedule …`: asked in the background, answered as a notice.
    pub(crate) fn schedule(&self, app: &mut App, ask: ScheduleAsk) {
        let Some(source) = self.schedules.clone() else {
            app.finished.push(Block::Notice(
                "Schedules live on a LLeMbas server: log in to one (lembas login URL) to make them.".into(),
            ));
            return;
        };
        let tell = self.tell.clone();
        tokio::spawn(async move {
            let _ = tell.send(Heard::Schedules(source(ask).await));
        });
    }

    /// `/share` or `/share off`.
    pub(crate) fn share(&self, app: &mut App, on: bool) {
        let Some(source) = self.share.clone() else {
            app.finished.push(Block::Notice(
                "Sharing a session needs a LLeMbas login: log in to one (lembas login URL).".into(),
            ));
            return;
        };
        if on && !app.shared {
            // The server may take a while to answer; the person sees it is under way.
            app.finished.push(Block::Notice("Sharing this session: waiting for the server to take it…".into()));
        }
        let ask = if on { ShareAsk::Start { session: app.session_id.clone() } } else { ShareAsk::Stop };
        let (tell, later) = (self.tell.clone(), self.later.clone());
        tokio::spawn(async move {
            let said = source(ask, later).await;
            let _ = tell.send(Heard::Share { on, said });
        });
    }
}

/// What the server answered, into the transcript (and the status bar's mark of a share).
pub(crate) fn heard(app: &mut App, heard: Heard) {
    match heard {
        Heard::Schedules(said) => {
            if let ScheduleSaid::Listed(list) = &said {
                app.schedules = list.clone();
            }
            let text = crate::schedules::said(&said);
            app.finished.push(if matches!(said, ScheduleSaid::Failed { .. }) {
                Block::Error(text)
            } else {
                Block::Notice(text)
            });
        }
        Heard::Share { on, said: Ok(text) } => {
            app.shared = on;
            app.finished.push(Block::Notice(text));
        }
        Heard::Share { said: Err(text), .. } => app.finished.push(Block::Error(text)),
        Heard::ShareNews(news) => {
            if news.ended {
                app.shared = false;
            }
            app.finished.push(Block::Notice(news.text));
        }
    }
}
