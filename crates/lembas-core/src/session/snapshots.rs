//! Every turn a snapshot: the project's files as they were before the first call of a turn the
//! person started that may change the project (`lembas-snapshot`), and as the turn left them. An
//! undo puts back what changed between the two, whoever changed it: lembas' file tools, a
//! command, a subagent, a team's member.
//!
//! The one before is read from the moment the turn opens, beside the making of its first request
//! and while the model is asked (in a large project it is a walk of its files, which the person
//! then does not wait on); it is kept only when a call may change something, and waited for then.
//! Started any later — once the request was out, as it was until issue #59 — a model that answers
//! at once had its first change wait on the read (3 `git` runs, ~5 ms). The one after is taken as
//! the turn ends, before it is said to have ended: taken later, a file the person saved in between would count as the
//! turn's, and an undo would take their edit back (file times cannot tell the two apart: a file
//! system's clock moves in steps of milliseconds).

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use lembas_snapshot::{Snapshot, SnapshotError, Store, Watch};
use tokio::task::JoinHandle;

use crate::Event;
use crate::session::Session;

/// A whole read of the project this slow starts a watch of it, so later snapshots read only
/// what changed. A small project is read whole in a few milliseconds (three `git` runs): it is
/// never watched, and pays neither the watch's thread nor its start.
const SLOW_READ: Duration = Duration::from_millis(50);

/// A snapshot of the project for session `id`, through its watch once there is one — started
/// after a slow whole read (the next snapshot then reads everything once more: what changed
/// between this read and the watch's start is not known).
fn take(store: &Store, id: &str, watch: &OnceLock<Option<Watch>>) -> Result<Snapshot, SnapshotError> {
    take_watching_after(store, id, watch, SLOW_READ)
}

fn take_watching_after(
    store: &Store,
    id: &str,
    watch: &OnceLock<Option<Watch>>,
    slow: Duration,
) -> Result<Snapshot, SnapshotError> {
    let started = Instant::now();
    let taken = store.take_watched(id, watch.get().and_then(Option::as_ref))?;
    if taken.whole && watch.get().is_none() && started.elapsed() >= slow {
        watch.get_or_init(|| store.watch().ok());
    }
    Ok(taken)
}

/// A read of the project's files on a blocking thread: the tree they make.
pub(crate) type ReadAhead = JoinHandle<Result<String, SnapshotError>>;

/// This turn's snapshots, as far as they went.
#[derive(Debug, Default)]
pub(crate) struct TurnSnapshot {
    /// The files as they were before this turn's first change are kept.
    pub taken: bool,
    /// The person was told snapshots could not be taken (once a session).
    trouble_told: bool,
    /// The snapshot taken as the turn opened, being read: its tree.
    ahead: Option<ReadAhead>,
    /// What the last undo or rewind left because it changed after its turn: the tree it would
    /// come back from, and the paths (the person may still say to overwrite them).
    pub kept: Option<(String, Vec<String>)>,
    /// The project watched for this session's snapshots, so each reads only what changed;
    /// started once a whole read took [`SLOW_READ`] (`None` inside: it could not be, and each
    /// reads all).
    watch: Arc<OnceLock<Option<Watch>>>,
}

impl Session {
    /// The project's snapshot store.
    pub(crate) fn snapshots(&self) -> Store {
        Store::open(&self.cfg.snapshots_dir, &self.ws.root, self.cfg.snapshot_limits)
    }

    /// A turn the person started opens: the files as they are now are read, on a blocking
    /// thread, while the turn goes on. (A subagent's changes are its parent's turn's, which kept
    /// the files before it started.)
    pub(crate) async fn snapshot_ahead(&mut self) {
        if self.role.is_subagent() {
            return;
        }
        // Snapshots use the session's index: one at a time.
        self.settle_snapshots().await;
        self.snapshot.ahead = Some(self.read_files());
    }

    /// The project's files read into the store on a blocking thread: the tree they make.
    fn read_files(&self) -> ReadAhead {
        let (store, id, watch) = (self.snapshots(), self.id.clone(), self.snapshot.watch.clone());
        tokio::task::spawn_blocking(move || take(&store, &id, &watch).map(|taken| taken.tree))
    }

    /// Before the turn's first call that may change the project: the files as they were are
    /// kept (once a turn).
    pub(crate) async fn snapshot_before(&mut self) {
        let Some(turn) = self.turn_seq.filter(|_| !self.snapshot.taken && !self.role.is_subagent()) else {
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
        let Some(turn) = self.turn_seq.filter(|_| self.snapshot.taken && !self.role.is_subagent()) else {
            return;
        };
        let (store, id, watch) = (self.snapshots(), self.id.clone(), self.snapshot.watch.clone());
        let cap = store.cap();
        let kept = tokio::task::spawn_blocking(move || {
            let taken = take(&store, &id, &watch)?;
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_slow_whole_read_starts_the_watch_and_the_read_after_the_next_is_of_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("p");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let store = Store::open(&dir.path().join("snapshots"), &root, Default::default());
        let watch = OnceLock::new();
        let fast = |watch: &OnceLock<Option<Watch>>| take_watching_after(&store, "s", watch, Duration::MAX).unwrap();
        assert!(fast(&watch).whole);
        assert!(watch.get().is_none(), "a quick read starts no watch");
        let slow = |watch: &OnceLock<Option<Watch>>| take_watching_after(&store, "s", watch, Duration::ZERO).unwrap();
        assert!(slow(&watch).whole);
        assert!(watch.get().is_some_and(Option::is_some), "a slow one does");
        std::fs::write(root.join("a.txt"), "changed before the watch knew the last read").unwrap();
        // What changed between the read and the watch's start is unknown: read whole once more.
        assert!(slow(&watch).whole);
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let through = slow(&watch);
        assert!(!through.whole);
        assert_eq!(through.tree, store.take("whole").unwrap().tree);
    }
}
