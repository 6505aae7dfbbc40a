//! The terminal UI end to end: the real binary in tmux against the test kit's fake server.
//! `.ci/run` makes sure tmux is there and sets `LEMBAS_TMUX`; elsewhere the test runs when tmux
//! is installed and says so when it is not.

mod common;

use std::time::Duration;

use common::tmux::{open_ui, tmux_available};

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_asks_for_a_change_approves_it_and_sees_it_happen() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})).with_reasoning("Read it first."),
        Scripted::tool_call("edit", json!({"path": "notes.txt", "old_string": "old", "new_string": "new"})),
        Scripted::text("## Changed\n\nThe note now says **new text**.").with_delay_ms(20),
    ])
    .await;
    let (tmux, dir, project) = open_ui("change", &server, &[("notes.txt", "old text\n")]).await;
    let written = dir.path().join("terminal.out");
    tmux.record_output(&written);
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["fix the note", "Enter"]);
    let card = tmux.wait_for("Allow?").await;
    assert!(card.contains("edit notes.txt") && card.contains("● read notes.txt"), "{card}");
    tmux.send(&["y"]);
    let done = tmux.wait_for("tokens").await;
    assert!(done.contains("+new text") && done.contains("The note now says new text."), "{done}");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "new text\n");

    tmux.send(&["/help", "Enter"]);
    tmux.wait_for("Enter sends").await;
    tmux.send(&["/context", "Enter"]);
    tmux.wait_for("Context: ").await;

    // Found again later, by what was said, and resumed.
    tmux.send(&["/new", "Enter"]);
    tmux.wait_for("── Session: New session ──").await;
    tmux.send(&["/search note", "Enter"]);
    let found = tmux.wait_for("Sessions that match").await;
    assert!(found.contains("▸ fix the note"), "{found}");
    tmux.send(&["Enter"]);
    tmux.wait_for("── Resumed: fix the note ──").await;
    // Narrower, then wider: the live area is drawn again where it was, and no copy of it is
    // left in the scrollback (the terminal reflows what it had drawn).
    for (width, height) in [(60, 24), (80, 24)] {
        tmux.resize(width, height);
        tokio::time::sleep(Duration::from_millis(600)).await;
        let screen = tmux.wait_for("fake-model · mode: manual").await;
        assert_eq!(screen.matches("fake-model · mode: manual").count(), 1, "one live area after a resize:\n{screen}");
    }

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    let after = tmux.wait_for("LEMBAS-EXITED-0").await;
    assert!(after.contains("› fix the note"), "the conversation stays in the terminal after the UI exits:\n{after}");

    // Each frame is shown by the terminal at once, never a half-drawn card.
    let written = String::from_utf8_lossy(&std::fs::read(&written).unwrap()).into_owned();
    let (begun, ended) = (written.matches("\x1b[?2026h").count(), written.matches("\x1b[?2026l").count());
    assert!(begun > 10 && begun == ended, "{begun} frames begun, {ended} ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_side_by_side_ask_one_card_at_a_time_and_undo_takes_their_work_back() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("task", json!({"description": "fix a", "prompt": "Change a.txt."}))
            .with_call("task", &json!({"description": "fix b", "prompt": "Change b.txt."}).to_string()),
        Scripted::text("Both files are changed."),
    ])
    .await;
    for file in ["a", "b"] {
        server.route(
            &format!("You are the \"fix {file}\" subagent."),
            vec![
                Scripted::tool_call("read", json!({"path": format!("{file}.txt")})),
                Scripted::tool_call("write", json!({"path": format!("{file}.txt"), "content": "changed\n"})),
                Scripted::text(format!("{file}.txt changed.")),
            ],
        );
    }
    let (tmux, _dir, project) = open_ui("subagents", &server, &[("a.txt", "old\n"), ("b.txt", "old\n")]).await;
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["fix both files", "Enter"]);
    // Both subagents want to write; the cards come one after the other, each naming its subagent.
    // The footer under the card counts both as waiting; it is drawn after the card's top.
    tmux.wait_for_all(&["Allow the subagent", "2 subagents"]).await;
    tmux.send(&["y"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.wait_for("Allow the subagent").await;
    tmux.send(&["y"]);
    let done = tmux.wait_for("Both files are changed.").await;
    assert!(done.contains("task fix a") && done.contains("task fix b"), "{done}");
    for file in ["a.txt", "b.txt"] {
        assert_eq!(std::fs::read_to_string(project.join(file)).unwrap(), "changed\n", "{file}");
    }

    tmux.send(&["/subagents", "Enter"]);
    tmux.wait_for("/subagents N shows one's transcript.").await;
    tmux.send(&["/undo", "Enter"]);
    let undone = tmux.wait_for("Undone:").await;
    assert!(undone.contains("a.txt") && undone.contains("b.txt"), "{undone}");
    for file in ["a.txt", "b.txt"] {
        assert_eq!(std::fs::read_to_string(project.join(file)).unwrap(), "old\n", "{file} is put back");
    }
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_typed_while_the_trust_question_is_up_are_kept_for_the_editor() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![Scripted::text("It says to remember the milk.")]).await;
    let (tmux, _dir, _project) = open_ui("typed-early", &server, &[("notes.txt", "remember the milk\n")]).await;
    tmux.wait_for("Trust this project?").await;
    // The `n` of "note" and the `y` of "say" answer nothing: the person is typing their prompt.
    tmux.send(&["-l", "what does the note say?"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("(kept for when lembas opens)").await;
    tmux.send(&["y"]);
    let opened = tmux.wait_for("mode: manual").await;
    assert!(opened.contains("what does the note say?"), "the words wait in the editor:\n{opened}");
    tmux.send(&["Enter"]);
    tmux.wait_for("It says to remember the milk.").await;
    let asked = server.chat_requests().last().unwrap()["messages"].to_string();
    assert!(asked.contains("what does the note say?"), "{asked}");
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
}

#[tokio::test]
async fn esc_leaves_a_question_unanswered_and_slash_plan_plans_a_task_in_plan_mode() {
    if !common::tmux::tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = lembas_testkit::FakeServer::start(vec![
        lembas_testkit::Scripted::tool_call(
            "ask_user",
            serde_json::json!({"question": "Which database?", "options": ["sqlite", "postgres"]}),
        ),
        lembas_testkit::Scripted::text("Here is how I would do it."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = common::tmux::make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = common::tmux::launch("question-esc", &home, &project, "", (120, 40));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "set up storage"]);
    tmux.send(&["Enter"]);
    let card = tmux.wait_for("›[1] sqlite").await;
    assert!(card.contains("Esc stops"), "{card}");
    tmux.send(&["Escape"]);
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let screen = tmux.screen();
    assert!(screen.contains("(stopped by you)"), "the turn stopped:\n{screen}");
    assert_eq!(server.chat_requests().len(), 1, "{screen}");
    // `/plan TASK`: plan mode, and the task as the prompt.
    tmux.send(&["-l", "/plan move storage to sqlite"]);
    tmux.send(&["Enter"]);
    let planned = tmux.wait_for("Here is how I would do it.").await;
    assert!(planned.contains("mode: plan"), "{planned}");
    assert!(!planned.contains("› /plan"), "the task is shown once, as the prompt:\n{planned}");
    let asked = server.chat_requests();
    let last = asked.last().unwrap()["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(last.starts_with("\"move storage to sqlite"), "{last}");
    assert!(last.contains("The permission mode is now plan"), "{last}");
}

#[tokio::test]
async fn long_output_shows_its_start_and_end_and_a_refusal_shows_whole() {
    if !common::tmux::tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("bash", json!({"command": "seq 1 30"})),
        Scripted::tool_call("bash", json!({"command": "rm -rf ~"})),
        Scripted::text("Counted."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = common::tmux::make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = common::tmux::launch("fold-ends", &home, &project, "--mode auto", (80, 40));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: auto").await;
    tmux.send(&["-l", "count to thirty"]);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("Counted.").await;
    let rows: Vec<&str> = screen.lines().map(str::trim).collect();
    let fold = rows.iter().position(|r| *r == "… 18 more lines (Ctrl-O shows all)").expect(&screen);
    assert_eq!(rows[fold - 1], "6", "its start:\n{screen}");
    assert_eq!(rows[fold + 6], "30", "and its end, where a verdict is:\n{screen}");
    // The hardline's refusal whole: what it refuses and that it never runs, not cut at a width.
    assert!(screen.contains("lembas never runs this."), "{screen}");
    assert!(!screen.contains("never run…"), "{screen}");
}
