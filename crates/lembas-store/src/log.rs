//! The write-ahead log made ready while lembas starts.
//!
//! The last lembas to close a store checkpoints its log and deletes it, so the next one's first
//! commit starts a new log: SQLite writes the log's header and syncs it, and syncs the folder
//! once the file is new (~0.35 ms each on an ordinary disk). That first commit used to be the
//! new session's own, so the first request to the model waited on both syncs. When the store
//! is opened to write a session (`Store::open_to_write`: a run, the terminal, an editor's
//! agent) and its log is empty, a thread of its own now makes that first commit — page 1 rewritten
//! as it is (`PRAGMA user_version` set to what it holds) — while the rest of lembas starts
//! (settings, instructions, the system prompt), and the session's first commit finds the log
//! already begun. Nothing is given up: the same syncs are made, only sooner and off the path.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

/// Starts the log's first commit on a thread when the log at `db`'s side is empty (a store
/// another lembas is writing has begun its log already). `None` when there is nothing to do.
pub(crate) fn begin_ready(conn: &Arc<Mutex<Connection>>, db: &Path) -> Option<JoinHandle<()>> {
    let wal = wal_path(db);
    if !log_is_empty(&wal) {
        return None;
    }
    let conn = Arc::clone(conn);
    std::thread::Builder::new()
        .name("store-log".into())
        .spawn(move || {
            let Ok(conn) = conn.lock() else { return };
            // The session's own commit came first: the log is begun, and a second write
            // would only add a page to it.
            if !log_is_empty(&wal) {
                return;
            }
            // A failure here is the next commit's to meet (and report): this one only
            // hastens what that one would do.
            let _ = conn
                .query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0))
                .and_then(|mark| conn.execute_batch(&format!("PRAGMA user_version = {mark};")));
        })
        .ok()
}

/// The thread is joined before the connection goes, so the store's last `Arc` is dropped here
/// and the connection closes (checkpointing the log) before lembas exits.
impl Drop for crate::Store {
    fn drop(&mut self) {
        if let Some(readying) = self.readying.take() {
            let _ = readying.join();
        }
    }
}

fn wal_path(db: &Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    name.into()
}

fn log_is_empty(wal: &Path) -> bool {
    std::fs::metadata(wal).is_ok_and(|m| m.len() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> Arc<Mutex<Connection>> {
        let conn = Connection::open(path).unwrap();
        crate::schema::migrate(&conn).unwrap();
        Arc::new(Mutex::new(conn))
    }

    #[test]
    fn an_empty_log_is_begun_on_a_thread_and_a_begun_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        // Made and closed: the log checkpointed and gone.
        drop(open(&db));
        let conn = open(&db);
        assert_eq!(std::fs::metadata(wal_path(&db)).unwrap().len(), 0, "a store opened anew has an empty log");
        begin_ready(&conn, &db).expect("an empty log is begun").join().unwrap();
        let begun = std::fs::metadata(wal_path(&db)).unwrap().len();
        assert!(begun > 0, "the first commit wrote the log's header and a page");
        // Nothing changed that a reader sees.
        let mark: i32 = conn.lock().unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(mark, crate::schema::schema_mark());
        // Begun already: no thread, nothing more written.
        assert!(begin_ready(&conn, &db).is_none());
        assert_eq!(std::fs::metadata(wal_path(&db)).unwrap().len(), begun);
    }

    #[test]
    fn a_store_opened_to_write_closes_whole_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        drop(crate::Store::open(&db).unwrap());
        // Opened only to read: nothing written, the log left empty.
        let reader = crate::Store::open(&db).unwrap();
        assert_eq!(std::fs::metadata(wal_path(&db)).unwrap().len(), 0);
        drop(reader);
        // Dropped at once, while its log may still be being begun: the thread is waited for,
        // the connection closes, and the log is checkpointed and removed as ever.
        drop(crate::Store::open_to_write(&db).unwrap());
        assert!(!wal_path(&db).exists(), "the store closed: its log folded in and removed");
        assert!(crate::Store::open(&db).unwrap().session("none").unwrap().is_none());
    }
}
