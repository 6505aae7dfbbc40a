//! What an undo did, in the words every front end shows.

use serde::{Deserialize, Serialize};

/// What an undo did to the project's files, by path as the person reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesBack {
    /// Changed or deleted by the turn, put back as they were.
    pub put_back: Vec<String>,
    /// Made by the turn, removed.
    pub removed: Vec<String>,
    /// Changed by the turn and changed again since (by the person): left as they are.
    pub kept: Vec<String>,
    /// Why the files could not be taken back, when they could not.
    pub not_back: Option<String>,
}

/// The undo in one paragraph: `prompt` is the turn taken out of the conversation (`None`: the
/// conversation stood — the turn is behind a compaction).
pub fn undo_said(prompt: Option<&str>, files: &FilesBack) -> String {
    let mut said = match prompt {
        Some(prompt) => {
            format!("Undone: \"{}\" is out of the conversation.", prompt.lines().next().unwrap_or_default())
        }
        None => "Undone: the files; the conversation stays as it was.".into(),
    };
    if let Some(why) = &files.not_back {
        said.push_str(&format!(" Its files were not taken back: {why}."));
        return said;
    }
    if files.put_back.is_empty() && files.removed.is_empty() && files.kept.is_empty() {
        said.push_str(" It changed no file.");
    }
    if !files.put_back.is_empty() {
        said.push_str(&format!(" Put back: {}.", files.put_back.join(", ")));
    }
    if !files.removed.is_empty() {
        said.push_str(&format!(" Removed, as the turn made them: {}.", files.removed.join(", ")));
    }
    if !files.kept.is_empty() {
        said.push_str(&format!(" Left as they are, changed again after the turn: {}.", files.kept.join(", ")));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undo_says_each_kind_of_file_once() {
        let files = FilesBack {
            put_back: vec!["a.rs".into()],
            removed: vec!["gen/x.rs".into()],
            kept: vec!["b.rs".into()],
            not_back: None,
        };
        let said = undo_said(Some("fix it\nplease"), &files);
        assert!(said.starts_with("Undone: \"fix it\" is out of the conversation."), "{said}");
        assert!(said.contains("Put back: a.rs.") && said.contains("gen/x.rs") && said.contains("b.rs"), "{said}");
        assert_eq!(undo_said(None, &FilesBack::default()).matches("no file").count(), 1);
        let refused = FilesBack { not_back: Some("git is not installed".into()), ..files };
        assert!(undo_said(Some("x"), &refused).ends_with("not taken back: git is not installed."));
    }
}
