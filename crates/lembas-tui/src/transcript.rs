//! The transcript view (Ctrl-O): the whole session on a screen of its own, every block whole —
//! a command's full output, a diff past its fold, all the reasoning, what a card asks about —
//! scrolled with the arrows and Page keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Block, Card, ToolState};
use crate::rows::{self, Row, hang};
use crate::view::{Theme, block_rows, diff_style};

/// A block as the transcript shows it: whole.
pub fn whole_rows(block: &Block, width: u16, theme: Theme) -> Vec<Row> {
    let cols = usize::from(width.max(1));
    match block {
        Block::Tool { tool, title, state, summary, body, .. } => {
            let shown = Block::Tool {
                call_id: String::new(),
                tool: tool.clone(),
                title: title.clone(),
                state: *state,
                summary: summary.clone(),
                shown: String::new(),
                body: String::new(),
            };
            let mut rows = block_rows(&shown, width, theme);
            let diff = crate::app::is_change(tool);
            let otherwise = theme.fg(if *state == ToolState::Failed { Color::Red } else { Color::DarkGray });
            // A line the summary already says (a failure's first line) is not said twice.
            let skip = usize::from(body.lines().next().is_some_and(|l| l.trim() == summary.trim()));
            for line in body.lines().skip(skip) {
                let style = diff.then(|| diff_style(line, theme)).flatten().unwrap_or(otherwise);
                rows.extend(hang(
                    &[Span::raw("    ")],
                    &[Span::raw("    ")],
                    vec![Span::styled(line.to_owned(), style)],
                    cols,
                ));
            }
            rows
        }
        Block::Thinking(text) => {
            let style = theme.fg(Color::DarkGray).add_modifier(Modifier::ITALIC);
            text.lines()
                .flat_map(|l| {
                    hang(&[Span::raw("  ")], &[Span::raw("  ")], vec![Span::styled(l.to_owned(), style)], cols)
                })
                .collect()
        }
        other => block_rows(other, width, theme),
    }
}

/// The whole session as lines, and at its end what the card shown asks about, whole.
pub fn transcript_lines(app: &App, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let mut rows: Vec<Row> = Vec::new();
    let mut after_tools = false;
    for block in app.transcript.iter().chain(&app.finished).chain(&app.live).chain(&app.running) {
        // Words after tool calls stand apart from them, as in the scrollback.
        if after_tools && matches!(block, Block::Assistant(_) | Block::User(_)) {
            rows.push(Row::blank());
        }
        after_tools = matches!(block, Block::Tool { .. });
        rows.extend(whole_rows(block, width, theme));
    }
    if let Some(Card::Approval(request)) = &app.card
        && let Some(preview) = &request.preview
    {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        rows.push(Row::hard(Line::from(Span::styled(
            format!("── Asked: {} {} ──", request.tool, request.title),
            bold,
        ))));
        rows.extend(whole_rows(
            &Block::Tool {
                call_id: String::new(),
                tool: request.tool.clone(),
                title: String::new(),
                state: ToolState::Running,
                summary: String::new(),
                shown: String::new(),
                body: preview.clone(),
            },
            width,
            theme,
        ));
    }
    if let Some(Card::Plan(plan)) = &app.card {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        rows.push(Row::hard(Line::from(Span::styled("── The plan, to approve ──", bold))));
        let cols = usize::from(width.max(1));
        rows.extend(plan.lines().flat_map(|l| hang(&[], &[Span::raw("  ")], vec![Span::raw(l.to_owned())], cols)));
    }
    rows::lines(rows)
}

/// Draws the transcript view on the whole screen: `lines`, `from_end` rows up from the last, and
/// a line saying how to move and leave. Answers how far up it can scroll at this height.
pub fn draw(frame: &mut Frame, lines: &[Line<'static>], from_end: usize, theme: Theme) -> usize {
    let [body, foot] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(frame.area());
    let height = usize::from(body.height);
    let last_top = lines.len().saturating_sub(height);
    let top = last_top.saturating_sub(from_end);
    let shown: Vec<Line> = lines.iter().skip(top).take(height).cloned().collect();
    frame.render_widget(Paragraph::new(shown), body);
    let at = (top * 100).checked_div(last_top).map_or(100, |p| p.min(100));
    frame.render_widget(
        Paragraph::new(format!("Transcript · {at}% · ↑↓ PgUp PgDn Home End move · Esc or Ctrl-O goes back"))
            .style(theme.fg(Color::DarkGray).add_modifier(Modifier::REVERSED)),
        foot,
    );
    last_top
}

impl App {
    /// A key while the transcript view is open: it scrolls, or closes the view.
    pub(crate) fn transcript_key(&mut self, key: KeyEvent) {
        let Some(from_end) = self.viewing else { return };
        let (page, most) = self.view_size;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        self.viewing = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => None,
            KeyCode::Char('o') if ctrl => None,
            KeyCode::Up | KeyCode::Char('k') => Some(from_end + 1),
            KeyCode::Down | KeyCode::Char('j') => Some(from_end.saturating_sub(1)),
            KeyCode::PageUp | KeyCode::Char('b') => Some(from_end + page),
            KeyCode::PageDown | KeyCode::Char(' ') => Some(from_end.saturating_sub(page)),
            KeyCode::Home | KeyCode::Char('g') => Some(most),
            KeyCode::End | KeyCode::Char('G') => Some(0),
            _ => Some(from_end),
        }
        .map(|n| n.min(most));
    }
}
