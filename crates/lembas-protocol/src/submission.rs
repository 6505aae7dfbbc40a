//! Submissions and what answers them. A front end sends every [`Command`] as a [`Submission`]
//! with an id it chooses; every event the session says while it carries that submission out — a
//! turn's steps, a setting's confirmation, an error — comes back as [`Said`] with the same id, so
//! a front end matches answers to what it asked by id, never by "the next event of this kind".
//! A prompt's id is kept with its turn: the same id sent again is not a second turn (a link that
//! dropped and re-sent it gets the first one's answer).

use serde::{Deserialize, Serialize};

use crate::{Command, Event};

/// A submission's id: any text the sender chooses, unique among its submissions to a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SubmissionId(pub String);

impl SubmissionId {
    /// A new id, unique across processes and time (a prompt's id is kept with its turn, and
    /// the same id sent again is answered by that turn): `prefix` (who made it) and a UUIDv7.
    pub fn fresh(prefix: &str) -> SubmissionId {
        SubmissionId(format!("{prefix}-{}", uuid::Uuid::now_v7()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_differ_from_any_made_before_even_by_another_process() {
        let (a, b) = (SubmissionId::fresh("h"), SubmissionId::fresh("h"));
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("h-") && a.as_str().len() == 2 + 36, "{a}");
    }

    #[test]
    fn a_submission_and_what_answers_it_read_as_flat_json() {
        let sent = Submission { id: "run7".into(), command: Command::prompt("hi") };
        let json = serde_json::to_value(&sent).unwrap();
        assert_eq!(json, serde_json::json!({"id": "run7", "command": "prompt", "text": "hi"}));
        assert_eq!(serde_json::from_value::<Submission>(json).unwrap(), sent);
        let said = Said { submission: Some("run7".into()), event: Event::Step { n: 1 } };
        let json = serde_json::to_value(&said).unwrap();
        assert_eq!(json, serde_json::json!({"submission": "run7", "type": "step", "n": 1}));
        assert_eq!(serde_json::from_value::<Said>(json).unwrap(), said);
    }
}
