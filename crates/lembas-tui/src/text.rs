//! Text for the terminal: Markdown read into styled lines, and lines wrapped to a width so a
//! block's height is known before it is drawn.

use pulldown_cmark::{Event as Md, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Markdown as styled lines: headings bold, emphasis, inline code and code blocks set apart,
/// list items with their bullet, block quotes indented.
pub fn markdown(text: &str, base: Style) -> Vec<Line<'static>> {
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
    for event in Parser::new(text) {
        let style = *styles.last().unwrap_or(&base);
        match event {
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
            Md::Start(Tag::CodeBlock(_)) => {
                flush(&mut current, &mut lines);
                in_code = true;
            }
            Md::End(TagEnd::CodeBlock) => in_code = false,
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
            Md::Text(t) if in_code => {
                for line in t.lines() {
                    lines.push(Line::from(Span::styled(format!("  {line}"), style.add_modifier(Modifier::DIM))));
                }
            }
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

/// Lines cut to `width` columns (by character, keeping styles), so a block's height is its
/// number of lines.
pub fn wrap(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    for line in lines {
        let mut row: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for span in line.spans {
            let mut piece = String::new();
            for c in span.content.chars() {
                let w = c.width().unwrap_or(0);
                if used + w > width {
                    if !piece.is_empty() {
                        row.push(Span::styled(std::mem::take(&mut piece), span.style));
                    }
                    out.push(Line::from(std::mem::take(&mut row)));
                    used = 0;
                }
                piece.push(c);
                used += w;
            }
            if !piece.is_empty() {
                row.push(Span::styled(piece, span.style));
            }
        }
        out.push(Line::from(row));
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
    fn wrapping_cuts_at_the_width() {
        let wrapped = wrap(vec![Line::from("abcdefghij")], 4);
        assert_eq!(wrapped.iter().map(plain).collect::<Vec<_>>(), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap(vec![Line::from("")], 4).len(), 1);
    }
}
