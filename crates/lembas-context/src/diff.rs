//! Changes to files answer with their diff (`context.md` §5): the hunks of a unified diff with
//! three lines of context, under a bracket naming the path as the call gave it and the new
//! content's hash. A new file answers with its length; a deleted one says so.

use lembas_spec::{loop_spec, render};
use similar::TextDiff;

use crate::{Inserted, ResultId, cap, count_lines, sha256_hex, short_sha};

/// One file's change, as a tool made it. `path` is the path as the call gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    Created { path: String, after: String },
    Changed { path: String, before: String, after: String },
    Deleted { path: String },
}

/// The hunks of a unified diff from `before` to `after`, three lines of context, no file header.
pub fn unified_hunks(before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&hunk.to_string());
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// The result of a change to one file, under its own id. What is stored is the change in full:
/// its bracket without the id, and the diff before any cap.
pub fn change_result(id: ResultId, change: &FileChange) -> Inserted {
    Inserted { text: describe(Some(id), change), stored: describe(None, change) }
}

/// The result of a patch over several files: the id alone, then each file in its own bracket
/// with its change, in the patch's order.
pub fn patch_result(id: ResultId, changes: &[FileChange]) -> Inserted {
    let header = render(&loop_spec().context.header, &[("id", &id.to_string())]);
    let stored: Vec<String> = changes.iter().map(|change| describe(None, change)).collect();
    let stored = stored.join("\n");
    Inserted { text: cap_after_first_line(&format!("{header}\n{stored}"), id), stored }
}

/// A bracket naming the change (with the id when given), then what changed.
fn describe(id: Option<ResultId>, change: &FileChange) -> String {
    let ctx = &loop_spec().context;
    let open = |rest: String| match id {
        Some(id) => format!("[{id} {rest}]"),
        None => format!("[{rest}]"),
    };
    match change {
        FileChange::Created { path, after } => {
            let sha = sha256_hex(after.as_bytes());
            let created = render(&ctx.created, &[("n", &count_lines(after).to_string())]);
            format!("{} {created}", open(format!("{path} sha {}", short_sha(&sha))))
        }
        FileChange::Changed { path, before, after } => {
            let sha = sha256_hex(after.as_bytes());
            let head = open(format!("{path} sha {}", short_sha(&sha)));
            let hunks = unified_hunks(before, after);
            match id {
                // A single file's diff is capped on its own, its bracket kept as the first line.
                Some(id) if !hunks.is_empty() => format!("{head}\n{}", cap(&hunks, id, &ctx.cap)),
                _ if hunks.is_empty() => head,
                _ => format!("{head}\n{hunks}"),
            }
        }
        FileChange::Deleted { path } => open(format!("{path} deleted")),
    }
}

/// Caps a multi-line result while keeping its first line (the id bracket) whole.
fn cap_after_first_line(text: &str, id: ResultId) -> String {
    match text.split_once('\n') {
        Some((first, rest)) => format!("{first}\n{}", cap(rest, id, &loop_spec().context.cap)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_answers_with_hunks_only() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let out = change_result(
            ResultId(0x22),
            &FileChange::Changed { path: "x.txt".into(), before: before.into(), after: after.into() },
        );
        assert!(
            out.stored.starts_with("[x.txt sha ")
                && out.stored.ends_with("]\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h")
        );
        let out = out.text;
        let sha = sha256_hex(after.as_bytes());
        assert_eq!(out, format!("[#0022 x.txt sha {}]\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h", &sha[..8]));
    }

    #[test]
    fn created_and_deleted() {
        let created = change_result(ResultId(1), &FileChange::Created { path: "n.md".into(), after: "x\ny\n".into() });
        assert!(created.stored.ends_with("] Created, 2 lines."));
        let created = created.text;
        assert!(created.starts_with("[#0001 n.md sha ") && created.ends_with("] Created, 2 lines."));
        assert_eq!(
            change_result(ResultId(2), &FileChange::Deleted { path: "old.md".into() }).text,
            "[#0002 old.md deleted]"
        );
    }

    #[test]
    fn a_patch_lists_each_file_in_order() {
        let out = patch_result(
            ResultId(0x25),
            &[
                FileChange::Changed { path: "a.ts".into(), before: "1\n2\n".into(), after: "1\n3\n".into() },
                FileChange::Created { path: "new.md".into(), after: "x\n".into() },
                FileChange::Deleted { path: "old.md".into() },
            ],
        );
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(lines[0], "[#0025]");
        assert!(lines[1].starts_with("[a.ts sha "));
        assert_eq!(lines[2], "@@ -1,2 +1,2 @@");
        assert!(lines[6].starts_with("[new.md sha ") && lines[6].ends_with("Created, 1 lines."));
        assert_eq!(lines[7], "[old.md deleted]");
    }
}
