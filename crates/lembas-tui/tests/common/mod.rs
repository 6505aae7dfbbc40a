//! What the tests of the UI share: the live area drawn as text.

#![allow(dead_code)]

use lembas_tui::{App, Theme, draw, live_height};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// A test backend's cells as text, a line a row, blanks at the ends of rows dropped.
pub fn text_of(backend: &TestBackend) -> String {
    let buffer = backend.buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width).map(|x| buffer[(x, y)].symbol().to_owned()).collect::<String>().trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The live area on a screen `width`×`height`, as tall as it asks to be, without colour.
pub fn live_area(app: &App, now: i64, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, live_height(app, width, height))).unwrap();
    terminal.draw(|f| draw(f, app, now, Theme { no_color: true })).unwrap();
    text_of(terminal.backend())
}
