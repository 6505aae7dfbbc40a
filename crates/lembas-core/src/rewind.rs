//! Rewind: back to before any earlier turn the person started since the last compaction — its
//! files and those of every turn after it put back, those turns out of the conversation, or
//! either alone. An undo is a rewind to the last turn (`undo.rs` does the going back).

use crate::session::Session;
use crate::undo::{Undone, typed_words};
use crate::{EngineError, Event};

impl Session {
    /// The turns a rewind can go back to, oldest first: (their checkpoint's seq, the first line
    /// of their words).
    fn rewindable(&self) -> Result<Vec<(i64, String)>, EngineError> {
        let checkpoints = self.cfg.store.checkpoints(&self.id)?;
        Ok(checkpoints
            .into_iter()
            .filter(|&(_, at)| at < self.history.len())
            .map(|(seq, at)| {
                let words = typed_words(self.history.get(at));
                (seq, words.lines().next().unwrap_or_default().to_owned())
            })
            .collect())
    }

    /// Says the turns a rewind can go back to.
    pub fn report_turns(&self) -> Result<(), EngineError> {
        let turns = self.rewindable()?.into_iter().map(|(_, words)| words).collect();
        self.emit(Event::Turns { turns });
        Ok(())
    }

    /// Goes back to before turn `to` (1: the first listed).
    pub async fn rewind(&mut self, to: u32, files: bool, conversation: bool) -> Result<Undone, EngineError> {
        self.settle_snapshots().await;
        let turns = self.rewindable()?;
        let Some(&(seq, _)) = (to as usize).checked_sub(1).and_then(|i| turns.get(i)) else {
            return Err(EngineError::Undo(match turns.len() {
                0 => "There is no turn to go back to in this session.".into(),
                n => format!("There is no turn {to}: this session has turns 1 to {n} to go back to."),
            }));
        };
        let checkpoint = self
            .cfg
            .store
            .checkpoint_at(&self.id, seq)?
            .ok_or_else(|| EngineError::Undo(format!("Turn {to} can no longer be gone back to.")))?;
        self.go_back(checkpoint, files, conversation)
    }
}
