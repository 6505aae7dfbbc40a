//! What an approval card shows before the person allows a call: what the call would do, and
//! what "for this session" would allow from then on.

use lembas_context::{FileChange, unified_hunks};
use lembas_tools::Workspace;
use serde_json::Value;

/// Lines of a new file's content a preview carries (the card folds what it cannot show).
const PREVIEW_LINES: usize = 400;

/// What the call would do: a change to files as its diff (worked out as the tool would, nothing
/// written), a command in full; `None` when the call's title says it all.
pub(crate) fn call_preview(ws: &Workspace, name: &str, args: &Value) -> Option<String> {
    if name == "bash" {
        return args.get("command").and_then(Value::as_str).map(str::to_owned);
    }
    let changes = match lembas_tools::preview_changes(ws, name, args)? {
        Ok(changes) => changes,
        Err(why) => return Some(format!("This call would fail: {why}")),
    };
    let described: Vec<String> = changes.iter().map(describe).collect();
    Some(described.join("\n"))
}

fn describe(change: &FileChange) -> String {
    match change {
        FileChange::Changed { path, before, after } => {
            let hunks = unified_hunks(before, after);
            if hunks.is_empty() { format!("{path}: no change") } else { format!("{path}\n{hunks}") }
        }
        FileChange::Created { path, after } => {
            let lines: Vec<&str> = after.lines().collect();
            let mut shown: Vec<String> = lines.iter().take(PREVIEW_LINES).map(|l| format!("+{l}")).collect();
            if lines.len() > PREVIEW_LINES {
                shown.push(format!("… {} more lines", lines.len() - PREVIEW_LINES));
            }
            format!("{path} (new file, {} lines)\n{}", lines.len(), shown.join("\n"))
        }
        FileChange::Deleted { path } => format!("{path}: deleted"),
    }
}

/// What "for this session" allows from the answer on, in words: each part of a command by its
/// arity-scoped pattern (the rule it becomes), any other tool as every call of it.
pub(crate) fn session_scope(name: &str, command: Option<&str>) -> String {
    match command {
        Some(line) => {
            let patterns: Vec<String> = lembas_permissions::command::split(line)
                .iter()
                .map(|part| format!("`{}`", lembas_permissions::always_pattern(&part.argv)))
                .collect();
            format!("commands matching {}", patterns.join(", "))
        }
        None => format!("every {name} call"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_answer_is_said_as_the_rule_it_becomes() {
        assert_eq!(
            session_scope("bash", Some("git commit -m x && ls -la")),
            "commands matching `git commit *`, `ls *`"
        );
        assert_eq!(session_scope("webfetch", None), "every webfetch call");
    }
}
