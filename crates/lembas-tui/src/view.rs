//! Drawing: finished blocks as lines for the scrollback, and the live area — what streams now,
//! the progress line, the input or a card, and the status bar.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::app::{App, Block, ToolState};
use crate::markdown::markdown_rows;
use crate::rows::{Row, hang};

/// Colours, or none at all (`NO_COLOR`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Theme {
    pub no_color: bool,
}

impl Theme {
    pub(crate) fn fg(&self, color: Color) -> Style {
        if self.no_color { Style::default() } else { Style::default().fg(color) }
    }
}

/// A finished block as the lines it takes at `width`.
pub fn block_lines(block: &Block, width: u16, theme: Theme) -> Vec<Line<'static>> {
    crate::rows::lines(block_rows(block, width, theme))
}

/// A finished block as the rows it takes at `width`, its wrapped lines marked soft.
pub fn block_rows(block: &Block, width: u16, theme: Theme) -> Vec<Row> {
    let cols = usize::from(width.max(1));
    let text_rows = |text: &str, style: Style| -> Vec<Row> {
        text.lines()
            .flat_map(|l| {
                // A table's row (`  /help   these commands`) hangs its wrapped words under its
                // second column; any other line under its own start.
                let (lead, body) = l.split_at(second_column(l));
                let lead_width = unicode_width::UnicodeWidthStr::width(lead);
                hang(
                    &[Span::styled(lead.to_owned(), style)],
                    &[Span::raw(" ".repeat(lead_width))],
                    vec![Span::styled(body.to_owned(), style)],
                    cols,
                )
            })
            .collect()
    };
    match block {
        Block::User(text) => {
            let style = theme.fg(Color::Cyan).add_modifier(Modifier::BOLD);
            let mut rows: Vec<Row> = text
                .lines()
                .enumerate()
                .flat_map(|(i, l)| {
                    let mark = if i == 0 { "› " } else { "  " };
                    hang(
                        &[Span::styled(mark, style)],
                        &[Span::raw("  ")],
                        vec![Span::styled(l.to_owned(), style)],
                        cols,
                    )
                })
                .collect();
            rows.push(Row::blank());
            rows
        }
        Block::Assistant(text) => {
            let mut rows = markdown_rows(text, width, Style::default(), !theme.no_color);
            rows.push(Row::blank());
            rows
        }
        Block::Thinking(text) => {
            let style = theme.fg(Color::DarkGray).add_modifier(Modifier::ITALIC | Modifier::DIM);
            // Reasoning is folded to its first rows on screen; Ctrl-O shows it whole.
            let all: Vec<Row> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .flat_map(|l| {
                    hang(&[Span::raw("  ")], &[Span::raw("  ")], vec![Span::styled(l.to_owned(), style)], cols)
                })
                .collect();
            let folded = all.len() > THINKING_LINES;
            let mut rows: Vec<Row> = all.into_iter().take(THINKING_LINES).collect();
            if folded {
                // The last row shown ends there: the fold is not a continuation of it.
                if let Some(last) = rows.last_mut() {
                    last.soft = false;
                }
                rows.extend(hang(
                    &[Span::raw("  ")],
                    &[Span::raw("  ")],
                    vec![Span::styled("… (Ctrl-O shows all)", style)],
                    cols,
                ));
            }
            rows
        }
        Block::Tool { tool, title, state, summary, shown, .. } => {
            let (mark, color) = match state {
                ToolState::Running => ("◌", Color::Yellow),
                ToolState::Done => ("●", Color::Green),
                ToolState::Failed => ("✗", Color::Red),
            };
            let mut rows = hang(
                &[Span::styled(format!("{mark} "), theme.fg(color))],
                &[Span::raw("  ")],
                vec![
                    Span::styled(tool.clone(), Style::default().add_modifier(Modifier::BOLD)),
                    Span::raw(format!(" {title}")),
                ],
                cols,
            );
            if !summary.is_empty() {
                let style = if *state == ToolState::Failed { theme.fg(Color::Red) } else { theme.fg(Color::DarkGray) };
                rows.extend(hang(
                    &[Span::styled("  ⎿ ", style)],
                    &[Span::raw("    ")],
                    vec![Span::styled(summary.clone(), style)],
                    cols,
                ));
            }
            let diff = crate::app::is_change(tool);
            for row in shown.lines() {
                let style = diff.then(|| diff_style(row, theme)).flatten().unwrap_or(theme.fg(Color::DarkGray));
                rows.extend(hang(
                    &[Span::raw("    ")],
                    &[Span::raw("    ")],
                    vec![Span::styled(row.to_owned(), style)],
                    cols,
                ));
            }
            rows
        }
        Block::Notice(text) => text_rows(text, theme.fg(Color::DarkGray)),
        Block::Error(text) => text_rows(text, theme.fg(Color::Red)),
    }
}

/// Where a line's second column starts: after the first run of two or more blanks that follows
/// its first words (`  /help   these commands` → at `these`); 0 for a line that has none.
fn second_column(line: &str) -> usize {
    let start = line.len() - line.trim_start().len();
    let Some(gap) = line[start..].find("  ").map(|at| start + at) else { return 0 };
    let after = line[gap..].len() - line[gap..].trim_start().len();
    // Only a gap inside the row counts: one at its end leaves nothing to hang.
    if gap + after >= line.len() { 0 } else { gap + after }
}

/// A diff row's colour: an added line green, a removed one red; `None` for the rest, which each
/// view draws its own way. (The diffs lembas shows are hunks without file headers, so a row of
/// `---` is a removed line that began with `--`.)
pub(crate) fn diff_style(row: &str, theme: Theme) -> Option<Style> {
    match row.chars().next() {
        Some('+') => Some(theme.fg(Color::Green)),
        Some('-') => Some(theme.fg(Color::Red)),
        _ => None,
    }
}

/// Rows of reasoning shown before the rest folds.
pub const THINKING_LINES: usize = 3;

/// The status bar: model and effort, mode, how full the context is, background jobs.
pub fn status_line(app: &App) -> String {
    let mut parts = vec![app.model.clone()];
    if let Some(effort) = &app.effort {
        parts.push(effort.clone());
    }
    if let Some(mode) = app.mode {
        parts.push(format!("mode: {mode}"));
    }
    let (used, window) = app.context;
    match (used * 100).checked_div(window) {
        Some(percent) => parts.push(format!("context {percent}%")),
        None => parts.push("context: window unknown".into()),
    }
    if let Some(offer) = &app.offer {
        // The short form: what a small window left out is for /context to tell.
        parts.push(offer.split(':').next().unwrap_or(offer).to_owned());
    }
    if let Some(cost) = app.month.as_ref().and_then(|m| m.cost_text()) {
        parts.push(format!("this month {cost}"));
    }
    if app.shared {
        parts.push("shared".into());
    }
    if let Some((size, max, working)) = app.team_working() {
        parts.push(format!("agents {size}/{max}"));
        match working {
            0 => {}
            1 => parts.push("1 subagent working".into()),
            n => parts.push(format!("{n} subagents working")),
        }
    } else {
        match app.subagents_running() {
            0 => {}
            1 => parts.push("1 subagent".into()),
            n => parts.push(format!("{n} subagents")),
        }
    }
    match app.jobs {
        0 => {}
        1 => parts.push("1 job running".into()),
        n => parts.push(format!("{n} jobs running")),
    }
    parts.join(" · ")
}

/// The line under the conversation: the progress line while a turn runs, else the last turn's
/// time and tokens.
pub fn progress_line(app: &App, now_ms: i64) -> String {
    match &app.progress {
        Some(progress) => progress.line(now_ms),
        None => app.last_turn.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_row_is_coloured_by_what_it_does() {
        let theme = Theme::default();
        assert_eq!(diff_style("+added", theme), Some(theme.fg(Color::Green)));
        // Hunks carry no file headers: a row of --- is a removed line that began with --.
        assert_eq!(diff_style("--- a yaml rule", theme), Some(theme.fg(Color::Red)));
        assert_eq!(diff_style(" context", theme), None);
        assert_eq!(diff_style("@@ -1 +1 @@", theme), None);
    }
}
