//! What a client reads of a session through the host's commands (`_lembas/team*`,
//! `_lembas/session/status`): the command goes in under its own submission, and the events said
//! for it are gathered until the one that ends it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_client::SessionHandle;
use lembas_protocol::{Command, Event, Submission, SubmissionId};
use tokio::sync::oneshot;

/// How long a read waits for its answer; the host answers these at once, during a turn too.
const WAIT: Duration = Duration::from_secs(10);

/// The reads of one session waiting for their answers.
#[derive(Clone, Default)]
pub(crate) struct Reads(Arc<Mutex<HashMap<SubmissionId, Gathering>>>);

/// The events said so far for one read, and where they go once it ends.
type Gathering = (Vec<Event>, oneshot::Sender<Vec<Event>>);

/// The event that ends a read: the room after the tree (`ReportTeam`), what a stop did, or why
/// it could not.
fn ends_a_read(event: &Event) -> bool {
    matches!(
        event,
        Event::Room { .. }
            | Event::SubagentsStopped { .. }
            | Event::Compacted { .. }
            | Event::Turns { .. }
            | Event::Undone { .. }
            | Event::Forked { .. }
            | Event::JobSaid { .. }
            | Event::FilesFound { .. }
            | Event::Error { .. }
    )
}

impl Reads {
    /// `event`, said for `submission`: gathered, if a read waits on it.
    pub(crate) fn said(&self, submission: &SubmissionId, event: &Event) {
        let mut reads = self.0.lock().expect("reads");
        let Some((events, _)) = reads.get_mut(submission) else { return };
        events.push(event.clone());
        if ends_a_read(event)
            && let Some((events, answer)) = reads.remove(submission)
        {
            let _ = answer.send(events);
        }
    }

    /// Sends `command` to the session and waits for what answers it, its last event the one
    /// that ends it.
    pub(crate) async fn ask(&self, handle: &SessionHandle, command: Command) -> Result<Vec<Event>, String> {
        self.ask_within(handle, command, WAIT).await
    }

    /// [`Reads::ask`], waiting at most `wait` (a compaction asks the model).
    pub(crate) async fn ask_within(
        &self,
        handle: &SessionHandle,
        command: Command,
        wait: Duration,
    ) -> Result<Vec<Event>, String> {
        let id = SubmissionId::fresh("read");
        let (answer, answered) = oneshot::channel();
        self.0.lock().expect("reads").insert(id.clone(), (Vec::new(), answer));
        if !handle.submit(Submission { id: id.clone(), command }) {
            self.0.lock().expect("reads").remove(&id);
            return Err("the session has closed".into());
        }
        let got = tokio::time::timeout(wait, answered).await;
        self.0.lock().expect("reads").remove(&id);
        match got {
            Ok(Ok(events)) => Ok(events),
            Ok(Err(_)) => Err("the session has closed".into()),
            Err(_) => Err("the session did not answer".into()),
        }
    }

    /// The team as it stands: its tree (`None` while it has had no subagent) and its room's
    /// messages numbered above `since`.
    pub(crate) async fn team(
        &self,
        handle: &SessionHandle,
        since: u64,
    ) -> Result<(Option<lembas_protocol::team::TeamTree>, Vec<lembas_protocol::team::RoomMessage>), String> {
        let mut tree = None;
        let mut room = Vec::new();
        for event in self.ask(handle, Command::ReportTeam { since }).await? {
            match event {
                Event::Team { tree: said } => tree = Some(said),
                Event::Room { messages } => room = messages.unwrap_or_default(),
                _ => {}
            }
        }
        Ok((tree, room))
    }
}
