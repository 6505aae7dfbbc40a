//! What a front end holds of the session host, and nothing else of the engine: an open
//! session's [`SessionHandle`] (submissions in), the stream of what it says ([`Opened`]), and
//! [`Sessions`], the stored sessions it may read. The engine implements them; the binary wires the
//! engine's host to each front end, so a front end compiles against this crate and
//! `lembas-protocol` alone and cannot reach around the host.

mod open;
mod watch;

pub use open::{Choices, EditorFiles, Host, OpenRequest, OpenedSession};
pub use watch::{WatchRefused, WatchRequest, Watched};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lembas_protocol::{Command, Event, Found, Said, StoredSession, Submission, SubmissionId};
use tokio::sync::Notify;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// Why the host could not answer a read: its own error, as the person reads it.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// An open session: the handle that takes submissions, and the stream of what it says, each
/// marked with the submission it answers, which ends with [`Event::Closed`] once it has closed.
#[derive(Debug)]
pub struct Opened {
    pub handle: SessionHandle,
    pub events: UnboundedReceiver<Said>,
}

/// Where a front end sends an open session its commands. Cloneable; when every handle is gone,
/// the session's running turn is cancelled and the session closes.
#[derive(Clone, Debug)]
pub struct SessionHandle {
    id: String,
    commands: UnboundedSender<Submission>,
    ended: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

/// What the host keeps of a handle it made, to say when the session has closed.
#[derive(Debug)]
pub struct Closing {
    ended: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

impl Closing {
    /// The session has closed: its store is written and its hold released; whoever waits in
    /// [`SessionHandle::close`] goes on.
    pub fn closed(self) {
        self.closed.store(true, Ordering::SeqCst);
        self.ended.notify_waiters();
    }
}

impl SessionHandle {
    /// The handle of session `id`, whose submissions go to `commands`, and what tells it the
    /// session closed (the host's to keep).
    pub fn new(id: String, commands: UnboundedSender<Submission>) -> (SessionHandle, Closing) {
        let (ended, closed) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
        let closing = Closing { ended: ended.clone(), closed: closed.clone() };
        (SessionHandle { id, commands, ended, closed }, closing)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the session has closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Sends a command under an id of its own, which the events answering it carry; `None` when
    /// the session has closed.
    pub fn send(&self, command: Command) -> Option<SubmissionId> {
        let id = SubmissionId::fresh("h");
        self.submit(Submission { id: id.clone(), command }).then_some(id)
    }

    /// Sends a command under the sender's own id; `false` when the session has closed. A
    /// prompt whose id this session already took up is not a second turn: its events go on, or
    /// its answer is said again.
    pub fn submit(&self, submission: Submission) -> bool {
        self.commands.send(submission).is_ok()
    }

    /// Closes the session (after the running turn, if one runs) and waits until it has: the
    /// store is written and the session's hold on it released.
    pub async fn close(&self) {
        let ended = self.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        if self.is_closed() || self.send(Command::Close { wait_for_jobs: None }).is_none() {
            return;
        }
        if !self.is_closed() {
            ended.await;
        }
    }
}

/// The stored sessions a front end reads through the host.
pub trait Sessions: Send + Sync {
    /// The sessions the person started (a project's, or all), newest first.
    fn sessions(&self, project: Option<&str>) -> Result<Vec<StoredSession>, Failure>;
    /// Sessions whose words match, best first.
    fn search(&self, words: &str) -> Result<Vec<Found>, Failure>;
    /// One stored session, by its whole id.
    fn session(&self, id: &str) -> Result<Option<StoredSession>, Failure>;
    /// The sessions of a session's subagents, in the order they started.
    fn subagents(&self, id: &str) -> Result<Vec<StoredSession>, Failure>;
    /// A stored session's conversation as the events that draw it — the same events, titles
    /// included, a live turn says.
    fn transcript(&self, id: &str) -> Result<Vec<Event>, Failure>;
    /// Deletes a stored session and everything kept with it (not while a lembas has it open).
    fn delete(&self, id: &str) -> Result<(), Failure>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn close_waits_for_the_host_to_say_the_session_closed() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (handle, closing) = SessionHandle::new("s1".into(), tx);
        let host = tokio::spawn(async move {
            let Some(Submission { command: Command::Close { .. }, .. }) = rx.recv().await else { panic!() };
            closing.closed();
        });
        handle.close().await;
        assert!(handle.is_closed());
        host.await.unwrap();
        assert!(handle.send(Command::Cancel).is_none(), "nothing reaches a closed session");
    }
}
