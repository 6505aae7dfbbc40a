//! The host's side of the store: the sessions kept there, read, renamed and deleted whether or
//! not one is open.

use std::sync::Arc;

use lembas_protocol::{Event, Found, StoredSession};
use lembas_store::Store;

use super::Host;
use crate::EngineError;

impl Host {
    /// A stored session's conversation as the events that draw it — the same events, titles
    /// included, a live turn says.
    pub fn transcript(&self, id: &str) -> Result<Vec<Event>, EngineError> {
        crate::stored_transcript(&self.store, id)
    }

    /// The store the host's sessions are kept in (what a new session's configuration is given).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The stored sessions the person started (a project's, or all), newest first.
    pub fn sessions(&self, project: Option<&str>) -> Result<Vec<StoredSession>, EngineError> {
        Ok(self.store.list(project)?)
    }

    /// The session `--continue` takes in `project` (the list's first), its messages not counted.
    pub fn latest_session(&self, project: &str) -> Result<Option<String>, EngineError> {
        Ok(self.store.latest(project)?)
    }

    /// The model a session last used.
    pub fn session_model(&self, id: &str) -> Result<Option<String>, EngineError> {
        Ok(self.store.model_of(id)?)
    }

    /// Sessions whose words match, best first.
    pub fn search(&self, words: &str) -> Result<Vec<Found>, EngineError> {
        Ok(self.store.search(words)?)
    }

    /// The sessions of a session's subagents, in the order they started.
    pub fn subagents(&self, id: &str) -> Result<Vec<StoredSession>, EngineError> {
        Ok(self.store.children(id)?)
    }

    /// One stored session, by its whole id.
    pub fn session(&self, id: &str) -> Result<Option<StoredSession>, EngineError> {
        Ok(self.store.summary(id)?)
    }

    /// A session's messages as the model was sent them (the chat format), for a script.
    pub fn messages(&self, id: &str) -> Result<Vec<serde_json::Value>, EngineError> {
        Ok(self.store.messages(id)?.iter().filter_map(|m| serde_json::from_str(&m.json).ok()).collect())
    }

    /// The sessions whose ids start with `prefix` (at most `max`).
    pub fn ids_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>, EngineError> {
        Ok(self.store.ids_starting(prefix, max)?)
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), EngineError> {
        Ok(self.store.rename(id, title)?)
    }

    /// The team tree a stored session kept (`None`: it had no subagent), as its `team` event
    /// last drew it — for a client asking after a session that is not open here.
    pub fn kept_tree(&self, id: &str) -> Result<Option<lembas_team::TeamTree>, EngineError> {
        Ok(self.store.team(id)?.as_deref().and_then(crate::session::team::kept_tree))
    }

    /// The id of the last turn a stored session finished (`lastTurnId` for a session not open).
    pub fn last_turn(&self, id: &str) -> Result<Option<String>, EngineError> {
        Ok(self.store.last_turn(id)?)
    }

    /// Whether another lembas (a terminal, another editor) holds the session open now.
    pub fn held_elsewhere(&self, id: &str) -> bool {
        matches!(self.store.lock_session(id), Err(lembas_store::StoreError::Busy { .. }))
    }

    /// Deletes a stored session, and its snapshots: the space they took comes back when the
    /// project's store is next pruned.
    pub fn delete(&self, id: &str) -> Result<(), EngineError> {
        let project = self.store.summary(id)?.map(|s| s.project);
        self.store.delete(id)?;
        if let (Some(dir), Some(project)) = (&self.snapshots, project) {
            let snapshots = lembas_snapshot::Store::open(dir, std::path::Path::new(&project), Default::default());
            snapshots.forget(id).map_err(|e| EngineError::Undo(format!("its snapshots could not be deleted: {e}")))?;
        }
        Ok(())
    }
}
