//! `write`, `edit` and `multiedit`: changes to one file, refused on a file this session has not
//! seen or that changed since, and answered with the change.

use std::path::Path;

use lembas_context::FileChange;
use serde_json::Value;

use crate::files::io_error;
use crate::{Args, ToolOutput, Workspace};

/// Refuses a change to an existing file this session has not read, or that changed since.
pub(crate) fn check_seen(ws: &Workspace, path: &Path) -> Result<(), String> {
    match ws.times.unchanged(path) {
        None => Err(ws.error("not_read", path)),
        Some(false) => Err(ws.error("changed", path)),
        Some(true) => Ok(()),
    }
}

pub(crate) fn read_text(ws: &Workspace, path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(ws, path, &e))?;
    if meta.is_dir() {
        return Err(ws.error("is_a_directory", path));
    }
    if let Some(buffer) = ws.read_text(path) {
        return buffer;
    }
    let bytes = std::fs::read(path).map_err(|e| io_error(ws, path, &e))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text: it cannot be edited as text.", path.display()))
}

pub(crate) fn write_text(ws: &Workspace, path: &Path, content: &str) -> Result<(), String> {
    if let Some(written) = ws.editor.as_ref().and_then(|e| e.write(path, content)) {
        written?;
        ws.times.saw(path);
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(ws, parent, &e))?;
    }
    std::fs::write(path, content).map_err(|e| io_error(ws, path, &e))?;
    ws.times.saw(path);
    Ok(())
}

/// What `write` would change, worked out without writing: the file, its change.
pub(crate) fn write_change(ws: &Workspace, args: &Args) -> Result<(std::path::PathBuf, FileChange), String> {
    let call_path = args.str("path")?;
    let content = args.str("content")?;
    let path = ws.resolve(call_path);
    let change = match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => return Err(ws.error("is_a_directory", &path)),
        Ok(_) => {
            check_seen(ws, &path)?;
            let before = read_text(ws, &path)?;
            FileChange::Changed { path: call_path.to_owned(), before, after: content.to_owned() }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            FileChange::Created { path: call_path.to_owned(), after: content.to_owned() }
        }
        Err(e) => return Err(io_error(ws, &path, &e)),
    };
    Ok((path, change))
}

pub(crate) fn write(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let (path, change) = write_change(ws, args)?;
    write_text(ws, &path, after_of(&change))?;
    Ok(ToolOutput::Changes(vec![change]))
}

/// The content a change leaves.
fn after_of(change: &FileChange) -> &str {
    match change {
        FileChange::Created { after, .. } | FileChange::Changed { after, .. } => after,
        FileChange::Deleted { .. } => "",
    }
}

/// One replacement in `text`; the error says what to fix.
pub(crate) fn replace(text: &str, old: &str, new: &str, all: bool, path: &Path) -> Result<String, String> {
    if old.is_empty() {
        return Err("`old_string` is empty: give the exact text to replace (use write for a new file).".to_owned());
    }
    if old == new {
        return Err("`old_string` and `new_string` are the same: there is nothing to change.".to_owned());
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(format!(
            "`old_string` was not found in {}. It must match the file exactly, whitespace and indentation included; read the file again if unsure.",
            path.display()
        )),
        1 => Ok(text.replacen(old, new, 1)),
        _ if all => Ok(text.replace(old, new)),
        n => Err(format!(
            "`old_string` occurs {n} times in {}: include more surrounding lines to make it unique, or set replace_all.",
            path.display()
        )),
    }
}

/// What `edit` would change, worked out without writing.
pub(crate) fn edit_change(ws: &Workspace, args: &Args) -> Result<(std::path::PathBuf, FileChange), String> {
    let call_path = args.str("path")?;
    let path = ws.resolve(call_path);
    let before = read_text(ws, &path)?;
    check_seen(ws, &path)?;
    let after = replace(&before, args.str("old_string")?, args.str("new_string")?, args.bool("replace_all")?, &path)?;
    Ok((path, FileChange::Changed { path: call_path.to_owned(), before, after }))
}

pub(crate) fn edit(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let (path, change) = edit_change(ws, args)?;
    write_text(ws, &path, after_of(&change))?;
    Ok(ToolOutput::Changes(vec![change]))
}

/// What `multiedit` would change, worked out without writing: every edit or none.
pub(crate) fn multiedit_change(ws: &Workspace, args: &Args) -> Result<(std::path::PathBuf, FileChange), String> {
    let call_path = args.str("path")?;
    let path = ws.resolve(call_path);
    let edits = match args.0.get("edits") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        _ => return Err("`edits` must be a list of at least one edit.".to_owned()),
    };
    let before = read_text(ws, &path)?;
    check_seen(ws, &path)?;
    let mut text = before.clone();
    for (n, e) in edits.iter().enumerate() {
        let a = Args(e);
        text = replace(&text, a.str("old_string")?, a.str("new_string")?, a.bool("replace_all")?, &path)
            .map_err(|why| format!("Edit {} of {}: {why} No edit was applied.", n + 1, edits.len()))?;
    }
    Ok((path, FileChange::Changed { path: call_path.to_owned(), before, after: text }))
}

pub(crate) fn multiedit(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let (path, change) = multiedit_change(ws, args)?;
    write_text(ws, &path, after_of(&change))?;
    Ok(ToolOutput::Changes(vec![change]))
}
