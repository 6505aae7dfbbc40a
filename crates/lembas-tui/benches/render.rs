//! The terminal UI under a fast stream: 1,000 tokens a second for five seconds into the live
//! area (120×40 test backend), a frame drawn after every token, and a key pressed every 50 ms.
//! Prints frames per second the drawing could sustain and the input latency (key to frame).
//!
//! `cargo bench -p lembas-tui --bench render`

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_core::Event;
use lembas_core::Mode;
use lembas_core::Progress;
use lembas_core::progress::Phase;
use lembas_tui::{App, Theme, block_lines, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut app = App::new("bench-model", Mode::Edit, None, 128_000);
    app.apply(&Event::Prompt { text: "write a lot".into(), machine: false });
    app.apply(&Event::Phase { progress: Some(Progress::new(Phase::Writing { rate: Some(1000.0) }, 0)) });
    let tokens = 5_000;
    let mut draw_time = Duration::ZERO;
    let mut latencies = Vec::new();
    for n in 0..tokens {
        let delta = if n % 40 == 39 { "word\n\n".to_owned() } else { format!("word{n} ") };
        app.apply(&Event::Text { delta });
        if n % 50 == 0 {
            // A key while it streams: handled, then the frame that shows it.
            let start = Instant::now();
            app.key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
            terminal.draw(|f| draw(f, &app, n as i64, Theme::default())).unwrap();
            latencies.push(start.elapsed());
        }
        let start = Instant::now();
        terminal.draw(|f| draw(f, &app, n as i64, Theme::default())).unwrap();
        draw_time += start.elapsed();
    }
    // Finishing the block: what goes to the scrollback.
    let start = Instant::now();
    let lines = app.live.as_ref().map(|b| block_lines(b, 120, Theme::default()).len()).unwrap_or(0);
    let finish = start.elapsed();
    latencies.sort();
    let per_frame = draw_time / tokens;
    println!(
        "render: {tokens} tokens, a frame after each: {:.0} µs per frame ({:.0} frames/s possible, 1,000 needed); input latency median {:.0} µs, worst {:.0} µs; the finished block ({lines} lines) laid out in {:.1} ms",
        per_frame.as_secs_f64() * 1e6,
        1.0 / per_frame.as_secs_f64(),
        latencies[latencies.len() / 2].as_secs_f64() * 1e6,
        latencies.last().unwrap().as_secs_f64() * 1e6,
        finish.as_secs_f64() * 1e3,
    );
}
