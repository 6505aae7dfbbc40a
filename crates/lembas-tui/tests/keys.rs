//! The input, the cards and the pickers, driven by keys as a person presses them.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::{Approval, ApprovalRequest, Mode, ModelInfo};
use lembas_tui::app::settings::Change;
use lembas_tui::{Action, App, Card};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(app: &mut App, text: &str) -> Option<Action> {
    let mut last = None;
    for c in text.chars() {
        last = app.key(key(KeyCode::Char(c)));
    }
    last
}

/// The live area on a screen `width`×`height`, as tall as it asks to be.
fn screen(app: &App, width: u16, height: u16) -> String {
    common::live_area(app, 0, width, height)
}

fn app() -> App {
    let mut app = App::new("m", Mode::Manual, None, 32_000);
    app.models = vec![
        ModelInfo { id: "m".into(), context: Some(32_000), ..Default::default() },
        ModelInfo { id: "big-model".into(), context: Some(200_000), ..Default::default() },
    ];
    app
}

#[test]
fn the_editor_keys_make_the_prompt_that_is_sent() {
    let mut app = app();
    typed(&mut app, "hello world");
    app.key(ctrl('a'));
    typed(&mut app, "X");
    app.key(ctrl('e'));
    app.key(ctrl('w'));
    typed(&mut app, "there");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "second line");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Prompt("Xhello there\nsecond line".into())));
    // Up brings it back; Down past the newest brings back what was being written.
    typed(&mut app, "draft");
    app.key(key(KeyCode::Up));
    assert_eq!(app.input.text(), "Xhello there\nsecond line");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    assert_eq!(app.input.text(), "draft");
}

#[test]
fn ctrl_c_clears_what_is_written_before_it_counts_toward_quitting() {
    let mut app = app();
    typed(&mut app, "half a thought");
    assert_eq!(app.key(ctrl('c')), None);
    assert!(app.input.is_empty() && !app.quit_armed);
    assert_eq!(app.key(ctrl('c')), None);
    assert!(app.quit_armed);
    assert_eq!(app.key(ctrl('c')), Some(Action::Quit));
    // Ctrl-D on an empty line leaves.
    let mut app = self::app();
    assert_eq!(app.key(ctrl('d')), Some(Action::Quit));
}

#[test]
fn leaving_while_jobs_run_names_them_first() {
    let mut app = app();
    app.apply(&lembas_protocol::Event::Jobs { running: 3, subagents: 1 });
    app.input.set("/exit");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    let said = format!("{:?}", app.finished.last());
    assert!(said.contains("2 background jobs and 1 background subagent still running"), "{said}");
    app.input.set("/exit");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Quit));
    // Ctrl-C twice says it too.
    let mut app = self::app();
    app.apply(&lembas_protocol::Event::Jobs { running: 1, subagents: 0 });
    app.key(ctrl('c'));
    assert!(app.hint.as_deref().is_some_and(|h| h.contains("1 background job still running")), "{:?}", app.hint);
}

fn edit_request(preview: &str) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c".into(),
        tool: "edit".into(),
        title: "src/lib.rs".into(),
        reaches: vec!["/p/src/lib.rs".into()],
        preview: Some(format!("src/lib.rs\n{preview}")),
        session_allows: Some("every edit call".into()),
        subagent: None,
        ..Default::default()
    }
}

#[test]
fn an_edit_card_shows_its_diff_and_what_the_session_answer_allows() {
    let mut app = app();
    app.ask(edit_request("@@ -1,2 +1,2 @@\n-fn old() {}\n+fn new() {}\n keep"));
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("-fn old() {}") && shown.contains("+fn new() {}"), "{shown}");
    assert!(shown.contains("allows every edit call for the rest of this session"), "{shown}");
    // Refused with words.
    assert_eq!(app.key(key(KeyCode::Char('d'))), None);
    assert!(screen(&app, 80, 24).contains("Why not?"));
    typed(&mut app, "keep the old name");
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::Answer(Approval::Deny { feedback: Some("keep the old name".into()) }))
    );
    assert!(app.card.is_none());
}

#[test]
fn a_long_command_is_shown_whole_at_80_columns_and_can_be_corrected() {
    let mut app = app();
    let command = "for f in alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu; do echo \"$f\" >> out.txt; done && rm -rf build/cache/of/something/long";
    // The call's block, running while its card waits.
    app.apply(&lembas_protocol::Event::ToolStart {
        call_id: "c".into(),
        tool: "bash".into(),
        title: "for f in alpha beta…".into(),
        args: serde_json::json!({ "command": command }),
        paths: Vec::new(),
    });
    app.ask(ApprovalRequest {
        call_id: "c".into(),
        tool: "bash".into(),
        title: "for f in alpha beta…".into(),
        preview: Some(command.into()),
        runs_command: true,
        session_allows: Some("commands matching `echo *`".into()),
        subagent: None,
        ..Default::default()
    });
    let shown = screen(&app, 80, 24);
    let joined: String =
        shown.lines().map(|l| l.trim_matches(['│', ' ']).trim_start_matches("$ ")).collect::<Vec<_>>().join(" ");
    for word in command.split_whitespace() {
        assert!(joined.contains(word), "{word} is on the card:\n{shown}");
    }
    assert!(shown.contains("[e] edit the command"), "{shown}");
    app.key(key(KeyCode::Char('e')));
    assert_eq!(app.input.text(), command);
    app.key(ctrl('u'));
    typed(&mut app, "make clean");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Answer(Approval::Edited { command: "make clean".into() })));
    let title = app.running.iter().find_map(|b| match b {
        lembas_tui::Block::Tool { title, .. } => Some(title.clone()),
        _ => None,
    });
    assert_eq!(title.as_deref(), Some("make clean"), "the block says the command that runs");
}

#[test]
fn words_written_before_a_card_asked_for_words_come_back() {
    let mut app = app();
    typed(&mut app, "my next prompt");
    app.ask(edit_request("+x"));
    app.key(key(KeyCode::Char('d')));
    assert!(app.input.is_empty());
    app.key(key(KeyCode::Esc));
    assert_eq!(app.input.text(), "my next prompt", "Esc goes back to the card, the prompt held");
    assert!(matches!(app.card, Some(Card::Approval(_))));
}

#[test]
fn the_model_picker_narrows_by_typing_and_chooses_with_enter() {
    let mut app = app();
    app.input.set("/model");
    assert_eq!(app.key(key(KeyCode::Enter)), None);
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("Model") && shown.contains("big-model") && shown.contains("200000 tokens"), "{shown}");
    typed(&mut app, "big");
    let Some(Action::SetModel(model)) = app.key(key(KeyCode::Enter)) else { panic!("a model is chosen") };
    assert_eq!(model.id, "big-model");
    assert_eq!(app.context.1, 200_000);
    // The mode picker: a stricter mode at once.
    app.mode = Some(Mode::Auto);
    app.input.set("/mode");
    app.key(key(KeyCode::Enter));
    assert!(screen(&app, 80, 24).contains("▸ auto"), "the picker starts on the mode in use");
    app.key(key(KeyCode::Up));
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetMode(Mode::Edit)));
}

#[test]
fn settings_are_changed_with_the_arrows_and_kept_with_enter() {
    let mut app = app();
    app.input.set("/settings");
    app.key(key(KeyCode::Enter));
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("Mode") && shown.contains("‹ manual ›") && shown.contains("Compaction at"), "{shown}");
    app.key(key(KeyCode::Right));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Right));
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        Some(Action::Settings(vec![Change::Mode(Mode::Edit), Change::Notify(false)]))
    );
}

#[test]
fn custom_commands_make_prompts_and_are_listed_and_completed() {
    let mut app = app();
    app.customs = vec![lembas_tui::custom::parse(
        "fix-issue",
        "---\ndescription: Fix an issue\n---\nFix issue $1 and add a test.",
        "project",
    )];
    app.input.set("/fix");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/fix-issue ");
    typed(&mut app, "42");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Prompt("Fix issue 42 and add a test.".into())));
    app.input.set("/help");
    app.key(key(KeyCode::Enter));
    let help = format!("{:?}", app.finished.last());
    assert!(help.contains("/fix-issue") && help.contains("Fix an issue (project)"), "{help}");
}

#[test]
fn a_bang_runs_a_shell_command_and_an_at_path_is_attached() {
    let mut app = app();
    app.input.set("!git status");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::Shell("git status".into())));
    app.files = vec!["src/main.rs".into()];
    assert_eq!(lembas_tui::app::mentioned_files("see @src/main.rs please", &app.files), ["src/main.rs"]);
}

#[test]
fn a_large_paste_is_one_marker_in_the_box_and_whole_in_the_prompt() {
    let mut app = app();
    let pasted: String = (1..=40).map(|i| format!("log line {i}\n")).collect();
    app.paste(&pasted);
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("[pasted 40 lines]") && !shown.contains("log line 2"), "{shown}");
    let Some(Action::Prompt(sent)) = app.key(key(KeyCode::Enter)) else { panic!() };
    assert!(sent.contains("log line 1\n") && sent.contains("log line 40"));
}

#[test]
fn slash_plan_alone_is_plan_mode_and_with_a_task_plans_it_but_never_under_a_running_turn() {
    let mut app = app();
    app.input.set("/plan");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetMode(Mode::Plan)));
    app.input.set("/plan fix the parser");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::PlanPrompt("fix the parser".into())));
    app.busy = true;
    app.input.set("/plan fix the lexer");
    assert_eq!(app.key(key(KeyCode::Enter)), None, "the running turn's mode is not changed under it");
}

#[test]
fn a_mode_chosen_by_command_is_said_in_a_line_and_shift_tab_cycles_quietly() {
    let mut app = app();
    app.input.set("/mode edit");
    assert_eq!(app.key(key(KeyCode::Enter)), Some(Action::SetMode(Mode::Edit)));
    let said = format!("{:?}", app.finished.last());
    assert!(said.contains("Mode: edit — changes files, asks before commands."), "{said}");
    app.mode = Some(Mode::Edit);
    let before = app.finished.len();
    assert_eq!(app.key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)), None, "auto is asked first");
    assert_eq!(app.finished.len(), before, "Shift-Tab says nothing in the transcript");
}
