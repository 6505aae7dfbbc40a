//! Every turn a snapshot: the project's files as they were before the first call of a turn the
//! person started that may change the project (`lembas-snapshot`), and as the turn left them. An
//! undo puts back what changed between the two, whoever changed it: lembas' file tools, a
//! command, a subagent, a team's member.
//!
//! The one before is taken as the turn opens, while the model is asked (in a large project it is
//! a walk of its files, which the person then does not wait on); it is kept only when a call may
//! change something, and waited for then. The one after is taken as the turn ends, before it is
//! said to have ended: taken later, a file the person saved in between would count as the
//! turn's, and an undo would take their edit back (file times cannot tell the two apart: a file
//! system's clock moves in steps of milliseconds).

use std::sync::{Arc, OnceLock};

use lembas_snapshot::{SnapshotError, Store};
use tokio::task::JoinHandle;

use crate::Event;
use crate::session::Session;

/// This turn's snapshots, as far as they went.
#[derive(Debug, Default)]
pub(crate) struct TurnSnapshot {
    /// The files as they were before this turn's first change are kept.
    pub taken: bool,
    /// The person was told snapshots could not be taken (once a session).
    trouble_told: bool,
    /// The snapshot taken as the turn opened, being read: its tree.
    ahead: Option<JoinHandle<Result<String, SnapshotError>>>,
    /// What the last undo or rewind left because it changed after its turn: the tree it would
    /// come back from, and the paths (the person may still say to overwrite them).
    pub kept: Option<(String, Vec<String>)>,
    /// The project watched for this session's snapshots, so each reads only what changed;
    /// started with the first snapshot (`None` inside: it could not be, and each reads all).
    watch: Arc<OnceLock<Option<lembas_snapshot::Watch>>>,
}

impl Session {
    /// The project's snapshot store.
    pub(crate) fn snapshots(&self) -> Store {
        Store::open(&self.cfg.snapshots_dir, &self.ws.root, self.cfg.snapshot_limits)
    }

    /// A turn the person started opens: the files are read now, while the model is asked.
    /// (A subagent's changes are its parent's turn's, which kept the files before it started.)
    pub(crate) async fn snapshot_ahead(&mut self) {
        if self.subagent.is_some() {
            return;
        }
        // Snapshots use the session's index: one at a time.
        self.settle_snapshots().await;
        self.snapshot.ahead = Some(self.read_files());
    }

    /// The project's files read into the store on a blocking thread: the tree they make.
    fn read_files(&self) -> JoinHandle<Result<String, SnapshotError>> {
        let (store, id, watch) = (self.snapshots(), self.id.clone(), self.snapshot.watch.clone());
        tokio::task::spawn_blocking(move || {
            let watch = watch.get_or_init(|| store.watch().ok());
            store.take_watched(&id, watch.as_ref()).map(|taken| taken.tree)
        })
    }

    /// Before the turn's first call that may change the project: the files as they were are
    /// kept (once a turn).
    pub(crate) async fn snapshot_before(&mut self) {
        let Some(turn) = self.turn_seq.filter(|_| !self.snapshot.taken && self.subagent.is_none()) else {
            return;
        };
        self.snapshot.taken = true;
        // A turn no person started (a job's note) after an undo has none read ahead: read now.
        let tree = match self.snapshot.ahead.take() {
            Some(ahead) => ahead.await,
            None => self.read_files().await,
        };
        let store = self.snapshots();
        let kept = tree.map(|tree| tree.and_then(|tree| store.keep(&self.id, turn, "before", &tree)));
        self.say_snapshot_trouble(kept);
    }

    /// The turn ends: the files as it left them are kept, and the store held within its
    /// limit, when it changed something.
    pub(crate) async fn snapshot_after(&mut self) {
        // Read as the turn opened and not needed: done with before anything else reads.
        self.settle_snapshots().await;
        let Some(turn) = self.turn_seq.filter(|_| self.snapshot.taken && self.subagent.is_none()) else {
            return;
        };
        let (store, id, watch) = (self.snapshots(), self.id.clone(), self.snapshot.watch.clone());
        let cap = store.cap();
        let kept = tokio::task::spawn_blocking(move || {
            let watch = watch.get_or_init(|| store.watch().ok());
            let taken = store.take_watched(&id, watch.as_ref())?;
            store.keep(&id, turn, "after", &taken.tree)?;
            store.prune(&id)
        })
        .await;
        match kept {
            Ok(Ok(pruned)) => self.emit(Event::SnapshotStore { bytes: pruned.bytes, cap }),
            trouble => self.say_snapshot_trouble(trouble.map(|kept| kept.map(drop))),
        }
    }

    /// Waits for a snapshot still being read (one at a time on the session's index; none is
    /// left running when the session ends).
    pub(crate) async fn settle_snapshots(&mut self) {
        if let Some(ahead) = self.snapshot.ahead.take() {
            let _ = ahead.await;
        }
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
