//! Rows: what a block takes on screen at a width. A logical line (a paragraph, a command) that
//! is wider than the screen is cut into rows at word boundaries; each row but its last is marked
//! `soft`, so the scrollback writer lets the terminal wrap it (padding the row to the edge) rather
//! than ending it with a newline — copying the paragraph from the terminal then gives one line
//! with its words whole, never a word split across two lines.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// One screen row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub line: Line<'static>,
    /// The next row continues this one's logical line (the terminal wraps, no newline).
    pub soft: bool,
}

impl Row {
    pub fn hard(line: Line<'static>) -> Row {
        Row { line, soft: false }
    }

    pub fn blank() -> Row {
        Row::hard(Line::default())
    }
}

/// The rows' lines, for a widget that draws them (the live area).
pub fn lines(rows: Vec<Row>) -> Vec<Line<'static>> {
    rows.into_iter().map(|r| r.line).collect()
}

/// A line's text without its styles.
pub fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The display width of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| unicode_width::UnicodeWidthStr::width(s.content.as_ref())).sum()
}

/// One word of a styled line and the blanks after it, in the styles it is written in: what
/// textwrap places on rows.
#[derive(Debug)]
struct Word {
    pieces: Vec<(String, Style)>,
    blanks: Vec<(String, Style)>,
    width: usize,
    blank_width: usize,
}

impl textwrap::core::Fragment for Word {
    fn width(&self) -> f64 {
        self.width as f64
    }
    fn whitespace_width(&self) -> f64 {
        self.blank_width as f64
    }
    fn penalty_width(&self) -> f64 {
        0.0
    }
}

fn push_char(pieces: &mut Vec<(String, Style)>, c: char, style: Style) {
    match pieces.last_mut() {
        Some((text, s)) if *s == style => text.push(c),
        _ => pieces.push((c.to_string(), style)),
    }
}

/// Spans' words, each kept with its styles; a word wider than `width` is cut into pieces that
/// fit (a long URL or path has nowhere else to go). Blanks that start the line are kept as a
/// word of their own (an indented line stays indented).
fn words(spans: Vec<Span<'static>>, width: usize) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let new_word = || Word { pieces: Vec::new(), blanks: Vec::new(), width: 0, blank_width: 0 };
    let mut word = new_word();
    for span in spans {
        for c in span.content.chars() {
            let c = if c == '\t' { ' ' } else { c };
            let w = c.width().unwrap_or(0);
            if c == ' ' && (!word.pieces.is_empty() || !words.is_empty()) {
                push_char(&mut word.blanks, c, span.style);
                word.blank_width += w;
                continue;
            }
            if c == ' ' {
                // Leading blanks: part of the first word, so they are drawn.
                push_char(&mut word.pieces, c, span.style);
                word.width += w;
                continue;
            }
            if !word.blanks.is_empty() || word.width + w > width {
                words.push(std::mem::replace(&mut word, new_word()));
            }
            push_char(&mut word.pieces, c, span.style);
            word.width += w;
        }
    }
    if !word.pieces.is_empty() || !word.blanks.is_empty() || words.is_empty() {
        words.push(word);
    }
    words
}

/// Spans wrapped to `width` columns at word boundaries (textwrap's first fit), keeping styles;
/// a word only breaks when it is wider than a row. Always at least one line.
pub fn wrap_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let words = words(spans, width);
    textwrap::wrap_algorithms::wrap_first_fit(&words, &[width as f64])
        .into_iter()
        .map(|row| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, word) in row.iter().enumerate() {
                spans.extend(word.pieces.iter().map(|(t, s)| Span::styled(t.clone(), *s)));
                // Blanks between words stay; those that end a row go.
                if i + 1 < row.len() {
                    spans.extend(word.blanks.iter().map(|(t, s)| Span::styled(t.clone(), *s)));
                }
            }
            Line::from(spans)
        })
        .collect()
}

/// A logical line as rows: `first` leads its first row and `rest` (as wide) each row after,
/// the words wrapped in the width that leaves.
pub fn hang(first: &[Span<'static>], rest: &[Span<'static>], body: Vec<Span<'static>>, width: usize) -> Vec<Row> {
    let room = width.saturating_sub(spans_width(first)).max(8);
    let wrapped = wrap_spans(body, room);
    let count = wrapped.len();
    wrapped
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            // Words that fill a row to its last column would join the next row's with no space
            // between when the terminal's wrap puts them back together (a copy, `capture -J`):
            // such a row ends as a line does, so its last word and the next stay apart.
            let full = spans_width(&line.spans) >= room;
            let mut spans = if i == 0 { first.to_vec() } else { rest.to_vec() };
            spans.extend(line.spans);
            Row { line: Line::from(spans), soft: i + 1 < count && !full }
        })
        .collect()
}

/// Spans cut into rows of exactly `width` columns where they are wider (code, which has no
/// words to keep whole): the first row after `prefix`, the rows after it from the screen's
/// edge, so the terminal's own wrap joins them back into the original line.
pub fn cut(prefix: Vec<Span<'static>>, body: Vec<Span<'static>>, width: usize) -> Vec<Row> {
    let width = width.max(1);
    let mut rows: Vec<Row> = Vec::new();
    let mut used = spans_width(&prefix);
    let mut current: Vec<(String, Style)> = prefix.into_iter().map(|s| (s.content.into_owned(), s.style)).collect();
    for span in body {
        for c in span.content.chars() {
            let c = if c == '\t' { ' ' } else { c };
            let w = c.width().unwrap_or(0);
            if used + w > width && used > 0 {
                let spans =
                    std::mem::take(&mut current).into_iter().map(|(t, s)| Span::styled(t, s)).collect::<Vec<_>>();
                rows.push(Row { line: Line::from(spans), soft: true });
                used = 0;
            }
            push_char(&mut current, c, span.style);
            used += w;
        }
    }
    let spans = current.into_iter().map(|(t, s)| Span::styled(t, s)).collect::<Vec<_>>();
    rows.push(Row::hard(Line::from(spans)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    fn texts(rows: &[Row]) -> Vec<String> {
        rows.iter().map(|r| plain(&r.line)).collect()
    }

    /// A line's rows at `width`, with no lead.
    fn wrapped(line: Line<'static>, width: usize) -> Vec<Row> {
        hang(&[], &[], line.spans, width)
    }

    #[test]
    fn words_are_never_cut_when_they_fit_a_row() {
        let rows = |text: &str, width: usize| texts(&wrapped(Line::from(text.to_owned()), width));
        assert_eq!(rows("the terminal wraps words", 12), ["the terminal", "wraps words"]);
        // A word wider than a row has to break, and only then.
        assert_eq!(
            rows("see https://example.com/a/long/path now", 16),
            ["see", "https://example.", "com/a/long/path", "now"]
        );
        assert_eq!(rows("", 4), [""]);
        // An indented line keeps its indent.
        assert_eq!(rows("    code", 20), ["    code"]);
        // Styles stay with their words across rows.
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let line = Line::from(vec![Span::raw("plain "), Span::styled("bold words", bold)]);
        let rows = wrapped(line, 10);
        assert_eq!(texts(&rows), ["plain bold", "words"]);
        assert_eq!(rows[1].line.spans[0].style, bold);
    }

    #[test]
    fn a_wrapped_line_is_soft_but_its_last_row() {
        let mut rows = wrapped(Line::from("one two three"), 8);
        rows.extend(wrapped(Line::from("four"), 8));
        assert_eq!(texts(&rows), ["one two", "three", "four"]);
        assert_eq!(rows.iter().map(|r| r.soft).collect::<Vec<_>>(), [true, false, false]);
    }

    #[test]
    fn a_row_its_words_fill_ends_as_a_line_does() {
        // "aaaa bbbb" in 9 columns: "aaaa" and "bbbb" would join as "aaaabbbb".
        let rows = hang(&[], &[], vec![Span::raw("aaaa bbbbbbbb cc")], 8);
        assert_eq!(rows.iter().map(|r| r.line.to_string()).collect::<Vec<_>>(), ["aaaa", "bbbbbbbb", "cc"]);
        assert_eq!(rows.iter().map(|r| r.soft).collect::<Vec<_>>(), [true, false, false]);
    }

    #[test]
    fn hanging_rows_line_up_under_the_first() {
        let rows = hang(&[Span::raw("1. ")], &[Span::raw("   ")], vec![Span::raw("alpha beta gamma delta")], 14);
        assert_eq!(texts(&rows), ["1. alpha beta", "   gamma delta"]);
    }

    #[test]
    fn code_is_cut_at_the_edge_and_joins_back() {
        let rows = cut(vec![Span::raw("  ")], vec![Span::raw("abcdefghijkl")], 6);
        assert_eq!(texts(&rows), ["  abcd", "efghij", "kl"]);
        assert_eq!(rows.iter().map(|r| r.soft).collect::<Vec<_>>(), [true, true, false]);
    }
}
