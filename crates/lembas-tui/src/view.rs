//! Drawing: finished blocks as lines for the scrollback, and the live area — what streams now,
//! the progress line, the input or a card, and the status bar.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block as Frame_, Borders, Paragraph};

use crate::app::{App, Block, Card, ToolState};
use crate::markdown::markdown_rows;
use crate::rows::{Row, hang};

/// Colours, or none at all (`NO_COLOR`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Theme {
    pub no_color: bool,
}

impl Theme {
    fn fg(&self, color: Color) -> Style {
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
        text.lines().flat_map(|l| hang(&[], &[], vec![Span::styled(l.to_owned(), style)], cols)).collect()
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
                rows.push(Row::hard(Line::from(Span::styled("  … (Ctrl-O shows all)", style))));
            }
            rows
        }
        Block::Tool { tool, title, state, summary, .. } => {
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
            let diff = crate::app::is_change(tool);
            for (i, row) in summary.lines().enumerate() {
                let style = match row.chars().next() {
                    Some('+') if diff && !row.starts_with("+++") => theme.fg(Color::Green),
                    Some('-') if diff && !row.starts_with("---") => theme.fg(Color::Red),
                    _ => theme.fg(Color::DarkGray),
                };
                let lead = if i == 0 { "  ⎿ " } else { "    " };
                rows.extend(hang(
                    &[Span::styled(lead, style)],
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

/// Rows of reasoning shown before the rest folds.
pub const THINKING_LINES: usize = 3;

/// Whether reasoning may take more rows than are shown (and so can be shown whole with Ctrl-O):
/// more lines than are shown, or lines long enough to wrap past them on a narrow screen.
pub fn thinking_folds(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() > THINKING_LINES || lines.iter().map(|l| l.chars().count().div_ceil(80)).sum::<usize>() > THINKING_LINES
}

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
    if let Some(cost) = app.month.as_ref().and_then(|m| m.cost_text()) {
        parts.push(format!("this month {cost}"));
    }
    match app.subagents_running() {
        0 => {}
        1 => parts.push("1 subagent".into()),
        n => parts.push(format!("{n} subagents")),
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

/// Draws the live area.
pub fn draw(frame: &mut Frame, app: &App, now_ms: i64, theme: Theme) {
    let area = frame.area();
    let input_height = match &app.card {
        Some(Card::Plan(plan)) => (plan.lines().count() as u16 + 3).min(area.height.saturating_sub(2)),
        Some(_) => 5,
        None => (app.input.lines().count().max(1) as u16 + 2).min(area.height.saturating_sub(3).max(3)),
    };
    let [live, progress, input, status] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(input_height),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_live(frame, app, live, theme);
    frame.render_widget(Paragraph::new(progress_line(app, now_ms)).style(theme.fg(Color::Yellow)), progress);
    match &app.card {
        Some(card) => draw_card(frame, card, &app.input, input, theme),
        None => {
            let shown: Vec<Line> = app.input.split('\n').map(|l| Line::from(l.to_owned())).collect();
            let skip = shown.len().saturating_sub(usize::from(input.height.saturating_sub(2)));
            let text: Vec<Line> = shown.into_iter().skip(skip).collect();
            frame
                .render_widget(Paragraph::new(text).block(Frame_::default().borders(Borders::ALL).title(" › ")), input);
        }
    }
    frame.render_widget(Paragraph::new(status_line(app)).style(theme.fg(Color::DarkGray)), status);
}

fn draw_live(frame: &mut Frame, app: &App, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    if let Some(block) = &app.live {
        lines.extend(block_lines(block, area.width, theme));
    }
    for block in &app.running {
        lines.extend(block_lines(block, area.width, theme));
    }
    // The newest lines that fit.
    let skip = lines.len().saturating_sub(usize::from(area.height));
    frame.render_widget(Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()), area);
}

fn draw_card(frame: &mut Frame, card: &Card, words: &str, area: Rect, theme: Theme) {
    let (title, body) = match card {
        Card::Approval(request) => {
            let mut body = vec![Line::from(vec![
                Span::styled(request.tool.clone(), Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(format!(" {}", request.title)),
            ])];
            if let Some(first) = request.reaches.first() {
                body.push(Line::from(Span::styled(format!("reaches {first}"), theme.fg(Color::DarkGray))));
            }
            body.push(Line::from(if request.once_only {
                "[y] once  [n] no — this is asked every time"
            } else {
                "[y] once  [a] this session  [n] no"
            }));
            match &request.agent {
                // A subagent's call: the card says whose it is.
                Some(agent) => (format!(" Allow the subagent \"{agent}\"? "), body),
                None => (" Allow? ".to_owned(), body),
            }
        }
        Card::LooserMode(mode) => {
            (" Looser mode ".to_owned(), vec![Line::from(format!("Switch to {mode}? It asks less. [y] yes  [n] no"))])
        }
        Card::Question(q) => {
            let mut body =
                vec![Line::from(Span::styled(q.question.clone(), Style::default().add_modifier(Modifier::BOLD)))];
            let options: Vec<String> = q.options.iter().enumerate().map(|(i, o)| format!("[{}] {o}", i + 1)).collect();
            body.push(Line::from(options.join("  ")));
            body.push(Line::from(format!("› {words}")));
            (" Question ".to_owned(), body)
        }
        Card::Plan(plan) => {
            let room = usize::from(area.height.saturating_sub(3));
            let mut body: Vec<Line> = plan.lines().take(room).map(|l| Line::from(l.to_owned())).collect();
            body.push(Line::from("[y] approve and start  [n] not yet"));
            (" The plan ".to_owned(), body)
        }
    };
    frame.render_widget(
        Paragraph::new(body)
            .block(Frame_::default().borders(Borders::ALL).title(title).border_style(theme.fg(Color::Yellow))),
        area,
    );
}
