//! `apply_patch`: the multi-file patch format models are trained on (`*** Begin Patch` …
//! `*** End Patch`), applied all or nothing.

use std::path::PathBuf;

use lembas_context::FileChange;

use crate::edit::{check_seen, read_text};
use crate::files::io_error;
use crate::{Args, ToolOutput, Workspace};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Add { path: String, lines: Vec<String> },
    Delete { path: String },
    Update { path: String, move_to: Option<String>, hunks: Vec<Hunk> },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Hunk {
    /// The line after `@@`, a place to search from (a function's signature, say).
    anchor: Option<String>,
    old: Vec<String>,
    new: Vec<String>,
}

/// A marker line (`*** …`), read as other agents' patch readers do: spaces around it forgiven.
fn marker(line: &str) -> Option<&str> {
    let t = line.trim();
    t.starts_with("*** ").then_some(t)
}

fn parse(patch: &str) -> Result<Vec<Op>, String> {
    let mut lines = patch.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).peekable();
    while lines.peek().is_some_and(|l| l.trim().is_empty()) {
        lines.next();
    }
    if lines.next().map(str::trim) != Some("*** Begin Patch") {
        return Err("The patch must start with `*** Begin Patch`.".to_owned());
    }
    let mut ops = Vec::new();
    let mut ended = false;
    while let Some(line) = lines.next() {
        let head = marker(line).unwrap_or(line);
        if head == "*** End Patch" {
            ended = true;
            break;
        }
        if let Some(path) = head.strip_prefix("*** Add File: ") {
            let mut body = Vec::new();
            while let Some(l) = lines.peek().filter(|l| marker(l).is_none()) {
                body.push(
                    l.strip_prefix('+')
                        .ok_or_else(|| format!("In Add File {path}: every line must start with +."))?
                        .to_owned(),
                );
                lines.next();
            }
            ops.push(Op::Add { path: path.trim().to_owned(), lines: body });
        } else if let Some(path) = head.strip_prefix("*** Delete File: ") {
            ops.push(Op::Delete { path: path.trim().to_owned() });
        } else if let Some(path) = head.strip_prefix("*** Update File: ") {
            let mut move_to = None;
            if let Some(to) = lines.peek().and_then(|l| marker(l)).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(to.trim().to_owned());
                lines.next();
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while let Some(l) = lines.peek().copied() {
                if marker(l).is_some_and(|m| m != "*** End of File") {
                    break;
                }
                lines.next();
                if marker(l) == Some("*** End of File") {
                    continue;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    hunks.push(Hunk { anchor: (!anchor.is_empty()).then(|| anchor.to_owned()), ..Hunk::default() });
                    continue;
                }
                if hunks.is_empty() {
                    hunks.push(Hunk::default());
                }
                let hunk = hunks.last_mut().expect("one hunk at least");
                match l.chars().next() {
                    Some('+') => hunk.new.push(l[1..].to_owned()),
                    Some('-') => hunk.old.push(l[1..].to_owned()),
                    Some(' ') => {
                        hunk.old.push(l[1..].to_owned());
                        hunk.new.push(l[1..].to_owned());
                    }
                    None => {
                        hunk.old.push(String::new());
                        hunk.new.push(String::new());
                    }
                    Some(_) => {
                        return Err(format!("In Update File {path}: a line must start with a space, - or +: {l:?}"));
                    }
                }
            }
            let path = path.trim().to_owned();
            // Nothing to change is no update: saying it succeeded would mislead the model.
            if move_to.is_none() && hunks.iter().all(|h| h.old == h.new) {
                return Err(format!(
                    "In Update File {path}: there is no change under it (no line starting with - or +). Nothing was changed."
                ));
            }
            ops.push(Op::Update { path, move_to, hunks });
        } else if !line.trim().is_empty() {
            return Err(format!("Unexpected line in the patch: {line:?}"));
        }
    }
    if !ended {
        return Err("The patch must end with `*** End Patch`.".to_owned());
    }
    if ops.is_empty() {
        return Err("The patch changes no file.".to_owned());
    }
    Ok(ops)
}

/// Where `old` occurs in `lines` at or after `from`: exactly, else ignoring trailing spaces,
/// else ignoring all surrounding spaces.
fn find(lines: &[String], old: &[String], from: usize) -> Option<usize> {
    if old.is_empty() {
        return Some(lines.len());
    }
    let fits = |cmp: &dyn Fn(&str, &str) -> bool| {
        (from..=lines.len().saturating_sub(old.len()))
            .find(|&i| old.iter().enumerate().all(|(k, o)| cmp(&lines[i + k], o)))
    };
    fits(&|a, b| a == b)
        .or_else(|| fits(&|a, b| a.trim_end() == b.trim_end()))
        .or_else(|| fits(&|a, b| a.trim() == b.trim()))
}

fn apply_hunks(text: &str, hunks: &[Hunk], path: &str) -> Result<String, String> {
    let trailing_newline = text.ends_with('\n') || text.is_empty();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut from = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        if let Some(anchor) = &hunk.anchor
            && let Some(at) = (from..lines.len()).find(|&i| lines[i].trim() == anchor.trim())
        {
            // Search from the anchor's line, or just after it when the hunk does not repeat it.
            from = at + usize::from(hunk.old.first().is_none_or(|o| o.trim() != anchor.trim()));
        }
        let at = find(&lines, &hunk.old, from).ok_or_else(|| {
            format!(
                "Hunk {} of {path} does not match the file: its context and - lines must be the file's current lines.",
                n + 1
            )
        })?;
        lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
        from = at + hunk.new.len();
    }
    let mut out = lines.join("\n");
    if trailing_newline && !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// The files a patch reaches, resolved (for ordering and permissions).
pub(crate) fn paths_in(ws: &Workspace, patch: &str) -> Vec<PathBuf> {
    let Ok(ops) = parse(patch) else { return Vec::new() };
    ops.iter()
        .flat_map(|op| match op {
            Op::Add { path, .. } | Op::Delete { path } => vec![ws.resolve(path)],
            Op::Update { path, move_to, .. } => std::iter::once(path).chain(move_to).map(|p| ws.resolve(p)).collect(),
        })
        .collect()
}

enum Planned {
    Write { path: PathBuf, content: String, before: Option<String> },
    Remove { path: PathBuf, before: String },
}

/// What a patch would change, worked out without writing: the writes to make and the changes
/// they are.
fn plan_patch(ws: &Workspace, args: &Args) -> Result<(Vec<Planned>, Vec<FileChange>), String> {
    let ops = parse(args.str("patch")?)?;
    // Work out every change first: nothing is written until all of them are known to apply.
    let mut planned = Vec::new();
    let mut changes = Vec::new();
    for op in &ops {
        match op {
            Op::Add { path: call, lines } => {
                let path = ws.resolve(call);
                if path.exists() {
                    return Err(format!("{} Nothing was changed.", ws.error("already_exists", &path)));
                }
                let mut content = lines.join("\n");
                content.push('\n');
                changes.push(FileChange::Created { path: call.clone(), after: content.clone() });
                planned.push(Planned::Write { path, content, before: None });
            }
            Op::Delete { path: call } => {
                let path = ws.resolve(call);
                let before = read_text(ws, &path).map_err(|e| format!("{e} Nothing was changed."))?;
                check_seen(ws, &path).map_err(|e| format!("{e} Nothing was changed."))?;
                changes.push(FileChange::Deleted { path: call.clone() });
                planned.push(Planned::Remove { path, before });
            }
            Op::Update { path: call, move_to, hunks } => {
                let path = ws.resolve(call);
                let before = read_text(ws, &path).map_err(|e| format!("{e} Nothing was changed."))?;
                check_seen(ws, &path).map_err(|e| format!("{e} Nothing was changed."))?;
                let after = apply_hunks(&before, hunks, &path.display().to_string())
                    .map_err(|e| format!("{e} Nothing was changed."))?;
                match move_to {
                    Some(to_call) => {
                        let to = ws.resolve(to_call);
                        if to.exists() {
                            return Err(format!("{} Nothing was changed.", ws.error("already_exists", &to)));
                        }
                        changes.push(FileChange::Changed {
                            path: to_call.clone(),
                            before: before.clone(),
                            after: after.clone(),
                        });
                        changes.push(FileChange::Deleted { path: call.clone() });
                        planned.push(Planned::Write { path: to, content: after, before: None });
                        planned.push(Planned::Remove { path, before });
                    }
                    None => {
                        changes.push(FileChange::Changed {
                            path: call.clone(),
                            before: before.clone(),
                            after: after.clone(),
                        });
                        planned.push(Planned::Write { path, content: after, before: Some(before) });
                    }
                }
            }
        }
    }
    Ok((planned, changes))
}

/// The changes a patch would make, nothing written.
pub(crate) fn patch_changes(ws: &Workspace, args: &Args) -> Result<Vec<FileChange>, String> {
    plan_patch(ws, args).map(|(_, changes)| changes)
}

pub(crate) fn apply_patch(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let (planned, changes) = plan_patch(ws, args)?;
    // Then write; if the disk fails part-way, put back what was already done.
    for (done, step) in planned.iter().enumerate() {
        let result = match step {
            Planned::Write { path, content, .. } => crate::edit::write_text(ws, path, content),
            Planned::Remove { path, .. } => {
                std::fs::remove_file(path).map_err(|e| io_error(ws, path, &e)).map(|()| ws.times.forget(path))
            }
        };
        if let Err(e) = result {
            for undo in planned[..done].iter().rev() {
                match undo {
                    Planned::Write { path, before: Some(before), .. } => std::fs::write(path, before).ok(),
                    Planned::Write { path, before: None, .. } => std::fs::remove_file(path).ok(),
                    Planned::Remove { path, before } => std::fs::write(path, before).ok(),
                };
            }
            return Err(format!("{e} The patch was undone: nothing was changed."));
        }
    }
    Ok(ToolOutput::Changes(changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_of_operation() {
        let ops = parse("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: b.rs\n*** Move to: c.rs\n@@ fn main() {\n-    old();\n+    new();\n*** Delete File: d.md\n*** End Patch\n").unwrap();
        assert_eq!(ops.len(), 3);
        assert!(
            matches!(&ops[1], Op::Update { move_to: Some(to), hunks, .. } if to == "c.rs" && hunks[0].anchor.as_deref() == Some("fn main() {"))
        );
    }

    #[test]
    fn markers_padded_with_spaces_are_markers() {
        let ops = parse("  *** Begin Patch\n  *** Update File: b.rs\n@@\n-old\n+new\n *** End Patch \n").unwrap();
        assert!(matches!(&ops[0], Op::Update { path, hunks, .. } if path == "b.rs" && hunks[0].new == ["new"]));
        let ops = parse("*** Begin Patch\n *** Add File: a.txt\n+hi\n   *** Delete File: d.md\n*** End Patch").unwrap();
        assert_eq!(ops.len(), 2);
    }

    #[test]
    fn an_update_with_no_change_under_it_is_refused() {
        for patch in [
            "*** Begin Patch\n*** Update File: b.rs\n*** End Patch",
            "*** Begin Patch\n*** Update File: b.rs\n@@ fn main\n keep\n*** End Patch",
        ] {
            assert!(parse(patch).unwrap_err().contains("no change under it"), "{patch}");
        }
        // A move alone is a change.
        assert!(parse("*** Begin Patch\n*** Update File: b.rs\n*** Move to: c.rs\n*** End Patch").is_ok());
    }

    #[test]
    fn malformed_patches_say_what_is_wrong() {
        assert!(parse("nope").unwrap_err().contains("Begin Patch"));
        assert!(parse("*** Begin Patch\n*** Add File: a\n+x\n").unwrap_err().contains("End Patch"));
        assert!(parse("*** Begin Patch\n*** Add File: a\nx\n*** End Patch").unwrap_err().contains("+"));
    }

    #[test]
    fn hunks_apply_in_order_and_tolerate_trailing_spaces() {
        let text = "fn a() {\n    one();\n}\nfn b() {\n    one();\n}\n";
        let hunks = vec![Hunk {
            anchor: Some("fn b() {".into()),
            old: vec!["    one();  ".into()],
            new: vec!["    two();".into()],
        }];
        assert_eq!(apply_hunks(text, &hunks, "x").unwrap(), "fn a() {\n    one();\n}\nfn b() {\n    two();\n}\n");
    }
}
