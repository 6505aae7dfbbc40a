//! The device's tools on files, one entry each: the paths a call reaches (what permissions judge
//! and what calls of one step compare), what it would change (what an approval card shows before
//! the person allows it), and what it does. Adding such a tool is its functions and one line in
//! [`FILE_TOOLS`]; nothing else dispatches on these names.

use std::path::PathBuf;

use lembas_context::FileChange;

use crate::{Args, ToolOutput, Workspace, edit, files, patch, search};

/// What a tool would change: the files, each before and after, worked out without writing.
type Preview = fn(&Workspace, &Args) -> Result<Vec<FileChange>, String>;

/// One of the device's tools on files.
pub struct FileTool {
    pub name: &'static str,
    /// The paths a call reaches, resolved against the workspace.
    paths: fn(&Workspace, &Args) -> Vec<PathBuf>,
    /// `None`: it changes no file.
    preview: Option<Preview>,
    run: fn(&Workspace, &Args) -> Result<ToolOutput, String>,
}

impl std::fmt::Debug for FileTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTool").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Every file tool.
pub const FILE_TOOLS: &[FileTool] = &[
    FileTool { name: "read", paths: the_path, preview: None, run: files::read },
    FileTool {
        name: "write",
        paths: the_path,
        preview: Some(|ws, a| one(edit::write_change(ws, a))),
        run: edit::write,
    },
    FileTool { name: "edit", paths: the_path, preview: Some(|ws, a| one(edit::edit_change(ws, a))), run: edit::edit },
    FileTool {
        name: "multiedit",
        paths: the_path,
        preview: Some(|ws, a| one(edit::multiedit_change(ws, a))),
        run: edit::multiedit,
    },
    FileTool {
        name: "apply_patch",
        paths: |ws, a| a.str("patch").map(|p| patch::paths_in(ws, p)).unwrap_or_default(),
        preview: Some(patch::patch_changes),
        run: patch::apply_patch,
    },
    FileTool { name: "glob", paths: the_path, preview: None, run: search::glob },
    FileTool { name: "grep", paths: the_path, preview: None, run: search::grep },
    FileTool { name: "list", paths: the_path, preview: None, run: files::list },
    FileTool { name: "view_image", paths: the_path, preview: None, run: files::view_image },
];

/// The file tool called `name`.
pub fn file_tool(name: &str) -> Option<&'static FileTool> {
    FILE_TOOLS.iter().find(|t| t.name == name)
}

impl FileTool {
    pub fn paths(&self, ws: &Workspace, args: &serde_json::Value) -> Vec<PathBuf> {
        (self.paths)(ws, &Args(args))
    }

    /// What the call would change; `None` for a tool that changes no file.
    pub fn preview(&self, ws: &Workspace, args: &serde_json::Value) -> Option<Result<Vec<FileChange>, String>> {
        self.preview.map(|preview| preview(ws, &Args(args)))
    }

    pub fn run(&self, ws: &Workspace, args: &serde_json::Value) -> ToolOutput {
        (self.run)(ws, &Args(args)).unwrap_or_else(ToolOutput::Error)
    }
}

/// The one `path` argument, resolved (none given: none reached).
pub(crate) fn the_path(ws: &Workspace, args: &Args) -> Vec<PathBuf> {
    args.opt_str("path").ok().flatten().map(|p| vec![ws.resolve(p)]).unwrap_or_default()
}

fn one(change: Result<(PathBuf, FileChange), String>) -> Result<Vec<FileChange>, String> {
    change.map(|(_, change)| vec![change])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_tool_of_the_spec_has_an_entry_and_only_those_that_change_files_preview() {
        for tool in FILE_TOOLS {
            let def = lembas_spec::tool(tool.name).unwrap_or_else(|| panic!("{} is not a spec tool", tool.name));
            assert_eq!(tool.preview.is_some(), def.changes_files(), "{}", tool.name);
        }
    }
}
