//! The terminal UI's drawing cost, on a 120×40 test backend:
//!
//! 1. Streaming: a 2,000-line Markdown reply (headings, paragraphs, lists, tables, code) arrives
//!    a token at a time; after every token the live area is drawn and what settled is laid out
//!    for the scrollback — the work one frame does. At 1,000 tokens a second a frame has 1 ms.
//! 2. A key in a long session: 5,000 blocks already written; a key is handled and the live area
//!    drawn (what the person waits for), and Ctrl-O's transcript view laid out and scrolled.
//!
//! `cargo bench -p lembas-tui --bench render`

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::Event;
use lembas_protocol::Mode;
use lembas_protocol::Progress;
use lembas_protocol::progress::Phase;
use lembas_tui::{App, Block, Theme, block_rows, draw, live_height};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// A long reply: sections of prose, lists, a table and code, 2,000 lines in all.
fn reply() -> String {
    let mut text = String::new();
    let mut section = 0;
    while text.lines().count() < 2_000 {
        section += 1;
        text.push_str(&format!("## Section {section}\n\n"));
        text.push_str("The parser keeps **every** token and `lex()` reports where each came from, so an error can point at the exact place in the source that caused it.\n\n");
        text.push_str(
            "1. Read the grammar\n2. Change the lexer\n   - keep spans\n   - test them\n3. Run the tests\n\n",
        );
        text.push_str("| File | Lines | What |\n|---|--:|---|\n| src/lex.rs | 120 | the lexer |\n| src/parse.rs | 80 | the parser |\n\n");
        text.push_str("```rust\nfn span(&self) -> Range<usize> {\n    self.start..self.end\n}\n```\n\n");
        text.push_str("> Spans are byte offsets into the source.\n\n");
    }
    text
}

/// The reply cut into tokens as a model streams them: words with their spaces, newlines apart.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        word.push(c);
        if c == ' ' || c == '\n' {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn live_terminal(app: &App) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, live_height(app, 120, 40))).unwrap()
}

fn streaming() {
    let theme = Theme::default();
    let mut app = App::new("bench-model", Mode::Edit, None, 128_000);
    app.apply(&Event::Prompt { text: "write a lot".into(), machine: false });
    app.apply(&Event::Phase { progress: Some(Progress::new(Phase::Writing { rate: Some(1000.0) }, 0)) });
    let tokens = tokens(&reply());
    let mut frames = Vec::with_capacity(tokens.len());
    let mut written_rows = 0;
    for (n, token) in tokens.iter().enumerate() {
        let start = Instant::now();
        app.apply(&Event::Text { delta: token.clone() });
        // What settled goes to the scrollback: laid out as rows (the terminal write aside).
        for block in app.finished.drain(..) {
            written_rows += block_rows(&block, 120, theme).len();
        }
        let mut terminal = live_terminal(&app);
        terminal.draw(|f| draw(f, &app, n as i64, theme)).unwrap();
        frames.push(start.elapsed());
    }
    frames.sort();
    let total: Duration = frames.iter().sum();
    let mean = total / frames.len() as u32;
    println!(
        "render, streaming: {} tokens of a 2,000-line Markdown reply, a frame after each: mean {:.0} µs, median {:.0} µs, p99 {:.0} µs, worst {:.0} µs ({:.0} frames/s possible, 1,000 needed); {written_rows} rows written to the scrollback",
        frames.len(),
        mean.as_secs_f64() * 1e6,
        frames[frames.len() / 2].as_secs_f64() * 1e6,
        frames[frames.len() * 99 / 100].as_secs_f64() * 1e6,
        frames.last().unwrap().as_secs_f64() * 1e6,
        1.0 / mean.as_secs_f64(),
    );
}

fn long_session() {
    let theme = Theme::default();
    let mut app = App::new("bench-model", Mode::Edit, None, 128_000);
    for n in 0..5_000 {
        app.transcript.push(match n % 4 {
            0 => Block::User(format!("prompt number {n}, asking for a change to the parser")),
            1 => Block::Tool {
                call_id: n.to_string(),
                tool: "bash".into(),
                title: "cargo test".into(),
                state: lembas_tui::app::ToolState::Done,
                summary: "done, 12 lines of output".into(),
                shown: "running 12 tests\ntest a ... ok".into(),
                body: (0..12).map(|i| format!("test t{i} ... ok\n")).collect(),
            },
            2 => Block::Thinking("The lexer drops positions.\nThe parser needs them.".into()),
            _ => Block::Assistant("## Done\n\nThe parser keeps its spans now:\n\n1. lexer\n2. parser\n".into()),
        });
    }
    let mut latencies = Vec::new();
    for n in 0..500 {
        let start = Instant::now();
        app.key(KeyEvent::new(KeyCode::Char(if n % 2 == 0 { 'x' } else { 'y' }), KeyModifiers::NONE));
        let mut terminal = live_terminal(&app);
        terminal.draw(|f| draw(f, &app, n, theme)).unwrap();
        latencies.push(start.elapsed());
    }
    latencies.sort();
    // Ctrl-O: the transcript laid out once, then each scroll key draws a screen of it.
    let start = Instant::now();
    app.key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let lines = lembas_tui::transcript::transcript_lines(&app, 120, theme);
    let mut full = Terminal::new(TestBackend::new(120, 40)).unwrap();
    full.draw(|f| _ = lembas_tui::transcript::draw(f, &lines, 0, theme)).unwrap();
    let open = start.elapsed();
    let mut scrolls = Vec::new();
    for n in 0..200 {
        let start = Instant::now();
        app.key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
        full.draw(|f| _ = lembas_tui::transcript::draw(f, &lines, n * 38, theme)).unwrap();
        scrolls.push(start.elapsed());
    }
    scrolls.sort();
    println!(
        "render, a 5,000-block session: key to redraw median {:.0} µs, worst {:.0} µs; the transcript view ({} lines) opened in {:.1} ms, a Page key in it median {:.0} µs",
        latencies[latencies.len() / 2].as_secs_f64() * 1e6,
        latencies.last().unwrap().as_secs_f64() * 1e6,
        lines.len(),
        open.as_secs_f64() * 1e3,
        scrolls[scrolls.len() / 2].as_secs_f64() * 1e6,
    );
}

fn main() {
    streaming();
    long_session();
}
