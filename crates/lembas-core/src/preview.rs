//! What an approval card shows before the person allows a call: what the call would do, and
//! what "for this session" would allow from then on.

use lembas_context::{FileChange, unified_hunks};
use lembas_tools::Workspace;
use serde_json::Value;

/// Lines of a new file's content a preview carries (the card folds what it cannot show).
const PREVIEW_LINES: usize = 400;

/// What the call would do: a change to files as its diff (worked out as the tool would, nothing
/// written), a command in full; `None` when the call's title says it all. `Err` with the tool's
/// own error when the call would fail: nothing to ask the person about.
pub(crate) fn call_preview(ws: &Workspace, name: &str, args: &Value) -> Result<Option<String>, String> {
    let tool = crate::handlers::handler(name);
    if let Some(command) = tool.command(args) {
        return Ok(Some(command.to_owned()));
    }
    let Some(changes) = tool.preview(ws, args) else { return Ok(None) };
    let described: Vec<String> = changes?.iter().map(describe).collect();
    Ok(Some(described.join("\n")))
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

/// The rules "for this session" adds: each part of a command by its arity-scoped pattern, a
/// fetch by its URL's host, any other tool as every call of it. What the card says and what the
/// answer grants are both these.
pub(crate) fn session_grants(name: &str, command: Option<&str>, url: Option<&str>) -> Vec<(String, Option<String>)> {
    if let Some(target) = url.and_then(|u| lembas_permissions::network::parse(u).ok()) {
        return vec![(name.to_owned(), Some(target.host()))];
    }
    match command {
        Some(line) => lembas_permissions::command::split(line)
            .iter()
            .map(|part| (name.to_owned(), Some(lembas_permissions::always_pattern(&part.argv))))
            .collect(),
        None => vec![(name.to_owned(), None)],
    }
}

/// Those rules in words, for the card.
pub(crate) fn session_scope(grants: &[(String, Option<String>)]) -> String {
    match grants {
        [(name, None)] => format!("every {name} call"),
        [(name, Some(host))] if lembas_spec::tool(name).is_some_and(|t| t.reaches_the_web()) => {
            format!("{name} calls to {host}")
        }
        _ => {
            let patterns: Vec<String> =
                grants.iter().filter_map(|(_, pattern)| pattern.as_ref()).map(|p| format!("`{p}`")).collect();
            format!("commands matching {}", patterns.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_answer_is_said_as_the_rule_it_becomes() {
        let scope = |name: &str, command: Option<&str>| session_scope(&session_grants(name, command, None));
        assert_eq!(scope("bash", Some("git commit -m x && ls -la")), "commands matching `git commit *`, `ls *`");
        assert_eq!(scope("webfetch", None), "every webfetch call");
        let fetch = session_grants("web_fetch", None, Some("https://Docs.rs/serde/latest"));
        assert_eq!(fetch, [("web_fetch".to_owned(), Some("docs.rs".to_owned()))]);
        assert_eq!(session_scope(&fetch), "web_fetch calls to docs.rs");
        // What the card says is what the answer grants.
        assert_eq!(
            session_grants("bash", Some("git commit -m x && ls -la"), None),
            [("bash".to_owned(), Some("git commit *".to_owned())), ("bash".to_owned(), Some("ls *".to_owned()))]
        );
    }
}
