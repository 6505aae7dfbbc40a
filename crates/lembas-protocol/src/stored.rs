//! Stored sessions as a front end sees them: a line of the list, a search hit.

use serde::{Deserialize, Serialize};

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSession {
    pub id: String,
    pub title: String,
    /// The project's root.
    pub project: String,
    pub model: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub messages: i64,
    /// The session a subagent's session works for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// A session whose words match a search, with the words around the match (`[`…`]` marks it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    pub session: StoredSession,
    pub snippet: String,
}
