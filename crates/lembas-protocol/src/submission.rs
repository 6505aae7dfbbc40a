//! Submissions and what answers them. A front end sends every [`Command`] as a [`Submission`]
//! with an id it chooses; every event the session says while it carries that submission out — a
//! turn's steps, a setting's confirmation, an error — comes back as [`Said`] with the same id, so
//! a front end matches answers to what it asked by id, never by "the next event of this kind".
//! A prompt's id is kept with its turn: the same id sent again is not a second turn (a link that
//! dropped and re-sent it gets the first one's answer).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::{Command, Event};

/// A submission's id: any text the sender chooses, unique among its submissions to a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SubmissionId(pub String);

impl SubmissionId {
    /// A new id, unique within this process: `prefix` (who sent it) and a count.
    pub fn fresh(prefix: &str) -> SubmissionId {
        static COUNT: AtomicU64 = AtomicU64::new(1);
        SubmissionId(format!("{prefix}-{}", COUNT.fetch_add(1, Ordering::Relaxed)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SubmissionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for SubmissionId {
    fn from(id: &str) -> SubmissionId {
        SubmissionId(id.to_owned())
    }
}

/// A command, and the id its answers will carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    #[serde(flatten)]
    pub command: Command,
}

/// What a session said, and which submission it answers or belongs to: `None` for what nobody
/// asked for at that moment (a background job's note waking the session, a subagent working on
/// after its parent's turn, the session closing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Said {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<SubmissionId>,
    #[serde(flatten)]
    pub event: Event,
}

impl Said {
    /// Whether this answers (or belongs to) the submission `id`.
    pub fn answers(&self, id: &SubmissionId) -> bool {
        self.submission.as_ref() == Some(id)
    }
}
