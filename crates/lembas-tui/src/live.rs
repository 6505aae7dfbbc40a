//! The live area under the conversation: what streams now, the progress line, the input box or
//! a card, the status bar and a line of key hints. Its height follows what it holds — a card
//! shows what it asks about in full where the screen allows — so it is measured before it is
//! drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block as Frame_, Borders, Padding, Paragraph};

use crate::app::keys::Writing;
use crate::app::{App, Card};
use crate::rows::{self, hang};
use crate::view::{Theme, block_rows, diff_style, progress_line, status_line};

/// Rows the input box's text may take before it scrolls.
const INPUT_ROWS: u16 = 8;
/// Rows kept for the conversation above the live area, however tall a card is.
const KEEP_ABOVE: u16 = 2;

/// The rows the live area wants on a screen of `width`×`height`.
pub fn live_height(app: &App, width: u16, height: u16) -> u16 {
    let bottom = 3 + menu_height(app) + box_height(app, width, height.saturating_sub(KEEP_ABOVE + 3));
    let streaming = streaming_rows(app, width, Theme { no_color: true }).len() as u16;
    let most = height.saturating_sub(KEEP_ABOVE).max(bottom.min(height));
    (streaming + bottom).min(most).max(1)
}

/// What streams now, the calls in flight and the words queued for the next step, as rows.
fn streaming_rows(app: &App, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let mut rows: Vec<Line<'static>> =
        app.live.iter().chain(&app.running).flat_map(|block| rows::lines(block_rows(block, width, theme))).collect();
    let dim = theme.fg(Color::DarkGray);
    for words in &app.queued {
        let first = words.lines().next().unwrap_or_default();
        let shown: String = first.chars().take(usize::from(width.saturating_sub(14))).collect();
        rows.push(Line::from(vec![
            Span::styled(format!("› {shown}"), dim),
            Span::styled("  (queued)", dim.add_modifier(Modifier::ITALIC)),
        ]));
    }
    rows
}

/// The completion menu's rows (none while a card waits).
fn menu_height(app: &App) -> u16 {
    match (&app.menu, &app.card) {
        (Some(menu), None) => menu.items.len().min(crate::app::menu::MENU_ROWS) as u16,
        _ => 0,
    }
}

/// The completion menu: one choice a row, the chosen one marked.
fn menu_lines(app: &App, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let Some(menu) = &app.menu else { return Vec::new() };
    let (items, chosen) = menu.visible();
    let label_width = items.iter().map(|i| i.label.chars().count() + 1).max().unwrap_or(0).min(40);
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let sigil = menu.sigil.map(String::from).unwrap_or_default();
            let label = format!(" {sigil}{:<label_width$}", item.label);
            let room = usize::from(width).saturating_sub(label.chars().count() + 2);
            let detail: String = item.detail.chars().take(room).collect();
            let style = if i == chosen { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
            Line::from(vec![Span::styled(label, style), Span::styled(format!(" {detail}"), theme.fg(Color::DarkGray))])
        })
        .collect()
}

/// The input box's or the card's height, borders included, in at most `room` rows.
fn box_height(app: &App, width: u16, room: u16) -> u16 {
    // Inside the borders and the card's padding.
    let inner = width.saturating_sub(4);
    let room = room.max(3);
    match &app.card {
        Some(card) => {
            let lines = card_lines(app, card, inner, room.saturating_sub(2), Theme::default()).len() as u16;
            (lines + writing_rows(app, inner) + 2).min(room)
        }
        None => (app.input.rows(inner).min(INPUT_ROWS) + 2).min(room),
    }
}

/// Rows of the words being written for a card.
fn writing_rows(app: &App, inner: u16) -> u16 {
    if app.writing.is_some() || matches!(app.card, Some(Card::Question(_))) {
        app.input.rows(inner).min(INPUT_ROWS)
    } else {
        0
    }
}

/// Draws the live area.
pub fn draw(frame: &mut Frame, app: &App, now_ms: i64, theme: Theme) {
    let area = frame.area();
    let boxed = box_height(app, area.width, area.height.saturating_sub(3));
    let [live, progress, menu, input, status, hints] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(menu_height(app)),
        Constraint::Length(boxed),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_streaming(frame, app, live, theme);
    frame.render_widget(Paragraph::new(progress_line(app, now_ms)).style(theme.fg(Color::Yellow)), progress);
    frame.render_widget(Paragraph::new(menu_lines(app, menu.width, theme)), menu);
    match &app.card {
        Some(card) => draw_card(frame, app, card, input, theme),
        None => {
            // The frame drawn around the editor, not set on it: no copy of the editor a frame.
            let frame_ = Frame_::default().borders(Borders::ALL).title(" › ");
            let inner = frame_.inner(input);
            frame.render_widget(frame_, input);
            frame.render_widget(app.input.widget(), inner);
        }
    }
    frame.render_widget(Paragraph::new(status_line(app)).style(theme.fg(Color::DarkGray)), status);
    frame.render_widget(Paragraph::new(hint_line(app)).style(theme.fg(Color::DarkGray)), hints);
}

fn draw_streaming(frame: &mut Frame, app: &App, area: Rect, theme: Theme) {
    let lines = streaming_rows(app, area.width, theme);
    // The newest lines that fit.
    let skip = lines.len().saturating_sub(usize::from(area.height));
    frame.render_widget(Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()), area);
}

/// What the keys do now.
pub fn hint_line(app: &App) -> String {
    if let Some(hint) = &app.hint {
        return hint.clone();
    }
    match (&app.card, app.writing) {
        (_, Some(Writing::EditCommand)) => "Enter runs this command once · Esc goes back to the card".into(),
        (_, Some(_)) => "Enter sends these words · Esc goes back to the card".into(),
        (Some(Card::Question(_)), None) => {
            "↑↓ and Enter, or a number, pick · or write an answer and press Enter · Esc stops".into()
        }
        (Some(Card::Pick(_)), None) => "↑↓ choose · type to narrow · Enter takes it · Esc leaves".into(),
        (Some(Card::Settings(form)), None) if form.on_agents() => {
            "←→ moves the marked number · Tab the other one · Enter keeps · Esc leaves".into()
        }
        (Some(Card::Settings(_)), None) => "↑↓ a setting · ←→ change it · Enter keeps · Esc leaves".into(),
        (Some(Card::Plan(_)), None) => "Ctrl-O shows the plan whole · Ctrl-C twice quits".into(),
        (Some(Card::LooserMode(_)), None) => "y switches · n keeps the mode".into(),
        (Some(Card::Overwrite(_)), None) => "y puts them back · n keeps your changes".into(),
        (Some(_), None) => "Ctrl-O shows all of what is asked · Ctrl-C twice quits".into(),
        (None, None) if app.busy => "Esc stops the turn · Enter adds your words to it · Ctrl-C twice quits".into(),
        (None, None) if app.shell_running => "Esc stops the command · Ctrl-C twice quits".into(),
        (None, None) if app.input.is_empty() => {
            "Enter sends · / commands · @ file · ! shell · Shift-Tab mode · Ctrl-O unfolds".into()
        }
        (None, None) => "Enter sends · Shift-Enter new line · Tab completes · Ctrl-C clears".into(),
    }
}

/// A card's lines inside its frame, `width` wide, at most `room` rows: what it asks about in
/// full when it fits, its options always.
pub fn card_lines(app: &App, card: &Card, width: u16, room: u16, theme: Theme) -> Vec<Line<'static>> {
    let cols = usize::from(width.max(1));
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = theme.fg(Color::DarkGray);
    let words = |text: &str, style: Style| wrapped(text, style, cols);
    let (head, body, foot): CardParts = match card {
        Card::Approval(request) => approval_parts(request, cols, theme),
        Card::LooserMode(mode) => (
            words(
                &format!(
                    "Switch to {mode}? It changes files and runs commands without asking (the hardline still holds)."
                ),
                Style::default(),
            ),
            Vec::new(),
            words("[y] yes  [n] no", Style::default()),
        ),
        Card::Overwrite(paths) => (
            words(
                "These files changed after the turn, so they were left as they are now. Put them back as they were before it? Your changes to them go.",
                Style::default(),
            ),
            paths.iter().map(|p| Line::from(format!("  {p}"))).collect(),
            words("[y] put them back  [n] keep them as they are", Style::default()),
        ),
        Card::Question(q) => {
            // The option Enter would take is marked, while nothing is written.
            let marked = app.input.is_empty().then_some(app.choice);
            let options: Vec<Line> = q
                .options
                .iter()
                .enumerate()
                .flat_map(|(i, o)| {
                    let (mark, style) = if marked == Some(i) {
                        ("›", Style::default().add_modifier(Modifier::REVERSED))
                    } else {
                        (" ", Style::default())
                    };
                    words(&format!("{mark}[{}] {o}", i + 1), style)
                })
                .collect();
            (words(&q.question, bold), options, Vec::new())
        }
        Card::Pick(picker) => return picker_lines(picker, cols, usize::from(room), theme),
        Card::Settings(form) => return settings_lines(form, cols, theme),
        Card::Plan(plan) => (
            Vec::new(),
            words(plan, Style::default()),
            words(
                "[y] approve and start  [1] in manual  [2] in edit  [3] in auto  [n] keep planning, with words  [Esc] not yet",
                Style::default(),
            ),
        ),
    };
    let mut foot = foot;
    if let Some(writing) = app.writing {
        let asked = match writing {
            Writing::DenyWords => "Why not? The model reads your words.",
            Writing::EditCommand => "The command to run instead:",
            Writing::PlanFeedback => "What should change in the plan?",
        };
        foot = words(asked, bold);
    }
    // What is asked about folds first; the question and the options always show.
    let room = usize::from(room).saturating_sub(head.len() + foot.len());
    let mut lines = head;
    if body.len() > room {
        let shown = room.saturating_sub(1);
        let more = body.len() - shown;
        lines.extend(body.into_iter().take(shown));
        lines.push(Line::from(Span::styled(format!("… {more} more rows (Ctrl-O shows all)"), dim)));
    } else {
        lines.extend(body);
    }
    lines.extend(foot);
    lines
}

/// An approval card's parts: the call, what it would do (a command whole, a file's change), and
/// the answers.
fn approval_parts(request: &lembas_protocol::ApprovalRequest, cols: usize, theme: Theme) -> CardParts {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = theme.fg(Color::DarkGray);
    let words = |text: &str, style: Style| wrapped(text, style, cols);
    // A command shown whole below needs no cut-short title.
    let title = if request.runs_command && request.preview.is_some() { "" } else { request.title.as_str() };
    let head = rows::lines(hang(
        &[],
        &[Span::raw("  ")],
        vec![Span::styled(request.tool.clone(), bold), Span::raw(format!(" {title}"))],
        cols,
    ));
    let body = match request.preview.as_deref() {
        // A command, whole and wrapped: what runs is what is read.
        Some(command) if request.runs_command => rows::lines(
            command
                .lines()
                .enumerate()
                .flat_map(|(i, l)| {
                    let lead = if i == 0 { "$ " } else { "  " };
                    hang(&[Span::styled(lead, dim)], &[Span::raw("  ")], vec![Span::raw(l.to_owned())], cols)
                })
                .collect(),
        ),
        // One file's change: its path is the title already.
        Some(diff) => diff_lines(diff.strip_prefix(&format!("{}\n", request.title)).unwrap_or(diff), cols, theme),
        None => Vec::new(),
    };
    let mut foot = Vec::new();
    if let Some(first) = request.reaches.first().filter(|r| !request.title.contains(r.as_str())) {
        foot.extend(words(&format!("reaches {first}"), dim));
    }
    if let Some(allows) = &request.session_allows {
        foot.extend(words(&format!("[a] allows {allows} for the rest of this session"), dim));
    }
    let options = if request.once_only {
        "[y] once (asked every time)  [n] no  [d] no, say why  [Esc] stop"
    } else if request.runs_command {
        "[y] once  [a] this session  [n] no  [d] no, say why  [e] edit the command  [Esc] stop"
    } else {
        "[y] once  [a] this session  [n] no  [d] no, say why  [Esc] stop"
    };
    foot.extend(words(options, Style::default()));
    (head, body, foot)
}

/// A card's three parts: what it asks about, what it shows, and its options.
type CardParts = (Vec<Line<'static>>, Vec<Line<'static>>, Vec<Line<'static>>);

/// `text` wrapped to `cols`, each line of it in `style`.
fn wrapped(text: &str, style: Style, cols: usize) -> Vec<Line<'static>> {
    rows::lines(text.lines().flat_map(|l| hang(&[], &[], vec![Span::styled(l.to_owned(), style)], cols)).collect())
}

/// A picker: what was typed, then the items it leaves, a window of them around the chosen one.
fn picker_lines(picker: &crate::app::picker::Picker, cols: usize, room: usize, theme: Theme) -> Vec<Line<'static>> {
    let dim = theme.fg(Color::DarkGray);
    let listed = picker.listed();
    let mut lines = vec![Line::from(vec![
        Span::styled("› ", dim),
        Span::raw(picker.filter.clone()),
        Span::styled(format!("   {} of {} · type to narrow, Enter chooses", listed.len(), picker.items.len()), dim),
    ])];
    let rows = room.saturating_sub(1).max(1);
    let first = picker.selected.saturating_sub(rows - 1);
    for (i, item) in listed.iter().enumerate().skip(first).take(rows) {
        let chosen = i == picker.selected;
        let mark = if chosen { "▸ " } else { "  " };
        let label_style =
            if chosen { Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED) } else { Style::default() };
        let mut text: String = format!("{mark}{}", item.label);
        let mut spans = vec![Span::styled(text.clone(), label_style)];
        if !item.detail.is_empty() {
            let room = cols.saturating_sub(unicode_width::UnicodeWidthStr::width(text.as_str()) + 3);
            let detail: String = item.detail.chars().take(room).collect();
            text = format!("  {detail}");
            spans.push(Span::styled(text, dim));
        }
        lines.push(Line::from(spans));
    }
    if listed.is_empty() {
        lines.push(Line::from(Span::styled("  nothing matches", dim)));
    }
    lines
}

/// The settings form: a row a setting, the one the arrows change marked.
fn settings_lines(form: &crate::app::settings::Form, cols: usize, theme: Theme) -> Vec<Line<'static>> {
    let dim = theme.fg(Color::DarkGray);
    let mut lines: Vec<Line> = form
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let here = i == form.at;
            let value = row.choices.get(row.chosen).cloned().unwrap_or_default();
            let changed = if row.chosen != row.was { " (changed)" } else { "" };
            let style = if here { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
            Line::from(vec![
                Span::raw(if here { "▸ " } else { "  " }),
                Span::raw(format!("{:<15}", row.name)),
                Span::styled(format!("‹ {value} ›"), style),
                Span::styled(changed.to_owned(), dim),
            ])
        })
        .collect();
    lines.push(agents_line(form, theme));
    // What the numbers count (`subagents.setting.hint`, or `short` where a line has no room).
    let hint = lembas_protocol::agents::setting_text("hint");
    let hint = if hint.chars().count() + 2 <= cols { hint } else { lembas_protocol::agents::setting_text("short") };
    lines.extend(rows::lines(hang(
        &[Span::raw("  ")],
        &[Span::raw("  ")],
        vec![Span::styled(hint.to_owned(), dim)],
        cols,
    )));
    lines.extend(rows::lines(hang(
        &[],
        &[],
        vec![Span::styled("Enter keeps the changes in config.toml and applies them · Esc leaves them", dim)],
        cols,
    )));
    lines
}

/// The Subagents row: Min and Max on one line, the handle the arrows move marked.
fn agents_line(form: &crate::app::settings::Form, theme: Theme) -> Line<'static> {
    let range = &form.agents;
    let here = form.on_agents();
    let marked = |handle: usize| {
        if here && range.handle == handle {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        }
    };
    let changed = if (range.min, range.max) != range.was { " (changed)" } else { "" };
    Line::from(vec![
        Span::raw(if here { "▸ " } else { "  " }),
        Span::raw(format!("{:<15}", lembas_protocol::agents::setting_text("label"))),
        Span::raw(format!("{} ", lembas_protocol::agents::setting_text("min"))),
        Span::styled(format!("‹ {} ›", range.min), marked(0)),
        Span::raw(format!("  {} ", lembas_protocol::agents::setting_text("max"))),
        Span::styled(format!("‹ {} ›", range.max), marked(1)),
        Span::raw(format!("  of 1–{}", range.cap)),
        Span::styled(changed.to_owned(), theme.fg(Color::DarkGray)),
    ])
}

/// A diff (or a new file's content) as coloured rows: added lines green, removed red.
fn diff_lines(diff: &str, cols: usize, theme: Theme) -> Vec<Line<'static>> {
    rows::lines(
        diff.lines()
            .flat_map(|row| {
                let hunk = row.starts_with('@').then(|| theme.fg(Color::Cyan));
                let style = diff_style(row, theme).or(hunk).unwrap_or_default();
                hang(&[], &[Span::raw(" ")], vec![Span::styled(row.to_owned(), style)], cols)
            })
            .collect(),
    )
}

fn draw_card(frame: &mut Frame, app: &App, card: &Card, area: Rect, theme: Theme) {
    let title = match card {
        Card::Approval(request) => match &request.agent {
            // A subagent's call: the card says whose it is.
            Some(agent) => format!(" Allow the subagent \"{agent}\"? "),
            None => " Allow? ".to_owned(),
        },
        Card::LooserMode(_) => " Looser mode ".to_owned(),
        Card::Overwrite(_) => " Changed since ".to_owned(),
        Card::Question(_) => " Question ".to_owned(),
        Card::Plan(_) => " The plan ".to_owned(),
        Card::Pick(picker) => format!(" {} ", picker.title),
        Card::Settings(_) => " Settings ".to_owned(),
    };
    let frame_ = Frame_::default()
        .borders(Borders::ALL)
        .padding(Padding::horizontal(1))
        .title(title)
        .border_style(theme.fg(Color::Yellow));
    let inner = frame_.inner(area);
    frame.render_widget(frame_, area);
    let typing = writing_rows(app, inner.width).min(inner.height);
    let [text, words] = Layout::vertical([Constraint::Min(0), Constraint::Length(typing)]).areas::<2>(inner);
    let lines = card_lines(app, card, inner.width, text.height, theme);
    frame.render_widget(Paragraph::new(lines), text);
    if typing > 0 {
        frame.render_widget(app.input.widget(), words);
    }
}
