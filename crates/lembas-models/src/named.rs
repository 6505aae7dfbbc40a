//! Whether the person named a model (`subagents.md` §2): a subagent runs on another model than
//! the session's only when the person's own words name it, as a whole word, without case.

use crate::ModelInfo;

/// A character that may not come right before a name: it would make the name part of a longer
/// word, path or version.
fn joins_before(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.' | ':')
}

/// Whether `name` occurs in `text` as a whole word, letters compared without case; a run of
/// white space in the name matches any run of white space.
pub fn names(text: &str, name: &str) -> bool {
    let parts: Vec<Vec<char>> =
        name.split_whitespace().map(|p| p.chars().flat_map(char::to_lowercase).collect()).collect();
    if parts.is_empty() {
        return false;
    }
    let text: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    (0..text.len()).any(|start| {
        if start > 0 && joins_before(text[start - 1]) {
            return false;
        }
        let Some(end) = match_at(&text, start, &parts) else { return false };
        match text.get(end) {
            None => true,
            Some(&c) if c.is_alphanumeric() || matches!(c, '_' | '-' | '/') => false,
            Some('.' | ':') => !text.get(end + 1).is_some_and(|c| c.is_alphanumeric()),
            Some(_) => true,
        }
    })
}

/// Where a match of the name's parts starting at `start` ends, if there is one.
fn match_at(text: &[char], start: usize, parts: &[Vec<char>]) -> Option<usize> {
    let mut at = start;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let spaces = text[at..].iter().take_while(|c| c.is_whitespace()).count();
            if spaces == 0 {
                return None;
            }
            at += spaces;
        }
        if !text[at..].starts_with(part) {
            return None;
        }
        at += part.len();
    }
    Some(at)
}

/// Whether the person's words name this model: its served id or its display name.
pub fn names_model(text: &str, model: &ModelInfo) -> bool {
    names(text, &model.id) || model.name.as_deref().is_some_and(|n| names(text, n))
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_name_counts_only_as_a_whole_word() {
        assert!(names("use coder-30b for the tests", "coder-30b"));
        assert!(names("Use CODER-30B.", "coder-30b"), "a full stop ends a sentence");
        assert!(names("try coder-30b: it is quick", "coder-30b"));
        assert!(!names("use coder-30b-instruct", "coder-30b"));
        assert!(!names("use coder-30b.2 now", "coder-30b"), "a version goes on after the dot");
        assert!(!names("see models/coder-30b", "coder-30b"), "part of a path");
        assert!(!names("xcoder-30b", "coder-30b"));
        assert!(!names("", "coder-30b"));
    }

    #[test]
    fn white_space_in_a_display_name_matches_any_run() {
        assert!(names("ask Qwen   Coder\nto review", "Qwen Coder"));
        assert!(!names("ask QwenCoder", "Qwen Coder"));
    }
}
