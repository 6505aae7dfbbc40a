//! What a session keeps beside its conversation: its team as it stands, and how its latest
//! turns ended (for a submission sent again).

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

/// How many of a session's latest turns keep their answer for a submission sent again.
pub(crate) const TURNS_ANSWERED: i64 = 32;

impl Store {
    /// Keeps a main session's team as it stands now (JSON), in place of what was kept before.
    /// A session deleted meanwhile keeps nothing.
    pub fn save_team(&self, id: &str, data: &str) -> Result<(), StoreError> {
        self.timed(|| {
            self.conn().execute(
                "INSERT OR REPLACE INTO teams (session_id, data) SELECT n, ?2 FROM sessions WHERE id = ?1",
                params![id, data],
            )?;
            Ok(())
        })
    }

    /// A main session's team as last kept, if it had one.
    pub fn team(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT data FROM teams WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)", [id], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// Keeps how the turn a submission started ended (`answer`: the event that said so), so the
    /// same submission sent again is answered with it instead of running a second turn — for
    /// the session's latest `TURNS_ANSWERED` turns: a prompt is sent again when the link that
    /// carried it dropped, not many turns later, and a long session would otherwise keep an
    /// answer for every turn it had.
    pub fn record_turn(&self, id: &str, submission: &str, answer: &str) -> Result<(), StoreError> {
        self.timed(|| {
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            tx.execute(
                "INSERT OR REPLACE INTO turns (session_id, submission, answer, n)
                 SELECT s.n, ?2, ?3, (SELECT IFNULL(MAX(t.n), 0) + 1 FROM turns t WHERE t.session_id = s.n)
                 FROM sessions s WHERE s.id = ?1",
                params![id, submission, answer],
            )?;
            // Rows from before the order was kept count as the oldest.
            tx.execute(
                "DELETE FROM turns WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)
                 AND IFNULL(n, 0) < (SELECT IFNULL(n, 0) FROM turns
                     WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)
                     ORDER BY IFNULL(n, 0) DESC LIMIT 1 OFFSET ?2)",
                params![id, TURNS_ANSWERED - 1],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    /// How the turn `submission` started ended, if this session ran one.
    pub fn turn_answer(&self, id: &str, submission: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT answer FROM turns WHERE session_id = (SELECT n FROM sessions WHERE id = ?1) AND submission = ?2",
                params![id, submission],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The submission of the last turn session `id` finished (its `turnId`), if it kept one.
    pub fn last_turn(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT submission FROM turns WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)
                 ORDER BY IFNULL(n, 0) DESC LIMIT 1",
                params![id],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::record;

    #[test]
    fn a_session_keeps_the_answers_of_its_latest_turns_only() {
        let store = Store::in_memory().unwrap();
        for id in ["s", "t"] {
            store.create_session(&record(id, "/p", 1)).unwrap();
        }
        store.record_turn("t", "other", "its answer").unwrap();
        let turns = TURNS_ANSWERED as usize + 8;
        for turn in 0..turns {
            store.record_turn("s", &format!("run{turn}"), &format!("answer {turn}")).unwrap();
        }
        let answer = |id: &str, turn: &str| store.turn_answer(id, turn).unwrap();
        for turn in 0..8 {
            assert_eq!(answer("s", &format!("run{turn}")), None, "turn {turn}");
        }
        for turn in 8..turns {
            assert_eq!(answer("s", &format!("run{turn}")).as_deref(), Some(format!("answer {turn}").as_str()));
        }
        // Another session's answers are its own, and a submission answered again is the latest.
        assert_eq!(answer("t", "other").as_deref(), Some("its answer"));
        store.record_turn("s", "run8", "answered again").unwrap();
        store.record_turn("s", "later", "a new turn").unwrap();
        assert_eq!(answer("s", "run8").as_deref(), Some("answered again"));
        assert_eq!(answer("s", "run9"), None);
        assert_eq!(
            store
                .conn()
                .query_row(
                    "SELECT COUNT(*) FROM turns WHERE session_id = (SELECT n FROM sessions WHERE id = 's')",
                    [],
                    |r| r.get::<_, i64>(0)
                )
                .unwrap(),
            TURNS_ANSWERED
        );
    }
}
