//! Every turn a snapshot: before the first call of a turn the person started that may change
//! the project, its files are kept (`lembas-snapshot`), and again as the turn ends. An undo puts
//! back what changed between the two, whoever changed it: lembas' file tools, a command, a
//! subagent, a team's member.

use lembas_snapshot::{SnapshotError, Store};

use crate::Event;
use crate::session::Session;

/// This turn's snapshot, as far as it went.
#[derive(Debug, Default)]
pub(crate) struct TurnSnapshot {
    /// The files were kept before this turn's first change.
    pub taken: bool,
    /// The person was told snapshots could not be taken (once a session).
    pub trouble_told: bool,
}

impl Session {
    /// The project's snapshot store.
    pub(crate) fn snapshots(&self) -> Store {
        Store::open(&self.cfg.snapshots_dir, &self.ws.root, self.cfg.snapshot_limits)
    }

    /// Keeps the project's files before the turn's first change (once a turn; a subagent's
    /// changes are its parent's turn's, which kept them before it started).
    pub(crate) async fn snapshot_before(&mut self) {
        let Some(turn) = self.turn_seq.filter(|_| !self.snapshot.taken && self.subagent.is_none()) else {
            return;
        };
        self.snapshot.taken = true;
        let (store, id) = (self.snapshots(), self.id.clone());
        let kept = tokio::task::spawn_blocking(move || {
            let taken = store.take(&id)?;
            store.keep(&id, turn, "before", &taken.tree)
        })
        .await;
        self.say_snapshot_trouble(kept);
    }

    /// Keeps the files as the turn left them, and the store within its limit.
    pub(crate) async fn snapshot_after(&mut self) {
        let Some(turn) = self.turn_seq.filter(|_| self.snapshot.taken && self.subagent.is_none()) else {
            return;
        };
        let (store, id) = (self.snapshots(), self.id.clone());
        let kept = tokio::task::spawn_blocking(move || {
            let taken = store.take(&id)?;
            store.keep(&id, turn, "after", &taken.tree)?;
            store.prune(&id).map(drop)
        })
        .await;
        self.say_snapshot_trouble(kept);
    }

    fn say_snapshot_trouble(&mut self, kept: Result<Result<(), SnapshotError>, tokio::task::JoinError>) {
        let trouble = match kept {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
        if !std::mem::replace(&mut self.snapshot.trouble_told, true) {
            self.emit(Event::Notice {
                message: format!(
                    "The project's files could not be snapshotted ({trouble}); /undo cannot put them back."
                ),
            });
        }
    }
}
