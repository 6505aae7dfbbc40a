//! Undo points: where each turn the person started began (a checkpoint with the engine's
//! state), the files as they were before the turn first changed them, and going back to one.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::{Checkpoint, Store, StoreError, state};

impl Store {
    /// Marks where a turn begins: its first message will be the next one appended, and `state`
    /// (written first) is what an undo goes back to.
    pub fn checkpoint(&self, id: &str, history_len: usize, state: &Value) -> Result<i64, StoreError> {
        self.write_session(id, |tx| {
            let current = self.write_state(tx, id, state)?;
            let seq: i64 = tx.query_row(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)",
                [id],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO checkpoints (session_id, seq, history_len, state, state_n) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3, '', ?4)",
                params![id, seq, history_len as i64, current.n],
            )?;
            Ok((seq, current))
        })
    }

    /// The last turn's checkpoint, if any.
    pub fn last_checkpoint(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        self.checkpoint_where(id, "ORDER BY seq DESC LIMIT 1", None)
    }

    /// The checkpoint of the turn that began at message `seq`, if it is still there.
    pub fn checkpoint_at(&self, id: &str, seq: i64) -> Result<Option<Checkpoint>, StoreError> {
        self.checkpoint_where(id, "AND seq = ?2", Some(seq))
    }

    /// Where each turn the person started begins, oldest first: (its first message's seq, the
    /// history's length then).
    pub fn checkpoints(&self, id: &str) -> Result<Vec<(i64, usize)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT seq, history_len FROM checkpoints WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) ORDER BY seq",
        )?;
        let rows = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as usize)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn checkpoint_where(&self, id: &str, filter: &str, seq: Option<i64>) -> Result<Option<Checkpoint>, StoreError> {
        let conn = self.conn();
        let sql = format!(
            "SELECT seq, history_len, state, state_n FROM checkpoints WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) {filter}"
        );
        let read = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?));
        let row: Option<(i64, i64, String, Option<i64>)> = match seq {
            Some(seq) => conn.query_row(&sql, params![id, seq], read).optional()?,
            None => conn.query_row(&sql, [id], read).optional()?,
        };
        let Some((seq, history_len, text, state_n)) = row else { return Ok(None) };
        let state = match state_n {
            Some(n) => state::state_at(&conn, id, n)?,
            // A store from before the state's log kept the state itself.
            None => serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("an undo point's state is not JSON: {e}")))?,
        };
        Ok(Some(Checkpoint { seq, history_len: history_len as usize, state }))
    }

    /// Takes back everything from the message `seq` on: those messages, the checkpoint there
    /// (and the file backups an older lembas kept); the session's state becomes `state`. One
    /// transaction.
    ///
    /// `forget` are the words of the messages taken back, as they were written for search:
    /// each one's latest copy leaves the search too (an undone turn is not found again).
    pub fn take_back(&self, id: &str, seq: i64, state: &Value, forget: &[String], now: i64) -> Result<(), StoreError> {
        self.write_session(id, |tx| {
            for words in forget.iter().filter(|w| !w.trim().is_empty()) {
                tx.execute(
                    "DELETE FROM said WHERE rowid = (SELECT MAX(rowid) FROM said
                     WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND text = ?2)",
                    params![id, words],
                )?;
            }
            let went_to: Option<Option<i64>> = tx
                .query_row(
                    "SELECT state_n FROM checkpoints WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND seq = ?2",
                    params![id, seq],
                    |r| r.get(0),
                )
                .optional()?;
            tx.execute("DELETE FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND seq >= ?2", params![id, seq])?;
            tx.execute("DELETE FROM file_backups WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND seq >= ?2", params![id, seq])?;
            tx.execute("DELETE FROM checkpoints WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND seq >= ?2", params![id, seq])?;
            if tx.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![id, now])? == 0 {
                return Err(StoreError::NoSession(id.to_owned()));
            }
            // What the state became after the undo point goes with the turns taken back.
            let current = match went_to.flatten() {
                Some(n) => {
                    self.forget_written(id);
                    state::truncate(tx, id, n)?
                }
                None => self.take_written(tx, id)?,
            };
            Ok(((), state::write(tx, id, current, state)?))
        })
    }
}
