//! The notes' tools as the model calls them: `note_view`, `note_manage`, `notes_search` — their
//! arguments read, the notes' answer said as text a model reads.

use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::notes::{Change, NoteHit, NoteInfo, Notes, Scope};

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn scope(args: &Value) -> Result<Option<Scope>, ToolOutput> {
    text(args, "scope").filter(|s| !s.is_empty()).map(Scope::parse).transpose().map_err(ToolOutput::Error)
}

/// `note_view`: a note, or the list of them.
pub fn note_view(notes: &Notes, args: &Value) -> ToolOutput {
    let scope = match scope(args) {
        Ok(scope) => scope,
        Err(e) => return e,
    };
    match text(args, "name").map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => match notes.read(name, scope) {
            Ok((note, body)) => ToolOutput::Text(format!(
                "[note {} ({}) · {}]\n{body}",
                note.name,
                note.scope.as_str(),
                when(note.changed_ms)
            )),
            Err(e) => ToolOutput::Error(e),
        },
        None => ToolOutput::Text(listing(&notes.list(scope))),
    }
}

/// `note_manage`: makes, changes or deletes a note.
pub fn note_manage(notes: &Notes, args: &Value) -> ToolOutput {
    let scope = match scope(args) {
        Ok(scope) => scope.unwrap_or(Scope::Project),
        Err(e) => return e,
    };
    let Some(name) = text(args, "name") else { return ToolOutput::Error("`name` is required.".into()) };
    let content = text(args, "content");
    let change = match text(args, "action").unwrap_or_default() {
        "create" => content.map(Change::Create),
        "write" => content.map(Change::Write),
        "append" => content.map(Change::Append),
        "edit" => match (text(args, "old"), text(args, "new")) {
            (Some(old), Some(new)) => Some(Change::Edit { old, new }),
            _ => return ToolOutput::Error("edit needs `old` (the exact text) and `new`.".into()),
        },
        "delete" => Some(Change::Delete),
        other => return ToolOutput::Error(format!("`action` {other:?} is not create, write, append, edit or delete.")),
    };
    let Some(change) = change else { return ToolOutput::Error("`content` is required for this action.".into()) };
    notes.change(name, scope, change).map_or_else(ToolOutput::Error, ToolOutput::Text)
}

/// `notes_search`: the passages that hold the most of the words.
pub fn notes_search(notes: &Notes, args: &Value) -> ToolOutput {
    let scope = match scope(args) {
        Ok(scope) => scope,
        Err(e) => return e,
    };
    let Some(query) = text(args, "query").map(str::trim).filter(|q| !q.is_empty()) else {
        return ToolOutput::Error("`query` is required: the words to look for.".into());
    };
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5).clamp(1, 20) as usize;
    ToolOutput::Text(found(query, &notes.search(query, scope, limit)))
}

/// Notes listed, one a line: name, title, scope, size, when changed.
pub fn listing(notes: &[NoteInfo]) -> String {
    if notes.is_empty() {
        return "There are no notes yet.".into();
    }
    let lines: Vec<String> = notes
        .iter()
        .map(|n| {
            format!("- {} — {} ({}, {} bytes, {})", n.name, n.title, n.scope.as_str(), n.bytes, when(n.changed_ms))
        })
        .collect();
    lines.join("\n")
}

/// Passages found, each under its note and lines.
pub fn found(query: &str, hits: &[NoteHit]) -> String {
    if hits.is_empty() {
        return format!("No note holds {query:?}.");
    }
    let said: Vec<String> = hits
        .iter()
        .map(|h| format!("{} ({}) lines {}-{}:\n{}", h.name, h.scope.as_str(), h.from, h.to, h.text))
        .collect();
    said.join("\n\n")
}

/// A time as a date and minute, in UTC.
fn when(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(ms as i64)
        .map_or_else(String::new, |t| t.format("%Y-%m-%d %H:%M UTC").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tools_read_their_arguments_and_say_what_happened() {
        let dir = tempfile::tempdir().unwrap();
        let notes = Notes { project: Some(dir.path().join("p")), personal: dir.path().join("me") };
        let said = |out: ToolOutput| match out {
            ToolOutput::Text(t) => t,
            ToolOutput::Error(e) => format!("error: {e}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(said(note_view(&notes, &json!({}))), "There are no notes yet.");
        let made = note_manage(&notes, &json!({"action": "create", "name": "build", "content": "# Build\n`make`"}));
        assert_eq!(said(made), "Created the project note build (2 lines).");
        assert!(said(note_manage(&notes, &json!({"action": "create", "name": "x"}))).starts_with("error: `content`"));
        assert!(said(note_manage(&notes, &json!({"action": "zap", "name": "x"}))).contains("is not create"));
        assert!(
            said(note_manage(&notes, &json!({"action": "write", "name": "x", "content": "y", "scope": "team"})))
                .contains("not project or personal")
        );
        let shown = said(note_view(&notes, &json!({"name": "build"})));
        assert!(shown.starts_with("[note build (project) · ") && shown.ends_with("UTC]\n# Build\n`make`\n"), "{shown}");
        assert!(said(note_view(&notes, &json!({}))).starts_with("- build — Build (project, 15 bytes, "));
        assert_eq!(
            said(notes_search(&notes, &json!({"query": "make"}))),
            "build (project) lines 1-2:\n# Build\n`make`"
        );
        assert_eq!(when(0), "1970-01-01 00:00 UTC");
        assert_eq!(when(1_796_342_400_000), "2026-12-04 00:00 UTC");
    }
}
