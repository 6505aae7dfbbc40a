//! Text for the terminal: Markdown read into styled lines, and lines wrapped to a width so a
//! block's height is known before it is drawn.

use std::sync::OnceLock;

use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Color;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::Theme;
use syntect::parsing::SyntaxSet;
use unicode_width::UnicodeWidthChar;

/// Markdown as styled lines: headings bold, emphasis, inline code and code blocks set apart,
/// list items with their bullet, block quotes indented.
pub fn markdown(text: &str, base: Style) -> Vec<Line<'static>> {
    markdown_in(text, base, true)
}

/// [`markdown`], with code coloured by its language or not (`NO_COLOR`).
pub fn markdown_in(text: &str, base: Style, color: bool) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut styles = vec![base];
    let mut in_code = false;
    let mut list_depth: usize = 0;
    let flush = |current: &mut Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
        if !current.is_empty() {
            lines.push(Line::from(std::mem::take(current)));
        }
    };
    let mut code = String::new();
    let mut code_lang = String::new();
    // A table's rows of cells, drawn aligned when the table ends.
    let mut table: Option<Vec<Vec<String>>> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        let style = *styles.last().unwrap_or(&base);
        if let Some(rows) = table.as_mut() {
            match event {
                Md::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
                Md::Start(Tag::TableCell) => {
                    if let Some(row) = rows.last_mut() {
                        row.push(String::new());
                    }
                }
                Md::Text(t) | Md::Code(t) => {
                    if let Some(cell) = rows.last_mut().and_then(|r| r.last_mut()) {
                        cell.push_str(&t);
                    }
                }
                Md::End(TagEnd::Table) => {
                    let rows = table.take().unwrap_or_default();
                    lines.extend(table_lines(&rows, style));
                }
                _ => {}
            }
            continue;
        }
        match event {
            Md::Start(Tag::Table(_)) => {
                flush(&mut current, &mut lines);
                table = Some(Vec::new());
            }
            Md::Start(Tag::Heading { level, .. }) => {
                flush(&mut current, &mut lines);
                let marks = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                current.push(Span::styled(marks, style.add_modifier(Modifier::BOLD)));
                styles.push(style.add_modifier(Modifier::BOLD));
            }
            Md::End(TagEnd::Heading(_)) => {
                styles.pop();
                flush(&mut current, &mut lines);
            }
            Md::Start(Tag::Emphasis) => styles.push(style.add_modifier(Modifier::ITALIC)),
            Md::Start(Tag::Strong) => styles.push(style.add_modifier(Modifier::BOLD)),
            Md::End(TagEnd::Emphasis | TagEnd::Strong) => {
                styles.pop();
            }
            Md::Start(Tag::CodeBlock(kind)) => {
                flush(&mut current, &mut lines);
                in_code = true;
                code_lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.split([',', ' ']).next().unwrap_or("").to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                code.clear();
            }
            Md::End(TagEnd::CodeBlock) => {
                in_code = false;
                lines.extend(code_lines(&code, &code_lang, style, color));
            }
            Md::Start(Tag::Item) => {
                flush(&mut current, &mut lines);
                current.push(Span::styled(format!("{}• ", "  ".repeat(list_depth.saturating_sub(1))), style));
            }
            Md::Start(Tag::List(_)) => {
                flush(&mut current, &mut lines);
                list_depth += 1;
            }
            Md::End(TagEnd::List(_)) => list_depth = list_depth.saturating_sub(1),
            Md::Start(Tag::BlockQuote(_)) => styles.push(style.add_modifier(Modifier::DIM)),
            Md::End(TagEnd::BlockQuote(_)) => {
                styles.pop();
            }
            Md::End(TagEnd::Paragraph | TagEnd::Item) => flush(&mut current, &mut lines),
            Md::Text(t) if in_code => code.push_str(&t),
            Md::Text(t) => current.push(Span::styled(t.into_string(), style)),
            Md::Code(c) => current.push(Span::styled(c.into_string(), style.add_modifier(Modifier::REVERSED))),
            Md::SoftBreak => current.push(Span::styled(" ", style)),
            Md::HardBreak => flush(&mut current, &mut lines),
            Md::Rule => {
                flush(&mut current, &mut lines);
                lines.push(Line::from(Span::styled("───", style)));
            }
            _ => {}
        }
    }
    flush(&mut current, &mut lines);
    lines
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// The ANSI theme: colours from the terminal's own palette, so code reads in light and dark
/// terminals alike.
fn ansi_theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| two_face::theme::extra().get(two_face::theme::EmbeddedThemeName::Ansi).clone())
}

/// A colour of the ANSI theme: alpha 0 carries a palette index in red, alpha 1 means the
/// terminal's default.
fn ansi_color(c: syntect::highlighting::Color) -> Option<Color> {
    match c.a {
        0 => Some(match c.r {
            0 => Color::Black,
            1 => Color::Red,
            2 => Color::Green,
            3 => Color::Yellow,
            4 => Color::Blue,
            5 => Color::Magenta,
            6 => Color::Cyan,
            7 => Color::Gray,
            n => Color::Indexed(n),
        }),
        1 => None,
        _ => Some(Color::Rgb(c.r, c.g, c.b)),
    }
}

/// A code block's lines, indented, coloured by its language when it is known.
fn code_lines(code: &str, lang: &str, style: Style, color: bool) -> Vec<Line<'static>> {
    let plain = |line: &str| Line::from(Span::styled(format!("  {line}"), style.add_modifier(Modifier::DIM)));
    let syntax = (color && !lang.is_empty()).then(|| syntaxes().find_syntax_by_token(lang)).flatten();
    let Some(syntax) = syntax else { return code.lines().map(plain).collect() };
    let mut highlighter = HighlightLines::new(syntax, ansi_theme());
    code.lines()
        .map(|line| match highlighter.highlight_line(&format!("{line}\n"), syntaxes()) {
            Ok(ranges) => {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(ranges.into_iter().map(|(s, text)| {
                    let fg = ansi_color(s.foreground);
                    Span::styled(text.trim_end_matches('\n').to_owned(), fg.map_or(style, |c| style.fg(c)))
                }));
                Line::from(spans)
            }
            Err(_) => plain(line),
        })
        .collect()
}

/// A table's rows as aligned lines, the header set apart by a rule.
fn table_lines(rows: &[Vec<String>], style: Style) -> Vec<Line<'static>> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| unicode_width::UnicodeWidthStr::width(cell.as_str()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..columns)
            .map(|c| {
                let cell = row.get(c).map_or("", String::as_str);
                let pad = widths[c].saturating_sub(unicode_width::UnicodeWidthStr::width(cell));
                format!("{cell}{}", " ".repeat(pad))
            })
            .collect();
        let row_style = if i == 0 { style.add_modifier(Modifier::BOLD) } else { style };
        out.push(Line::from(Span::styled(format!("│ {} │", cells.join(" │ ")), row_style)));
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::from(Span::styled(format!("├─{}─┤", rule.join("─┼─")), style)));
        }
    }
    out
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

/// A line's words, each kept with its styles; a word wider than `width` is cut into pieces that
/// fit (a long URL or path has nowhere else to go).
fn words(line: Line<'static>, width: usize) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let new_word = || Word { pieces: Vec::new(), blanks: Vec::new(), width: 0, blank_width: 0 };
    let mut word = new_word();
    for span in line.spans {
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if c == ' ' {
                push_char(&mut word.blanks, c, span.style);
                word.blank_width += w;
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

fn push_char(pieces: &mut Vec<(String, Style)>, c: char, style: Style) {
    match pieces.last_mut() {
        Some((text, s)) if *s == style => text.push(c),
        _ => pieces.push((c.to_string(), style)),
    }
}

/// Lines wrapped to `width` columns at word boundaries (textwrap's first fit), keeping styles, so
/// a block's height is its number of lines; a word only breaks when it is wider than a row.
pub fn wrap(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    for line in lines {
        let words = words(line, width);
        for row in textwrap::wrap_algorithms::wrap_first_fit(&words, &[width as f64]) {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, word) in row.iter().enumerate() {
                spans.extend(word.pieces.iter().map(|(t, s)| Span::styled(t.clone(), *s)));
                // Blanks between words stay; those that end a row go.
                if i + 1 < row.len() {
                    spans.extend(word.blanks.iter().map(|(t, s)| Span::styled(t.clone(), *s)));
                }
            }
            out.push(Line::from(spans));
        }
    }
    out
}

/// A line's text without its styles.
pub fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_the_structure() {
        let lines: Vec<String> =
            markdown("# Title\n\nSome *text* with `code`.\n\n- one\n- two\n\n```\nlet x = 1;\n```\n", Style::default())
                .iter()
                .map(plain)
                .collect();
        assert_eq!(lines, ["# Title", "Some text with code.", "• one", "• two", "  let x = 1;"]);
    }

    #[test]
    fn code_is_coloured_by_its_language() {
        let lines = markdown("```rust\nfn main() {}\n```\n", Style::default());
        assert_eq!(plain(&lines[0]), "  fn main() {}");
        assert!(lines[0].spans.iter().any(|s| s.style.fg.is_some()), "{:?}", lines[0]);
        let bare = markdown_in("```rust\nfn main() {}\n```\n", Style::default(), false);
        assert!(bare[0].spans.iter().all(|s| s.style.fg.is_none()));
    }

    #[test]
    fn tables_are_aligned() {
        let lines: Vec<String> =
            markdown("| a | long head |\n|---|---|\n| xyz | 1 |\n", Style::default()).iter().map(plain).collect();
        assert_eq!(lines, ["│ a   │ long head │", "├─────┼───────────┤", "│ xyz │ 1         │"]);
    }

    #[test]
    fn wrapping_cuts_at_the_width() {
        let wrapped = wrap(vec![Line::from("abcdefghij")], 4);
        assert_eq!(wrapped.iter().map(plain).collect::<Vec<_>>(), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap(vec![Line::from("")], 4).len(), 1);
    }

    #[test]
    fn words_are_never_cut_when_they_fit_a_row() {
        let rows = |text: &str, width: u16| -> Vec<String> {
            wrap(vec![Line::from(text.to_owned())], width).iter().map(plain).collect()
        };
        assert_eq!(rows("the terminal wraps words", 12), ["the terminal", "wraps words"]);
        assert_eq!(rows("  ⎿ indented result", 12), ["  ⎿ indented", "result"]);
        // A word wider than a row has to break, and only then.
        assert_eq!(
            rows("see https://example.com/a/long/path now", 16),
            ["see", "https://example.", "com/a/long/path", "now"]
        );
        // Styles stay with their words across rows.
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let line = Line::from(vec![Span::raw("plain "), Span::styled("bold words", bold)]);
        let wrapped = wrap(vec![line], 10);
        assert_eq!(wrapped.iter().map(plain).collect::<Vec<_>>(), ["plain bold", "words"]);
        assert_eq!(wrapped[1].spans[0].style, bold);
    }
}
