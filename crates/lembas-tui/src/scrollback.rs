//! Writing finished rows into the terminal's scrollback as text the terminal itself wraps.
//!
//! A ratatui buffer would end every row with a cursor move, so a paragraph copied from the
//! terminal would come out as lines broken mid-sentence. Here each row is written as styled
//! text; a `soft` row is padded to the right edge and the next row's first character makes the
//! terminal wrap — which it records as a wrap, not a line end — so a selection or
//! `tmux capture-pane -J` gives each paragraph back as one line with its words whole.

use std::io::Write;

use crossterm::style::{Print, PrintStyledContent, StyledContent};
use crossterm::terminal::{Clear, ClearType};
use ratatui::backend::IntoCrossterm;

use crate::rows::{Row, spans_width};

/// Writes `rows` at the cursor, `width` columns wide, leaving the cursor at the start of the row
/// after the last.
pub fn write_rows(out: &mut impl Write, rows: &[Row], width: u16) -> std::io::Result<()> {
    let width = usize::from(width.max(1));
    for (i, row) in rows.iter().enumerate() {
        for span in &row.line.spans {
            if span.content.is_empty() {
                continue;
            }
            let style = row.line.style.patch(span.style);
            if style == ratatui::style::Style::default() {
                crossterm::queue!(out, Print(span.content.as_ref()))?;
            } else {
                let content = StyledContent::new(style.into_crossterm(), span.content.as_ref());
                crossterm::queue!(out, PrintStyledContent(content))?;
            }
        }
        let used = spans_width(&row.line.spans);
        // A soft row is filled to the edge so the next character wraps it; the last row of
        // the rows has nothing after it to wrap onto, so it ends as any row does.
        if row.soft && i + 1 < rows.len() && used <= width {
            crossterm::queue!(out, Print(" ".repeat(width - used)))?;
        } else {
            crossterm::queue!(out, Print("\r\n"))?;
        }
    }
    out.flush()
}

/// Blanks the screen's rows from `top` up to `end`, row by row, and puts the cursor at `top`.
/// (Not with one "clear to the end of the screen": tmux takes that, from the first row, as
/// clearing the screen and keeps a copy of it in the scrollback.)
pub fn blank_from(out: &mut impl Write, top: u16, end: u16) -> std::io::Result<()> {
    for row in top..end {
        crossterm::queue!(out, crossterm::cursor::MoveTo(0, row), Clear(ClearType::CurrentLine))?;
    }
    crossterm::queue!(out, crossterm::cursor::MoveTo(0, top))
}

/// How many screen rows `rows` take when written `width` columns wide: a soft row one (the
/// next row's first character wraps it), a hard row as many as the terminal needs for it.
pub fn screen_rows(rows: &[Row], width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let count: usize = rows.iter().map(|r| spans_width(&r.line.spans).div_ceil(width).max(1)).sum();
    u16::try_from(count).unwrap_or(u16::MAX)
}

/// Writes `rows` in place of the live area that starts at row `top` of a `screen`, and makes
/// room under them for a live area `live_height` rows tall (scrolling the screen when it must):
/// where that live area now is. The place is counted, not asked of the terminal — a terminal
/// asked where its cursor is while keys are being read may not answer in time.
pub fn write_above(
    out: &mut impl Write,
    rows: &[Row],
    top: u16,
    screen: ratatui::layout::Size,
    live_height: u16,
) -> std::io::Result<ratatui::layout::Rect> {
    let height = screen.height.max(1);
    let live_height = live_height.clamp(1, height);
    blank_from(out, top, height)?;
    write_rows(out, rows, screen.width)?;
    // The cursor is on the row after the last one written, or on the screen's last row when
    // the writing scrolled the screen.
    let cursor = top.saturating_add(screen_rows(rows, screen.width)).min(height - 1);
    // Room for the live area: newlines from the cursor scroll the screen when it runs out.
    let below = live_height - 1;
    crossterm::queue!(out, Print("\r\n".repeat(usize::from(below))))?;
    let live_top = cursor.saturating_add(below).min(height - 1) - below;
    crossterm::queue!(out, crossterm::cursor::MoveTo(0, live_top))?;
    out.flush()?;
    Ok(ratatui::layout::Rect { x: 0, y: live_top, width: screen.width, height: live_height })
}

/// Moves the live area from `current` to a height of `want` rows: it keeps its top when the
/// screen has room under it, else the screen scrolls up to make room. The rows it leaves and
/// the rows it takes are blanked (a new frame only draws what is not blank). Where it now is.
pub fn place_live(
    out: &mut impl Write,
    current: ratatui::layout::Rect,
    want: u16,
    screen: ratatui::layout::Size,
) -> std::io::Result<ratatui::layout::Rect> {
    let height = screen.height.max(1);
    let want = want.clamp(1, height);
    let mut top = current.y.min(height - 1);
    let overflow = (top + want).saturating_sub(height);
    if overflow > 0 {
        crossterm::queue!(out, crossterm::cursor::MoveTo(0, height - 1), Print("\n".repeat(usize::from(overflow))))?;
        top -= overflow;
    }
    let bottom = (current.y + current.height).max(top + want).min(height);
    blank_from(out, top, bottom)?;
    out.flush()?;
    Ok(ratatui::layout::Rect { x: 0, y: top, width: screen.width, height: want })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};
    use ratatui::text::{Line, Span};

    #[test]
    fn a_soft_row_is_filled_to_the_edge_and_a_hard_one_ends_the_line() {
        let rows = vec![
            Row { line: Line::from("one two"), soft: true },
            Row::hard(Line::from("three")),
            Row::hard(Line::from("four")),
        ];
        let mut out = Vec::new();
        write_rows(&mut out, &rows, 10).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "one two   three\r\nfour\r\n");
    }

    #[test]
    fn styles_are_written_and_reset() {
        let rows =
            vec![Row::hard(Line::from(vec![Span::raw("a "), Span::styled("red", Style::default().fg(Color::Red))]))];
        let mut out = Vec::new();
        write_rows(&mut out, &rows, 10).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("a \u{1b}["), "{text:?}");
        assert!(text.contains("red\u{1b}["), "the colour ends with its words: {text:?}");
    }

    #[test]
    fn the_live_area_grows_down_where_there_is_room_and_pushes_the_screen_up_where_not() {
        let screen = ratatui::layout::Size { width: 10, height: 20 };
        let at = |y, height| ratatui::layout::Rect { x: 0, y, width: 10, height };
        let mut out = Vec::new();
        assert_eq!(place_live(&mut out, at(2, 5), 9, screen).unwrap(), at(2, 9));
        assert_eq!(place_live(&mut out, at(12, 5), 12, screen).unwrap(), at(8, 12));
        assert_eq!(place_live(&mut out, at(8, 12), 6, screen).unwrap(), at(8, 6));
        assert_eq!(place_live(&mut out, at(0, 5), 30, screen).unwrap(), at(0, 20));
    }

    #[test]
    fn the_live_area_goes_under_what_was_written_and_stays_on_the_screen() {
        let screen = ratatui::layout::Size { width: 10, height: 20 };
        let rows: Vec<Row> = (0..3).map(|i| Row::hard(Line::from(format!("row {i}")))).collect();
        let mut out = Vec::new();
        // Room below: the live area starts right under the three rows.
        let live = write_above(&mut out, &rows, 2, screen, 5).unwrap();
        assert_eq!((live.y, live.height), (5, 5));
        // Near the bottom: the screen scrolls and the live area ends on its last row.
        let live = write_above(&mut out, &rows, 14, screen, 5).unwrap();
        assert_eq!((live.y, live.height), (15, 5));
        // A long soft row still counts as one screen row; a hard one too wide counts as many.
        let soft = vec![Row { line: Line::from("abc"), soft: true }, Row::hard(Line::from("x".repeat(25)))];
        assert_eq!(screen_rows(&soft, 10), 4);
    }
}
