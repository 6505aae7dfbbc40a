//! Undo: the last turn the person started is taken back — every file of the project it
//! changed is put back as the turn found it (`snapshots.rs`), and its messages leave the
//! conversation (`context.md` §2: after an undo its results are gone from what is sent; nothing
//! before it changes, so the prompt cache still holds up to there).
//!
//! How: when a turn the person started begins, the store marks where (a checkpoint with the
//! engine's state); before its first change the project's files are snapshotted, and again as it
//! ends. A file changed again after the turn is left as it is and named. Past a compaction the
//! conversation has no checkpoint to go back to; the turn's files still come back.

use lembas_model::Message;
use lembas_protocol::FilesBack;

use crate::session::history::Entry;
use crate::session::{Session, State};
use crate::{EngineError, Event, now_ms};

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The person's words that started the turn taken back (a front end offers them again);
    /// `None`: the conversation stood (the turn is behind a compaction), only files came back.
    pub prompt: Option<String>,
    pub files: FilesBack,
}

impl Session {
    /// Marks where a turn the person started begins.
    pub(crate) fn mark_turn(&mut self) -> Result<(), EngineError> {
        let start = lembas_store::TurnStart {
            at: Some(now_ms()),
            submission: self.events.carrying().map(|id| id.as_str().to_owned()),
        };
        let seq = self.cfg.store.checkpoint(&self.id, self.history.len(), &self.state_value(), &start)?;
        self.turn_seq = Some(seq);
        self.snapshot.taken = false;
        // A new turn: what an undo left is the person's now.
        self.snapshot.kept = None;
        Ok(())
    }

    /// Takes back the last turn the person started (and any turn a job's note started after it).
    pub async fn undo(&mut self) -> Result<Undone, EngineError> {
        // A snapshot still being read (a turn that failed as it opened) finishes first.
        self.settle_snapshots().await;
        let Some(checkpoint) = self.last_turn_checkpoint()? else {
            // Behind a compaction: the files of the last turn with snapshots, if any.
            let files = self.restore_files(&self.id.clone(), None)?.ok_or_else(nothing_to_undo)?;
            return Ok(self.said_undone(None, 0, files));
        };
        self.go_back(checkpoint, true, true)
    }

    /// Goes back to where `checkpoint`'s turn began: the files of it and every later turn put
    /// back (`files`), those turns out of the conversation (`conversation`).
    pub(crate) fn go_back(
        &mut self,
        checkpoint: lembas_store::Checkpoint,
        files: bool,
        conversation: bool,
    ) -> Result<Undone, EngineError> {
        // The files first: a failure there leaves the conversation as it was.
        let files = if files {
            self.restore_files(&self.id.clone(), Some(checkpoint.seq))?.unwrap_or_default()
        } else {
            if conversation {
                // What the turns changed on disk stays; their snapshots go with them.
                let _ = self.snapshots().drop_from(&self.id, checkpoint.seq);
            }
            left_as_they_are()
        };
        if !conversation {
            return Ok(self.said_undone(None, 0, files));
        }
        let later = self.turns_after(checkpoint.seq)?;
        let prompt = typed_words(self.history.get(checkpoint.history_len));
        self.state = self.state_going_back(checkpoint.state)?;
        // Its words leave the search with it.
        let forget: Vec<String> = self.history[checkpoint.history_len..].iter().map(Entry::words).collect();
        self.history.truncate(checkpoint.history_len);
        self.sent.changed("an undo");
        self.turn_seq = None;
        self.cfg.store.take_back(&self.id, checkpoint.seq, &self.state_value(), &forget, now_ms())?;
        self.judge = self.make_judge();
        Ok(self.said_undone(Some(prompt), later, files))
    }

    /// The engine's state as a turn began (`began`) — but ids are never reused, and what the
    /// person set (mode, effort, approvals, models named) and the tool list stand as they are.
    pub(crate) fn state_going_back(&self, began: serde_json::Value) -> Result<State, EngineError> {
        let mut state: State = serde_json::from_value(began).map_err(|e| EngineError::Corrupt(e.to_string()))?;
        state.ids = self.state.ids.clone();
        state.mode = self.state.mode;
        state.effort = self.state.effort.clone();
        state.always = self.state.always.clone();
        state.named = self.state.named.clone();
        state.mcp_listed = self.state.mcp_listed.clone();
        state.mcp_instructions = self.state.mcp_instructions.clone();
        state.mode_before_plan = self.state.mode_before_plan;
        Ok(state)
    }

    /// How many turns the person started after the one at `seq`.
    fn turns_after(&self, seq: i64) -> Result<u32, EngineError> {
        let marks = self.cfg.store.checkpoints(&self.id)?;
        Ok(marks.iter().filter(|m| m.seq > seq && m.history_len < self.history.len()).count() as u32)
    }

    /// The last checkpoint with something after it: a turn that failed before its first
    /// message was kept leaves one with nothing to take back, and the undo goes to the turn
    /// before.
    fn last_turn_checkpoint(&mut self) -> Result<Option<lembas_store::Checkpoint>, EngineError> {
        while let Some(checkpoint) = self.cfg.store.last_checkpoint(&self.id)? {
            if checkpoint.history_len < self.history.len() {
                return Ok(Some(checkpoint));
            }
            self.cfg.store.take_back(&self.id, checkpoint.seq, &self.state_value(), &[], now_ms())?;
        }
        Ok(None)
    }

    /// Puts back the files of session `id`'s turns snapshotted from the checkpoint `from` on
    /// (`None`: its last snapshotted turn), and forgets their snapshots. `None` when there were
    /// none.
    pub(crate) fn restore_files(&mut self, id: &str, from: Option<i64>) -> Result<Option<FilesBack>, EngineError> {
        let store = self.snapshots();
        let turns = match store.turns(id) {
            Ok(turns) => turns,
            Err(e) => return Ok(Some(FilesBack { not_back: Some(e.to_string()), ..Default::default() })),
        };
        let Some(from) = from.or_else(|| turns.last().map(|t| t.turn)) else { return Ok(None) };
        let taken: Vec<_> = turns.into_iter().filter(|t| t.turn >= from).collect();
        let (Some(first), Some(last)) = (taken.first(), taken.last()) else { return Ok(None) };
        let restored = store
            .restore(id, &first.before, last.after.as_deref())
            .map_err(|e| EngineError::Undo(format!("The files could not be put back: {e}")))?;
        store.drop_from(id, from).map_err(|e| EngineError::Undo(e.to_string()))?;
        self.snapshot.taken = false;
        self.snapshot.kept = (!restored.kept.is_empty()).then(|| (first.before.clone(), restored.kept.clone()));
        Ok(Some(files_back(restored)))
    }

    /// Puts back what the last undo or rewind left (changed after its turn), overwriting it.
    pub async fn overwrite_kept(&mut self) -> Result<Undone, EngineError> {
        let Some((before, paths)) = self.snapshot.kept.take() else {
            return Err(EngineError::Undo("No file is waiting to be put back.".into()));
        };
        let (store, id) = (self.snapshots(), self.id.clone());
        let restored = tokio::task::spawn_blocking(move || store.overwrite(&id, &before, &paths))
            .await
            .map_err(|e| EngineError::Undo(e.to_string()))?
            .map_err(|e| EngineError::Undo(format!("The files could not be put back: {e}")))?;
        Ok(self.said_undone(None, 0, files_back(restored)))
    }

    fn said_undone(&mut self, prompt: Option<String>, later: u32, files: FilesBack) -> Undone {
        let undone = Undone { prompt, files };
        self.emit(Event::Undone { prompt: undone.prompt.clone(), later, files: undone.files.clone() });
        self.report_context();
        undone
    }
}

/// The words the person typed to start a turn, from its first message — not the files they
/// attached, which went with them.
pub(crate) fn typed_words(first: Option<&Entry>) -> String {
    match first {
        Some(Entry { typed: Some(typed), .. }) => typed.clone(),
        Some(Entry { message: Message::User { content, .. }, .. }) => {
            crate::session::history::without_note(content).to_owned()
        }
        _ => String::new(),
    }
}

/// What putting files back did, as every front end is told it.
fn files_back(restored: lembas_snapshot::Restored) -> FilesBack {
    FilesBack { put_back: restored.put_back, removed: restored.removed, kept: restored.kept, not_back: None }
}

/// The files when only the conversation goes back.
pub(crate) fn left_as_they_are() -> FilesBack {
    FilesBack { not_back: Some(lembas_protocol::LEFT_AS_ASKED.into()), ..Default::default() }
}

fn nothing_to_undo() -> EngineError {
    EngineError::Undo("There is nothing to undo in this session.".into())
}
