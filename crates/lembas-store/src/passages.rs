//! What `session_search` reads: passages of a project's earlier sessions that hold the words
//! asked for, from the full-text index `/search` uses.

use rusqlite::params;

use crate::{Store, StoreError};

/// A passage of an earlier session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub session: String,
    pub title: String,
    /// When the session began, in milliseconds since 1970.
    pub at_ms: i64,
    pub text: String,
}

/// Words as an FTS5 query that any of them matches (the best passages hold the most): each a
/// quoted term, one-letter words left out.
fn any_of(words: &str) -> String {
    let terms: Vec<String> = words
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() > 1)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    terms.join(" OR ")
}

impl Store {
    /// Whether the project `project` has sessions of the person's (not subagents') but
    /// `except`.
    pub fn has_sessions_in(&self, project: &str, except: &str) -> Result<bool, StoreError> {
        let conn = self.conn();
        let found: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE project = ?1 AND parent IS NULL AND id != ?2)",
            [project, except],
            |r| r.get(0),
        )?;
        Ok(found)
    }

    /// The passages of `project`'s sessions but `except` (the one asking) holding the most of
    /// `words`, best first, at most `limit`, each cut to about `tokens` words around them.
    pub fn passages(&self, project: &str, words: &str, except: &str, limit: usize) -> Result<Vec<Passage>, StoreError> {
        let query = any_of(words);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT s.id, s.title, s.created_at, snippet(said, 1, '', '', '…', 48) FROM said
             JOIN sessions s ON s.n = said.session_id
             WHERE said MATCH ?1 AND s.project = ?2 AND s.parent IS NULL AND s.id != ?3
             ORDER BY bm25(said) LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![query, project, except, limit as i64], |r| {
            Ok(Passage { session: r.get(0)?, title: r.get(1)?, at_ms: r.get(2)?, text: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_match_any_word_and_skip_one_letter_ones() {
        assert_eq!(
            any_of("how did we fix the \"login\" bug?"),
            "\"how\" OR \"did\" OR \"we\" OR \"fix\" OR \"the\" OR \"login\" OR \"bug\""
        );
        assert_eq!(any_of("a ? !"), "");
    }
}
