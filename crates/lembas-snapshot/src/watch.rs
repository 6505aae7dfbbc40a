//! What changed in a project since a session's last snapshot, as the file system tells it
//! (inotify, on Linux): the next snapshot then reads only those paths, not every file of the
//! project. At any doubt — the kernel's queue overflowed, a folder could not be watched, a folder
//! appeared (what was written in it before it was watched is unknown), an ignore file changed,
//! a mark did not come back — the next snapshot reads everything, as without a watch.
//!
//! The file system says a change after the write that made it, on a thread of the watcher's;
//! a snapshot taken at once could miss what was just written. So before each snapshot a mark is
//! written to a file of lembas' own in a folder the same watch sees, and the snapshot waits
//! until the mark is seen: the kernel queues one watch's events in order, so every change made
//! before the mark has been counted by then.
//!
//! A change made through a memory map is not told by the kernel (nor to git's own file-system
//! monitors); such a write is kept by the next full read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::SnapshotError;

/// How long a snapshot waits for its mark before it reads everything instead.
const MARK_WAIT: Duration = Duration::from_secs(2);

/// A project watched for one session's snapshots.
pub struct Watch {
    root: PathBuf,
    mark: PathBuf,
    seen: Arc<(Mutex<Seen>, Condvar)>,
    #[cfg(target_os = "linux")]
    watcher: Mutex<notify::INotifyWatcher>,
    /// The last snapshot read through this watch: its tree, and the files it left out for a
    /// limit (what the next one reads again when they change).
    pub(crate) last: Mutex<Option<Last>>,
    /// A folder could not be watched: every snapshot reads everything from now on.
    broken: std::sync::atomic::AtomicBool,
}

/// The last snapshot a watch's session took.
#[derive(Debug, Clone)]
pub(crate) struct Last {
    pub tree: String,
    pub skipped: BTreeSet<String>,
}

/// What the watch has been told since its last snapshot.
#[derive(Debug, Default)]
struct Seen {
    paths: BTreeSet<PathBuf>,
    /// Something may have changed that is not in `paths`.
    lost: bool,
    /// The last mark seen.
    marked: u64,
    /// The last mark written.
    marks: u64,
}

/// What a snapshot must read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Changed {
    Everything,
    /// These paths, relative to the project (none: nothing changed).
    These(Vec<String>),
}

impl Watch {
    /// Starts watching `root`'s folders (those git would not ignore; never `.git`), with the
    /// marks written in `own` (a folder of lembas', outside the project).
    #[cfg(target_os = "linux")]
    pub fn start(root: &Path, own: &Path) -> Result<Watch, SnapshotError> {
        use notify::Watcher;
        std::fs::create_dir_all(own).map_err(|e| SnapshotError::Io(own.to_path_buf(), e))?;
        // A file of this watch's alone: another watch of the same project (another session
        // here, or another lembas) sees this one's marks too, and must not take them for its own.
        static WATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mark = own.join(format!("mark-{}-{n}", std::process::id()));
        let seen: Arc<(Mutex<Seen>, Condvar)> = Arc::default();
        let (told, root_seen, mark_seen) = (seen.clone(), root.to_path_buf(), mark.clone());
        let watcher = notify::INotifyWatcher::new(
            move |event: notify::Result<notify::Event>| take_in(&told, &root_seen, &mark_seen, event),
            notify::Config::default(),
        )
        .map_err(|e| watch_error(own, e))?;
        let watch = Watch {
            root: root.to_path_buf(),
            mark,
            seen,
            watcher: Mutex::new(watcher),
            last: Mutex::new(None),
            broken: Default::default(),
        };
        watch
            .watcher
            .lock()
            .expect("watcher")
            .watch(own, notify::RecursiveMode::NonRecursive)
            .map_err(|e| watch_error(own, e))?;
        watch.try_watch_folders()?;
        Ok(watch)
    }

    /// No watch where the kernel's events are not read here: every snapshot reads everything.
    #[cfg(not(target_os = "linux"))]
    pub fn start(root: &Path, _own: &Path) -> Result<Watch, SnapshotError> {
        let _ = root;
        Err(SnapshotError::Io(
            root.to_path_buf(),
            std::io::Error::new(std::io::ErrorKind::Unsupported, "file-system watch not used on this system"),
        ))
    }

    /// Watches every folder of the project git would not ignore, again (a folder appeared; one
    /// watched already keeps its watch). One that cannot be: the watch is no longer trusted.
    pub(crate) fn watch_folders(&self) {
        if self.try_watch_folders().is_err() {
            self.broken.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[cfg(target_os = "linux")]
    fn try_watch_folders(&self) -> Result<(), SnapshotError> {
        use notify::Watcher;
        let walk = ignore::WalkBuilder::new(&self.root)
            .hidden(false)
            .parents(false)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build();
        let mut watcher = self.watcher.lock().expect("watcher");
        for entry in walk {
            let entry = entry.map_err(|e| SnapshotError::Io(self.root.clone(), std::io::Error::other(e)))?;
            if entry.file_type().is_some_and(|kind| kind.is_dir()) {
                watcher
                    .watch(entry.path(), notify::RecursiveMode::NonRecursive)
                    .map_err(|e| watch_error(entry.path(), e))?;
            }
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn try_watch_folders(&self) -> Result<(), SnapshotError> {
        Ok(())
    }

    /// What changed since the last call: every change made before it is in (a mark is written
    /// and waited for).
    pub(crate) fn changed(&self) -> Changed {
        if self.broken.load(std::sync::atomic::Ordering::SeqCst) {
            return Changed::Everything;
        }
        let (lock, told) = &*self.seen;
        let number = {
            let mut seen = lock.lock().expect("seen");
            seen.marks += 1;
            seen.marks
        };
        if std::fs::write(&self.mark, number.to_string()).is_err() {
            return self.drain(true);
        }
        let seen = lock.lock().expect("seen");
        let (seen, waited) = told.wait_timeout_while(seen, MARK_WAIT, |seen| seen.marked < number).expect("seen");
        drop(seen);
        self.drain(waited.timed_out())
    }

    /// Takes what was told, as paths in the project; `lost`: read everything.
    fn drain(&self, lost: bool) -> Changed {
        let mut seen = self.seen.0.lock().expect("seen");
        let paths = std::mem::take(&mut seen.paths);
        if std::mem::take(&mut seen.lost) || lost {
            return Changed::Everything;
        }
        drop(seen);
        let mut relative = Vec::with_capacity(paths.len());
        for path in paths {
            let Ok(inside) = path.strip_prefix(&self.root) else { continue };
            let Some(text) = inside.to_str().filter(|t| !t.is_empty()) else {
                // The project's folder itself, or a name that is not UTF-8: read everything.
                if inside.as_os_str().is_empty() {
                    continue;
                }
                return Changed::Everything;
            };
            if text == ".git" || text.starts_with(".git/") {
                continue;
            }
            // An ignore file decides what else is kept.
            if inside.file_name().is_some_and(|name| name == ".gitignore") {
                return Changed::Everything;
            }
            relative.push(text.to_owned());
        }
        Changed::These(relative)
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("root", &self.root).field("broken", &self.broken).finish_non_exhaustive()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.mark);
    }
}

/// One event of the watcher's, taken in on its thread.
#[cfg(target_os = "linux")]
fn take_in(seen: &(Mutex<Seen>, Condvar), root: &Path, mark: &Path, event: notify::Result<notify::Event>) {
    let (lock, told) = seen;
    let mut seen = lock.lock().expect("seen");
    let event = match event {
        Ok(event) => event,
        Err(_) => {
            seen.lost = true;
            return;
        }
    };
    if event.need_rescan() {
        seen.lost = true;
    }
    if matches!(event.kind, notify::EventKind::Access(_)) {
        return;
    }
    for path in event.paths {
        if path == mark {
            // Written whole before its close is told: a number read short is a later event's.
            if let Some(number) = std::fs::read_to_string(mark).ok().and_then(|n| n.trim().parse::<u64>().ok()) {
                seen.marked = seen.marked.max(number);
                told.notify_all();
            }
        } else if path.starts_with(root) {
            seen.paths.insert(path);
        }
    }
}

#[cfg(target_os = "linux")]
fn watch_error(path: &Path, e: notify::Error) -> SnapshotError {
    SnapshotError::Io(path.to_path_buf(), std::io::Error::other(e.to_string()))
}
