//! One process per session: a session is held open under an exclusive lock on a file of its own
//! beside the store, which the kernel lets go of when the process ends however it ends (so a
//! killed lembas never leaves a session locked). A second process that opens the same session is
//! refused, told which process has it.

use std::io::{Read, Seek, Write};
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

use crate::{Store, StoreError};

/// A session held open by this process; dropping it lets go.
#[derive(Debug)]
pub struct SessionLock {
    _held: Option<Flock<std::fs::File>>,
}

fn open_lock_file(dir: &Path, id: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.join(format!("{id}.lock")))
}

impl Store {
    /// Holds the session `id` for this process, or says which process holds it. A store in
    /// memory belongs to one process already.
    pub fn lock_session(&self, id: &str) -> Result<SessionLock, StoreError> {
        let Some(dir) = self.path.as_ref().and_then(|p| p.parent()).map(|d| d.join("locks")) else {
            self.forget_written(id);
            return Ok(SessionLock { _held: None });
        };
        let failed = |e: std::io::Error| StoreError::Open { path: dir.display().to_string(), reason: e.to_string() };
        let file = open_lock_file(&dir, id).map_err(failed)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut held) => {
                // What this process last wrote of the session may be stale: another process may
                // have written it since it was last held here.
                self.forget_written(id);
                let _ = held.set_len(0);
                let _ = held.rewind();
                let _ = write!(held, "{}", std::process::id());
                Ok(SessionLock { _held: Some(held) })
            }
            Err((mut file, _)) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                Err(StoreError::Busy { id: id.to_owned(), pid: pid.trim().to_owned() })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_held_by_one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sessions.db")).unwrap();
        let held = store.lock_session("s1").unwrap();
        // flock is per open file: a second holder in this process is refused like another process.
        match store.lock_session("s1") {
            Err(StoreError::Busy { id, pid }) => {
                assert_eq!(id, "s1");
                assert_eq!(pid, std::process::id().to_string());
            }
            other => panic!("{other:?}"),
        }
        assert!(store.lock_session("s2").is_ok());
        // Nor is a session open anywhere deleted from under it.
        let record = crate::SessionRecord {
            id: "s1".into(),
            title: "t".into(),
            project: "/p".into(),
            started: "/p".into(),
            model: "m".into(),
            created_at: 1,
            updated_at: 1,
            system_prompt: "sys".into(),
            tools: "[]".into(),
            state: "{}".into(),
            parent: None,
        };
        store.create_session(&record).unwrap();
        assert!(matches!(store.delete("s1"), Err(StoreError::Busy { .. })));
        assert!(store.session("s1").unwrap().is_some());
        drop(held);
        store.delete("s1").unwrap();
        assert!(store.lock_session("s1").is_ok());
        assert!(Store::in_memory().unwrap().lock_session("s1").is_ok());
    }
}
