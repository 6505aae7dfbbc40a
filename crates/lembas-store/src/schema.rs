//! The store's tables, and how a store made by an earlier lembas is brought up to them.
//!
//! Every table of a session's parts is keyed by the session's number (`sessions.n`, an integer
//! of a byte or two), not its 36-character id: a store keeps one row per message, result, state
//! patch and undo point, and the id repeated on each of them was a third of a long session's
//! store. Queries still take the id and look the number up (`(SELECT n FROM sessions WHERE id =
//! ?1)`), a lookup in a unique index.

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

/// The tables, with `{p}` before each name (`new_` while an earlier store is rebuilt).
const TABLES: &str = "
CREATE TABLE IF NOT EXISTS {p}sessions (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    project TEXT NOT NULL,
    started TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    system_prompt TEXT NOT NULL,
    tools TEXT NOT NULL,
    state TEXT NOT NULL,
    -- A subagent's session: the session it works for.
    parent TEXT REFERENCES sessions (id) ON DELETE CASCADE,
    -- The system prompt and tool list by hash (`prefixes`); the text columns then hold ''.
    prompt_ref TEXT,
    tools_ref TEXT
);
CREATE TABLE IF NOT EXISTS {p}messages (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    json TEXT NOT NULL,
    -- 0 once a compaction replaced it: kept and searchable, no longer sent.
    live INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}results (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    id INTEGER NOT NULL,
    tool TEXT NOT NULL,
    text TEXT NOT NULL,
    -- A long result deflated; its text column then holds ''.
    packed BLOB,
    -- A result its message holds whole is not kept twice: the message's seq, and where in its
    -- content the result is (characters from `at`, `len` long); the text column then holds ''.
    in_message INTEGER,
    at INTEGER,
    len INTEGER,
    PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}usage (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    at INTEGER NOT NULL,
    model TEXT NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cached INTEGER
);
CREATE VIRTUAL TABLE IF NOT EXISTS {p}said USING fts5 (session_id UNINDEXED, text, columnsize = 0);
-- Where each turn the person started began: what an undo goes back to (the state as its place
-- in the state log; a store from before the log keeps the state itself).
CREATE TABLE IF NOT EXISTS {p}checkpoints (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    history_len INTEGER NOT NULL,
    state TEXT NOT NULL,
    state_n INTEGER,
    -- When the turn began (ms), and the submission that started it (its `turnId`).
    at INTEGER,
    submission TEXT,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
-- A file as it was before a turn first changed it (NULL: it did not exist).
CREATE TABLE IF NOT EXISTS {p}file_backups (
    session_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    path TEXT NOT NULL,
    before BLOB,
    PRIMARY KEY (session_id, seq, path),
    FOREIGN KEY (session_id, seq) REFERENCES checkpoints (session_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;
-- The engine's state as a log of changes, and whole copies now and then (state.rs).
CREATE TABLE IF NOT EXISTS {p}state_log (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    patch TEXT NOT NULL,
    PRIMARY KEY (session_id, n)
) WITHOUT ROWID;
-- A main session's team (lembas-team's tree and room, and the messages not yet delivered): one
-- row, replaced as the team changes.
CREATE TABLE IF NOT EXISTS {p}teams (
    session_id INTEGER NOT NULL PRIMARY KEY REFERENCES sessions (n) ON DELETE CASCADE,
    data TEXT NOT NULL
) WITHOUT ROWID;
-- How the turn each submission started ended (the event that said so, as JSON): the same
-- submission sent again is answered with it. Kept for a session's latest turns only (`n`: the
-- order they ended in); a submission is sent again when a link drops, not turns later.
CREATE TABLE IF NOT EXISTS {p}turns (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    submission TEXT NOT NULL,
    answer TEXT NOT NULL,
    n INTEGER,
    PRIMARY KEY (session_id, submission)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}state_snapshots (
    session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (session_id, n)
) WITHOUT ROWID;
";

const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS sessions_by_project ON sessions (project, updated_at);
CREATE INDEX IF NOT EXISTS sessions_by_parent ON sessions (parent);
";

/// The columns earlier stores grew one by one, which a store from before the number key may
/// lack; the rebuild copies them, so they are added first.
const LATER_COLUMNS: [(&str, &str, &str); 7] = [
    ("sessions", "parent", "TEXT REFERENCES sessions (id) ON DELETE CASCADE"),
    ("sessions", "prompt_ref", "TEXT"),
    ("sessions", "tools_ref", "TEXT"),
    ("results", "packed", "BLOB"),
    ("checkpoints", "state_n", "INTEGER"),
    ("checkpoints", "at", "INTEGER"),
    ("checkpoints", "submission", "TEXT"),
];

/// The columns added since the store was keyed by number: a store made before has them added.
const NUMBERED_LATER_COLUMNS: [(&str, &str, &str); 3] =
    [("checkpoints", "at", "INTEGER"), ("checkpoints", "submission", "TEXT"), ("turns", "n", "INTEGER")];

/// The parts of a session, and the columns each is copied with (after its `session_id`).
pub(crate) const PARTS: [(&str, &str); 10] = [
    ("messages", "seq, role, json, live"),
    ("results", "id, tool, text, packed"),
    ("usage", "at, model, input, output, cached"),
    ("said", "text"),
    ("checkpoints", "seq, history_len, state, state_n, at, submission"),
    ("file_backups", "seq, path, before"),
    ("state_log", "n, patch"),
    ("state_snapshots", "n, state"),
    ("teams", "data"),
    ("turns", "submission, answer"),
];

/// The tables' statements with `prefix` before each name, as the store keeps them: SQLite keeps
/// each `CREATE` as written, in every store, so the comments and indents stay here.
fn tables(prefix: &str) -> String {
    let lines = TABLES.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with("--"));
    lines.collect::<Vec<_>>().join("\n").replace("{p}", prefix)
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2", params![table, column], |r| {
        r.get(0)
    })
}

fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0))
}

/// The schema this build makes, as a number kept in the file (`PRAGMA user_version`): FNV-1a
/// over every statement it is made of, so any change to them changes it. A store already at it
/// opens without the migration's dozens of statements (a millisecond of every start).
pub(crate) fn schema_mark() -> i32 {
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |text: &str| {
        for byte in text.bytes() {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
    };
    feed(TABLES);
    feed(INDEXES);
    for (table, column, kind) in NUMBERED_LATER_COLUMNS {
        feed(table);
        feed(column);
        feed(kind);
    }
    feed(crate::shared::SCHEMA);
    // Positive and never 0 (a store no lembas has marked).
    (hash & 0x7fff_ffff).max(1) as i32
}

/// Makes the schema, and brings a store made by an earlier lembas up to it — waiting, as long as
/// the connection's busy timeout would, while another lembas does the same. SQLite answers
/// "busy" at once, without the busy wait, where waiting could deadlock: switching a new file to
/// WAL, or a reader that must become the writer while another lembas writes. Each try starts
/// over, and finds what the other made.
pub(crate) fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let until = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match migrate_once(conn) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            done => return done,
        }
    }
}

/// How long a store waits for another lembas holding it.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn migrate_once(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA synchronous = NORMAL;")?;
    let mark = schema_mark();
    if conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0))? == mark {
        return conn.execute_batch("PRAGMA foreign_keys = ON;");
    }
    conn.execute_batch("PRAGMA page_size = 2048; PRAGMA journal_mode = WAL;")?;
    if has_table(conn, "sessions")? && !has_column(conn, "sessions", "n")? {
        key_by_number(conn)?;
    }
    // One transaction: a new store's dozens of statements written at once, not each on its own
    // (a millisecond or more of a first start), and a second lembas opening it meanwhile waits
    // and then finds it made.
    let made = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    if made.query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0))? != mark {
        made.execute_batch(&tables(""))?;
        for (table, column, kind) in NUMBERED_LATER_COLUMNS {
            if !has_column(&made, table, column)? {
                made.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
            }
        }
        made.execute_batch(INDEXES)?;
        crate::shared::make(&made)?;
        made.execute_batch(&format!("PRAGMA user_version = {mark};"))?;
    }
    made.commit()?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")
}

/// Rebuilds a store whose parts are keyed by the session's id: the same rows, keyed by its
/// number, in one transaction (a store left half-rebuilt would lose nothing: the old tables go
/// only once the new ones are filled, and the commit is all or nothing).
fn key_by_number(conn: &Connection) -> rusqlite::Result<()> {
    // The parts a very early store may not have yet, and the columns it may lack.
    conn.execute_batch(&tables("").replace("REFERENCES sessions (n)", "REFERENCES sessions (id)"))?;
    for (table, column, kind) in LATER_COLUMNS {
        if !has_column(conn, table, column)? {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
        }
    }
    conn.execute_batch("PRAGMA foreign_keys = OFF;")?;
    let rebuilt = (|| {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(&tables("new_"))?;
        tx.execute_batch(
            "INSERT INTO new_sessions (n, id, title, project, started, model, created_at, updated_at, system_prompt,
                 tools, state, parent, prompt_ref, tools_ref)
             SELECT rowid, id, title, project, started, model, created_at, updated_at, system_prompt, tools, state,
                 parent, prompt_ref, tools_ref FROM sessions ORDER BY rowid;",
        )?;
        for (table, columns) in PARTS {
            let from: Vec<String> = columns.split(", ").map(|c| format!("t.{c}")).collect();
            tx.execute_batch(&format!(
                "INSERT INTO new_{table} (session_id, {columns})
                 SELECT s.n, {} FROM {table} t JOIN new_sessions s ON s.id = t.session_id{};",
                from.join(", "),
                // The tables with no key of their own keep the order rows were written in.
                if matches!(table, "usage" | "said") { " ORDER BY t.rowid" } else { "" }
            ))?;
        }
        for table in PARTS.iter().map(|(t, _)| *t).chain(["sessions"]) {
            tx.execute_batch(&format!("DROP TABLE {table};"))?;
        }
        tx.execute_batch("PRAGMA legacy_alter_table = ON;")?;
        for table in ["sessions"].into_iter().chain(PARTS.iter().map(|(t, _)| *t)) {
            tx.execute_batch(&format!("ALTER TABLE new_{table} RENAME TO {table};"))?;
        }
        tx.execute_batch("PRAGMA legacy_alter_table = OFF;")?;
        tx.commit()
    })();
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    rebuilt
}

#[cfg(test)]
pub(crate) const BEFORE_THE_NUMBER_KEY: &str = "
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL, project TEXT NOT NULL, started TEXT NOT NULL,
    model TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, system_prompt TEXT NOT NULL,
    tools TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    role TEXT NOT NULL, json TEXT NOT NULL, live INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (session_id, seq));
CREATE TABLE results (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, id INTEGER NOT NULL,
    tool TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (session_id, id));
CREATE TABLE usage (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, at INTEGER NOT NULL,
    model TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL, cached INTEGER);
CREATE VIRTUAL TABLE said USING fts5 (session_id UNINDEXED, text);
CREATE TABLE checkpoints (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    history_len INTEGER NOT NULL, state TEXT NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE file_backups (session_id TEXT NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL, before BLOB,
    PRIMARY KEY (session_id, seq, path),
    FOREIGN KEY (session_id, seq) REFERENCES checkpoints (session_id, seq) ON DELETE CASCADE);
INSERT INTO sessions VALUES ('old-1', 'the old one', '/p', '/p', 'm', 1, 2, 'prompt', '[]', '{\"mode\":\"edit\"}');
INSERT INTO sessions VALUES ('old-2', 'another', '/p', '/p', 'm', 3, 4, 'prompt', '[]', '{}');
INSERT INTO messages VALUES ('old-1', 1, 'user', '{\"role\":\"user\",\"content\":\"find the milk\"}', 1);
INSERT INTO messages VALUES ('old-1', 2, 'assistant', '{\"role\":\"assistant\",\"content\":\"in the fridge\"}', 1);
INSERT INTO messages VALUES ('old-2', 1, 'user', '{\"role\":\"user\",\"content\":\"hello\"}', 1);
INSERT INTO results VALUES ('old-1', 1, 'read', 'fridge: milk');
INSERT INTO usage VALUES ('old-1', 5, 'm', 10, 2, NULL);
INSERT INTO usage VALUES ('old-1', 6, 'm', 20, 3, 1);
INSERT INTO said VALUES ('old-1', 'find the milk');
INSERT INTO checkpoints VALUES ('old-1', 1, 0, '{\"mode\":\"manual\"}');
INSERT INTO file_backups VALUES ('old-1', 1, '/p/a.txt', X'6F6C64');
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn a_store_at_this_schema_is_marked_and_one_marked_otherwise_is_migrated_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        let version = |conn: &Connection| conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0)).unwrap();
        assert_eq!(version(&conn), schema_mark());
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        // A store an earlier lembas marked (a table it never had): made whole again on open.
        conn.execute_batch("DROP TABLE prefixes; PRAGMA user_version = 7;").unwrap();
        drop(conn);
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        assert!(has_table(&conn, "prefixes").unwrap());
        assert_eq!(version(&conn), schema_mark());
    }

    #[test]
    fn a_new_store_has_small_pages_and_an_index_without_row_sizes_and_an_old_one_keeps_its_pages() {
        let dir = tempfile::tempdir().unwrap();
        let page_size = |conn: &Connection| conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0)).unwrap();
        let path = dir.path().join("new.db");
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        assert_eq!(page_size(&conn), 2048);
        assert!(has_table(&conn, "said_content").unwrap(), "the index keeps its words (snippets)");
        assert!(!has_table(&conn, "said_docsize").unwrap(), "no row sizes kept");
        // A store made with 4 KB pages (marked by an earlier lembas) keeps them when migrated.
        let old = dir.path().join("old.db");
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch(
            "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t (x); PRAGMA user_version = 7;",
        )
        .unwrap();
        drop(conn);
        drop(Store::open(&old).unwrap());
        let conn = Connection::open(&old).unwrap();
        assert_eq!(page_size(&conn), 4096);
        assert_eq!(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0)).unwrap(), schema_mark());
    }

    #[test]
    fn a_new_store_opened_by_several_at_once_is_made_once_and_opens_for_each() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/sessions.db");
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(drop))
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().expect("each opens the store");
        }
        let conn = Connection::open(&path).unwrap();
        assert_eq!(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i32>(0)).unwrap(), schema_mark());
        assert!(has_table(&conn, "sessions").unwrap() && has_table(&conn, "prefixes").unwrap());
    }

    #[test]
    fn a_store_keyed_by_id_is_rebuilt_keyed_by_number_with_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        Connection::open(&path).unwrap().execute_batch(BEFORE_THE_NUMBER_KEY).unwrap();
        let store = Store::open(&path).unwrap();
        let listed: Vec<String> = store.list(Some("/p")).unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(listed, ["old-2", "old-1"]);
        let messages = store.messages("old-1").unwrap();
        assert_eq!(messages.len(), 2);
        assert!(messages[1].json.contains("in the fridge"));
        assert_eq!(store.result("old-1", 1).unwrap().as_deref(), Some("fridge: milk"));
        let usage: Vec<u64> = store.usage("old-1").unwrap().iter().map(|u| u.input).collect();
        assert_eq!(usage, [10, 20], "in the order written");
        assert_eq!(store.search("milk").unwrap()[0].session.id, "old-1");
        assert_eq!(store.last_checkpoint("old-1").unwrap().unwrap().state, serde_json::json!({"mode": "manual"}));
        assert_eq!(store.session("old-1").unwrap().unwrap().state, "{\"mode\":\"edit\"}");
        {
            let conn = store.conn();
            let kind: String =
                conn.query_row("SELECT DISTINCT typeof(session_id) FROM messages", [], |r| r.get(0)).unwrap();
            assert_eq!(kind, "integer");
            let problems: i64 =
                conn.query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
            assert_eq!(problems, 0);
        }
        // Written to after: a step appends under the number, and deleting takes every part.
        store.append("old-2", &[], &[], &serde_json::json!({"a": 1}), None, 9).unwrap();
        store.delete("old-1").unwrap();
        let conn = store.conn();
        let left: i64 = conn
            .query_row(
                "SELECT (SELECT COUNT(*) FROM messages) + (SELECT COUNT(*) FROM results) + (SELECT COUNT(*) FROM usage)
                    + (SELECT COUNT(*) FROM checkpoints) + (SELECT COUNT(*) FROM file_backups) + (SELECT COUNT(*) FROM said)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 1, "old-2's one message");
        drop(conn);
        drop(store);
        // Opened again, nothing is rebuilt twice.
        let again = Store::open(&path).unwrap();
        assert_eq!(again.messages("old-2").unwrap().len(), 1);
    }

    #[test]
    fn a_numbered_store_from_before_the_turns_order_gains_it_and_its_answers_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE turns;
             CREATE TABLE turns (session_id INTEGER NOT NULL REFERENCES sessions (n) ON DELETE CASCADE,
                 submission TEXT NOT NULL, answer TEXT NOT NULL, PRIMARY KEY (session_id, submission)) WITHOUT ROWID;
             INSERT INTO sessions (n, id, title, project, started, model, created_at, updated_at, system_prompt, tools, state)
                 VALUES (1, 's', 's', '/p', '/p', 'm', 1, 1, '', '[]', '{}');
             INSERT INTO turns VALUES (1, 'old', 'its answer');
             PRAGMA user_version = 7;",
        )
        .unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.turn_answer("s", "old").unwrap().as_deref(), Some("its answer"));
        for turn in 0..crate::beside::TURNS_ANSWERED {
            store.record_turn("s", &format!("run{turn}"), "answered").unwrap();
        }
        assert_eq!(store.turn_answer("s", "old").unwrap(), None);
        assert_eq!(store.turn_answer("s", "run0").unwrap().as_deref(), Some("answered"));
    }
}
