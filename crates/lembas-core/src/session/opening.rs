//! A turn's opening writes — the title its prompt gives a new session, its undo point, the
//! person's message — made in one transaction while the turn's first request is on its way to
//! the model, not before it leaves: the request goes out ~0.5 ms sooner (docs/performance.md),
//! and the model's reply is not taken until they are written. Any other write of the session
//! before then makes them first, so the store's order is the turn's.

use std::sync::Arc;

use lembas_store::{Store, StoreError, TurnOpening};

use crate::EngineError;
use crate::session::Session;

/// What a turn's opening keeps, not yet written.
pub(crate) struct OpeningWrites {
    store: Arc<Store>,
    id: String,
    opening: TurnOpening,
}

/// The writes under way on a blocking thread: the undo point's number once made.
pub(crate) type Writing = tokio::task::JoinHandle<Result<Option<i64>, StoreError>>;

impl OpeningWrites {
    fn write(self) -> Result<Option<i64>, StoreError> {
        self.store.open_turn(&self.id, &self.opening)
    }
}

impl Session {
    /// The opening still to be written, to add to (a new one where a write of the session made
    /// what was kept so far: what comes after it is written after it).
    pub(crate) fn opening_mut(&mut self) -> &mut TurnOpening {
        let (store, id) = (&self.cfg.store, &self.id);
        let writes = self.opening.get_or_insert_with(|| OpeningWrites {
            store: store.clone(),
            id: id.clone(),
            opening: TurnOpening::default(),
        });
        &mut writes.opening
    }

    /// Writes the turn's opening now, if it is still to be written: before any other write of
    /// the session, and when the turn ends without a request.
    pub(crate) fn write_opening(&mut self) -> Result<(), EngineError> {
        if let Some(writes) = self.opening.take() {
            let seq = writes.write()?;
            self.opened(seq);
        }
        Ok(())
    }

    /// Starts the turn's opening writes beside the request that is about to go.
    pub(crate) fn start_opening(&mut self) -> Option<Writing> {
        let writes = self.opening.take()?;
        Some(tokio::task::spawn_blocking(move || writes.write()))
    }

    /// The opening writes started beside the request, done.
    pub(crate) async fn opening_written(&mut self, writing: Writing) -> Result<(), EngineError> {
        let seq = writing.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
        self.opened(seq);
        Ok(())
    }

    fn opened(&mut self, seq: Option<i64>) {
        if seq.is_some() {
            self.turn_seq = seq;
        }
    }
}
