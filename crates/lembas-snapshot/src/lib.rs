//! Every turn a snapshot. Before a turn's first change the project's files are kept in a git
//! object store of lembas' own (one per project, in lembas' data folder: never the project's
//! `.git`, its index, branches, stash or hooks, and a project need not be a git repository at
//! all); when the turn ends they are kept again. An undo puts back every file the turn changed —
//! whoever changed it: lembas' file tools, a command, a subagent — unless the person changed it
//! since, which is left as they made it and said.
//!
//! The store honours the project's `.gitignore` (and `.git/info/exclude`, and the person's own
//! global ignore file); a file over [`Limits::file_bytes`] is not kept, nor what would take one
//! snapshot's new content past [`Limits::snapshot_bytes`], and those are named. Each session has
//! an index of its own, so a snapshot is one incremental `git add` of what changed since its last.
//! Snapshots are refs (`refs/lembas/<session>/<turn>/before|after`) to trees; deleting a session's
//! refs and a `git gc` is how a store shrinks ([`Store::forget`], [`Store::prune`]).

mod git;
mod restore;
mod take;
mod turns;
mod watch;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::Digest;

use git::Git;
pub use restore::Restored;
pub use watch::Watch;

/// Why a snapshot could not be taken or put back.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("git could not be run ({0}); snapshots need git installed")]
    NoGit(std::io::Error),
    #[error("git {args} failed: {said}")]
    Git { args: String, said: String },
    #[error("{path}: {1}", path = .0.display())]
    Io(PathBuf, std::io::Error),
}

/// How much a store keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A file larger than this is not kept (a dataset, a build's output not ignored).
    pub file_bytes: u64,
    /// What one snapshot adds at most; files past it are not kept.
    pub snapshot_bytes: u64,
    /// The store's size past which the oldest snapshots are dropped.
    pub store_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { file_bytes: 4 << 20, snapshot_bytes: 256 << 20, store_bytes: 1 << 30 }
    }
}

/// The project's files as they were at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The tree's object id.
    pub tree: String,
    /// Files left out: over a limit.
    pub skipped: Vec<String>,
    /// Every file of the project was looked at (no watch, or one that could not say what
    /// changed); otherwise only what changed.
    pub whole: bool,
}

/// One turn's snapshots: before its first change, and as it ended (`None`: it did not end — the
/// program was stopped in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSnapshots {
    pub turn: i64,
    pub before: String,
    pub after: Option<String>,
}

/// What a [`Store::prune`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// How many turns' snapshots were dropped.
    pub dropped: usize,
    /// The store's size on disk after it, in bytes.
    pub bytes: u64,
}

/// One project's snapshots.
#[derive(Debug, Clone)]
pub struct Store {
    git: Git,
    limits: Limits,
}

impl Store {
    /// The store for `project` (its real path) under `root` (lembas' snapshots folder), made
    /// when first used.
    pub fn open(root: &Path, project: &Path, limits: Limits) -> Store {
        let key = hex::encode(&sha2::Sha256::digest(project.as_os_str().as_encoded_bytes())[..10]);
        Store { git: Git { git_dir: root.join(format!("{key}.git")), work_tree: project.to_path_buf() }, limits }
    }

    /// Starts watching the project for this store's snapshots ([`Store::take_watched`]); the
    /// watch's marks are written beside the store, never in the project.
    pub fn watch(&self) -> Result<Watch, SnapshotError> {
        Watch::start(&self.git.work_tree, &self.git.git_dir.with_extension("marks"))
    }

    /// Where the store is (its git folder).
    pub fn path(&self) -> &Path {
        &self.git.git_dir
    }

    /// Keeps `tree` as `session`'s turn `turn`'s snapshot `which` (`before` or `after`): a ref,
    /// written as git writes a loose one (a file holding the id), without starting a git for it.
    pub fn keep(&self, session: &str, turn: i64, which: &str, tree: &str) -> Result<(), SnapshotError> {
        let folder = self.git.git_dir.join("refs/lembas").join(safe(session)).join(turn.to_string());
        std::fs::create_dir_all(&folder).map_err(|e| SnapshotError::Io(folder.clone(), e))?;
        let file = folder.join(which);
        lembas_sys::write_whole(&file, format!("{tree}\n").as_bytes()).map_err(|e| SnapshotError::Io(file, e))
    }

    /// `session`'s turns with snapshots, oldest first.
    pub fn turns(&self, session: &str) -> Result<Vec<TurnSnapshots>, SnapshotError> {
        if !self.git.made() {
            return Ok(Vec::new());
        }
        let prefix = format!("refs/lembas/{}/", safe(session));
        let listed = self.git.run(None, &["for-each-ref", "--format=%(refname) %(objectname)", &prefix], None)?;
        let mut turns: BTreeMap<i64, (Option<String>, Option<String>)> = BTreeMap::new();
        for line in String::from_utf8_lossy(&listed).lines() {
            let Some((name, object)) = line.split_once(' ') else { continue };
            let Some((turn, which)) = name.strip_prefix(&prefix).and_then(|rest| rest.split_once('/')) else {
                continue;
            };
            let Ok(turn) = turn.parse() else { continue };
            let entry = turns.entry(turn).or_default();
            match which {
                "before" => entry.0 = Some(object.to_owned()),
                "after" => entry.1 = Some(object.to_owned()),
                _ => {}
            }
        }
        Ok(turns
            .into_iter()
            .filter_map(|(turn, (before, after))| Some(TurnSnapshots { turn, before: before?, after }))
            .collect())
    }

    /// Drops `session`'s snapshots of turn `from` and later (an undo took them back).
    pub fn drop_from(&self, session: &str, from: i64) -> Result<(), SnapshotError> {
        let doomed: Vec<i64> = self.turns(session)?.into_iter().map(|t| t.turn).filter(|&t| t >= from).collect();
        self.delete_refs(
            doomed.iter().flat_map(|turn| {
                ["before", "after"].map(|which| format!("refs/lembas/{}/{turn}/{which}", safe(session)))
            }),
        )
    }

    /// Forgets every snapshot of `session` (it was deleted); the space comes back at the next
    /// [`Store::prune`].
    pub fn forget(&self, session: &str) -> Result<(), SnapshotError> {
        if !self.git.made() {
            return Ok(());
        }
        let prefix = format!("refs/lembas/{}/", safe(session));
        let listed = self.git.run(None, &["for-each-ref", "--format=%(refname)", &prefix], None)?;
        self.delete_refs(String::from_utf8_lossy(&listed).lines().map(str::to_owned))?;
        let index = self.index(session);
        match std::fs::remove_file(&index) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SnapshotError::Io(index, e)),
            _ => Ok(()),
        }
    }

    /// The store's size on disk, in bytes: its objects, loose and packed (read from the
    /// folder, as `git count-objects` would, without starting a git after every turn).
    pub fn size(&self) -> Result<u64, SnapshotError> {
        fn sum(dir: &Path) -> u64 {
            let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
            entries
                .flatten()
                .map(|entry| match entry.file_type() {
                    Ok(kind) if kind.is_dir() => sum(&entry.path()),
                    Ok(_) => entry.metadata().map(|m| m.len()).unwrap_or(0),
                    Err(_) => 0,
                })
                .sum()
        }
        Ok(sum(&self.git.git_dir.join("objects")))
    }

    /// Keeps the store under its limit: while it is over, the oldest snapshots go (the sessions
    /// least recently snapshotted first, each one's earliest turns first) — never `keeping`'s
    /// latest turn.
    pub fn prune(&self, keeping: &str) -> Result<Pruned, SnapshotError> {
        self.tidy();
        let mut dropped = 0;
        loop {
            let bytes = self.size()?;
            if bytes <= self.limits.store_bytes {
                return Ok(Pruned { dropped, bytes });
            }
            let mut oldest = self.oldest_first()?;
            // The turn being kept (the latest of the session at work) is never pruned.
            if let Some(latest) = oldest.iter().filter(|(_, session, _)| session == keeping).map(|t| t.2).max() {
                oldest.retain(|(_, session, turn)| !(session == keeping && *turn == latest));
            }
            if oldest.is_empty() {
                return Ok(Pruned { dropped, bytes });
            }
            // A quarter at a time: each round is a whole `git gc`.
            let take = oldest.len().div_ceil(4);
            self.delete_refs(oldest.iter().take(take).flat_map(|(_, session, turn)| {
                ["before", "after"].map(|which| format!("refs/lembas/{session}/{turn}/{which}"))
            }))?;
            dropped += take;
            let _only = self.lock(true)?;
            self.git.run(None, &["reflog", "expire", "--expire=now", "--all"], None)?;
            self.git.run(None, &["gc", "-q", "--prune=now"], None)?;
            // A session's index may name objects just pruned; its next snapshot reads its
            // files whole again.
            let indexes = self.git.git_dir.join("indexes");
            let _ = std::fs::remove_dir_all(&indexes);
        }
    }

    /// Packs the loose objects once there are many — a project's first snapshot writes one a
    /// file, which takes room a block each and which [`Store::size`] would walk after every
    /// turn — on a thread of its own, so no turn waits for it. Due by git's own rule (about
    /// 6,700 loose objects, counted in one of the 256 folders they are spread over). `git repack
    /// -d` packs what the snapshots reach and `prune-packed` drops the loose copies: safe beside a
    /// snapshot being written (they share the store's lock; a prune waits for both).
    fn tidy(&self) {
        let sample = std::fs::read_dir(self.git.git_dir.join("objects/17")).map(Iterator::count).unwrap_or(0);
        if sample * 256 <= 6_700 {
            return;
        }
        let path = self.git.git_dir.join("lembas-tidy.lock");
        let Ok(tidying) = File::options().create(true).truncate(false).write(true).open(&path) else { return };
        // One at a time, across every lembas on this machine.
        if tidying.try_lock().is_err() {
            return;
        }
        let store = self.clone();
        std::thread::spawn(move || {
            let Ok(_shared) = store.lock(false) else { return };
            if store.git.run(None, &["repack", "-d", "-q"], None).is_ok() {
                let _ = store.git.run(None, &["prune-packed", "-q"], None);
            }
            drop(tidying);
        });
    }

    /// The most the store may hold, in bytes.
    pub fn cap(&self) -> u64 {
        self.limits.store_bytes
    }

    /// Every snapshotted turn, as (when its session last took one, session, turn), oldest first.
    fn oldest_first(&self) -> Result<Vec<(std::time::SystemTime, String, i64)>, SnapshotError> {
        let listed = self.git.run(None, &["for-each-ref", "--format=%(refname)", "refs/lembas/"], None)?;
        let mut turns = Vec::new();
        for name in String::from_utf8_lossy(&listed).lines() {
            let mut parts = name.strip_prefix("refs/lembas/").unwrap_or_default().split('/');
            let (Some(session), Some(turn), Some("before")) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let Ok(turn) = turn.parse::<i64>() else { continue };
            let when = std::fs::metadata(self.index(session))
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            turns.push((when, session.to_owned(), turn));
        }
        turns.sort();
        Ok(turns)
    }

    fn delete_refs(&self, names: impl Iterator<Item = String>) -> Result<(), SnapshotError> {
        let script: String = names.map(|name| format!("delete {name}\n")).collect();
        if script.is_empty() {
            return Ok(());
        }
        self.git.run(None, &["update-ref", "--stdin"], Some(script.as_bytes())).map(drop)
    }

    fn index(&self, session: &str) -> PathBuf {
        self.git.git_dir.join("indexes").join(safe(session))
    }

    /// Snapshots share the store; a `gc` has it alone (so it cannot prune what a snapshot is
    /// writing).
    fn lock(&self, alone: bool) -> Result<File, SnapshotError> {
        let path = self.git.git_dir.join("lembas.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| SnapshotError::Io(path.clone(), e))?;
        let locked = if alone { file.lock() } else { file.lock_shared() };
        locked.map_err(|e| SnapshotError::Io(path, e))?;
        Ok(file)
    }
}

/// A session id as one component of a ref name and a file name.
fn safe(session: &str) -> String {
    session.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
use take::escape_pattern;

#[cfg(test)]
mod tests;
