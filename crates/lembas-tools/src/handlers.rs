//! The device's tools on files, one entry each: the paths a call reaches (what permissions judge
//! and what calls of one step compare), what it would change (what an approval card shows before
//! the person allows it), and what it does. The engine's registry of tool handlers runs each
//! through its own static here; [`FILE_TOOLS`] lists them for this crate's own look-up by name.

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

pub static READ: FileTool = FileTool { name: "read", paths: the_path, preview: None, run: files::read };
pub static WRITE: FileTool = FileTool {
    name: "write",
    paths: the_path,
    preview: Some(|ws, a| one(edit::write_change(ws, a))),
    run: edit::write,
};
pub static EDIT: FileTool =
    FileTool { name: "edit", paths: the_path, preview: Some(|ws, a| one(edit::edit_change(ws, a))), run: edit::edit };
pub static MULTIEDIT: FileTool = FileTool {
    name: "multiedit",
    paths: the_path,
    preview: Some(|ws, a| one(edit::multiedit_change(ws, a))),
    run: edit::multiedit,
};
pub static APPLY_PATCH: FileTool = FileTool {
    name: "apply_patch",
    paths: |ws, a| a.str("patch").map(|p| patch::paths_in(ws, p)).unwrap_or_default(),
    preview: Some(patch::patch_changes),
    run: patch::apply_patch,
};
pub static GLOB: FileTool = FileTool { name: "glob", paths: the_path, preview: None, run: search::glob };
pub static GREP: FileTool = FileTool { name: "grep", paths: the_path, preview: None, run: search::grep };
pub static LIST: FileTool = FileTool { name: "list", paths: the_path, preview: None, run: files::list };
pub static VIEW_IMAGE: FileTool =
    FileTool { name: "view_image", paths: the_path, preview: None, run: files::view_image };

/// Every file tool.
pub static FILE_TOOLS: &[&FileTool] =
    &[&READ, &WRITE, &EDIT, &MULTIEDIT, &APPLY_PATCH, &GLOB, &GREP, &LIST, &VIEW_IMAGE];

/// The file tool called `name`.
pub fn file_tool(name: &str) -> Option<&'static FileTool> {
    FILE_TOOLS.iter().copied().find(|t| t.name == name)
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
