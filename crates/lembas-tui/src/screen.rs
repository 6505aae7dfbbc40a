//! The terminal the UI draws on: the conversation written into the scrollback as it finishes,
//! the live area under it as tall as what it holds, the transcript view on the alternate screen,
//! and a resize met by starting the live area again where the terminal moved it.

use std::io::Write;

use crossterm::event::{DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Size;

use crate::{App, Block, LIVE_HEIGHT, Row, Theme, block_rows, draw, fixed_terminal, inline_terminal, live_height};
use crate::{now_ms, scrollback, transcript};

type Term = Terminal<CrosstermBackend<std::io::Stdout>>;

pub(crate) struct Screen {
    terminal: Term,
    theme: Theme,
    known_size: Size,
    /// The last block written was a tool call's.
    after_tools: bool,
    /// The transcript view's screen while it is open.
    full: Option<Term>,
    /// The transcript view's lines as last made, and for what (width and how much there was).
    shown: Vec<ratatui::text::Line<'static>>,
    shown_for: Option<(u16, usize, bool, usize)>,
}

impl Screen {
    /// Takes the terminal: raw keys, pastes and focus reported, the live area under the cursor.
    pub(crate) fn open(theme: Theme) -> std::io::Result<Screen> {
        crossterm::terminal::enable_raw_mode()?;
        crossterm::execute!(std::io::stdout(), EnableBracketedPaste, EnableFocusChange)?;
        let terminal = inline_terminal()?;
        let known_size = terminal.size()?;
        Ok(Screen { terminal, theme, known_size, after_tools: false, full: None, shown: Vec::new(), shown_for: None })
    }

    /// One frame, shown by the terminal all at once: standard output writes in pieces of a
    /// kilobyte, and a terminal that showed each piece as it came would show a card's top with
    /// the lines under it missing or old (terminals that do not know the mode ignore it).
    pub(crate) fn draw(&mut self, app: &mut App) -> std::io::Result<()> {
        crossterm::queue!(std::io::stdout(), BeginSynchronizedUpdate)?;
        let drawn = self.draw_frame(app);
        crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate)?;
        drawn
    }

    /// What finished goes above, then the live area (or the transcript view).
    fn draw_frame(&mut self, app: &mut App) -> std::io::Result<()> {
        let size = self.terminal.size()?;
        if size != self.known_size {
            self.resized(size)?;
        }
        if app.viewing.is_some() {
            return self.transcript_view(app, size);
        }
        if self.full.take().is_some() {
            crossterm::execute!(std::io::stdout(), LeaveAlternateScreen)?;
            self.shown_for = None;
            self.terminal.clear()?;
        }
        // The live area as tall as what it holds now (written blocks take no part in it).
        let want = live_height(app, size.width, size.height);
        if !app.finished.is_empty() {
            self.write_finished(app, size, want)?;
        }
        let current = self.terminal.get_frame().area();
        if want != current.height {
            let live = scrollback::place_live(&mut std::io::stdout(), current, want, size)?;
            self.terminal = fixed_terminal(live)?;
        }
        let theme = self.theme;
        self.terminal.draw(|frame| draw(frame, app, now_ms(), theme))?;
        // (A completed frame's `area` is the whole terminal; a frame's is the live area.)
        let top = self.terminal.get_frame().area().y;
        self.terminal.set_cursor_position((0, top))?;
        ratatui::backend::Backend::flush(self.terminal.backend_mut())
    }

    /// The terminal changed size, and may have reflowed the live area's lines (a narrower one
    /// wraps them). The cursor is parked on the live area's first line after every frame, and
    /// the terminal moved it with that line: blank from there down and start the live area
    /// there again. The conversation above stays as the terminal keeps it, and no copy of the
    /// old live area is left behind.
    fn resized(&mut self, size: Size) -> std::io::Result<()> {
        crossterm::execute!(std::io::stdout(), Clear(ClearType::FromCursorDown))?;
        self.terminal = match inline_terminal() {
            Ok(terminal) => terminal,
            // The terminal did not say where its cursor is (keys are being read): the live area
            // goes to the bottom of the screen, blanked.
            Err(_) => {
                let height = LIVE_HEIGHT.min(size.height.max(1));
                let live = ratatui::layout::Rect { x: 0, y: size.height - height, width: size.width, height };
                scrollback::blank_from(&mut std::io::stdout(), live.y, size.height)?;
                std::io::stdout().flush()?;
                fixed_terminal(live)?
            }
        };
        self.known_size = size;
        Ok(())
    }

    /// The transcript view, on the alternate screen; the conversation waits under it.
    fn transcript_view(&mut self, app: &mut App, size: Size) -> std::io::Result<()> {
        let full = match self.full.as_mut() {
            Some(full) => full,
            None => {
                crossterm::execute!(std::io::stdout(), EnterAlternateScreen)?;
                self.full.insert(Terminal::new(CrosstermBackend::new(std::io::stdout()))?)
            }
        };
        let key = (size.width, app.transcript.len() + app.finished.len(), app.live.is_some(), app.running.len());
        if self.shown_for != Some(key) {
            self.shown = transcript::transcript_lines(app, size.width, self.theme);
            self.shown_for = Some(key);
        }
        let (from_end, theme, shown) = (app.viewing.unwrap_or(0), self.theme, &self.shown);
        let mut most = 0;
        full.draw(|frame| most = transcript::draw(frame, shown, from_end, theme))?;
        app.view_size = (usize::from(size.height.saturating_sub(2)).max(1), most);
        Ok(())
    }

    /// Finished blocks go above the live area as text the terminal wraps itself: the live area
    /// is blanked (the cursor is parked on its first row), the rows written there, and the live
    /// area starts again under them, `want` rows tall.
    fn write_finished(&mut self, app: &mut App, size: Size, want: u16) -> std::io::Result<()> {
        let mut rows: Vec<Row> = Vec::new();
        let blocks: Vec<Block> = app.finished.drain(..).collect();
        for block in &blocks {
            // Words after tool calls stand apart from them.
            if self.after_tools && matches!(block, Block::Assistant(_) | Block::User(_)) {
                rows.push(Row::blank());
            }
            self.after_tools = matches!(block, Block::Tool { .. });
            rows.extend(block_rows(block, size.width, self.theme));
        }
        app.transcript.extend(blocks);
        // Room under them for the live area.
        let top = self.terminal.get_frame().area().y;
        let live = scrollback::write_above(&mut std::io::stdout(), &rows, top, size, want)?;
        self.terminal = fixed_terminal(live)?;
        Ok(())
    }

    /// Gives the terminal back with the scrollback as it is: the live area blanked and the
    /// cursor at its top, so the shell's prompt comes right after the conversation.
    pub(crate) fn close(mut self) -> std::io::Result<()> {
        if self.full.take().is_some() {
            crossterm::execute!(std::io::stdout(), LeaveAlternateScreen)?;
        }
        self.terminal.draw(|frame| frame.render_widget(ratatui::widgets::Clear, frame.area()))?;
        let top = self.terminal.get_frame().area().y;
        self.terminal.set_cursor_position((0, top))?;
        crossterm::execute!(std::io::stdout(), DisableBracketedPaste, DisableFocusChange)?;
        crossterm::terminal::disable_raw_mode()
    }
}
