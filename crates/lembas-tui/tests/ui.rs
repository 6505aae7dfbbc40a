//! The UI's state and drawing, on ratatui's test backend: what each event and key does, and
//! what the person sees.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::Mode;
use lembas_protocol::Progress;
use lembas_protocol::progress::Phase;
use lembas_protocol::{Approval, ApprovalRequest, DoneReason, Event, FileDiff, PlanVerdict, ToolOutcome};
use lembas_tui::{Action, App, Block, Card, Theme, block_lines, plain};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(key(KeyCode::Char(c)));
    }
}

/// The live area as drawn on a 60×20 screen, as tall as it asks to be.
fn screen(app: &App, now: i64) -> String {
    common::live_area(app, now, 60, 20)
}

fn lines(block: &Block) -> Vec<String> {
    block_lines(block, 60, Theme { no_color: true }).iter().map(plain).collect()
}

#[test]
fn a_turn_flows_into_blocks_and_the_progress_line() {
    let mut app = App::new("qwen3-coder", Mode::Edit, Some("high".into()), 32_000);
    app.apply(&Event::Prompt { text: "fix it".into(), machine: false });
    app.apply(&Event::Reasoning { delta: "look first".into() });
    app.apply(&Event::Phase { progress: Some(Progress::new(Phase::Writing { rate: Some(12.46) }, 1_000)) });
    app.apply(&Event::Text { delta: "Reading ".into() });
    app.apply(&Event::Text { delta: "the file.".into() });
    assert_eq!(app.live, Some(Block::Assistant("Reading the file.".into())));
    let shown = screen(&app, 6_000);
    assert!(shown.contains("Reading the file."), "{shown}");
    assert!(shown.contains("Writing: 12.5 tok/s · 5s"), "{shown}");
    assert!(shown.contains("qwen3-coder · high · mode: edit · context 0%"), "{shown}");

    app.apply(&Event::ToolStart {
        call_id: "c1".into(),
        tool: "edit".into(),
        title: "src/a.rs".into(),
        args: serde_json::json!({}),
        paths: vec![],
    });
    app.apply(&Event::ToolEnd {
        call_id: "c1".into(),
        tool: "edit".into(),
        result_id: Some("#0002".into()),
        text: "[#0002 src/a.rs sha 1]\n@@ -1 +1 @@\n-a - b\n+a + b".into(),
        is_error: false,
        outcome: ToolOutcome {
            summary: "1 line added, 1 removed".into(),
            body: "@@ -1 +1 @@\n-a - b\n+a + b".into(),
            show_body: true,
            went_wrong: false,
            whole: false,
        },
        diffs: vec![FileDiff { path: "/p/src/a.rs".into(), old: Some("a - b".into()), new: Some("a + b".into()) }],
    });
    app.apply(&Event::Usage { input: 16_000, output: 20, cached: Some(15_000) });
    app.apply(&Event::Done {
        reason: DoneReason::Answered,
        text: String::new(),
        steps: 2,
        session: "s".into(),
        usage: Default::default(),
    });
    let blocks: Vec<Vec<String>> = app.finished.iter().map(lines).collect();
    assert_eq!(blocks[0], ["› fix it", ""]);
    assert_eq!(blocks[1], ["  look first"]);
    assert_eq!(blocks[2], ["Reading the file.", ""]);
    assert_eq!(
        blocks[3],
        ["● edit src/a.rs", "  ⎿ 1 line added, 1 removed", "    @@ -1 +1 @@", "    -a - b", "    +a + b"]
    );
    assert!(!app.busy);
    assert!(app.last_turn.as_deref().unwrap().ends_with("16020 tokens"));
    assert!(screen(&app, 0).contains("context 50%"));
}

#[test]
fn a_refused_call_and_errors_are_shown() {
    let mut app = App::new("m", Mode::Manual, None, 0);
    app.apply(&Event::ToolStart {
        call_id: "c".into(),
        tool: "bash".into(),
        title: "rm -rf ~".into(),
        args: serde_json::json!({}),
        paths: vec![],
    });
    app.apply(&Event::ToolDenied { call_id: "c".into(), tool: "bash".into(), reason: "Refused in every mode".into() });
    app.apply(&Event::Error { message: "the model server refused".into() });
    assert_eq!(lines(&app.finished[0]), ["✗ bash rm -rf ~", "  ⎿ Refused in every mode"]);
    assert_eq!(lines(&app.finished[1]), ["the model server refused"]);
}

#[test]
fn enter_sends_and_words_typed_during_a_turn_steer_it() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    typed(&mut app, "hello");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Prompt("hello".into())));
    app.apply(&Event::Prompt { text: "hello".into(), machine: false });
    typed(&mut app, "also the tests");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Steer("also the tests".into())));
    assert_eq!(app.key(key(KeyCode::Esc)), Some(Action::Cancel));
    app.key(key(KeyCode::Up));
    assert_eq!(app.input, "also the tests");
    app.key(key(KeyCode::Up));
    assert_eq!(app.input, "hello");
    app.key(key(KeyCode::Down));
    assert_eq!(app.input, "also the tests");
}

#[test]
fn an_approval_card_is_answered_by_a_key() {
    let mut app = App::new("m", Mode::Manual, None, 0);
    app.ask(ApprovalRequest {
        call_id: "c".into(),
        tool: "edit".into(),
        title: "notes.txt".into(),
        reaches: vec!["/p/notes.txt".into()],
        agent: None,
        once_only: false,
        ..Default::default()
    });
    let shown = screen(&app, 0);
    assert!(shown.contains("Allow?") && shown.contains("edit notes.txt") && shown.contains("[y] once"), "{shown}");
    assert_eq!(app.key(key(KeyCode::Char('a'))), Some(Action::Answer(Approval::Always)));
    assert!(app.card.is_none());
    app.ask(ApprovalRequest {
        call_id: "c".into(),
        tool: "bash".into(),
        title: "make".into(),
        runs_command: true,
        reaches: vec![],
        agent: Some("run the tests".into()),
        once_only: false,
        ..Default::default()
    });
    let shown = screen(&app, 0);
    assert!(shown.contains("Allow the subagent \"run the tests\"?") && shown.contains("bash make"), "{shown}");
    assert_eq!(app.key(key(KeyCode::Char('x'))), None, "other keys do nothing while a card waits");
    assert_eq!(app.key(key(KeyCode::Char('n'))), Some(Action::Answer(Approval::Deny { feedback: None })));
}

#[test]
fn a_task_block_shows_what_its_subagent_does_now() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.apply(&Event::ToolStart {
        call_id: "t1".into(),
        tool: "task".into(),
        title: "find the parser".into(),
        args: serde_json::json!({}),
        paths: vec![],
    });
    let inner = Event::ToolStart {
        call_id: "s1".into(),
        tool: "grep".into(),
        title: "fn parse".into(),
        args: serde_json::json!({}),
        paths: vec![],
    };
    app.apply(&Event::Subagent {
        call_id: "t1".into(),
        agent: "find the parser".into(),
        job: None,
        event: Box::new(inner),
    });
    let shown = screen(&app, 0);
    assert!(shown.contains("task find the parser") && shown.contains("→ grep fn parse"), "{shown}");
    assert!(lembas_tui::status_line(&app).contains("1 subagent"), "{}", lembas_tui::status_line(&app));
    // Two more in the background, beside one command: counted apart.
    app.apply(&Event::Jobs { running: 3, subagents: 2 });
    let status = lembas_tui::status_line(&app);
    assert!(status.contains("3 subagents") && status.contains("1 job running"), "{status}");
}

#[test]
fn a_looser_mode_is_confirmed_and_a_stricter_one_taken_at_once() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    assert_eq!(app.key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)), None, "auto is looser: asked first");
    assert_eq!(app.card, Some(Card::LooserMode(Mode::Auto)));
    assert_eq!(app.key(key(KeyCode::Char('y'))), Some(Action::SetMode(Mode::Auto)));
    typed(&mut app, "/mode manual");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetMode(Mode::Manual)));
    typed(&mut app, "/nope");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(matches!(app.finished.last(), Some(Block::Error(e)) if e.contains("/help")));
}

#[test]
fn ctrl_c_twice_quits() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(app.key(ctrl_c), None);
    assert_eq!(app.key(ctrl_c), Some(Action::Quit));
}

#[test]
fn long_lines_wrap_and_no_color_means_no_color() {
    let block = Block::Assistant("word ".repeat(30));
    let wrapped = block_lines(&block, 20, Theme { no_color: true });
    assert!(wrapped.len() >= 8);
    assert!(wrapped.iter().flat_map(|l| l.spans.iter()).all(|s| s.style.fg.is_none()));
}

#[test]
fn slash_commands_for_context_model_and_effort() {
    let mut app = App::new("a", Mode::Edit, None, 10_000);
    app.models = vec![
        lembas_protocol::ModelInfo {
            id: "a".into(),
            efforts: Some(vec!["low".into(), "high".into()]),
            ..Default::default()
        },
        lembas_protocol::ModelInfo { id: "b".into(), context: Some(64_000), ..Default::default() },
    ];
    app.apply(&Event::Usage { input: 2_500, output: 10, cached: Some(2_000) });
    typed(&mut app, "/context");
    app.key(key(KeyCode::Enter));
    let Some(Block::Notice(report)) = app.finished.last() else { panic!() };
    assert!(report.starts_with("Context: 2500 of 10000 tokens (25%)"), "{report}");
    assert!(report.contains("Free: 7500 tokens · compaction at 85%: 6000 tokens away"), "{report}");
    assert!(report.contains("2000 tokens read from the server's cache"));
    assert!(report.contains(&format!("[{}{}]", "█".repeat(7), "░".repeat(23))), "{report}");

    // Once the engine has measured the categories, the bar is split and each is listed.
    let share = |category: &str, tokens| lembas_protocol::ContextShare { category: category.into(), tokens };
    let miss = "The server read about 1800 tokens again that it should have had cached (200 cached of about 2000): the tool list changed.";
    app.apply(&Event::Context {
        offer: None,
        window: 10_000,
        shares: vec![share("system prompt", 1_000), share("tool definitions", 1_000), share("tool results", 500)],
        cache_miss: Some(miss.into()),
    });
    typed(&mut app, "/context");
    app.key(key(KeyCode::Enter));
    let Some(Block::Notice(report)) = app.finished.last() else { panic!() };
    assert!(report.contains(&format!("[███▓▓▓▒{}]", "░".repeat(23))), "{report}");
    // The last miss, and where the prefix changed.
    assert!(report.contains(miss), "{report}");
    assert!(report.contains("  ▒ tool results          500 tokens   5%"), "{report}");

    app.apply(&Event::Jobs { running: 2, subagents: 0 });
    assert!(
        lembas_tui::view::status_line(&app).ends_with(" · 2 jobs running"),
        "{}",
        lembas_tui::view::status_line(&app)
    );

    typed(&mut app, "/effort high");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetEffort(Some("high".into()))));
    // What changed is said in one line, below the command.
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n == "Effort: high."), "{:?}", app.finished.last());
    typed(&mut app, "/effort max");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n.starts_with("Effort levels: low, high")));

    typed(&mut app, "/model b");
    assert!(matches!(app.key(key(KeyCode::Enter)), Some(Action::SetModel(m)) if m.id == "b"));
    assert_eq!((app.model.as_str(), app.context.1), ("b", 64_000));
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n == "Model: b."), "{:?}", app.finished.last());
    typed(&mut app, "/model bb");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(
        matches!(app.finished.last(), Some(Block::Error(e)) if e.starts_with("No model bb. The closest: b")),
        "{:?}",
        app.finished.last()
    );
    typed(&mut app, "/rename Parser work");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Rename("Parser work".into())));
    // Each command is said above what it answers.
    let said = &app.finished[app.finished.len() - 2..];
    assert!(matches!(&said[0], Block::User(u) if u == "/rename Parser work"), "{said:?}");
    assert!(matches!(&said[1], Block::Notice(n) if n == "This session is now called \"Parser work\"."), "{said:?}");
    typed(&mut app, "/clear");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Open(None)), "/clear starts afresh, as /new");
    typed(&mut app, "/init");
    assert!(matches!(app.key(key(KeyCode::Enter)), Some(Action::Prompt(p)) if p.contains("AGENTS.md")));
}

#[test]
fn a_finished_reply_notifies_only_when_the_terminal_is_not_focused() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.apply(&Event::Prompt { text: "fix the parser".into(), machine: false });
    // The engine names a session from its first prompt.
    app.apply(&Event::Title { title: "fix the parser".into() });
    app.apply(&Event::Done {
        reason: DoneReason::Answered,
        text: String::new(),
        steps: 1,
        session: "s".into(),
        usage: Default::default(),
    });
    assert_eq!(app.to_notify, None);
    app.focused = false;
    app.apply(&Event::Prompt { text: "again".into(), machine: false });
    app.apply(&Event::Done {
        reason: DoneReason::Answered,
        text: "secret reply".into(),
        steps: 1,
        session: "s".into(),
        usage: Default::default(),
    });
    let notice = app.to_notify.take().unwrap();
    assert_eq!(notice, "lembas: fix the parser — the reply is ready", "names the session, never the reply");
    app.notify = false;
    app.apply(&Event::Done {
        reason: DoneReason::Answered,
        text: String::new(),
        steps: 1,
        session: "s".into(),
        usage: Default::default(),
    });
    assert_eq!(app.to_notify, None);
}

#[test]
fn questions_take_a_number_or_words_and_the_plan_a_yes() {
    let mut app = App::new("m", Mode::Plan, None, 0);
    app.question(lembas_protocol::Question {
        question: "Which database?".into(),
        options: vec!["sqlite".into(), "postgres".into()],
    });
    let shown = screen(&app, 0);
    assert!(
        shown.contains("Which database?") && shown.contains("[1] sqlite") && shown.contains("[2] postgres"),
        "{shown}"
    );
    assert_eq!(app.key(key(KeyCode::Char('2'))), Some(Action::Reply("postgres".into())));
    app.question(lembas_protocol::Question { question: "Name?".into(), options: vec![] });
    typed(&mut app, "lembas");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Reply("lembas".into())));
    // Esc takes back the words being written, then stops the turn with the question unanswered.
    app.question(lembas_protocol::Question { question: "Port?".into(), options: vec!["80".into()] });
    typed(&mut app, "80");
    assert_eq!(app.key(key(KeyCode::Esc)), None);
    assert!(app.input.is_empty() && app.card.is_some(), "the words went, the card stays");
    assert_eq!(app.key(key(KeyCode::Esc)), Some(Action::StopAtQuestion));
    assert!(app.card.is_none());
    app.plan("Plan: Store\n\n1. Do\n   [ ] 1.1 add sqlite".into());
    assert!(screen(&app, 0).contains("[ ] 1.1 add sqlite"));
    assert_eq!(app.key(key(KeyCode::Char('y'))), Some(Action::Plan(PlanVerdict::Approved { mode: None })));
    // Approved into a chosen mode, or sent back with words.
    app.plan("Plan: Store".into());
    assert_eq!(app.key(key(KeyCode::Char('2'))), Some(Action::Plan(PlanVerdict::Approved { mode: Some(Mode::Edit) })));
    app.plan("Plan: Store".into());
    assert_eq!(app.key(key(KeyCode::Char('n'))), None);
    typed(&mut app, "use postgres");
    assert!(screen(&app, 0).contains("What should change in the plan?"));
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::Plan(PlanVerdict::Declined { feedback: Some("use postgres".into()) }))
    );
}

#[test]
fn a_menu_completes_commands_and_paths_in_the_live_area() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.files = vec!["src/main.rs".into(), "src/model.rs".into(), "README.md".into()];
    let before = app.finished.len();
    // Shown as soon as the word starts, narrowed as it is typed.
    typed(&mut app, "/");
    assert!(app.menu.as_ref().is_some_and(|m| m.items.len() > 10), "every command");
    typed(&mut app, "comp");
    assert_eq!(app.menu.as_ref().map(|m| m.items[0].label.as_str()), Some("compact"));
    app.key(key(KeyCode::Tab));
    assert_eq!(app.input, "/compact ");
    assert!(app.menu.is_none());
    app.input.clear();
    // Paths by subsequence: `@main` finds src/main.rs.
    typed(&mut app, "look at @src/m");
    let labels = |app: &App| app.menu.as_ref().map(|m| m.items.iter().map(|i| i.label.clone()).collect::<Vec<_>>());
    assert_eq!(labels(&app), Some(vec!["src/main.rs".to_owned(), "src/model.rs".to_owned()]));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Tab));
    assert_eq!(app.input, "look at @src/model.rs ");
    typed(&mut app, "and @main");
    assert_eq!(labels(&app).unwrap()[0], "src/main.rs");
    assert_eq!(app.key(key(KeyCode::Enter)), None, "Enter takes a file; it does not send");
    assert_eq!(app.input, "look at @src/model.rs and @src/main.rs ");
    // Esc closes it and leaves the words; the scrollback never had any of it.
    typed(&mut app, "@READ");
    app.key(key(KeyCode::Esc));
    assert!(app.menu.is_none());
    assert!(app.input.text().ends_with("@READ"));
    assert_eq!(app.finished.len(), before, "{:?}", app.finished);
    // A command chosen whole runs at once.
    app.input.clear();
    typed(&mut app, "/usa");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n.contains("tokens")), "/usage ran");
}

#[test]
fn a_commands_words_are_offered_from_its_entry_in_the_table() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.models = vec![
        lembas_protocol::ModelInfo { id: "qwen3-coder".into(), context: Some(32_768), ..Default::default() },
        lembas_protocol::ModelInfo { id: "gpt-oss".into(), ..Default::default() },
    ];
    let labels = |app: &App| app.menu.as_ref().map(|m| m.items.iter().map(|i| i.label.clone()).collect::<Vec<_>>());
    typed(&mut app, "/mode ");
    assert_eq!(labels(&app), Some(vec!["manual".into(), "edit".into(), "auto".into(), "plan".into()]));
    typed(&mut app, "ma");
    assert_eq!(labels(&app).unwrap()[0], "manual");
    // A word chosen whole runs the command with it.
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetMode(Mode::Manual)));
    app.input.clear();
    typed(&mut app, "/model gpt");
    assert_eq!(labels(&app), Some(vec!["gpt-oss".into()]));
    app.key(key(KeyCode::Tab));
    assert_eq!(app.input, "/model gpt-oss ");
    app.input.clear();
    // What takes the person's own words offers nothing, and `/help` lists every command.
    typed(&mut app, "/rename x");
    assert!(app.menu.is_none());
    app.input.clear();
    typed(&mut app, "/help");
    app.key(key(KeyCode::Enter));
    let Some(Block::Notice(help)) = app.finished.last() else { panic!("help") };
    for command in lembas_tui::COMMANDS {
        assert!(help.contains(&format!("/{}", command.name)), "{} is in /help", command.name);
    }
}

#[test]
fn long_output_folds_and_ctrl_o_shows_it_whole() {
    let mut app = App::new("m", Mode::Auto, None, 32_000);
    app.apply(&Event::Prompt { text: "test".into(), machine: false });
    app.apply(&Event::ToolStart {
        call_id: "c1".into(),
        tool: "bash".into(),
        title: "cargo test".into(),
        args: serde_json::json!({}),
        paths: vec![],
    });
    let output: Vec<String> = (1..=20).map(|n| format!("-line {n}")).collect();
    app.apply(&Event::ToolEnd {
        call_id: "c1".into(),
        tool: "bash".into(),
        result_id: Some("#0001".into()),
        text: format!("[#0001]\n{}", output.join("\n")),
        is_error: false,
        outcome: ToolOutcome {
            summary: "done, 20 lines of output".into(),
            body: output.join("\n"),
            show_body: true,
            went_wrong: false,
            whole: false,
        },
        diffs: vec![],
    });
    let block = lines(app.finished.last().unwrap());
    assert_eq!(block[0], "● bash cargo test");
    assert_eq!(block[1], "  ⎿ done, 20 lines of output");
    assert_eq!(block[2], "    -line 1");
    assert_eq!(block.len(), 2 + 12 + 1, "{block:?}");
    // Its start and its end, the count between: a test run's verdict is at its end.
    assert_eq!(block[8], "    … 8 more lines (Ctrl-O shows all)");
    assert_eq!(block[14], "    -line 20");
    // A command's output is not a diff: a leading '-' is not coloured as a removal.
    let coloured = block_lines(app.finished.last().unwrap(), 60, Theme { no_color: false });
    assert_ne!(coloured[2].spans[0].style.fg, Some(ratatui::style::Color::Red));
    assert_ne!(coloured[2].spans.last().unwrap().style.fg, Some(ratatui::style::Color::Red));

    // Ctrl-O opens the transcript view: every block whole; Esc closes it.
    app.key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert_eq!(app.viewing, Some(0));
    let whole: Vec<String> =
        lembas_tui::transcript::transcript_lines(&app, 60, Theme { no_color: true }).iter().map(plain).collect();
    assert!(whole.iter().any(|l| l == "    -line 20"), "{whole:#?}");
    assert!(!whole.iter().any(|l| l.contains("more lines")), "{whole:#?}");
    app.key(key(KeyCode::Esc));
    assert_eq!(app.viewing, None);

    // Long reasoning folds too, and comes back whole.
    app.apply(&Event::Reasoning { delta: "one\ntwo\nthree\nfour\nfive".into() });
    app.apply(&Event::Text { delta: "Done.".into() });
    assert_eq!(lines(&app.finished[app.finished.len() - 1])[3], "  … (Ctrl-O shows all)");
    let whole: Vec<String> =
        lembas_tui::transcript::transcript_lines(&app, 60, Theme { no_color: true }).iter().map(plain).collect();
    assert!(whole.iter().any(|l| l == "  five"), "{whole:#?}");
}

#[test]
fn slash_mcp_asks_the_engine_and_shows_each_server() {
    use lembas_protocol::{ServerState, ServerStatus};
    let mut app = App::new("a", Mode::Edit, None, 10_000);
    typed(&mut app, "/mcp");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Mcp));
    app.apply(&Event::McpServers { servers: Vec::new() });
    let Some(Block::Notice(none)) = app.finished.last() else { panic!() };
    assert!(none.starts_with("No MCP servers are configured"), "{none}");
    let status = |name: &str, state| ServerStatus { name: name.into(), state };
    app.apply(&Event::McpServers {
        servers: vec![
            status("tickets", ServerState::Ready { tools: 1 }),
            status("docs", ServerState::Connecting),
            status("gone", ServerState::Failed { reason: "cannot start `x`".into() }),
        ],
    });
    let Some(Block::Notice(report)) = app.finished.last() else { panic!() };
    assert_eq!(
        report,
        "MCP servers:\n  tickets — connected, 1 tool\n  docs — connecting…\n  gone — not connected: cannot start `x`"
    );
}

#[test]
fn the_months_cost_is_in_the_status_bar_and_usage_says_it_all() {
    let mut app = App::new("a", Mode::Edit, None, 10_000);
    assert!(!lembas_tui::status_line(&app).contains("month"), "nothing before the server says");
    app.month = Some(lembas_protocol::MonthUsage {
        from: Some("2026-12-01".into()),
        tokens_in: 5000,
        tokens_out: 700,
        cost_by_currency: [("EUR".to_owned(), 2.0), ("USD".to_owned(), 0.75)].into(),
        device_tokens_in: 900,
        device_tokens_out: 80,
    });
    assert!(lembas_tui::status_line(&app).ends_with("this month €2.00 · $0.75"), "{}", lembas_tui::status_line(&app));
    typed(&mut app, "/usage");
    app.key(key(KeyCode::Enter));
    let Some(Block::Notice(report)) = app.finished.last() else { panic!() };
    assert_eq!(
        report,
        "This session so far: 0 tokens in, 0 out.\nThis month (since 2026-12-01): 5000 tokens in, 700 out; cost €2.00 · $0.75.\nThis device this month: 900 tokens in, 80 out.\nSnapshots of this project (for /undo and /rewind): none kept yet in this session."
    );
    // Nothing priced: the bar stays quiet and /usage says so.
    app.month.as_mut().unwrap().cost_by_currency.clear();
    assert!(!lembas_tui::status_line(&app).contains("month"));
    assert!(app.usage_report().contains("cost nothing priced"));
    // After a turn kept its snapshots, the store's size beside its cap.
    app.apply(&Event::SnapshotStore { bytes: 2_540_000, cap: 1 << 30 });
    assert!(
        app.usage_report().ends_with("2.5 MB of at most 1074 MB; the oldest go past that."),
        "{}",
        app.usage_report()
    );
}

#[test]
fn undo_is_refused_mid_turn_and_brings_the_words_back() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.busy = true;
    app.input.set("/undo");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n.contains("stop it (Esc) first")));
    app.busy = false;
    app.input.set("/undo");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Undo));
    let files = lembas_protocol::FilesBack {
        put_back: vec!["src/lib.rs".into()],
        kept: vec!["README.md".into()],
        ..Default::default()
    };
    app.apply(&Event::Undone { prompt: Some("make it multiply".into()), later: 0, files: files.clone() });
    assert_eq!(app.input, "make it multiply");
    let said = lines(app.finished.last().unwrap()).join(" ");
    assert!(
        said.contains("Put back: src/lib.rs") && said.contains("changed again after the turn: README.md"),
        "{said}"
    );
    // The file left is the person's to overwrite or keep: a card asks.
    assert_eq!(app.card, Some(Card::Overwrite(vec!["README.md".into()])));
    assert_eq!(app.key(key(KeyCode::Char('x'))), None, "a card is answered first");
    assert_eq!(app.key(key(KeyCode::Char('y'))), Some(Action::OverwriteKept));
    assert_eq!(app.card, None);
    // Behind a compaction only the files come back: the input stays as it is.
    app.input.set("");
    app.apply(&Event::Undone { prompt: None, later: 0, files });
    assert_eq!(app.input, "");
    assert!(lines(app.finished.last().unwrap()).join(" ").contains("the conversation stays as it was"));
}

#[test]
fn rewind_picks_a_turn_then_how_to_go_back_or_goes_back_by_number() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.input.set("/rewind");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Turns));
    let turn = |number: u32, words: &str, files: &[&str]| lembas_protocol::TurnPoint {
        number,
        words: words.into(),
        at_ms: Some(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
                - 5 * 60_000
                - 1_000,
        ),
        submission: None,
        files: files.iter().map(|f| f.to_string()).collect(),
    };
    app.apply(&Event::Turns {
        turns: vec![turn(1, "fix add", &["src/lib.rs"]), turn(2, "make it multiply", &["a", "b", "c", "d"])],
    });
    // A picker: each turn with when and what it changed, the latest chosen.
    let Some(Card::Pick(picker)) = &app.card else { panic!("no picker: {:?}", app.card) };
    let shown: Vec<(String, String)> = picker.items.iter().map(|i| (i.label.clone(), i.detail.clone())).collect();
    assert_eq!(shown[0], ("1. fix add".to_owned(), "5 min ago · src/lib.rs".to_owned()));
    assert_eq!(shown[1].1, "5 min ago · a, b and 2 more");
    assert_eq!(picker.selected, 1);
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    // Then how: the files and conversation first, a fork further down.
    let Some(Card::Pick(how)) = &app.card else { panic!("no second picker") };
    assert!(how.title.contains("make it multiply"), "{}", how.title);
    assert_eq!(how.items[0].label, "Files and conversation");
    for _ in 0..3 {
        app.key(key(KeyCode::Down));
    }
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::GoBack(lembas_protocol::Command::Fork { to: 2, files: true }))
    );
    assert!(app.card.is_none());
    // The conversation alone, one down.
    app.apply(&Event::Turns { turns: vec![turn(1, "fix add", &[])] });
    app.key(key(KeyCode::Enter));
    app.key(key(KeyCode::Down));
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::GoBack(lembas_protocol::Command::Rewind { to: 1, files: false, conversation: true }))
    );
    app.apply(&Event::Forked {
        id: "s2".into(),
        prompt: "make it multiply".into(),
        files: lembas_protocol::FilesBack { removed: vec!["d".into()], ..Default::default() },
    });
    let said = lines(app.finished.last().unwrap()).join(" ");
    assert!(
        said.starts_with("Forked: a new session from before \"make it multiply\"") && said.contains("Removed"),
        "{said}"
    );

    app.input.set("/rewind 2");
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::GoBack(lembas_protocol::Command::Rewind { to: 2, files: true, conversation: true }))
    );
    app.input.set("/rewind two");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(matches!(app.finished.last(), Some(Block::Error(n)) if n.contains("/rewind N")));
}

#[test]
fn a_card_that_can_only_be_allowed_once_offers_nothing_more() {
    let mut app = App::new("m", Mode::Auto, None, 0);
    app.ask(ApprovalRequest {
        call_id: "c".into(),
        tool: "write".into(),
        title: ".mcp.json".into(),
        reaches: vec!["/p/.mcp.json".into()],
        agent: None,
        once_only: true,
        ..Default::default()
    });
    let shown = screen(&app, 0);
    assert!(shown.contains("asked every time") && !shown.contains("this session"), "{shown}");
    assert_eq!(app.key(key(KeyCode::Char('a'))), None);
    assert!(app.card.is_some(), "a key the card does not offer leaves it up");
    assert_eq!(app.key(key(KeyCode::Char('y'))), Some(Action::Answer(Approval::Once)));
}

#[test]
fn what_the_session_asks_comes_as_events_one_card_at_a_time() {
    let mut app = App::new("qwen3-coder", Mode::Manual, None, 32_000);
    let request = |title: &str| ApprovalRequest {
        call_id: title.into(),
        tool: "bash".into(),
        title: title.into(),
        runs_command: true,
        reaches: vec![],
        agent: Some("fix a".into()),
        once_only: false,
        ..Default::default()
    };
    // Two subagents ask at once: the second waits for the first card.
    app.apply(&Event::Ask { id: 1, ask: lembas_protocol::Ask::Approval(request("make a")) });
    app.apply(&Event::Ask { id: 2, ask: lembas_protocol::Ask::Approval(request("make b")) });
    assert!(matches!(&app.card, Some(Card::Approval(r)) if r.title == "make a"));
    assert_eq!(app.key(key(KeyCode::Char('y'))), Some(Action::Answer(Approval::Once)));
    assert_eq!(app.answered(), Some(1));
    assert!(matches!(&app.card, Some(Card::Approval(r)) if r.title == "make b"));
    // Answered elsewhere (or given up by a cancel): the card goes, and nothing is left to answer.
    app.apply(&Event::Answered { id: 2 });
    assert_eq!(app.card, None);
    assert_eq!(app.answered(), None);
    // One given up before its card was shown never shows.
    app.apply(&Event::Ask { id: 3, ask: lembas_protocol::Ask::Plan { call_id: "c3".into(), plan: "Plan".into() } });
    app.apply(&Event::Ask { id: 4, ask: lembas_protocol::Ask::Plan { call_id: "c4".into(), plan: "Other".into() } });
    app.apply(&Event::Answered { id: 4 });
    app.apply(&Event::Answered { id: 3 });
    assert_eq!(app.card, None);
}

#[test]
fn a_turn_cancelled_before_its_first_step_keeps_its_footer() {
    let mut app = App::new("qwen3-coder", Mode::Edit, None, 32_000);
    app.key(key(KeyCode::Char('x')));
    app.key(key(KeyCode::Enter));
    app.apply(&Event::Prompt { text: "x".into(), machine: false });
    app.apply(&cancelled());
    assert!(app.last_turn.as_deref().is_some_and(|t| t.contains("stopped by you")), "{:?}", app.last_turn);
}

#[test]
fn team_shows_the_tree_and_the_rooms_latest_messages() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    // As the protocol carries them.
    let tree = serde_json::json!({
        "min": 1, "max": 4, "size": 2, "open_slots": 0,
        "agents": [
            {"id": "lead", "name": "lead", "position": "the main agent", "parent": null, "state": "idle", "model": "m",
             "mode": "edit", "request": [], "manager": true, "context": {"used": 500, "window": 1000},
             "findings": 0, "progress": null},
            {"id": "s1", "name": "parser", "position": "reads the grammar", "parent": "lead", "state": "working",
             "model": "m", "mode": "manual", "request": ["write"], "manager": false,
             "context": {"used": 100, "window": 1000}, "findings": 0,
             "progress": {"phase": "running_tool", "tool": "read", "what": "src/parse.rs", "since": 0}}
        ],
        "ended": [{"id": "s0", "name": "scout", "position": "looked", "parent": "lead", "state": "done", "model": "m",
                   "mode": "edit", "request": [], "manager": false, "context": {"used": 0, "window": null},
                   "findings": 2, "progress": null}]
    });
    app.team = Some(serde_json::from_value(tree).unwrap());
    let room: Vec<lembas_protocol::team::RoomMessage> = serde_json::from_value(serde_json::json!([
        {"n": 1, "from": "lead", "to": "parser", "recipients": ["parser"], "text": "start with the lexer\nthen the rest",
         "time": 1, "report": false, "kind": "message"},
        {"n": 2, "from": "parser", "to": "lead", "recipients": ["lead"], "text": "done", "time": 2, "report": true,
         "kind": "report"}
    ]))
    .unwrap();
    app.show_team(Some(&room));
    let Some(Block::Notice(text)) = app.finished.last() else { panic!("a notice") };
    assert!(text.starts_with("Team: 2 of 4 agents"), "{text}");
    assert!(text.contains("lead — the main agent · idle · m · edit · 50% context"), "{text}");
    assert!(
        text.contains("  parser (s1) — reads the grammar · working · m · manual + write · 10% context · "),
        "{text}"
    );
    assert!(text.contains("src/parse.rs"), "its progress line: {text}");
    assert!(text.contains("Ended:\n  scout (s0) — looked · done · 2 findings"), "{text}");
    assert!(
        text.contains(
            "Room (2 messages):\n  #1 lead → parser: start with the lexer\n  #2 parser → lead (report): done"
        ),
        "{text}"
    );
    assert!(lembas_tui::view::status_line(&app).ends_with("agents 2/4 · 1 subagent working"));
}

#[test]
fn a_question_cards_options_are_chosen_with_the_arrows() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.question(lembas_protocol::Question {
        question: "Which database?".into(),
        options: vec!["sqlite".into(), "postgres".into(), "mysql".into()],
    });
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Up));
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Reply("postgres".into())));
    // Words written win over the marked option.
    app.question(lembas_protocol::Question { question: "Name?".into(), options: vec!["a".into()] });
    typed(&mut app, "zed");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Reply("zed".into())));
}

#[test]
fn the_effort_picker_opens_on_the_level_in_use() {
    let mut app = App::new("thinker", Mode::Edit, None, 0);
    app.models = vec![lembas_protocol::ModelInfo {
        id: "thinker".into(),
        efforts: Some(vec!["low".into(), "medium".into(), "high".into()]),
        effort: Some("medium".into()),
        ..Default::default()
    }];
    typed(&mut app, "/effort");
    app.key(key(KeyCode::Enter));
    let Some(lembas_tui::Card::Pick(picker)) = &app.card else { panic!("{:?}", app.card) };
    assert_eq!(picker.items[picker.selected].label, "medium", "the model's start level, in use");
}

#[test]
fn the_transcript_drops_an_undone_turn_and_marks_a_stopped_one() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.transcript = vec![
        Block::User("fix add".into()),
        Block::Assistant("Fixed.".into()),
        Block::User("make it multiply".into()),
        Block::Assistant("Multiplied.".into()),
    ];
    app.apply(&Event::Undone { prompt: Some("make it multiply".into()), later: 0, files: Default::default() });
    assert_eq!(app.transcript.len(), 2, "{:?}", app.transcript);
    app.apply(&Event::Prompt { text: "again".into(), machine: false });
    app.apply(&cancelled());
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n == "(stopped by you)"));
}

/// A turn's end, stopped by the person before its first step.
fn cancelled() -> Event {
    Event::Done {
        reason: DoneReason::Cancelled,
        text: String::new(),
        steps: 0,
        session: "s".into(),
        usage: Default::default(),
    }
}

#[test]
fn agents_lists_the_custom_agents_or_says_where_their_files_go() {
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.input.set("/agents");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::AgentFiles));
    app.apply(&Event::AgentFiles { agents: vec![] });
    assert!(lines(app.finished.last().unwrap()).join(" ").contains(".claude/agents/"));
    let reviewer = lembas_protocol::agents::AgentFileInfo {
        name: "reviewer".into(),
        description: "Reviews a change.".into(),
        tools: Some(vec!["read".into(), "grep".into()]),
        mode: Some("manual".into()),
        file: "/p/.claude/agents/reviewer.md".into(),
    };
    app.apply(&Event::AgentFiles { agents: vec![reviewer] });
    let said = lines(app.finished.last().unwrap()).join("\n");
    assert!(
        said.contains("- reviewer: Reviews a change.") && said.contains("tools read, grep, at most manual mode"),
        "{said}"
    );
}

#[test]
fn memory_lists_changes_and_forgets_by_number() {
    use lembas_protocol::notes::{MemoryChange, NotesAsk};
    let mut app = App::new("m", Mode::Edit, None, 0);
    let memory = |change| Some(Action::Notes(NotesAsk::Memory { change }));
    app.input.set("/memory");
    assert_eq!(app.key(key(KeyCode::Enter)), memory(None));
    app.input.set("/memory forget 2");
    assert_eq!(app.key(key(KeyCode::Enter)), memory(Some(MemoryChange::Forget { entry: 2 })));
    app.input.set("/memory change 1 Builds with just.");
    let change = MemoryChange::Change { entry: 1, text: "Builds with just.".into() };
    assert_eq!(app.key(key(KeyCode::Enter)), memory(Some(change)));
    app.input.set("/memory add Uses fish.");
    assert_eq!(app.key(key(KeyCode::Enter)), memory(Some(MemoryChange::Add { text: "Uses fish.".into() })));
    app.input.set("/memory change 1");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    assert!(lines(app.finished.last().unwrap()).join(" ").contains("/memory change N TEXT"));
}

#[test]
fn notes_lists_shows_and_searches_the_notes() {
    use lembas_protocol::notes::{NoteHit, NoteInfo, NotesAsk, NotesSaid, Scope};
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.input.set("/notes");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Notes(NotesAsk::List)));
    app.input.set("/notes search deploy key");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Notes(NotesAsk::Search { words: "deploy key".into() })));
    app.apply(&Event::Notes { said: NotesSaid::Listed { notes: vec![] } });
    assert!(lines(app.finished.last().unwrap()).join(" ").contains("lembas notes edit NAME"));
    let note =
        NoteInfo { name: "deploy".into(), scope: Scope::Project, title: "Deploying".into(), bytes: 40, changed_ms: 0 };
    app.apply(&Event::Notes { said: NotesSaid::Listed { notes: vec![note.clone()] } });
    assert!(lines(app.finished.last().unwrap()).join("\n").contains("- deploy · Deploying · project"));
    app.apply(&Event::Notes {
        said: NotesSaid::Shown { note, text: "# Deploying\n\nThe key is in the vault.\n".into() },
    });
    assert!(lines(app.finished.last().unwrap()).join("\n").contains("The key is in the vault."));
    let hit = NoteHit {
        name: "deploy".into(),
        scope: Scope::Project,
        from: 3,
        to: 3,
        text: "The key is in the vault.".into(),
    };
    app.apply(&Event::Notes { said: NotesSaid::Found { query: "key".into(), hits: vec![hit] } });
    assert!(lines(app.finished.last().unwrap()).join("\n").contains("deploy (project), lines 3-3:"));
}
