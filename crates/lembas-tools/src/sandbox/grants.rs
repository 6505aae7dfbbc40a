//! What a session's commands may read, worked out once and kept while nothing along the way
//! changed: listing `/`, the home folder and the folders down to each hidden one costs a command
//! about a third of a millisecond, and between two commands those folders rarely change. A
//! folder's modification time changes when an entry is made, removed or renamed in it — exactly
//! what the grants are read from — so they are worked out again then.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::{Hidden, Sandbox};

/// One session's read grants, kept between its commands.
#[derive(Debug, Default)]
pub struct ReadGrants(Mutex<Option<Kept>>);

/// The grants for one set of hidden folders, and the folders they were read from, each with when
/// it last changed.
#[derive(Debug)]
struct Kept {
    hidden: Hidden,
    along: Vec<(PathBuf, Option<SystemTime>)>,
    readable: Arc<[PathBuf]>,
}

fn changed_at(folder: &PathBuf) -> Option<SystemTime> {
    std::fs::metadata(folder).and_then(|m| m.modified()).ok()
}

impl ReadGrants {
    /// Gives `sandbox` the grants for what it hides: those kept, while every folder they were
    /// read from is as it was; else worked out again (and kept).
    pub fn fill(&self, sandbox: &mut Sandbox) {
        if sandbox.writable.is_none() || sandbox.hidden.folders.is_empty() {
            return;
        }
        let mut kept = self.0.lock().expect("read grants");
        let still = kept
            .as_ref()
            .filter(|k| k.hidden == sandbox.hidden && k.along.iter().all(|(folder, at)| changed_at(folder) == *at));
        if let Some(still) = still {
            sandbox.readable = Some(still.readable.clone());
            return;
        }
        let started = SystemTime::now();
        let (readable, along) = sandbox.hidden.readable_along();
        let along: Vec<(PathBuf, Option<SystemTime>)> = along
            .into_iter()
            .map(|folder| {
                let at = changed_at(&folder);
                (folder, at)
            })
            .collect();
        let readable: Arc<[PathBuf]> = readable.into();
        // A folder changed while it was read may have been read before the change: not kept, so
        // the next command reads it again. (A file system stamps changes with a clock a few
        // milliseconds coarse, hence the margin.)
        let settled = started - std::time::Duration::from_millis(50);
        *kept = along.iter().all(|(_, at)| at.is_some_and(|at| at < settled)).then(|| Kept {
            hidden: sandbox.hidden.clone(),
            along,
            readable: readable.clone(),
        });
        sandbox.readable = Some(readable);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(hidden: &std::path::Path) -> Sandbox {
        Sandbox {
            writable: Some(Vec::new()),
            hidden: Hidden { folders: vec![hidden.to_owned()], open: Vec::new() },
            ..Sandbox::default()
        }
    }

    #[test]
    fn the_grants_are_kept_until_a_folder_along_the_way_changes() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let grants = ReadGrants::default();
        // Folders that changed a moment ago are read again each time, until they settle — and the
        // temporary folder along the way changes whenever a test beside this one makes a folder
        // there: the grants are kept once it has been quiet for a moment.
        let twice = || {
            std::thread::sleep(std::time::Duration::from_millis(60));
            let (mut first, mut second) = (sandbox(&secret), sandbox(&secret));
            grants.fill(&mut first);
            grants.fill(&mut second);
            (first.readable.unwrap(), second.readable.unwrap())
        };
        let (readable, again) =
            (0..100).map(|_| twice()).find(|(a, b)| Arc::ptr_eq(a, b)).expect("kept, not worked out again");
        assert!(Arc::ptr_eq(&readable, &again));
        assert!(readable.contains(&dir.path().join("a.txt")) && !readable.contains(&secret));
        // A file made beside the hidden folder is readable from the next command on.
        std::fs::write(dir.path().join("b.txt"), "b").unwrap();
        let mut third = sandbox(&secret);
        grants.fill(&mut third);
        assert!(third.readable.unwrap().contains(&dir.path().join("b.txt")));
        // Other hidden folders: other grants.
        let mut other = sandbox(&dir.path().join("a.txt"));
        grants.fill(&mut other);
        assert!(!other.readable.unwrap().contains(&dir.path().join("a.txt")));
    }
}
