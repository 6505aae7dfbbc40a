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

    /// A session this process holds (`_held` proves it), as stored, and its state read as an
    /// `S` from the tree the log rebuilt (the record's `state` is left empty: never written out
    /// to be parsed again). The state is remembered as what this process last wrote — no other
    /// process can write it while it is held — so the session's first write does not rebuild it
    /// again (on a long session's resume, a millisecond or more each).
    pub fn held_session<S: serde::de::DeserializeOwned>(
        &self,
        _held: &SessionLock,
        id: &str,
    ) -> Result<Option<(SessionRecord, S)>, StoreError> {
        let conn = self.conn();
        let Some(record) = Self::record(&conn, id)? else { return Ok(None) };
        let current = state::current(&conn, id)?;
        let state = S::deserialize(&current.state).map_err(|e| StoreError::Corrupt(format!("a stored state: {e}")))?;
        self.keep_written(id, current);
        Ok(Some((record, state)))
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

    /// The session `--continue` takes in `project`: the one the list shows first (its newest
    /// main session with a word said), found without counting any session's messages — a long
    /// session's count reads every page of its history.
    pub fn latest(&self, project: &str) -> Result<Option<String>, StoreError> {
        let sql = "SELECT s.id FROM sessions s WHERE s.project = ?1 AND s.parent IS NULL
             AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.n)
             ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1";
        Ok(self.conn().prepare_cached(sql)?.query_row([project], |r| r.get(0)).optional()?)
    }

    /// The model a session last used, by its whole id.
    pub fn model_of(&self, id: &str) -> Result<Option<String>, StoreError> {
        let sql = "SELECT model FROM sessions WHERE id = ?1";
        Ok(self.conn().prepare_cached(sql)?.query_row([id], |r| r.get(0)).optional()?)
    }

    /// Whether a session `id` is stored.
    pub fn has_session(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.conn().query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::record;
    use crate::{NewMessage, SessionRecord, Store};

    fn made(store: &Store, id: &str, project: &str, at: i64, parent: Option<&str>, said: bool) {
        let record =
            SessionRecord { model: format!("model-{id}"), parent: parent.map(Into::into), ..record(id, project, at) };
        store.create_session(&record).unwrap();
        if said {
            let words = NewMessage { role: "user".into(), json: "{}".into(), text: "hi".into() };
            store.append(id, &[words], &[], &serde_json::json!({}), None, at).unwrap();
        }
    }

    #[test]
    fn the_latest_session_is_the_one_the_list_shows_first() {
        let store = Store::in_memory().unwrap();
        assert_eq!(store.latest("/p").unwrap(), None);
        made(&store, "old", "/p", 1, None, true);
        made(&store, "other", "/q", 50, None, true);
        assert_eq!(store.latest("/p").unwrap().as_deref(), Some("old"));
        // Same moment: the one made later. A subagent's session and one where nothing was said
        // are never taken, however new.
        made(&store, "tied", "/p", 1, None, true);
        made(&store, "child", "/p", 90, Some("tied"), true);
        made(&store, "empty", "/p", 99, None, false);
        let first = store.list(Some("/p")).unwrap().into_iter().next().map(|s| s.id);
        assert_eq!(store.latest("/p").unwrap(), first);
        assert_eq!(first.as_deref(), Some("tied"));
        assert_eq!(store.model_of("child").unwrap().as_deref(), Some("model-child"));
        assert_eq!(store.model_of("gone").unwrap(), None);
    }
}
