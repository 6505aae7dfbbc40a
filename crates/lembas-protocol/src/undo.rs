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

/// A turn one can go back to, as a rewind lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnPoint {
    /// Its place: 1 for the first the person started since the last compaction.
    pub number: u32,
    /// The first line of its words.
    pub words: String,
    /// When it began (ms since the epoch); `None` in a session stored before lembas kept it.
    pub at_ms: Option<i64>,
    /// The submission that started it (over ACP, the prompt's `turnId`).
    pub submission: Option<String>,
    /// The project's files it changed (none: it changed none, or it never ended).
    pub files: Vec<String>,
}

/// The undo in one paragraph: `prompt` is the turn taken out of the conversation (`None`: the
/// conversation stood — the turn is behind a compaction), and `later` turns after it with it.
pub fn undo_said(prompt: Option<&str>, later: u32, files: &FilesBack) -> String {
    let mut said = match prompt {
        Some(prompt) => {
            let first = prompt.lines().next().unwrap_or_default();
            match later {
                0 => format!("Undone: \"{first}\" is out of the conversation."),
                1 => format!("Undone: \"{first}\" and the turn after it are out of the conversation."),
                n => format!("Undone: \"{first}\" and the {n} turns after it are out of the conversation."),
            }
        }
        None => "Undone: the files; the conversation stays as it was.".into(),
    };
    said.push_str(&files_said(files, later == 0));
    said
}

/// The turns one can go back to as lines a person reads: number, words, when (`when` writes a
/// time, where the front end has a clock to write it by), and the files each changed.
pub fn turns_said(turns: &[TurnPoint], when: impl Fn(i64) -> Option<String>) -> String {
    if turns.is_empty() {
        return "No turn of this session can be gone back to.".into();
    }
    let mut lines = Vec::new();
    for turn in turns {
        let at = turn.at_ms.and_then(&when).map(|w| format!("  ({w})")).unwrap_or_default();
        lines.push(format!("{:>3}  {}{at}", turn.number, turn.words));
        if !turn.files.is_empty() {
            lines.push(format!("     changed: {}", turn.files.join(", ")));
        }
    }
    lines.join("\n")
}

/// A fork in one paragraph: `prompt` is the turn the new session starts before.
pub fn fork_said(prompt: &str, files: &FilesBack) -> String {
    let first = prompt.lines().next().unwrap_or_default();
    let said = format!("Forked: a new session from before \"{first}\"; the session it came from is kept.");
    match &files.not_back {
        // Asked to leave the files, the fork says nothing of them.
        Some(why) if why == LEFT_AS_ASKED => said,
        _ => said + &files_said(files, false),
    }
}

/// Why the files were not taken back when only the conversation was asked to go back.
pub const LEFT_AS_ASKED: &str = "left as they are, as asked";

/// What came of the files, each sentence led by a space; `one`: of one turn.
fn files_said(files: &FilesBack, one: bool) -> String {
    let turns = if one { "the turn" } else { "the turns" };
    let mut said = String::new();
    if let Some(why) = &files.not_back {
        said.push_str(&format!(" Its files were not taken back: {why}."));
        return said;
    }
    if files.put_back.is_empty() && files.removed.is_empty() && files.kept.is_empty() {
        said.push_str(" No file was changed.");
    }
    if !files.put_back.is_empty() {
        said.push_str(&format!(" Put back: {}.", files.put_back.join(", ")));
    }
    if !files.removed.is_empty() {
        said.push_str(&format!(" Removed, as {turns} made them: {}.", files.removed.join(", ")));
    }
    if !files.kept.is_empty() {
        said.push_str(&format!(" Left as they are, changed again after {turns}: {}.", files.kept.join(", ")));
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
        let said = undo_said(Some("fix it\nplease"), 0, &files);
        assert!(said.starts_with("Undone: \"fix it\" is out of the conversation."), "{said}");
        assert!(said.contains("Put back: a.rs.") && said.contains("gen/x.rs") && said.contains("b.rs"), "{said}");
        assert_eq!(undo_said(None, 0, &FilesBack::default()).matches("No file").count(), 1);
        let left = FilesBack { not_back: Some(LEFT_AS_ASKED.into()), ..Default::default() };
        assert!(fork_said("x", &left).ends_with("is kept."));
        assert!(
            fork_said("x", &FilesBack { put_back: vec!["a.rs".into()], ..Default::default() })
                .ends_with("Put back: a.rs.")
        );
        let refused = FilesBack { not_back: Some("git is not installed".into()), ..files };
        let later = undo_said(Some("x"), 3, &FilesBack::default());
        assert!(later.starts_with("Undone: \"x\" and the 3 turns after it are out"), "{later}");
        assert!(undo_said(Some("x"), 0, &refused).ends_with("not taken back: git is not installed."));
    }
}
