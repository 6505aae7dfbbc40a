//! Undo points: where each turn the person started began (a checkpoint with the engine's
//! state), the files as they were before the turn first changed them, and going back to one.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::schema::PARTS;
use crate::{Checkpoint, Store, StoreError, state};

/// When a turn began and which submission started it (`None` where a store from before kept
/// neither).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnStart {
    pub at: Option<i64>,
    pub submission: Option<String>,
}

/// Where a turn the person started begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnMark {
    /// Its first message's seq.
    pub seq: i64,
    /// The history's length then.
    pub history_len: usize,
    pub start: TurnStart,
}

impl Store {
    /// Marks where a turn begins: its first message will be the next one appended, and `state`
    /// (written first) is what an undo goes back to. `turn` says when it began and which
    /// submission started it.
    pub fn checkpoint(&self, id: &str, history_len: usize, state: &Value, turn: &TurnStart) -> Result<i64, StoreError> {
        self.write_session(id, |tx| {
            let current = self.write_state(tx, id, state)?;
            let seq: i64 = tx.query_row(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)",
                [id],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO checkpoints (session_id, seq, history_len, state, state_n, at, submission)
                 VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3, '', ?4, ?5, ?6)",
                params![id, seq, history_len as i64, current.n, turn.at, turn.submission],
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

    /// Where each turn the person started begins, oldest first.
    pub fn checkpoints(&self, id: &str) -> Result<Vec<TurnMark>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT seq, history_len, at, submission FROM checkpoints
             WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) ORDER BY seq",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(TurnMark {
                seq: r.get(0)?,
                history_len: r.get::<_, i64>(1)? as usize,
                start: TurnStart { at: r.get(2)?, submission: r.get(3)? },
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Copies session `from` whole under the id `to` (a fork: the copy then goes back to where
    /// it forks, the original stays as it is). What belongs to the original alone stays with it:
    /// its usage (spent by it), its team, the submissions it answered, an older lembas' file
    /// backups. `to` is titled `title`, and is the project's latest session.
    pub fn copy_session(&self, from: &str, to: &str, title: &str, now: i64) -> Result<(), StoreError> {
        self.timed(|| {
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            let copied = tx.execute(
                "INSERT INTO sessions (id, title, project, started, model, created_at, updated_at, system_prompt, tools,
                     state, parent, prompt_ref, tools_ref)
                 SELECT ?2, ?3, project, started, model, ?4, ?4, system_prompt, tools, state, parent, prompt_ref, tools_ref
                 FROM sessions WHERE id = ?1",
                params![from, to, title, now],
            )?;
            if copied == 0 {
                return Err(StoreError::NoSession(from.to_owned()));
            }
            let kept_apart = ["usage", "teams", "turns", "file_backups"];
            for (table, _) in PARTS.iter().filter(|(t, _)| !kept_apart.contains(t)) {
                // Every column the table has now (PARTS names those of a rebuild, fewer).
                let columns: Vec<String> = tx
                    .prepare("SELECT name FROM pragma_table_info(?1) WHERE name != 'session_id'")?
                    .query_map([table], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                let columns = columns.join(", ");
                tx.execute(
                    &format!(
                        "INSERT INTO {table} (session_id, {columns})
                         SELECT (SELECT n FROM sessions WHERE id = ?2), {columns} FROM {table}
                         WHERE session_id = (SELECT n FROM sessions WHERE id = ?1){}",
                        // The tables with no key of their own keep the order rows were written in.
                        if *table == "said" { " ORDER BY rowid" } else { "" }
                    ),
                    params![from, to],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
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
