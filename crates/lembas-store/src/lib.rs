//! Sessions kept in one SQLite file (WAL): each session's record, its messages in order (with
//! their reasoning), every tool result in full, the usage of every request, and a full-text
//! index of what was said.
//!
//! A step is written in one transaction — the assistant message, its tool results and the
//! session's state — so a process killed at any moment leaves the session at its last complete
//! step, and a resumed session sends exactly what it sent before.
//!
//! What is written grows with the conversation, not its square: the state as patches
//! (`state.rs`), the system prompt and tool list once for every session that shares them, long
//! results deflated (`shared.rs`).

mod beside;
mod kept;
mod lock;
mod log;
mod passages;
mod patch;
mod record;
mod results;
mod schema;
mod shared;
mod state;
mod steps;
mod undo;

pub use lock::SessionLock;
use schema::migrate;
pub use undo::{TurnMark, TurnStart};

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the session store failed: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("cannot open the session store at {path}: {reason}")]
    Open { path: String, reason: String },
    #[error("no session {0}")]
    NoSession(String),
    #[error("the session store holds something it cannot read: {0}")]
    Corrupt(String),
    /// Another process has the session open.
    #[error("session {id} is open in another lembas (process {pid}): let that one finish, or start a new session")]
    Busy { id: String, pid: String },
}

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: String,
    pub title: String,
    /// The project root (absolute).
    pub project: String,
    /// Where the session started.
    pub started: String,
    pub model: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The system prompt, made once and sent byte for byte.
    pub system_prompt: String,
    /// The tool list, fixed for the session (JSON).
    pub tools: String,
    /// The engine's state (JSON): ledger, id counter, mode, what notes have said.
    pub state: String,
    /// The session a subagent works for; `None` for a session the person started. A subagent's
    /// session is kept as long as its parent's and never listed or found on its own.
    #[serde(default)]
    pub parent: Option<String>,
}

/// One message as stored: its JSON, and its words for search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    pub seq: i64,
    pub role: String,
    pub json: String,
}

/// A new message to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    pub role: String,
    pub json: String,
    /// What search finds it by (the words of the message); empty for none.
    pub text: String,
}

/// A tool result to keep in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewResult {
    pub id: u64,
    pub tool: String,
    pub text: String,
}

/// A line of the session list: the protocol's own type, so the host hands it on as it is.
pub use lembas_protocol::StoredSession as SessionSummary;

/// Where a turn the person started began: the first message's `seq`, how many messages the
/// history held before it, and the engine's state then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub seq: i64,
    pub history_len: usize,
    pub state: serde_json::Value,
}

/// A session whose words match a search, with the words around the match.
pub use lembas_protocol::Found as SearchHit;
pub use passages::Passage;

/// One request's usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageRow {
    pub input: u64,
    pub output: u64,
    pub cached: Option<u64>,
}

/// The session store.
#[derive(Debug)]
pub struct Store {
    /// Shared only with the thread that begins the log (`log.rs`), joined when the store closes.
    conn: Arc<Mutex<Connection>>,
    readying: Option<std::thread::JoinHandle<()>>,
    /// Where it lives on disk (`None` in memory): session locks are kept beside it.
    path: Option<std::path::PathBuf>,
    /// Nanoseconds spent writing, in all: what a benchmark reads to tell the store's share of a
    /// step.
    writing: AtomicU64,
    /// The state this process last wrote for each session it holds (locked after the
    /// connection, never before).
    written: Mutex<state::Written>,
}

fn summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionSummary> {
    Ok(SessionSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        project: row.get(2)?,
        model: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
        messages: row.get(6)?,
        parent: row.get(7)?,
    })
}

const SUMMARY_COLUMNS: &str = "s.id, s.title, s.project, s.model, s.created_at, s.updated_at,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.n AND m.live = 1), s.parent";

/// Words as an FTS5 query: each a quoted term, all of them required.
fn fts_query(words: &str) -> String {
    words.split_whitespace().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect::<Vec<_>>().join(" ")
}

impl Store {
    /// Opens (or creates) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::opened(path, false)
    }

    /// Opens the store at `path` for a session about to be written: a new write-ahead log is
    /// begun on a thread while the caller goes on (`log.rs`), so the session's first commit does
    /// not wait on the log's syncs. A command that only reads opens it with [`Store::open`].
    pub fn open_to_write(path: &Path) -> Result<Store, StoreError> {
        Store::opened(path, true)
    }

    fn opened(path: &Path, to_write: bool) -> Result<Store, StoreError> {
        let failed = |e: std::io::Error| StoreError::Open { path: path.display().to_string(), reason: e.to_string() };
        // The conversations are the person's own: a folder only they enter, a file only they
        // read (SQLite gives its -wal and -shm files the database's permissions).
        if let Some(dir) = path.parent() {
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(failed)?;
            }
            #[cfg(not(unix))]
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path).map_err(failed)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        }
        let conn = Connection::open(path)
            .map_err(|e| StoreError::Open { path: path.display().to_string(), reason: e.to_string() })?;
        conn.busy_timeout(schema::BUSY_TIMEOUT)?;
        migrate(&conn)?;
        let conn = Arc::new(Mutex::new(conn));
        Ok(Store {
            readying: if to_write { log::begin_ready(&conn, path) } else { None },
            conn,
            path: Some(path.to_path_buf()),
            writing: AtomicU64::new(0),
            written: Mutex::default(),
        })
    }

    /// A store in memory (tests).
    pub fn in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        migrate(&conn)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            readying: None,
            path: None,
            writing: AtomicU64::new(0),
            written: Mutex::default(),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().expect("store connection")
    }

    /// The time this store has spent writing since it was opened (waiting for the connection
    /// included).
    pub fn write_time(&self) -> Duration {
        Duration::from_nanos(self.writing.load(Ordering::Relaxed))
    }

    /// Runs a write, adding its time to [`Store::write_time`].
    fn timed<T>(&self, write: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = write();
        self.writing.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }

    /// The history sent to the model, in order (compacted messages excluded).
    pub fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.messages_where(id, "AND live = 1")
    }

    /// A session's live messages in order, each read as a `T` from its JSON where SQLite holds
    /// it, without a copy of every row first: what a resumed session's history is made from
    /// (thousands of messages on a long one).
    pub fn live_messages_as<T: serde::de::DeserializeOwned>(&self, id: &str) -> Result<Vec<T>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND live = 1 ORDER BY seq",
            kept::whole_json_sql()
        ))?;
        let mut rows = stmt.query([id])?;
        let mut read = Vec::new();
        while let Some(row) = rows.next()? {
            let json = row.get_ref(0)?.as_str().map_err(|e| StoreError::Corrupt(format!("a stored message: {e}")))?;
            read.push(serde_json::from_str(json).map_err(|e| StoreError::Corrupt(format!("a stored message: {e}")))?);
        }
        Ok(read)
    }

    /// Everything said in a session, in order — what a compaction took out of the history too
    /// (a person reading the session back sees the whole conversation; an undo's are gone).
    pub fn said(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.messages_where(id, "")
    }

    fn messages_where(&self, id: &str, live: &str) -> Result<Vec<StoredMessage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT seq, role, {} FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) {live} ORDER BY seq",
            kept::whole_json_sql()
        ))?;
        let rows = stmt.query_map([id], |r| {
            Ok(StoredMessage { seq: r.get(0)?, role: kept::role_read(r.get(1)?), json: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every request's usage in a session, oldest first.
    pub fn usage(&self, id: &str) -> Result<Vec<UsageRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT input, output, cached FROM usage WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) ORDER BY rowid")?;
        let rows = stmt.query_map([id], |r| {
            Ok(UsageRow {
                input: r.get::<_, i64>(0)? as u64,
                output: r.get::<_, i64>(1)? as u64,
                cached: r.get::<_, Option<i64>>(2)?.map(|c| c as u64),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sessions, newest first; only one project's when given. A session nobody wrote in (opened
    /// and left at once) is no conversation: it is not listed, so `--continue` and the pickers
    /// pass it by.
    pub fn list(&self, project: Option<&str>) -> Result<Vec<SessionSummary>, StoreError> {
        let conn = self.conn();
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM sessions s WHERE (?1 IS NULL OR s.project = ?1) AND s.parent IS NULL
             AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.n)
             ORDER BY s.updated_at DESC, s.rowid DESC"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([project], summary)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One session as the list shows it (its messages counted, not read), by its whole id.
    pub fn summary(&self, id: &str) -> Result<Option<SessionSummary>, StoreError> {
        let conn = self.conn();
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM sessions s WHERE s.id = ?1");
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query_map([id], summary)?;
        Ok(rows.next().transpose()?)
    }

    /// The sessions of a session's subagents, oldest first.
    pub fn children(&self, id: &str) -> Result<Vec<SessionSummary>, StoreError> {
        let conn = self.conn();
        let sql =
            format!("SELECT {SUMMARY_COLUMNS} FROM sessions s WHERE s.parent = ?1 ORDER BY s.created_at, s.rowid");
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([id], summary)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sessions whose messages contain every word, best match first, with a snippet.
    pub fn search(&self, words: &str) -> Result<Vec<SearchHit>, StoreError> {
        let query = fts_query(words);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS}, snippet(said, 1, '[', ']', '…', 12) FROM said
             JOIN sessions s ON s.n = said.session_id
             WHERE said MATCH ?1 AND s.parent IS NULL ORDER BY bm25(said)"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([query], |r| Ok(SearchHit { session: summary(r)?, snippet: r.get(8)? }))?;
        let mut hits: Vec<SearchHit> = Vec::new();
        for hit in rows {
            let hit = hit?;
            if !hits.iter().any(|h| h.session.id == hit.session.id) {
                hits.push(hit);
            }
        }
        Ok(hits)
    }

    /// Resolves an id given in full or by a unique prefix.
    pub fn find_id(&self, prefix: &str) -> Result<Option<String>, StoreError> {
        let ids = self.ids_starting(prefix, 2)?;
        Ok(if ids.len() == 1 { ids.into_iter().next() } else { None })
    }

    /// The ids of the person's sessions (not subagents') that start with `prefix`, newest
    /// first, at most `limit`: what a prefix could mean when it means more than one.
    pub fn ids_starting(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id FROM sessions WHERE id LIKE ?1 || '%' ESCAPE '\\' AND parent IS NULL ORDER BY updated_at DESC LIMIT ?2",
        )?;
        let escaped = prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
        let ids: Vec<String> =
            stmt.query_map(rusqlite::params![escaped, limit as i64], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(id: &str, project: &str, at: i64) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            title: format!("title {id}"),
            project: project.into(),
            started: project.into(),
            model: "m".into(),
            created_at: at,
            updated_at: at,
            system_prompt: "sys".into(),
            tools: "[]".into(),
            state: "{}".into(),
            parent: None,
        }
    }

    fn msg(role: &str, text: &str) -> NewMessage {
        NewMessage { role: role.into(), json: format!("{{\"role\":\"{role}\"}}"), text: text.into() }
    }

    #[test]
    fn a_team_is_kept_once_per_session_replaced_and_deleted_with_it() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s1", "/p", 1)).unwrap();
        assert_eq!(store.team("s1").unwrap(), None);
        store.save_team("s1", "{\"n\":1}").unwrap();
        store.save_team("s1", "{\"n\":2}").unwrap();
        assert_eq!(store.team("s1").unwrap().as_deref(), Some("{\"n\":2}"));
        store.delete("s1").unwrap();
        assert_eq!(store.team("s1").unwrap(), None);
        // A session deleted before its team was kept keeps nothing, and is no error.
        store.save_team("s1", "{}").unwrap();
        let rows: i64 = store.conn().query_row("SELECT COUNT(*) FROM teams", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 0);
    }

    #[test]
    fn a_step_is_written_whole_and_read_back_in_order() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s1", "/p", 1)).unwrap();
        store.append("s1", &[msg("user", "fix the parser")], &[], &serde_json::json!({"a": 1}), None, 2).unwrap();
        store
            .append(
                "s1",
                &[msg("assistant", ""), msg("tool", "")],
                &[NewResult { id: 1, tool: "read".into(), text: "full".into() }],
                &serde_json::json!({"a": 2}),
                None,
                3,
            )
            .unwrap();
        let roles: Vec<String> = store.messages("s1").unwrap().into_iter().map(|m| m.role).collect();
        assert_eq!(roles, ["user", "assistant", "tool"]);
        // Kept as a letter each; a row an earlier lembas wrote with the word reads the same.
        let kept: String =
            store.conn().query_row("SELECT group_concat(role, '') FROM messages", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, "uat");
        store.conn().execute("UPDATE messages SET role = 'assistant' WHERE seq = 2", []).unwrap();
        assert_eq!(store.messages("s1").unwrap()[1].role, "assistant");
        assert_eq!(store.result("s1", 1).unwrap().as_deref(), Some("full"));
        assert_eq!(store.session("s1").unwrap().unwrap().state, "{\"a\":2}");
        assert!(matches!(
            store.append("nope", &[], &[], &serde_json::json!({}), None, 1),
            Err(StoreError::NoSession(_))
        ));
    }

    #[test]
    fn a_copied_session_has_every_message_result_and_turn_and_goes_its_own_way() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("a", "/p", 1)).unwrap();
        let start = TurnStart { at: Some(5), submission: Some("run1".into()) };
        let seq = store.checkpoint("a", 0, &serde_json::json!({"n": 0}), &start).unwrap();
        let tool = NewMessage {
            role: "tool".into(),
            json: "{\"role\":\"tool\",\"content\":\"the whole file\"}".into(),
            text: String::new(),
        };
        let result = NewResult { id: 1, tool: "read".into(), text: "the whole file".into() };
        store
            .append("a", &[msg("user", "fix the parser"), tool], &[result], &serde_json::json!({"n": 1}), None, 6)
            .unwrap();
        store.copy_session("a", "b", "fork of a", 9).unwrap();

        let b = store.session("b").unwrap().unwrap();
        assert_eq!((b.title.as_str(), b.system_prompt.as_str(), b.state.as_str()), ("fork of a", "sys", "{\"n\":1}"));
        let json = |id| store.messages(id).unwrap().into_iter().map(|m| m.json).collect::<Vec<_>>();
        assert_eq!(json("b"), json("a"));
        assert_eq!(store.result("b", 1).unwrap().as_deref(), Some("the whole file"));
        assert_eq!(store.checkpoints("b").unwrap(), store.checkpoints("a").unwrap());
        assert_eq!(store.checkpoints("b").unwrap()[0].start, start);
        assert_eq!(store.search("parser").unwrap().len(), 2);

        // Going back in the copy leaves the original whole.
        store.take_back("b", seq, &serde_json::json!({"n": 0}), &["fix the parser".into()], 10).unwrap();
        assert!(store.messages("b").unwrap().is_empty());
        assert_eq!(json("a").len(), 2);
        assert_eq!(store.session("a").unwrap().unwrap().state, "{\"n\":1}");
        assert!(matches!(store.copy_session("gone", "c", "x", 1), Err(StoreError::NoSession(_))));
    }

    #[test]
    fn live_messages_are_read_in_order_and_one_that_is_not_json_is_refused() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("a", "/p", 1)).unwrap();
        let said = |n: u32| NewMessage { role: "user".into(), json: format!("{{\"n\":{n}}}"), text: String::new() };
        store.append("a", &(0..5).map(said).collect::<Vec<_>>(), &[], &serde_json::json!({}), None, 2).unwrap();
        let read: Vec<serde_json::Value> = store.live_messages_as("a").unwrap();
        assert_eq!(read.iter().map(|v| v["n"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        let broken = NewMessage { role: "user".into(), json: "{".into(), text: String::new() };
        store.append("a", &[broken], &[], &serde_json::json!({}), None, 3).unwrap();
        let refused = store.live_messages_as::<serde_json::Value>("a").unwrap_err();
        assert!(matches!(refused, StoreError::Corrupt(_)), "{refused}");
    }

    #[test]
    fn list_rename_delete_and_search() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("a1", "/p", 1)).unwrap();
        store.create_session(&record("b2", "/q", 5)).unwrap();
        store.append("b2", &[msg("user", "hello")], &[], &serde_json::json!({}), None, 5).unwrap();
        store
            .append("a1", &[msg("user", "the tokenizer drops the last token")], &[], &serde_json::json!({}), None, 9)
            .unwrap();
        // Opened and left before a word was written: no conversation, not listed.
        store.create_session(&record("c3", "/p", 10)).unwrap();
        let ids: Vec<String> = store.list(None).unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["a1", "b2"], "newest first");
        assert!(store.summary("c3").unwrap().is_some(), "still there to be resumed by its id");
        assert_eq!(store.list(Some("/q")).unwrap().len(), 1);
        let hits = store.search("tokenizer token").unwrap();
        assert_eq!(hits.len(), 1);
        assert!(hits[0].snippet.contains("[tokenizer]"));
        assert!(store.search("\"unbalanced").is_ok());
        store.rename("a1", "Parser fix").unwrap();
        assert_eq!(store.session("a1").unwrap().unwrap().title, "Parser fix");
        let one = store.summary("a1").unwrap().unwrap();
        assert_eq!((one.title.as_str(), one.messages, one.parent), ("Parser fix", 1, None));
        assert!(store.summary("zz").unwrap().is_none());
        assert_eq!(store.find_id("b").unwrap().as_deref(), Some("b2"));
        store.delete("a1").unwrap();
        assert!(store.session("a1").unwrap().is_none());
        assert!(store.search("tokenizer").unwrap().is_empty());
    }

    #[test]
    fn a_subagents_session_is_kept_with_its_parent_and_never_listed_alone() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("main", "/p", 1)).unwrap();
        store.create_session(&SessionRecord { parent: Some("main".into()), ..record("sub", "/p", 2) }).unwrap();
        store.append("sub", &[msg("user", "find the parser")], &[], &serde_json::json!({}), None, 3).unwrap();
        store.append("main", &[msg("user", "fix the parser")], &[], &serde_json::json!({}), None, 3).unwrap();
        let listed: Vec<String> = store.list(None).unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(listed, ["main"]);
        assert!(store.search("find").unwrap().is_empty(), "a subagent's words are not a session of their own");
        assert_eq!(store.find_id("su").unwrap(), None);
        assert_eq!(store.children("main").unwrap()[0].id, "sub");
        assert_eq!(store.session("sub").unwrap().unwrap().parent.as_deref(), Some("main"));
        store.delete("main").unwrap();
        assert!(store.session("sub").unwrap().is_none(), "deleted with its parent");
        let left: i64 = store.conn().query_row("SELECT COUNT(*) FROM said", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn a_store_from_before_subagents_gains_the_parent_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(crate::schema::BEFORE_THE_NUMBER_KEY).unwrap();
            conn.execute(
                "INSERT INTO sessions (id, title, project, started, model, created_at, updated_at, system_prompt, tools, state)
                 VALUES ('old', 't', '/p', '/p', 'm', 1, 1, 's', '[]', '{}')",
                [],
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.session("old").unwrap().unwrap().parent, None);
        // The two the old store held; the one made here has no message, so it is not listed.
        assert_eq!(store.list(None).unwrap().len(), 2);
    }

    #[test]
    fn compaction_keeps_old_words_searchable_but_out_of_the_history() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("c", "/p", 1)).unwrap();
        store
            .append("c", &[msg("user", "alpha"), msg("assistant", "beta")], &[], &serde_json::json!({}), None, 2)
            .unwrap();
        store.replace_history("c", &[msg("user", "summary")], &serde_json::json!({}), "new prompt", 3).unwrap();
        assert_eq!(store.messages("c").unwrap().len(), 1);
        assert_eq!(store.session("c").unwrap().unwrap().system_prompt, "new prompt");
        assert_eq!(store.search("alpha").unwrap().len(), 1);
    }

    #[test]
    fn a_file_store_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d/sessions.db");
        {
            let store = Store::open(&path).unwrap();
            store.create_session(&record("x", "/p", 1)).unwrap();
        }
        assert!(Store::open(&path).unwrap().session("x").unwrap().is_some());
    }
}
