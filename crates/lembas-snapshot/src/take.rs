//! Taking a snapshot: the whole project read (what git would add, within the limits), or — with
//! a [`Watch`] — only the paths that changed since the session's last snapshot.

use std::collections::BTreeSet;
use std::path::Path;

use crate::git::{nul_joined, paths};
use crate::watch::{Changed, Last, Watch};
use crate::{Snapshot, SnapshotError, Store};

/// More changed paths than this and a snapshot reads everything (one walk is cheaper then).
const MANY_PATHS: usize = 5_000;

impl Store {
    /// The project's files as they are now, kept. `session` names the index the snapshot
    /// starts from (its last), so git reads again only the files whose times changed.
    pub fn take(&self, session: &str) -> Result<Snapshot, SnapshotError> {
        self.take_watched(session, None)
    }

    /// [`Store::take`], reading only the paths `watch` says changed since the session's last
    /// snapshot through it — none at all when nothing did — and everything at any doubt.
    pub fn take_watched(&self, session: &str, watch: Option<&Watch>) -> Result<Snapshot, SnapshotError> {
        self.git.init()?;
        let _shared = self.lock(false)?;
        let index = self.index(session);
        let indexes = self.git.git_dir.join("indexes");
        std::fs::create_dir_all(&indexes).map_err(|e| SnapshotError::Io(indexes, e))?;
        let Some(watch) = watch else { return self.read_all(&index) };
        let last = watch.last.lock().expect("last").clone();
        let read = match (watch.changed(), last) {
            // The index is the last snapshot's (a prune, or another lembas' prune, deletes it).
            (Changed::These(paths), Some(last)) if index.is_file() => self.read_these(&index, &paths, &last)?,
            _ => None,
        };
        let taken = match read {
            Some(taken) => taken,
            None => {
                // A folder may have appeared: watched before it is read, so what is written in
                // it from now on is told.
                watch.watch_folders();
                self.read_all(&index)?
            }
        };
        *watch.last.lock().expect("last") =
            Some(Last { tree: taken.tree.clone(), skipped: taken.skipped.iter().cloned().collect() });
        Ok(taken)
    }

    /// Reads `paths` (changed since `last`) into `index`: `None` when everything must be read
    /// instead (a folder among them, too many of them, an index git refuses).
    fn read_these(&self, index: &Path, paths: &[String], last: &Last) -> Result<Option<Snapshot>, SnapshotError> {
        let snapshot = |skipped: &BTreeSet<String>, tree: String| Snapshot {
            tree,
            skipped: skipped.iter().cloned().collect(),
            whole: false,
        };
        if paths.is_empty() {
            return Ok(Some(snapshot(&last.skipped, last.tree.clone())));
        }
        if paths.len() > MANY_PATHS {
            return Ok(None);
        }
        let (mut kept, mut out, mut skipped, mut added) = (Vec::new(), Vec::new(), last.skipped.clone(), 0u64);
        for path in paths {
            match std::fs::symlink_metadata(self.git.work_tree.join(path)) {
                Ok(meta) if meta.is_dir() => return Ok(None),
                Ok(meta)
                    if meta.len() <= self.limits.file_bytes && added + meta.len() <= self.limits.snapshot_bytes =>
                {
                    added += meta.len();
                    skipped.remove(path);
                    kept.push(path.clone());
                }
                // Over a limit: left out, and out of the index if it was in.
                Ok(_) => {
                    skipped.insert(path.clone());
                    out.push(path.clone());
                }
                // Gone (a file, or a folder with what was in it).
                Err(_) => {
                    skipped.remove(path);
                    out.push(path.clone());
                }
            }
        }
        if skipped != last.skipped {
            self.write_excludes(&skipped.iter().cloned().collect::<Vec<_>>())?;
        }
        if !out.is_empty() {
            let args = [
                "rm",
                "-r",
                "-q",
                "-f",
                "--cached",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            self.git.run(Some(index), &args, Some(&nul_joined(&out)))?;
        }
        if !kept.is_empty() {
            let args = ["add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"];
            match self.git.run(Some(index), &args, Some(&nul_joined(&kept))) {
                // An ignored path among them, or one that could not be read: the rest are in.
                Ok(_) => {}
                Err(SnapshotError::Git { said, .. }) if !said.contains("fatal:") => {}
                Err(other) => return Err(other),
            }
        }
        Ok(self.git.line(Some(index), &["write-tree"]).ok().map(|tree| snapshot(&skipped, tree)))
    }

    /// Every file of the project git would add, read into `index` (git itself skips what did
    /// not change since the index's last snapshot, by its files' times).
    fn read_all(&self, index: &Path) -> Result<Snapshot, SnapshotError> {
        // Every snapshot decides afresh what is over a limit: a file that shrank is kept again.
        self.write_excludes(&[])?;
        // What is new (`?`) or changed (`C`) since the index's last snapshot: what this one adds.
        let listed = self.git.run(Some(index), &["ls-files", "-z", "-t", "-o", "-m", "--exclude-standard"], None)?;
        let (mut skipped, mut grown, mut added) = (Vec::new(), Vec::new(), 0u64);
        for entry in paths(&listed) {
            let Some((tag, path)) = entry.split_once(' ') else { continue };
            let size = self.size_of(path);
            if size <= self.limits.file_bytes && added + size <= self.limits.snapshot_bytes {
                added += size;
            } else if tag == "?" {
                skipped.push(path.to_owned());
            } else {
                // Kept before, over a limit now: out of the index, so this snapshot leaves it out.
                grown.push(path.to_owned());
            }
        }
        if !grown.is_empty() {
            let args =
                ["rm", "-q", "-f", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"];
            self.git.run(Some(index), &args, Some(&nul_joined(&grown)))?;
            skipped.extend(grown);
        }
        self.write_excludes(&skipped)?;
        self.add_all(index)?;
        let tree = match self.git.line(Some(index), &["write-tree"]) {
            Ok(tree) => tree,
            // An index naming an object the store lost (a prune by another lembas, a store
            // copied in part): read the files whole again.
            Err(_) => {
                let _ = std::fs::remove_file(index);
                self.add_all(index)?;
                self.git.line(Some(index), &["write-tree"])?
            }
        };
        skipped.sort();
        Ok(Snapshot { tree, skipped, whole: true })
    }

    /// Everything in the project that is not ignored, into `index`.
    fn add_all(&self, index: &Path) -> Result<(), SnapshotError> {
        match self.git.run(Some(index), &["add", "-A", "--ignore-errors"], None) {
            Ok(_) => Ok(()),
            // A file that could not be read (one the person cannot read) is left out, and git
            // says so as an error; what it could read is in the index. A fatal one is not that.
            Err(SnapshotError::Git { said, .. }) if !said.contains("fatal:") => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// A file's size in the project; 0 when it cannot be read (git says so when it adds).
    fn size_of(&self, path: &str) -> u64 {
        std::fs::symlink_metadata(self.git.work_tree.join(path)).map(|m| m.len()).unwrap_or(0)
    }

    /// What no snapshot keeps beside what the project ignores: the files over a limit.
    fn write_excludes(&self, skipped: &[String]) -> Result<(), SnapshotError> {
        let info = self.git.git_dir.join("info");
        std::fs::create_dir_all(&info).map_err(|e| SnapshotError::Io(info.clone(), e))?;
        let mut text = String::from("# Over lembas' snapshot limits: not kept.\n");
        for path in skipped {
            text.push('/');
            text.push_str(&escape_pattern(path));
            text.push('\n');
        }
        let file = info.join("exclude");
        std::fs::write(&file, text).map_err(|e| SnapshotError::Io(file, e))
    }
}

/// A path as a gitignore pattern matching only itself.
pub(crate) fn escape_pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    // Trailing spaces count only when escaped.
    let kept = out.trim_end_matches(' ').len();
    let trailing = out.len() - kept;
    out.truncate(kept);
    out.push_str(&"\\ ".repeat(trailing));
    out
}
