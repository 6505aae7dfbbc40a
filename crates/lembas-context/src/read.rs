//! The read tool's window: numbered lines from an offset, and the note when lines remain.

use lembas_spec::{loop_spec, render};

/// How many lines a read (and a recall) shows when the call gives no limit (`context.md` §3).
pub const WINDOW_LINES: usize = 2000;

/// A line longer than this many characters is shown cut, saying how much is left out (a
/// minified file is one line).
pub const LINE_MAX_CHARS: usize = 2000;

/// A window stops before the line that would take it past this many characters; the note then
/// gives the offset to read on from, as for a window that ran out of lines.
pub const WINDOW_MAX_CHARS: usize = 100_000;

/// The lines of `text`: a final newline ends the last line rather than starting another.
pub fn count_lines(text: &str) -> usize {
    lines(text).count()
}

pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty)
}

/// What a read shows of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadWindow {
    /// First line shown, 1-based (0 for an empty file).
    pub from: usize,
    /// Last line shown (0 for an empty file).
    pub to: usize,
    /// The file's length in lines.
    pub total: usize,
    /// `N: text` lines, then the note when lines remain; `(empty file)` for an empty file.
    pub body: String,
}

/// Why a window could not be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowError {
    /// The offset lies past the last line.
    PastEnd { offset: usize, total: usize },
}

impl std::fmt::Display for WindowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WindowError::PastEnd { offset, total } => {
                write!(f, "Line {offset} is past the end: it has {total} lines.")
            }
        }
    }
}

/// The window of `text` from `offset` (1-based, default 1) for `limit` lines (default 2000).
pub fn read_window(text: &str, offset: Option<usize>, limit: Option<usize>) -> Result<ReadWindow, WindowError> {
    read_window_within(text, offset, limit, WINDOW_MAX_CHARS)
}

/// [`read_window`], the window stopping before `max_chars` characters (a small model window's
/// share) rather than [`WINDOW_MAX_CHARS`].
pub fn read_window_within(
    text: &str,
    offset: Option<usize>,
    limit: Option<usize>,
    max_chars: usize,
) -> Result<ReadWindow, WindowError> {
    let ctx = &loop_spec().context;
    let total = count_lines(text);
    if total == 0 {
        return Ok(ReadWindow { from: 0, to: 0, total, body: ctx.read_empty.clone() });
    }
    let from = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(WINDOW_LINES).max(1);
    if from > total {
        return Err(WindowError::PastEnd { offset: from, total });
    }
    let mut to = (from + limit - 1).min(total);
    let mut body = String::new();
    for (n, line) in lines(text).enumerate().skip(from - 1).take(to + 1 - from) {
        let shown = match line.char_indices().nth(LINE_MAX_CHARS.min(max_chars)) {
            Some((at, _)) => {
                let left = line[at..].chars().count();
                format!("{} […{left} more characters in this line]", &line[..at])
            }
            None => line.to_owned(),
        };
        // Always at least one line, so a read moves on.
        if n + 1 > from && body.len() + shown.len() > max_chars {
            to = n;
            break;
        }
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&(n + 1).to_string());
        body.push_str(": ");
        body.push_str(&shown);
    }
    if to < total {
        let more = render(&ctx.read_more, &[("n", &(total - to).to_string()), ("offset", &(to + 1).to_string())]);
        body.push_str("\n\n");
        body.push_str(&more);
    }
    Ok(ReadWindow { from, to, total, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_with_and_without_a_final_newline() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("\n"), 1);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines("a\n\n"), 2);
    }

    #[test]
    fn window_numbers_lines_and_notes_the_rest() {
        let w = read_window("a\nb\nc\n", Some(2), Some(1)).unwrap();
        assert_eq!((w.from, w.to, w.total), (2, 2, 3));
        assert_eq!(w.body, "2: b\n\n(1 more lines — read again with offset 3)");
    }

    #[test]
    fn long_lines_are_cut_and_a_window_stops_at_its_characters() {
        let minified = "x".repeat(5_000);
        let w = read_window(&minified, None, None).unwrap();
        assert!(
            w.body.starts_with("1: xxx") && w.body.ends_with("[…3000 more characters in this line]"),
            "{}",
            &w.body[w.body.len() - 60..]
        );
        assert!(w.body.len() < LINE_MAX_CHARS + 100);
        let wide = format!("{}\n", "y".repeat(1500)).repeat(200);
        let w = read_window(&wide, None, None).unwrap();
        assert!(w.body.len() <= WINDOW_MAX_CHARS + 200, "{}", w.body.len());
        assert!(w.to < 200 && w.to > 50, "{}", w.to);
        assert!(w.body.contains(&format!("offset {}", w.to + 1)) || w.body.contains(&(w.to + 1).to_string()));
    }

    #[test]
    fn past_the_end_is_an_error_and_empty_is_not() {
        assert_eq!(read_window("a\n", Some(5), None), Err(WindowError::PastEnd { offset: 5, total: 1 }));
        assert_eq!(read_window("", Some(5), None).unwrap().body, "(empty file)");
    }
}
