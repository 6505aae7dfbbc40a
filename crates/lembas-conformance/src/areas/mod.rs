//! One runner per conformance area.

mod context;
mod fs;
mod permissions;
mod prefix;
mod rules;
mod team;

use serde_json::Value;

use crate::Runner;

/// Every area lembas runs, by name.
pub(crate) const ALL: &[(&str, Runner)] = &[
    ("paths", rules::paths),
    ("context", context::run),
    ("progress", rules::progress),
    ("levels", rules::levels),
    ("silent", rules::silent),
    ("chunk_tokens", rules::chunk_tokens),
    ("instructions", fs::instructions),
    ("fs_access", fs::fs_access),
    ("reasoning", rules::reasoning),
    ("scheduled", rules::scheduled),
    ("delegation", permissions::delegation),
    ("monitor", permissions::monitor),
    ("prefix", prefix::run),
    ("subagent_model", rules::subagent_model),
    ("team", team::run),
];

/// A case's string field.
pub(crate) fn text<'a>(case: &'a Value, key: &str) -> Result<&'a str, String> {
    case.get(key).and_then(Value::as_str).ok_or_else(|| format!("the case has no string {key:?}"))
}

/// A case's optional non-negative integer field.
pub(crate) fn number(case: &Value, key: &str) -> Result<Option<u64>, String> {
    match case.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("{key:?} is not a whole number")),
    }
}

/// An unknown `op` (or `kind`) in a known area: said, never guessed at.
pub(crate) fn unknown_op(op: &str) -> String {
    format!("no rule for op {op:?} in this area")
}
