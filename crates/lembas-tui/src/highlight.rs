//! Code coloured by its language, in the terminal's own palette.

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::Theme;
use syntect::parsing::SyntaxSet;

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

/// A code block's lines as spans, coloured by its language when it is known (and `color`).
pub fn code_spans(code: &str, lang: &str, style: Style, color: bool) -> Vec<Vec<Span<'static>>> {
    let plain = |line: &str| vec![Span::styled(line.to_owned(), style)];
    let syntax = (color && !lang.is_empty()).then(|| syntaxes().find_syntax_by_token(lang)).flatten();
    let Some(syntax) = syntax else { return code.lines().map(plain).collect() };
    let mut highlighter = HighlightLines::new(syntax, ansi_theme());
    code.lines()
        .map(|line| match highlighter.highlight_line(&format!("{line}\n"), syntaxes()) {
            Ok(ranges) => ranges
                .into_iter()
                .map(|(s, text)| {
                    let fg = ansi_color(s.foreground);
                    Span::styled(text.trim_end_matches('\n').to_owned(), fg.map_or(style, |c| style.fg(c)))
                })
                .filter(|s| !s.content.is_empty())
                .collect(),
            Err(_) => plain(line),
        })
        .collect()
}
