//! Putting files back as a snapshot has them, and never over what the person changed since.

use std::collections::HashSet;
use std::path::Path;

use crate::git::nul_joined;
use crate::{SnapshotError, Store};

/// What putting a turn's files back did, by path in the project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Files the turn changed or deleted, put back as they were.
    pub put_back: Vec<String>,
    /// Files the turn made, removed.
    pub removed: Vec<String>,
    /// Files the turn changed that were changed again since (by the person, most likely):
    /// left as they are now.
    pub kept: Vec<String>,
}

/// One file's difference between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    path: String,
    /// Mode and object in the first; `None`: not there.
    old: Option<(String, String)>,
    new: Option<(String, String)>,
}

/// A submodule's or nested repository's commit: not a file anything here puts back.
const GITLINK: &str = "160000";

impl Store {
    /// Puts back every file the turn changed (from `before` to `after`) as `before` has it;
    /// a file not as the turn left it is kept as it is. `after: None` (the turn never ended)
    /// takes the files as they are now for what the turn left.
    pub fn restore(&self, session: &str, before: &str, after: Option<&str>) -> Result<Restored, SnapshotError> {
        let now = self.take(session)?.tree;
        let after = after.unwrap_or(&now);
        let since: HashSet<String> = self.changes(after, &now)?.into_iter().map(|c| c.path).collect();
        let mut restored = Restored::default();
        for change in self.changes(before, after)? {
            let linked = |side: &Option<(String, String)>| side.as_ref().is_some_and(|(mode, _)| mode == GITLINK);
            if linked(&change.old) || linked(&change.new) {
                continue;
            }
            if since.contains(&change.path) {
                restored.kept.push(change.path);
            } else if change.old.is_none() {
                restored.removed.push(change.path);
            } else {
                restored.put_back.push(change.path);
            }
        }
        self.put(session, before, &restored)?;
        Ok(restored)
    }

    /// Puts `paths` back as `before` has them, whatever they are now — what an undo left because
    /// they changed since, when the person says to overwrite them. A path `before` lacks is
    /// removed. (What they were is in the snapshot this takes first.)
    pub fn overwrite(&self, session: &str, before: &str, paths: &[String]) -> Result<Restored, SnapshotError> {
        let now = self.take(session)?.tree;
        let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
        let mut restored = Restored::default();
        for change in self.changes(&now, before)? {
            let linked = |side: &Option<(String, String)>| side.as_ref().is_some_and(|(mode, _)| mode == GITLINK);
            if !wanted.contains(change.path.as_str()) || linked(&change.old) || linked(&change.new) {
                continue;
            }
            match change.new {
                None => restored.removed.push(change.path),
                Some(_) => restored.put_back.push(change.path),
            }
        }
        self.put(session, before, &restored)?;
        Ok(restored)
    }

    /// Removes what `restored` says to and puts back the rest from `before`.
    fn put(&self, session: &str, before: &str, restored: &Restored) -> Result<(), SnapshotError> {
        for path in &restored.removed {
            remove_with_empty_folders(&self.git.work_tree, path)?;
        }
        if !restored.put_back.is_empty() {
            let source = format!("--source={before}");
            let args = ["restore", &source, "--worktree", "--pathspec-from-file=-", "--pathspec-file-nul"];
            self.git.run(Some(&self.index(session)), &args, Some(&nul_joined(&restored.put_back)))?;
        }
        Ok(())
    }

    /// The files that differ between two snapshots.
    fn changes(&self, from: &str, to: &str) -> Result<Vec<Change>, SnapshotError> {
        if from == to {
            return Ok(Vec::new());
        }
        let out = self.git.run(None, &["diff-tree", "-r", "-z", "--no-renames", from, to], None)?;
        let mut fields = out.split(|&b| b == 0).map(|f| String::from_utf8_lossy(f).into_owned());
        let mut changes = Vec::new();
        while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
            // `:<old mode> <new mode> <old id> <new id> <status>`
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, old_id, new_id, _status] = parts[..] else { continue };
            let side = |mode: &str, id: &str| (mode != "000000").then(|| (mode.to_owned(), id.to_owned()));
            changes.push(Change { path, old: side(old_mode, old_id), new: side(new_mode, new_id) });
        }
        Ok(changes)
    }
}

/// Removes a file the turn made, and the folders it made for it that are empty now.
fn remove_with_empty_folders(root: &Path, path: &str) -> Result<(), SnapshotError> {
    let file = root.join(path);
    match std::fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(SnapshotError::Io(file, e)),
        _ => {}
    }
    let mut folder = file.parent();
    while let Some(dir) = folder.filter(|d| *d != root && d.starts_with(root)) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
        folder = dir.parent();
    }
    Ok(())
}
