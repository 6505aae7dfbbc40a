//! What the screen shows, as text, at 80×24 and 120×40: every block kind, every card, the
//! pickers, the settings form and the transcript view. The snapshots under `snapshots/` are
//! reviewed like code; `INSTA_UPDATE=always cargo test -p lembas-tui --test snapshots` writes
//! them anew after a change meant to show.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::{ApprovalRequest, Event, Mode, ModelInfo, Question, StoredSession, ToolOutcome};
use lembas_tui::{App, Block, Theme, block_lines, draw, live_height, plain};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// The screen: the conversation's last rows above the live area, as a terminal shows them.
fn screen(app: &App, width: u16, height: u16) -> String {
    let theme = Theme { no_color: true };
    if app.viewing.is_some() {
        let lines = lembas_tui::transcript::transcript_lines(app, width, theme);
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| _ = lembas_tui::transcript::draw(f, &lines, app.viewing.unwrap_or(0), theme)).unwrap();
        return common::text_of(terminal.backend());
    }
    let live = live_height(app, width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, live)).unwrap();
    terminal.draw(|f| draw(f, app, 0, theme)).unwrap();
    let above: Vec<String> = app
        .transcript
        .iter()
        .chain(&app.finished)
        .flat_map(|b| block_lines(b, width, theme))
        .map(|l| plain(&l))
        .collect();
    let room = usize::from(height - live);
    let mut rows: Vec<String> = above.iter().skip(above.len().saturating_sub(room)).cloned().collect();
    while rows.len() < room {
        rows.push(String::new());
    }
    rows.push(common::text_of(terminal.backend()));
    rows.iter().map(|r| r.trim_end()).collect::<Vec<_>>().join("\n")
}

fn snap(name: &str, app: &App) {
    for (width, height) in SIZES {
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), screen(app, width, height));
    }
}

fn app() -> App {
    let mut app = App::new("fake-model", Mode::Manual, None, 32_768);
    app.models = vec![
        ModelInfo { id: "fake-model".into(), context: Some(32_768), ..Default::default() },
        ModelInfo { id: "big-model".into(), context: Some(200_000), ..Default::default() },
    ];
    app.context = (2_998, 32_768);
    app
}

/// A call as the engine says it: its title, and what came of it (the summary its handler gave,
/// the body a person reads, whether that is shown and whether it went wrong).
fn tool(app: &mut App, id: &str, name: &str, title: &str, outcome: ToolOutcome) {
    let start = Event::ToolStart {
        call_id: id.into(),
        tool: name.into(),
        title: title.into(),
        args: serde_json::Value::Null,
        paths: vec![],
    };
    app.apply(&start);
    app.apply(&Event::ToolEnd {
        call_id: id.into(),
        tool: name.into(),
        result_id: None,
        text: String::new(),
        is_error: false,
        outcome,
        diffs: vec![],
    });
}

fn ended(summary: &str, body: &str, show_body: bool, went_wrong: bool) -> ToolOutcome {
    ToolOutcome { summary: summary.into(), body: body.into(), show_body, went_wrong, whole: false }
}

const MARKDOWN: &str = "## What changed\n\nThe parser now keeps **every** token, and `lex()` reports where each came from. See [the notes](https://example.com/notes).\n\n1. Read the grammar\n2. Change the lexer\n   - keep spans\n   - test them\n3. Run the tests\n\n> Spans are byte offsets.\n\n| File | Lines | What |\n|---|--:|---|\n| src/lex.rs | 120 | the lexer, with spans kept for every token |\n| src/parse.rs | 80 | the parser |\n\n```rust\nfn span(&self) -> Range<usize> { self.start..self.end }\n```\n";

fn conversation() -> App {
    let mut app = app();
    app.apply(&Event::Prompt { text: "make the parser keep its spans".into(), machine: false });
    app.apply(&Event::Reasoning {
        delta: "The lexer drops positions.\nThe parser needs them for errors.\nBoth change.\nTests too.".into(),
    });
    tool(&mut app, "1", "read", "src/lex.rs", ended("Read 120 lines", "1: use std;", false, false));
    let found = "src/lex.rs:3: fn lex()\nsrc/parse.rs:9: fn lex_all()";
    tool(&mut app, "2", "grep", "\"fn lex\" in src", ended("2 matches in 2 files", found, false, false));
    let globbed = "src/lex.rs\nsrc/parse.rs\nsrc/main.rs";
    tool(&mut app, "3", "glob", "src/**/*.rs", ended("Found 3 files", globbed, false, false));
    tool(&mut app, "4", "list", ".", ended("2 entries", "src/\nCargo.toml", false, false));
    let diff = "@@ -1,3 +1,3 @@\n use std;\n-fn lex() {}\n+fn lex() -> Vec<Token> { Vec::new() }\n keep";
    tool(&mut app, "5", "edit", "src/lex.rs", ended("1 line added, 1 removed", diff, true, false));
    let output = "running 3 tests\ntest spans ... FAILED";
    tool(&mut app, "6", "bash", "cargo test", ended("exit 101", output, true, true));
    app.apply(&Event::ToolStart {
        call_id: "7".into(),
        tool: "bash".into(),
        title: "rm -rf ~".into(),
        args: json!({"command": "rm -rf ~"}),
        paths: vec![],
    });
    app.apply(&Event::ToolDenied {
        call_id: "7".into(),
        tool: "bash".into(),
        reason: "Refused in every mode: it deletes the home folder.".into(),
    });
    app.apply(&Event::Text { delta: MARKDOWN.into() });
    app.apply(&Event::Notice { message: "The conversation was summarised to make room.".into() });
    app.apply(&Event::Error { message: "The model server refused: 400 bad request".into() });
    app.apply(&Event::Done {
        reason: lembas_protocol::DoneReason::Answered,
        text: String::new(),
        steps: 7,
        session: "s".into(),
        usage: Default::default(),
    });
    app.last_turn = Some("12s · 16020 tokens".into());
    app
}

#[test]
fn every_block_kind() {
    snap("blocks", &conversation());
}

#[test]
fn the_transcript_view() {
    let mut app = conversation();
    app.key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    snap("transcript", &app);
}

#[test]
fn the_input_while_writing_and_while_a_turn_runs() {
    let mut app = app();
    app.input.set("a prompt written over\nthree lines, the last one long enough to wrap at eighty columns and more");
    snap("input", &app);
    app.apply(&Event::Prompt { text: "go".into(), machine: false });
    app.apply(&Event::Text { delta: "Working on it: the first".into() });
    app.input.set("");
    snap("busy", &app);
}

fn request(tool: &str, title: &str, preview: Option<&str>, once_only: bool) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c".into(),
        tool: tool.into(),
        title: title.into(),
        reaches: vec![format!("/home/me/proj/{title}")],
        agent: None,
        once_only,
        preview: preview.map(str::to_owned),
        runs_command: tool == "bash",
        session_allows: (!once_only).then(|| {
            if tool == "bash" { "commands matching `make *`".to_owned() } else { format!("every {tool} call") }
        }),
        subagent: None,
        ..Default::default()
    }
}

#[test]
fn approval_cards() {
    let mut app = app();
    app.ask(request(
        "edit",
        "src/lex.rs",
        Some("src/lex.rs\n@@ -1,3 +1,3 @@\n use std;\n-fn lex() {}\n+fn lex() -> Vec<Token> { Vec::new() }\n keep"),
        false,
    ));
    snap("card_edit", &app);
    app.key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::NONE));
    snap("card_deny_with_words", &app);

    let mut app = self::app();
    let long = "make clean && make -j8 all CFLAGS='-O2 -g -Wall -Wextra' LDFLAGS='-L/usr/local/lib -lm' 2>&1 | tee build.log && ./run-the-integration-tests --all --verbose";
    app.ask(request("bash", "make clean && make…", Some(long), false));
    snap("card_command", &app);

    let mut app = self::app();
    let content: String = (1..=60).map(|i| format!("+line {i} of the new file\n")).collect();
    app.ask(request("write", ".mcp.json", Some(&format!(".mcp.json (new file, 60 lines)\n{content}")), true));
    snap("card_write_once_only", &app);

    let mut app = self::app();
    app.ask(ApprovalRequest {
        agent: Some("fix the lexer".into()),
        ..request("bash", "make test", Some("make test"), false)
    });
    snap("card_subagent", &app);
}

#[test]
fn question_plan_and_mode_cards() {
    let mut app = app();
    app.question(Question {
        question: "Which database should the store use?".into(),
        options: vec!["sqlite".into(), "postgres".into()],
    });
    snap("card_question", &app);
    let mut app = self::app();
    app.plan("Plan: keep spans\n\n1. Lexer\n   [ ] 1.1 record byte offsets\n   [ ] 1.2 carry them in tokens\n2. Parser\n   [ ] 2.1 report spans in errors".into());
    snap("card_plan", &app);
    // Only auto is asked first: from edit, Shift-Tab comes to it.
    let mut app = self::app();
    app.mode = Some(lembas_protocol::Mode::Edit);
    app.key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    snap("card_looser_mode", &app);
}

#[test]
fn pickers_and_settings() {
    let mut app = app();
    app.input.set("/model");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    snap("picker_model", &app);
    let mut app = self::app();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let session = |title: &str, hours: i64| {
        (
            StoredSession {
                id: title.replace(' ', "-"),
                title: title.into(),
                project: "/home/me/proj".into(),
                model: "fake-model".into(),
                created_at: now - hours * 3_600_000,
                updated_at: now - hours * 3_600_000,
                messages: 12,
                parent: None,
            },
            None,
        )
    };
    app.show_sessions(Ok(vec![session("fix the parser", 2), session("add spans", 30), session("write the docs", 100)]));
    snap("picker_sessions", &app);
    let mut app = self::app();
    app.input.set("/settings");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
    snap("settings", &app);
}

#[test]
fn the_help() {
    let mut app = app();
    app.input.set("/help");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(app.finished.last(), Some(Block::Notice(_))));
    snap("help", &app);
}

#[test]
fn any_width_and_height_draws_without_a_panic() {
    let mut cards = vec![conversation()];
    let mut carded = app();
    carded.ask(request("edit", "src/lex.rs", Some("src/lex.rs\n@@ -1 +1 @@\n-a\n+b"), false));
    cards.push(carded);
    let mut picking = app();
    picking.input.set("/model");
    picking.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    cards.push(picking);
    for app in &cards {
        for width in 1..=45 {
            for height in [1, 2, 3, 5, 8, 24] {
                let shown = screen(app, width, height);
                assert!(shown.lines().count() <= usize::from(height), "{width}x{height}:\n{shown}");
            }
            // Every block: rows no wider than the screen, from the width a three-column table's
            // borders take.
            for block in app.transcript.iter().chain(&app.finished) {
                for row in block_lines(block, width, Theme { no_color: true }) {
                    let w = unicode_width::UnicodeWidthStr::width(plain(&row).as_str());
                    assert!(width < 16 || w <= usize::from(width), "{width}: {:?}", plain(&row));
                }
            }
        }
    }
}
