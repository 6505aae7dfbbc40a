//! Search: the pieces by words (FTS5's BM25, each word of the query a phrase, any of them) and
//! by meaning (the query's vector against the pieces', cosine), each list's best 50, fused by
//! reciprocal rank (`1 / (60 + rank)` summed) — a piece both find comes first.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::KbError;
use crate::embed::{Embedder, dot_blob};

/// How far down each list counts.
const DEPTH: usize = 50;
/// Reciprocal rank fusion's constant.
const RRF_K: f64 = 60.0;

/// How a hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    Words,
    Meaning,
    Both,
}

/// A piece found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    pub base: String,
    pub path: String,
    pub line_from: usize,
    pub line_to: usize,
    pub text: String,
    pub how: How,
}

/// What a search found, and what the person should know of how.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Found {
    pub hits: Vec<Hit>,
    /// Whether meaning counted (an embedding model answered).
    pub by_meaning: bool,
    pub note: Option<String>,
}

/// A piece's place: id, base, path, lines, text.
type Row = (i64, String, String, usize, usize, String);

/// The query's vector from the model, or why there is none (said with what is found).
pub(crate) async fn query_vector(embedder: &Embedder, query: &str) -> Result<Vec<f32>, String> {
    match embedder.embed(&[query.to_owned()]).await {
        Ok(mut vectors) => Ok(vectors.remove(0)),
        Err(e) => Err(format!("Found by words only: {e}.")),
    }
}

/// The search itself, with the query's vector in hand (nothing here waits on the network).
pub(crate) fn search(
    db: &Connection,
    meaning_of: Option<(&str, Result<Vec<f32>, String>)>,
    query: &str,
    bases: &[String],
    limit: usize,
) -> Result<Found, KbError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(KbError::Refused("Say what to look for.".into()));
    }
    let words = by_words(db, query, bases)?;
    let (meaning, note) = match meaning_of {
        None => (
            Vec::new(),
            Some("No embedding model is set ([knowledge] model in config.toml): found by words only.".to_owned()),
        ),
        Some((model, Ok(vector))) => (by_meaning(db, model, &vector, bases)?, None),
        Some((_, Err(why))) => (Vec::new(), Some(why)),
    };
    let by_meaning = note.is_none();
    let mut scores: HashMap<i64, (f64, bool, bool)> = HashMap::new();
    for (rank, id) in words.iter().enumerate() {
        let entry = scores.entry(*id).or_default();
        entry.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        entry.1 = true;
    }
    for (rank, id) in meaning.iter().enumerate() {
        let entry = scores.entry(*id).or_default();
        entry.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        entry.2 = true;
    }
    let mut ranked: Vec<(i64, (f64, bool, bool))> = scores.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let mut hits = Vec::new();
    for (id, (_, in_words, in_meaning)) in ranked.into_iter().take(limit) {
        let (_, base, path, line_from, line_to, text) = row(db, id)?;
        let how = match (in_words, in_meaning) {
            (true, true) => How::Both,
            (true, false) => How::Words,
            _ => How::Meaning,
        };
        hits.push(Hit { base, path, line_from, line_to, text, how });
    }
    Ok(Found { hits, by_meaning, note })
}

fn row(db: &Connection, id: i64) -> Result<Row, KbError> {
    Ok(db.query_row("SELECT id, base, path, line_from, line_to, text FROM pieces WHERE id = ?1", [id], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? as usize, r.get::<_, i64>(4)? as usize, r.get(5)?))
    })?)
}

/// Words too common to tell pieces apart: left out of the words' side of a question (unless
/// the question is nothing else), so "when" in a question does not rank every piece with a
/// "when" in it; meaning still reads them.
const COMMON: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "no", "not", "of", "on", "or", "our", "should", "so", "some", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which",
    "who", "why", "will", "with", "would", "you", "your",
];

/// The query as FTS5 reads it: each word a phrase (its quotes doubled), any of them.
fn match_expression(query: &str) -> String {
    let words: Vec<&str> = query
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let telling: Vec<&str> = words.iter().copied().filter(|w| !COMMON.contains(&w.to_lowercase().as_str())).collect();
    let kept = if telling.is_empty() { words } else { telling };
    let phrases: Vec<String> = kept.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect();
    phrases.join(" OR ")
}

/// The best pieces by words, best first.
fn by_words(db: &Connection, query: &str, bases: &[String]) -> Result<Vec<i64>, KbError> {
    let expression = match_expression(query);
    if expression.is_empty() {
        return Ok(Vec::new());
    }
    let mut statement = db.prepare(
        "SELECT p.id, p.base FROM pieces_fts JOIN pieces p ON p.id = pieces_fts.rowid
         WHERE pieces_fts MATCH ?1 ORDER BY bm25(pieces_fts) LIMIT ?2",
    )?;
    let rows = statement.query_map(rusqlite::params![expression, (DEPTH * 4) as i64], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut ids = Vec::new();
    for row in rows {
        let (id, base) = row?;
        if bases.contains(&base) {
            ids.push(id);
            if ids.len() == DEPTH {
                break;
            }
        }
    }
    Ok(ids)
}

/// The best pieces by meaning, best first: each stored vector of the bases' pieces compared where
/// SQLite holds it, nothing copied.
fn by_meaning(db: &Connection, model: &str, query: &[f32], bases: &[String]) -> Result<Vec<i64>, KbError> {
    if bases.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; bases.len()].join(", ");
    let mut statement = db.prepare(&format!(
        "SELECT p.id, v.vector FROM pieces p JOIN vectors v ON v.hash = p.hash AND v.model = ?1 WHERE p.base IN ({marks})"
    ))?;
    let params: Vec<&dyn rusqlite::ToSql> = std::iter::once(&model as &dyn rusqlite::ToSql)
        .chain(bases.iter().map(|b| b as &dyn rusqlite::ToSql))
        .collect();
    let mut rows = statement.query(params.as_slice())?;
    let mut scored = Vec::new();
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let stored = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        scored.push((dot_blob(query, stored), id));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok(scored.into_iter().take(DEPTH).map(|(_, id)| id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_is_a_phrase_and_any_of_them_counts() {
        assert_eq!(match_expression("Where is ERR_QUOTA_7731?"), "\"ERR_QUOTA_7731\"");
        assert_eq!(match_expression("say \"hi\" -- !!"), "\"say\" OR \"hi\"");
        assert_eq!(match_expression("what is it"), "\"what\" OR \"is\" OR \"it\"");
        assert_eq!(match_expression("  "), "");
    }
}
