//! A session's record as stored: its row, with the system prompt and tool list it refers to and
//! its latest state.

use rusqlite::{Connection, OptionalExtension};

use crate::{SessionLock, SessionRecord, Store, StoreError, state};

/// A session row's system prompt and tool list, wherever they are kept.
const PREFIX_COLUMNS: &str = "COALESCE((SELECT text FROM prefixes WHERE hash = s.prompt_ref), s.system_prompt),
    COALESCE((SELECT text FROM prefixes WHERE hash = s.tools_ref), s.tools)";

impl Store {
    /// A session as stored, its state the latest written.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let conn = self.conn();
        let Some(mut record) = Self::record(&conn, id)? else { return Ok(None) };
        // Read from the store, never from what this process wrote: the caller may not hold the
        // session, and another process may have written it since.
        let latest = state::last_position(&conn, id)?;
        record.state = serde_json::to_string(&state::state_at(&conn, id, latest)?).expect("a state serializes");
        Ok(Some(record))
    }

    /// A session this process holds (`_held` proves it), as stored. Its state, rebuilt from the
    /// log, is remembered as what this process last wrote — no other process can write it while
    /// it is held — so the session's first write does not rebuild it again (on a long session's
    /// resume, a millisecond or more each).
    pub fn held_session(&self, _held: &SessionLock, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let conn = self.conn();
        let Some(mut record) = Self::record(&conn, id)? else { return Ok(None) };
        let current = state::current(&conn, id)?;
        record.state = serde_json::to_string(&current.state).expect("a state serializes");
        self.keep_written(id, current);
        Ok(Some(record))
    }

    /// A session's row, its state left empty.
    fn record(conn: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let sql = format!(
            "SELECT s.id, s.title, s.project, s.started, s.model, s.created_at, s.updated_at, {PREFIX_COLUMNS}, s.parent
             FROM sessions s WHERE s.id = ?1"
        );
        let record = conn
            .query_row(&sql, [id], |r| {
                Ok(SessionRecord {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    project: r.get(2)?,
                    started: r.get(3)?,
                    model: r.get(4)?,
                    created_at: r.get(5)?,
                    updated_at: r.get(6)?,
                    system_prompt: r.get(7)?,
                    tools: r.get(8)?,
                    state: String::new(),
                    parent: r.get(9)?,
                })
            })
            .optional()?;
        Ok(record)
    }

    /// Whether a session `id` is stored.
    pub fn has_session(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.conn().query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
    }
}
