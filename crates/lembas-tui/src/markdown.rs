//! Markdown as rows at a width, drawn faithfully: paragraphs apart, headings styled without
//! their marks, lists with their own numbers and nested indents, quotes marked on every row,
//! code coloured and cut only at the screen's edge, tables bordered and fitted to the width,
//! links with their targets.

use pulldown_cmark::{Alignment, CodeBlockKind, Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::highlight::code_spans;
use crate::rows::{Row, cut, hang, spans_width, wrap_spans};

/// Markdown as rows of at most `width` columns (a word wider than the room still breaks), code
/// coloured by its language unless `color` is off.
pub fn markdown_rows(text: &str, width: u16, base: Style, color: bool) -> Vec<Row> {
    let mut render = Render::new(usize::from(width.max(1)), base, color);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES;
    for event in Parser::new_ext(text, options) {
        render.event(event);
    }
    render.flush();
    render.rows
}

/// What leads each row inside a quote or a list item: its first row's lead, and every row's
/// after that.
struct Lead {
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
    used: bool,
    quote: bool,
}

/// A list being drawn: the next item's number (`None`: bullets), and whether its items are
/// apart (a loose list).
struct List {
    next: Option<u64>,
    loose: bool,
}

/// A table being gathered: its columns' alignments and its rows of cells.
struct Table {
    align: Vec<Alignment>,
    rows: Vec<Vec<String>>,
}

struct Render {
    width: usize,
    base: Style,
    color: bool,
    rows: Vec<Row>,
    leads: Vec<Lead>,
    lists: Vec<List>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// A blank row is owed before the next block.
    gap: bool,
    code: Option<(String, String)>,
    table: Option<Table>,
    links: Vec<String>,
}

impl Render {
    fn new(width: usize, base: Style, color: bool) -> Render {
        Render {
            width,
            base,
            color,
            rows: Vec::new(),
            leads: Vec::new(),
            lists: Vec::new(),
            inline: Vec::new(),
            styles: vec![base],
            gap: false,
            code: None,
            table: None,
            links: Vec::new(),
        }
    }

    fn style(&self) -> Style {
        *self.styles.last().unwrap_or(&self.base)
    }

    fn dim(&self) -> Style {
        self.base.add_modifier(Modifier::DIM)
    }

    /// The leads of the next row, and the leads of the rows after it; the leads count as used.
    fn take_leads(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for lead in &mut self.leads {
            first.extend(if lead.used { lead.rest.clone() } else { lead.first.clone() });
            rest.extend(lead.rest.clone());
            lead.used = true;
        }
        (first, rest)
    }

    /// A blank row before a new block when one is owed; inside a quote the quote's bar goes on.
    fn open_block(&mut self) {
        if self.gap && !self.rows.is_empty() {
            let bars: Vec<Span<'static>> = self
                .leads
                .iter()
                .filter(|l| l.quote)
                .flat_map(|l| l.rest.iter().map(|s| Span::styled(s.content.trim_end().to_owned(), s.style)))
                .collect();
            self.rows.push(Row::hard(Line::from(bars)));
        }
        self.gap = false;
    }

    /// The words gathered so far as rows.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let body = std::mem::take(&mut self.inline);
        let (first, rest) = self.take_leads();
        let rows = hang(&first, &rest, body, self.width);
        self.rows.extend(rows);
    }

    fn push_text(&mut self, text: &str, style: Style) {
        self.inline.push(Span::styled(text.to_owned(), style));
    }

    fn event(&mut self, event: Md<'_>) {
        if self.table.is_some() {
            self.in_table(event);
            return;
        }
        if let Some((_, code)) = self.code.as_mut() {
            match event {
                Md::Text(t) => code.push_str(&t),
                Md::End(TagEnd::CodeBlock) => {
                    let (lang, code) = self.code.take().expect("a code block is open");
                    self.code_block(&code, &lang);
                    self.gap = true;
                }
                _ => {}
            }
            return;
        }
        let style = self.style();
        match event {
            Md::Start(Tag::Paragraph) => {
                if let Some(list) = self.lists.last_mut()
                    && self.leads.last().is_some_and(|l| !l.quote)
                {
                    list.loose = true;
                }
                self.open_block();
            }
            Md::End(TagEnd::Paragraph) => {
                self.flush();
                self.gap = true;
            }
            Md::Start(Tag::Heading { level, .. }) => self.heading_start(level, style),
            Md::End(TagEnd::Heading(_)) => {
                self.styles.pop();
                self.flush();
                self.gap = true;
            }
            Md::Start(Tag::BlockQuote(_)) => self.quote_start(style),
            Md::End(TagEnd::BlockQuote(_)) => {
                self.flush();
                self.leads.pop();
                self.styles.pop();
                self.gap = true;
            }
            Md::Start(Tag::CodeBlock(kind)) => self.code_start(kind),
            Md::Start(Tag::List(start)) => self.list_start(start),
            Md::End(TagEnd::List(_)) => {
                self.flush();
                self.lists.pop();
                self.gap = true;
            }
            Md::Start(Tag::Item) => self.item_start(style),
            Md::End(TagEnd::Item) => {
                self.flush();
                self.leads.pop();
            }
            Md::TaskListMarker(done) => self.push_text(if done { "[x] " } else { "[ ] " }, style),
            Md::Start(Tag::Emphasis) => self.styles.push(style.add_modifier(Modifier::ITALIC)),
            Md::Start(Tag::Strong) => self.styles.push(style.add_modifier(Modifier::BOLD)),
            Md::Start(Tag::Strikethrough) => self.styles.push(style.add_modifier(Modifier::CROSSED_OUT)),
            Md::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {
                self.styles.pop();
            }
            Md::Start(Tag::Link { dest_url, .. }) => {
                self.links.push(dest_url.into_string());
                self.styles.push(style.add_modifier(Modifier::UNDERLINED));
            }
            Md::End(TagEnd::Link) => self.link_end(),
            Md::Start(Tag::Image { dest_url, .. }) => {
                self.links.push(dest_url.into_string());
                let style = self.dim();
                self.push_text("[image: ", style);
            }
            Md::End(TagEnd::Image) => {
                let target = self.links.pop().unwrap_or_default();
                let style = self.dim();
                self.push_text(&format!("] ({target})"), style);
            }
            Md::Start(Tag::Table(align)) => {
                self.flush();
                self.open_block();
                self.table = Some(Table { align, rows: Vec::new() });
            }
            Md::Start(Tag::FootnoteDefinition(name)) => {
                self.flush();
                self.open_block();
                let style = self.dim();
                self.push_text(&format!("[{name}]: "), style);
            }
            Md::End(TagEnd::FootnoteDefinition) => {
                self.flush();
                self.gap = true;
            }
            Md::FootnoteReference(name) => {
                let style = self.dim();
                self.push_text(&format!("[{name}]"), style);
            }
            Md::Text(t) => self.push_text(&t, style),
            Md::Code(c) => self.push_text(&c, style.add_modifier(Modifier::REVERSED)),
            Md::InlineHtml(h) | Md::InlineMath(h) | Md::DisplayMath(h) => self.push_text(&h, style),
            Md::Html(h) => {
                // Raw HTML, as written: each of its lines a line.
                for line in h.lines() {
                    self.push_text(line, style);
                    self.flush();
                }
            }
            Md::SoftBreak => self.push_text(" ", style),
            Md::HardBreak => self.flush(),
            Md::Rule => self.rule(),
            _ => {}
        }
    }

    /// An event inside a table: its cells gathered, and the whole drawn when it ends.
    fn in_table(&mut self, event: Md<'_>) {
        let Some(table) = self.table.as_mut() else { return };
        match event {
            Md::Start(Tag::TableHead | Tag::TableRow) => table.rows.push(Vec::new()),
            Md::Start(Tag::TableCell) => {
                if let Some(row) = table.rows.last_mut() {
                    row.push(String::new());
                }
            }
            Md::Text(t) | Md::Code(t) | Md::InlineHtml(t) => {
                if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                    cell.push_str(&t);
                }
            }
            Md::SoftBreak | Md::HardBreak => {
                if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                    cell.push(' ');
                }
            }
            Md::End(TagEnd::Table) => {
                let table = self.table.take().expect("a table is open");
                let (first, rest) = self.take_leads();
                let room = self.width.saturating_sub(spans_width(&first));
                for (i, line) in table_lines(&table, room, self.base).into_iter().enumerate() {
                    let mut spans = if i == 0 { first.clone() } else { rest.clone() };
                    spans.extend(line.spans);
                    self.rows.push(Row::hard(Line::from(spans)));
                }
                self.gap = true;
            }
            _ => {}
        }
    }

    /// A list item begins: its marker (a number or a bullet) leads its first line.
    fn item_start(&mut self, style: Style) {
        self.flush();
        let list = self.lists.last_mut();
        let marker = match list.as_ref().and_then(|l| l.next) {
            Some(n) => format!("{n}. "),
            None => "• ".to_owned(),
        };
        let loose = list.as_ref().is_some_and(|l| l.loose);
        if let Some(list) = list
            && let Some(n) = list.next.as_mut()
        {
            *n += 1;
        }
        if loose {
            self.open_block();
        } else {
            self.gap = false;
        }
        let pad = " ".repeat(marker.width());
        self.leads.push(Lead {
            first: vec![Span::styled(marker, style)],
            rest: vec![Span::raw(pad)],
            used: false,
            quote: false,
        });
    }

    /// A link ends: its words, and where it leads (a bare address is said once).
    fn link_end(&mut self) {
        self.styles.pop();
        let target = self.links.pop().unwrap_or_default();
        // The words and where they lead; a bare address is said once.
        let said: String = self.inline.iter().rev().map(|s| s.content.as_ref()).take(1).collect();
        if !target.is_empty() && said != target && !target.starts_with('#') {
            let style = self.dim();
            self.push_text(&format!(" ({target})"), style);
        }
    }

    /// A thematic break: a dim line across, at most 80 columns.
    fn rule(&mut self) {
        self.flush();
        self.open_block();
        let (first, _) = self.take_leads();
        let room = self.width.saturating_sub(spans_width(&first)).min(80);
        let mut spans = first;
        spans.push(Span::styled("─".repeat(room), self.dim()));
        self.rows.push(Row::hard(Line::from(spans)));
        self.gap = true;
    }

    /// A heading begins: bold, and underlined (H1) or italic (H3 and below).
    fn heading_start(&mut self, level: HeadingLevel, style: Style) {
        self.flush();
        self.open_block();
        let heading = match level {
            HeadingLevel::H1 => style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            HeadingLevel::H2 => style.add_modifier(Modifier::BOLD),
            _ => style.add_modifier(Modifier::BOLD | Modifier::ITALIC),
        };
        self.styles.push(heading);
    }

    /// A code block begins: its text is gathered until it ends, with its language.
    fn code_start(&mut self, kind: CodeBlockKind<'_>) {
        self.flush();
        self.open_block();
        let lang = match kind {
            CodeBlockKind::Fenced(lang) => lang.split([',', ' ']).next().unwrap_or("").to_owned(),
            CodeBlockKind::Indented => String::new(),
        };
        self.code = Some((lang, String::new()));
    }

    /// A list begins (numbered from `start`, or bulleted).
    fn list_start(&mut self, start: Option<u64>) {
        // A list inside an item follows the item's words directly.
        self.flush();
        if self.lists.is_empty() {
            self.open_block();
        } else {
            self.gap = false;
        }
        self.lists.push(List { next: start, loose: false });
    }

    /// A quote begins: a bar leads each of its lines, in italics.
    fn quote_start(&mut self, style: Style) {
        self.flush();
        self.open_block();
        let bar = vec![Span::styled("│ ", self.dim())];
        self.leads.push(Lead { first: bar.clone(), rest: bar, used: false, quote: true });
        self.styles.push(style.add_modifier(Modifier::ITALIC));
    }

    /// A code block: each line indented two columns, coloured by its language; a line wider
    /// than the room is cut at the screen's edge (never at a word), so it joins back whole.
    fn code_block(&mut self, code: &str, lang: &str) {
        let style = self.base;
        for spans in code_spans(code, lang, style, self.color) {
            let (mut lead, _) = self.take_leads();
            lead.push(Span::styled("  ", style));
            self.rows.extend(cut(lead, spans, self.width));
        }
    }
}

/// A table drawn with full borders in at most `width` columns: columns as wide as their widest
/// cell, the widest narrowed until the table fits, a cell too wide for its column wrapped onto
/// more rows of that table row.
fn table_lines(table: &Table, width: usize, style: Style) -> Vec<Line<'static>> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let mut widths: Vec<usize> = (0..columns)
        .map(|c| table.rows.iter().filter_map(|r| r.get(c)).map(|cell| cell.trim().width()).max().unwrap_or(0).max(1))
        .collect();
    // Borders and padding: "│ " before each column and " │" after the last.
    let frame = 3 * columns + 1;
    while widths.iter().sum::<usize>() + frame > width {
        let (widest, w) = widths.iter().enumerate().max_by_key(|(_, w)| **w).map(|(i, w)| (i, *w)).unwrap_or((0, 0));
        // A column keeps one character, however narrow the screen.
        if w <= 1 {
            break;
        }
        widths[widest] -= 1;
    }
    let border = |left: &str, mid: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        Line::from(Span::styled(format!("{left}{}{right}", parts.join(mid)), style))
    };
    let mut out = vec![border("┌", "┬", "┐")];
    for (i, row) in table.rows.iter().enumerate() {
        let cell_style = if i == 0 { style.add_modifier(Modifier::BOLD) } else { style };
        let cells: Vec<Vec<String>> = (0..columns)
            .map(|c| {
                let text = row.get(c).map_or("", |s| s.trim());
                wrap_spans(vec![Span::raw(text.to_owned())], widths[c])
                    .iter()
                    .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                    .collect()
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for r in 0..height {
            let mut spans = vec![Span::styled("│", style)];
            for (c, cell) in cells.iter().enumerate() {
                let text = cell.get(r).map_or("", String::as_str);
                let pad = widths[c].saturating_sub(text.width());
                let (left, right) = match table.align.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::raw(format!(" {}", " ".repeat(left))));
                spans.push(Span::styled(text.to_owned(), cell_style));
                spans.push(Span::raw(format!("{} ", " ".repeat(right))));
                spans.push(Span::styled("│", style));
            }
            out.push(Line::from(spans));
        }
        if i == 0 && table.rows.len() > 1 {
            out.push(border("├", "┼", "┤"));
        }
    }
    out.push(border("└", "┴", "┘"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::plain;

    fn rows(text: &str, width: u16) -> Vec<String> {
        markdown_rows(text, width, Style::default(), false).iter().map(|r| plain(&r.line)).collect()
    }

    #[test]
    fn paragraphs_and_headings_are_apart_and_headings_lose_their_marks() {
        assert_eq!(
            rows("# Title\n\nSome *text* with `code`.\n\nA second paragraph.\n## Next\ntext", 60),
            ["Title", "", "Some text with code.", "", "A second paragraph.", "", "Next", "", "text"]
        );
    }

    #[test]
    fn ordered_lists_keep_their_numbers_and_nested_lists_indent() {
        assert_eq!(
            rows("3. three\n4. four\n   - inner\n   - more\n5. five\n\nafter", 60),
            ["3. three", "4. four", "   • inner", "   • more", "5. five", "", "after"]
        );
    }

    #[test]
    fn a_long_item_wraps_under_its_words() {
        assert_eq!(
            rows("1. alpha beta gamma delta epsilon\n2. two", 16),
            ["1. alpha beta", "   gamma delta", "   epsilon", "2. two"]
        );
    }

    #[test]
    fn loose_lists_keep_their_gaps() {
        assert_eq!(rows("- one\n\n- two\n", 40), ["• one", "", "• two"]);
    }

    #[test]
    fn quotes_are_marked_on_every_row() {
        assert_eq!(rows("> quoted words that wrap\n>\n> again", 14), ["│ quoted words", "│ that wrap", "│", "│ again"]);
    }

    #[test]
    fn code_is_indented_and_cut_only_at_the_edge() {
        let md = "```\nlet x = 1;\nlet long_name = call(argument);\n```\n";
        assert_eq!(rows(md, 20), ["  let x = 1;", "  let long_name = ca", "ll(argument);"]);
        let cut = markdown_rows(md, 20, Style::default(), false);
        assert!(cut[1].soft && !cut[2].soft);
    }

    #[test]
    fn code_is_coloured_by_its_language() {
        let rows = markdown_rows("```rust\nfn main() {}\n```\n", 40, Style::default(), true);
        assert_eq!(plain(&rows[0].line), "  fn main() {}");
        assert!(rows[0].line.spans.iter().any(|s| s.style.fg.is_some()), "{:?}", rows[0]);
        let bare = markdown_rows("```rust\nfn main() {}\n```\n", 40, Style::default(), false);
        assert!(bare[0].line.spans.iter().all(|s| s.style.fg.is_none()));
    }

    #[test]
    fn tables_have_full_borders_and_fit_the_width() {
        assert_eq!(
            rows("| a | long head |\n|---|--:|\n| xyz | 1 |\n", 40),
            [
                "┌─────┬───────────┐",
                "│ a   │ long head │",
                "├─────┼───────────┤",
                "│ xyz │         1 │",
                "└─────┴───────────┘"
            ]
        );
        let narrow = rows("| name | what it does |\n|---|---|\n| x | a long description of it |\n", 24);
        assert!(narrow.iter().all(|r| r.width() <= 24), "{narrow:#?}");
        assert!(narrow.concat().contains("description"), "{narrow:#?}");
    }

    #[test]
    fn links_show_their_target() {
        assert_eq!(
            rows("See [the docs](https://example.com/docs) or <https://x.org>.", 80),
            ["See the docs (https://example.com/docs) or https://x.org."]
        );
    }
}
