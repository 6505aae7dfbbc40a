//! Where a session's events go: its front ends' stream, each event marked with the submission
//! the session was carrying out when it was said ([`Said`]). The host sets that submission as it
//! takes each command up; everything the session, its team, its subagents and its asks say
//! meanwhile carries it, without each of them knowing.

use std::sync::{Arc, Mutex};

use lembas_protocol::{Event, Said, SubmissionId};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Nobody reads the session's events any more (every front end let go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unheard;

/// The sending end of a session's events. Cloneable; the clones share the submission being
/// carried out.
#[derive(Clone, Debug)]
pub(crate) struct EventSink {
    tx: UnboundedSender<Said>,
    carrying: Arc<Mutex<Option<SubmissionId>>>,
}

impl EventSink {
    /// A sink and the stream it feeds.
    pub(crate) fn channel() -> (EventSink, UnboundedReceiver<Said>) {
        let (tx, rx) = unbounded_channel();
        (EventSink::new(tx), rx)
    }

    /// A sink feeding `tx`, carrying out nothing yet.
    pub(crate) fn new(tx: UnboundedSender<Said>) -> EventSink {
        EventSink { tx, carrying: Arc::default() }
    }

    /// Says `event`, marked with the submission being carried out.
    pub(crate) fn send(&self, event: Event) -> Result<(), Unheard> {
        let submission = self.carrying.lock().expect("submission").clone();
        self.tx.send(Said { submission, event }).map_err(|_| Unheard)
    }

    /// Says `event` as the answer to `submission`, whatever else is being carried out (a
    /// command that acts at once during a turn).
    pub(crate) fn answer(&self, submission: &SubmissionId, event: Event) -> Result<(), Unheard> {
        self.tx.send(Said { submission: Some(submission.clone()), event }).map_err(|_| Unheard)
    }

    /// From now on, what is said belongs to `submission` (`None`: to nobody's); answers the one
    /// it belonged to before.
    pub(crate) fn carry(&self, submission: Option<SubmissionId>) -> Option<SubmissionId> {
        std::mem::replace(&mut *self.carrying.lock().expect("submission"), submission)
    }

    /// The submission being carried out.
    pub(crate) fn carrying(&self) -> Option<SubmissionId> {
        self.carrying.lock().expect("submission").clone()
    }
}
