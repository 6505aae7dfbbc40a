//! Rewind: back to before any earlier turn the person started since the last compaction — its
//! files and those of every turn after it put back, those turns out of the conversation, or
//! either alone; or a fork: a new session as this one was before that turn, this one kept. An
//! undo is a rewind to the last turn (`undo.rs` does the going back).

use lembas_protocol::{FilesBack, TurnPoint};
use lembas_store::Checkpoint;

use crate::session::Session;
use crate::session::history::Entry;
use crate::undo::{Undone, left_as_they_are, typed_words};
use crate::{EngineError, Event, now_ms};

impl Session {
    /// The turns a rewind can go back to, oldest first, each with its checkpoint's seq; with
    /// `files`, what each changed (read from its snapshots).
    async fn rewindable(&self, files: bool) -> Result<Vec<(i64, TurnPoint)>, EngineError> {
        let marks = self.cfg.store.checkpoints(&self.id)?;
        let mut turns: Vec<(i64, TurnPoint)> = marks
            .into_iter()
            .filter(|mark| mark.history_len < self.history.len())
            .enumerate()
            .map(|(i, mark)| {
                let words = typed_words(self.history.get(mark.history_len));
                let point = TurnPoint {
                    number: i as u32 + 1,
                    words: words.lines().next().unwrap_or_default().to_owned(),
                    at_ms: mark.start.at,
                    submission: mark.start.submission,
                    files: Vec::new(),
                };
                (mark.seq, point)
            })
            .collect();
        if files {
            let (store, id) = (self.snapshots(), self.id.clone());
            let changed = tokio::task::spawn_blocking(move || {
                let snapshots = store.turns(&id)?;
                let changed = store.changed_by(&snapshots)?;
                Ok::<_, lembas_snapshot::SnapshotError>(snapshots.into_iter().map(|t| t.turn).zip(changed).collect())
            })
            .await;
            // What the turns changed is a help to choose, not needed to go back: without it the
            // list still stands.
            if let Ok(Ok(changed)) = changed {
                let mut changed: std::collections::HashMap<i64, Vec<String>> = changed;
                for (seq, point) in &mut turns {
                    point.files = changed.remove(seq).unwrap_or_default();
                }
            }
        }
        Ok(turns)
    }

    /// Says the turns a rewind can go back to.
    pub async fn report_turns(&mut self) -> Result<(), EngineError> {
        self.settle_snapshots().await;
        let turns = self.rewindable(true).await?.into_iter().map(|(_, point)| point).collect();
        self.emit(Event::Turns { turns });
        Ok(())
    }

    /// The checkpoint of turn `to` (1: the first listed).
    async fn checkpoint_of_turn(&self, to: u32) -> Result<Checkpoint, EngineError> {
        let turns = self.rewindable(false).await?;
        let Some(&(seq, _)) = (to as usize).checked_sub(1).and_then(|i| turns.get(i)) else {
            return Err(EngineError::Undo(match turns.len() {
                0 => "There is no turn to go back to in this session.".into(),
                n => format!("There is no turn {to}: this session has turns 1 to {n} to go back to."),
            }));
        };
        self.cfg
            .store
            .checkpoint_at(&self.id, seq)?
            .ok_or_else(|| EngineError::Undo(format!("Turn {to} can no longer be gone back to.")))
    }

    /// Goes back to before turn `to` (1: the first listed).
    pub async fn rewind(&mut self, to: u32, files: bool, conversation: bool) -> Result<Undone, EngineError> {
        self.settle_snapshots().await;
        let checkpoint = self.checkpoint_of_turn(to).await?;
        self.go_back(checkpoint, files, conversation)
    }

    /// A new session as this one was before turn `to`: its messages, state and snapshots up to
    /// there; with `files`, the project's files put back to before that turn too. This session
    /// stays as it is. Answers the new session's id.
    pub async fn fork(&mut self, to: u32, files: bool) -> Result<String, EngineError> {
        self.settle_snapshots().await;
        let checkpoint = self.checkpoint_of_turn(to).await?;
        let fork = uuid::Uuid::now_v7().to_string();
        let title = format!("{} (fork)", self.title);
        self.cfg.store.copy_session(&self.id, &fork, &title, now_ms())?;
        let snapshots = self.snapshots();
        let copied = snapshots.copy_session(&self.id, &fork);
        let files = match (files, copied) {
            (true, Ok(())) => self.restore_files(&fork, Some(checkpoint.seq))?.unwrap_or_default(),
            (true, Err(e)) => FilesBack { not_back: Some(e.to_string()), ..Default::default() },
            (false, _) => {
                let _ = snapshots.drop_from(&fork, checkpoint.seq);
                left_as_they_are()
            }
        };
        let prompt = typed_words(self.history.get(checkpoint.history_len));
        let forget: Vec<String> = self.history[checkpoint.history_len..].iter().map(Entry::words).collect();
        let state = serde_json::to_value(self.state_going_back(checkpoint.state)?).expect("a state serializes");
        self.cfg.store.take_back(&fork, checkpoint.seq, &state, &forget, now_ms())?;
        self.emit(Event::Forked { id: fork.clone(), prompt, files });
        Ok(fork)
    }
}
