//! A session's record and what each step adds to it: messages, results, the state; the prefix
//! when it changes (undo points and going back to one: `undo.rs`; a session's team and how its
//! latest turns ended: `beside.rs`).

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::results::{message_content, named_results, read_result};
use crate::{NewMessage, NewResult, SessionRecord, Store, StoreError, UsageRow, shared, state};

impl Store {
    /// What this process last wrote of `id`'s state, taken out (put back once a write commits;
    /// a failed write leaves it to be read again).
    pub(crate) fn take_written(&self, conn: &Connection, id: &str) -> Result<state::Current, StoreError> {
        let cached = self.written.lock().expect("written states").remove(id);
        match cached {
            Some(current) => Ok(current),
            None => state::current(conn, id),
        }
    }

    /// Writes `state` as the session's latest, after what this process last wrote of it.
    pub(crate) fn write_state(&self, tx: &Connection, id: &str, state: &Value) -> Result<state::Current, StoreError> {
        let current = self.take_written(tx, id)?;
        state::write(tx, id, current, state)
    }

    pub(crate) fn keep_written(&self, id: &str, current: state::Current) {
        self.written.lock().expect("written states").insert(id.to_owned(), current);
    }

    /// Forgets what this process wrote of `id` (the session is held anew, or gone).
    pub(crate) fn forget_written(&self, id: &str) {
        self.written.lock().expect("written states").remove(id);
    }

    /// Runs `write` as one timed transaction; the state it answers is what this process
    /// remembers of the session once the transaction commits.
    pub(crate) fn write_session<T>(
        &self,
        id: &str,
        write: impl FnOnce(&Connection) -> Result<(T, state::Current), StoreError>,
    ) -> Result<T, StoreError> {
        self.timed(|| {
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            let (out, current) = write(&tx)?;
            tx.commit()?;
            self.keep_written(id, current);
            Ok(out)
        })
    }

    pub fn create_session(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.timed(|| {
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            let prompt = shared::keep_prefix(&tx, &record.system_prompt)?;
            let tools = shared::keep_prefix(&tx, &record.tools)?;
            tx.execute(
                "INSERT INTO sessions (id, title, project, started, model, created_at, updated_at, system_prompt, tools, state, parent, prompt_ref, tools_ref)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '', '', ?8, ?9, ?10, ?11)",
                params![
                    record.id,
                    record.title,
                    record.project,
                    record.started,
                    record.model,
                    record.created_at,
                    record.updated_at,
                    record.state,
                    record.parent,
                    prompt,
                    tools
                ],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Appends messages and results and sets the session's state, all in one transaction.
    /// `system_prompt` replaces the stored one when given (after a compaction or a model move).
    pub fn append(
        &self,
        id: &str,
        messages: &[NewMessage],
        results: &[NewResult],
        state: &Value,
        system_prompt: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write_session(id, |tx| Ok(((), self.write_step(tx, id, messages, results, state, system_prompt, now)?)))
    }

    /// A step's writes, inside the caller's transaction; answers the state now current.
    #[allow(clippy::too_many_arguments)]
    fn write_step(
        &self,
        tx: &Connection,
        id: &str,
        messages: &[NewMessage],
        results: &[NewResult],
        state: &Value,
        system_prompt: Option<&str>,
        now: i64,
    ) -> Result<state::Current, StoreError> {
        let changed = match system_prompt {
            Some(prompt) => {
                let hash = shared::keep_prefix(tx, prompt)?;
                tx.execute(
                    "UPDATE sessions SET updated_at = ?2, system_prompt = '', prompt_ref = ?3 WHERE id = ?1",
                    params![id, now, hash],
                )?
            }
            None => tx.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![id, now])?,
        };
        if changed == 0 {
            return Err(StoreError::NoSession(id.to_owned()));
        }
        let next: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)",
            [id],
            |r| r.get(0),
        )?;
        let mut insert =
            tx.prepare_cached("INSERT INTO messages (session_id, seq, role, json) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3, ?4)")?;
        let mut said = tx.prepare_cached(
            "INSERT INTO said (session_id, text) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2)",
        )?;
        for (i, m) in messages.iter().enumerate() {
            insert.execute(params![
                id,
                next + i as i64,
                crate::kept::role(&m.role),
                crate::kept::json(&m.role, &m.json)
            ])?;
            if !m.text.trim().is_empty() {
                said.execute(params![id, m.text])?;
            }
        }
        let mut keep = tx.prepare_cached(
            "INSERT OR REPLACE INTO results (session_id, id, tool, text, packed, in_message, at, len)
             VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let contents: Vec<Option<String>> = messages.iter().map(|m| message_content(&m.json)).collect();
        let named = named_results(&contents);
        for r in results {
            let held = if r.text.is_empty() {
                None
            } else {
                contents
                    .iter()
                    .enumerate()
                    .find_map(|(i, c)| {
                        let at = c.as_deref()?.find(&r.text)?;
                        Some((next + i as i64, at as i64, r.text.len() as i64))
                    })
                    // A stub ("Same result as #0011") names an earlier result with the same
                    // text, already held by its own message: this one points where that one does.
                    .or_else(|| {
                        named.iter().filter(|k| **k != r.id).find_map(|k| {
                            let (text, place) = read_result(tx, id, *k).ok().flatten()?;
                            (text == r.text).then_some(place).flatten()
                        })
                    })
            };
            let none = None::<i64>;
            if let Some((seq, at, len)) = held {
                keep.execute(params![id, r.id as i64, r.tool, "", None::<Vec<u8>>, seq, at, len])?;
            } else if r.text.len() > shared::PACK_ABOVE {
                keep.execute(params![id, r.id as i64, r.tool, "", shared::pack(&r.text), none, none, none])?;
            } else {
                keep.execute(params![id, r.id as i64, r.tool, r.text, None::<Vec<u8>>, none, none, none])?;
            }
        }
        self.write_state(tx, id, state)
    }

    /// Replaces a session's whole history (a compaction's new start), in one transaction.
    pub fn replace_history(
        &self,
        id: &str,
        messages: &[NewMessage],
        state: &Value,
        system_prompt: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write_session(id, |tx| {
            // The compacted messages stay searchable: only the history sent to the model changes.
            tx.execute("UPDATE messages SET live = 0 WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)", [id])?;
            // An undo does not reach back past a summary, so neither does the state's log.
            tx.execute("DELETE FROM checkpoints WHERE session_id = (SELECT n FROM sessions WHERE id = ?1)", [id])?;
            let current = self.write_step(tx, id, messages, &[], state, Some(system_prompt), now)?;
            Ok(((), state::settle(tx, id, &current)?))
        })
    }

    /// A new prefix (a move to another model): the model, the system prompt, the tools.
    pub fn update_prefix(
        &self,
        id: &str,
        model: &str,
        system_prompt: &str,
        tools: &str,
        state: &Value,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write_session(id, |tx| {
            let prompt = shared::keep_prefix(tx, system_prompt)?;
            let tools = shared::keep_prefix(tx, tools)?;
            let changed = tx.execute(
                "UPDATE sessions SET model = ?2, system_prompt = '', prompt_ref = ?3, tools = '', tools_ref = ?4, updated_at = ?5 WHERE id = ?1",
                params![id, model, prompt, tools, now],
            )?;
            if changed == 0 {
                return Err(StoreError::NoSession(id.to_owned()));
            }
            Ok(((), self.write_state(tx, id, state)?))
        })
    }

    /// A stored tool result in full.
    pub fn result(&self, id: &str, result: u64) -> Result<Option<String>, StoreError> {
        Ok(read_result(&self.conn(), id, result)?.map(|(text, _)| text))
    }

    pub fn record_usage(&self, id: &str, model: &str, usage: UsageRow, now: i64) -> Result<(), StoreError> {
        self.timed(|| {
            self.conn().execute(
                "INSERT INTO usage (session_id, at, model, input, output, cached) VALUES ((SELECT n FROM sessions WHERE id = ?1), ?2, ?3, ?4, ?5, ?6)",
                params![id, now, model, usage.input as i64, usage.output as i64, usage.cached.map(|c| c as i64)],
            )?;
            Ok(())
        })
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), StoreError> {
        match self.conn().execute("UPDATE sessions SET title = ?2 WHERE id = ?1", params![id, title])? {
            0 => Err(StoreError::NoSession(id.to_owned())),
            _ => Ok(()),
        }
    }

    /// Deletes a session, and its subagents' sessions with it — refused while a lembas has the
    /// session open (its turns, its team's, would go on writing into what is gone).
    pub fn delete(&self, id: &str) -> Result<(), StoreError> {
        let _held = self.lock_session(id)?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT s.id FROM sessions s JOIN tree ON s.parent = tree.id)
             DELETE FROM said WHERE session_id IN (SELECT n FROM sessions WHERE id IN tree)",
            [id],
        )?;
        if tx.execute("DELETE FROM sessions WHERE id = ?1", [id])? == 0 {
            return Err(StoreError::NoSession(id.to_owned()));
        }
        shared::forget_unused_prefixes(&tx)?;
        tx.commit()?;
        self.forget_written(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, state: &Value) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            title: id.into(),
            project: "/p".into(),
            started: "/p".into(),
            model: "m".into(),
            created_at: 1,
            updated_at: 1,
            system_prompt: "the same long system prompt".repeat(100),
            tools: "[{\"name\":\"read\"}]".into(),
            state: state.to_string(),
            parent: None,
        }
    }

    /// A state like the engine's: a ledger that gains an entry per step, and a counter.
    fn state_after(steps: usize) -> Value {
        let reads: Vec<_> = (0..steps)
            .map(|n| json!({"id": n, "file": format!("/p/src/m{}.rs", n % 20), "sha": format!("{n:064x}")}))
            .collect();
        json!({"ledger": {"reads": reads}, "ids": steps, "mode": "auto"})
    }

    /// The same, with a plan rewritten at every step: patches that outweigh the growth.
    fn churned(steps: usize) -> Value {
        let mut state = state_after(steps);
        state["plan"] = format!("step {steps}: ").repeat(40).into();
        state
    }

    fn bytes(store: &Store, sql: &str) -> i64 {
        store.conn().query_row(sql, [], |r| r.get::<_, Option<i64>>(0)).unwrap().unwrap_or(0)
    }

    #[test]
    fn the_state_is_kept_as_it_grows_not_rewritten_each_step() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &state_after(0))).unwrap();
        for step in 1..=400 {
            store.append("s", &[], &[], &state_after(step), None, step as i64).unwrap();
        }
        let last = state_after(400).to_string();
        assert_eq!(store.session("s").unwrap().unwrap().state, last);
        let kept = bytes(&store, "SELECT SUM(length(patch)) FROM state_log")
            + bytes(&store, "SELECT SUM(length(state)) FROM state_snapshots");
        // Rewriting the state at every step would have written ~10 MB; its log is a few times
        // the final state.
        assert!(kept < 5 * last.len() as i64, "{kept} bytes kept for a {}-byte state", last.len());
        // The same, read back by a store that never wrote it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let writer = Store::open(&path).unwrap();
            writer.create_session(&record("s", &state_after(0))).unwrap();
            for step in 1..=50 {
                writer.append("s", &[], &[], &state_after(step), None, step as i64).unwrap();
            }
        }
        assert_eq!(Store::open(&path).unwrap().session("s").unwrap().unwrap().state, state_after(50).to_string());
    }

    #[test]
    fn an_undo_goes_back_to_the_state_its_turn_began_with() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &churned(0))).unwrap();
        let mut points = Vec::new();
        for turn in 0..30 {
            let seq = store.checkpoint("s", turn * 2, &churned(turn * 10), &crate::TurnStart::default()).unwrap();
            points.push((seq, churned(turn * 10)));
            for step in 1..10 {
                let message = NewMessage { role: "user".into(), json: "{}".into(), text: String::new() };
                store.append("s", &[message], &[], &churned(turn * 10 + step), None, 1).unwrap();
            }
        }
        // Turn by turn back to the start, each undo landing on its turn's first state, with
        // whole copies made in between.
        assert!(bytes(&store, "SELECT COUNT(*) FROM state_snapshots") > 1);
        while let Some((seq, began)) = points.pop() {
            let checkpoint = store.last_checkpoint("s").unwrap().unwrap();
            assert_eq!((checkpoint.seq, &checkpoint.state), (seq, &began));
            store.take_back("s", seq, &began, &[], 2).unwrap();
            assert_eq!(store.session("s").unwrap().unwrap().state, began.to_string());
        }
        assert_eq!(store.last_checkpoint("s").unwrap(), None);
        // The session goes on from there.
        store.append("s", &[], &[], &churned(3), None, 3).unwrap();
        assert_eq!(store.session("s").unwrap().unwrap().state, churned(3).to_string());
    }

    #[test]
    fn a_compaction_keeps_one_copy_of_the_state_and_no_log_before_it() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &state_after(0))).unwrap();
        for step in 1..=40 {
            store.checkpoint("s", step, &state_after(step), &crate::TurnStart::default()).unwrap();
        }
        store.replace_history("s", &[], &state_after(0), "a new prompt", 5).unwrap();
        assert_eq!(bytes(&store, "SELECT COUNT(*) FROM state_log"), 0);
        assert_eq!(bytes(&store, "SELECT COUNT(*) FROM state_snapshots"), 1);
        store.append("s", &[], &[], &state_after(1), None, 6).unwrap();
        let record = store.session("s").unwrap().unwrap();
        assert_eq!((record.state, record.system_prompt.as_str()), (state_after(1).to_string(), "a new prompt"));
    }

    #[test]
    fn a_held_session_is_read_once_and_written_on_from_what_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let (first, second) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
        first.create_session(&record("s", &state_after(0))).unwrap();
        let held = second.lock_session("s").unwrap();
        for step in 1..=50 {
            second.append("s", &[], &[], &state_after(step), None, step as i64).unwrap();
        }
        drop(held);
        assert!(!first.has_session("t").unwrap());
        let held = first.lock_session("s").unwrap();
        let (record, state) = first.held_session::<serde_json::Value>(&held, "s").unwrap().unwrap();
        assert_eq!(state, state_after(50), "what the other process wrote");
        assert_eq!(record.id, "s");
        assert!(first.written.lock().unwrap().contains_key("s"), "remembered for the first write");
        let rows = |store: &Store| {
            bytes(store, "SELECT COUNT(*) FROM state_log") + bytes(store, "SELECT COUNT(*) FROM state_snapshots")
        };
        let before = rows(&first);
        first.append("s", &[], &[], &state_after(51), None, 51).unwrap();
        assert_eq!(rows(&first), before + 1, "one patch after what was read");
        assert_eq!(second.session("s").unwrap().unwrap().state, state_after(51).to_string());
    }

    #[test]
    fn what_another_process_wrote_is_never_overwritten_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let (first, second) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
        first.create_session(&record("s", &state_after(0))).unwrap();
        let held = first.lock_session("s").unwrap();
        first.append("s", &[], &[], &state_after(1), None, 1).unwrap();
        drop(held);
        let held = second.lock_session("s").unwrap();
        second.append("s", &[], &[], &state_after(5), None, 2).unwrap();
        drop(held);
        let _held = first.lock_session("s").unwrap();
        first.append("s", &[], &[], &state_after(6), None, 3).unwrap();
        assert_eq!(second.session("s").unwrap().unwrap().state, state_after(6).to_string());
    }

    #[test]
    fn sessions_share_one_copy_of_a_prompt_until_none_uses_it() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("a", &json!({}))).unwrap();
        store.create_session(&record("b", &json!({}))).unwrap();
        assert_eq!(bytes(&store, "SELECT COUNT(*) FROM prefixes"), 2, "one prompt and one tool list");
        assert_eq!(store.session("b").unwrap().unwrap().system_prompt, record("b", &json!({})).system_prompt);
        store.update_prefix("b", "m2", "another prompt", "[]", &json!({}), 2).unwrap();
        let moved = store.session("b").unwrap().unwrap();
        assert_eq!(
            (moved.model.as_str(), moved.system_prompt.as_str(), moved.tools.as_str()),
            ("m2", "another prompt", "[]")
        );
        store.delete("a").unwrap();
        assert_eq!(bytes(&store, "SELECT COUNT(*) FROM prefixes"), 2, "b's two");
        store.delete("b").unwrap();
        assert_eq!(bytes(&store, "SELECT COUNT(*) FROM prefixes"), 0);
    }

    #[test]
    fn a_long_result_is_kept_deflated_and_read_back_whole() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &json!({}))).unwrap();
        let long: String = (0..20_000).map(|n| format!("test t{n} ... ok\n")).collect();
        let results = [
            NewResult { id: 1, tool: "bash".into(), text: long.clone() },
            NewResult { id: 2, tool: "read".into(), text: "short".into() },
        ];
        store.append("s", &[], &results, &json!({}), None, 2).unwrap();
        assert_eq!(store.result("s", 1).unwrap().as_deref(), Some(long.as_str()));
        assert_eq!(store.result("s", 2).unwrap().as_deref(), Some("short"));
        assert!(bytes(&store, "SELECT SUM(length(packed)) FROM results") * 5 < long.len() as i64);
    }

    #[test]
    fn a_result_its_message_holds_whole_is_kept_once() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &json!({}))).unwrap();
        let held = "1: fn main() {}\n2: // é, ü — and more";
        let message = NewMessage {
            role: "tool".into(),
            json: json!({"role": "tool", "tool_call_id": "c1", "content": format!("[#0001 main.rs sha 1]\n{held}")})
                .to_string(),
            text: String::new(),
        };
        let results = [
            NewResult { id: 1, tool: "read".into(), text: held.into() },
            NewResult { id: 2, tool: "grep".into(), text: "not in any message".into() },
        ];
        store.append("s", &[message], &results, &json!({}), None, 2).unwrap();
        assert_eq!(store.result("s", 1).unwrap().as_deref(), Some(held));
        assert_eq!(store.result("s", 2).unwrap().as_deref(), Some("not in any message"));
        assert_eq!(store.result("s", 3).unwrap(), None);
        assert_eq!(bytes(&store, "SELECT length(text) FROM results WHERE id = 1"), 0, "kept once, in its message");
        // A later stub that names it points where it points; one that names a different text
        // keeps its own.
        let stub = NewMessage {
            role: "tool".into(),
            json: json!({"role": "tool", "tool_call_id": "c2", "content": "[#0003] Same result as #0001."}).to_string(),
            text: String::new(),
        };
        let later = [
            NewResult { id: 3, tool: "read".into(), text: held.into() },
            NewResult { id: 4, tool: "read".into(), text: "changed since".into() },
        ];
        store.append("s", &[stub.clone(), stub], &later, &json!({}), None, 3).unwrap();
        assert_eq!(store.result("s", 3).unwrap().as_deref(), Some(held));
        assert_eq!(bytes(&store, "SELECT length(text) FROM results WHERE id = 3"), 0);
        assert_eq!(store.result("s", 4).unwrap().as_deref(), Some("changed since"));
    }

    #[test]
    fn an_undo_point_from_before_the_log_still_reads() {
        let store = Store::in_memory().unwrap();
        store.create_session(&record("s", &json!({"old": true}))).unwrap();
        store
            .conn()
            .execute(
                "INSERT INTO checkpoints (session_id, seq, history_len, state)
                 VALUES ((SELECT n FROM sessions WHERE id = 's'), 1, 0, '{\"then\":1}')",
                [],
            )
            .unwrap();
        assert_eq!(store.last_checkpoint("s").unwrap().unwrap().state, json!({"then": 1}));
        store.take_back("s", 1, &json!({"then": 1}), &[], 2).unwrap();
        assert_eq!(store.session("s").unwrap().unwrap().state, "{\"then\":1}");
    }
}
