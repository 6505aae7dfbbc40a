//! A day with the terminal UI, end to end in tmux at 80 columns: writing a prompt with the
//! editor's keys, reading a long formatted answer (words whole, Markdown's structure kept),
//! approving an edit and a long command knowing what they do, `!`, `@file`, a custom command, a
//! picker — and coming back the next day with `lembas -c`.

mod common;

use std::time::Duration;

use common::tmux::{launch, make_project, tmux_available};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const PARAGRAPH: &str = "This paragraph is long enough to wrap several times at eighty columns, and it carries words like internationalization, supercalifragilistic and https://example.com/a/rather/long/path so that a cut in the middle of any of them would show.";

fn answer() -> String {
    format!(
        "## Plan of attack\n\n{PARAGRAPH}\n\nA second paragraph follows after a gap.\n\n1. First step, with enough words in it to wrap onto a second row at this width\n2. Second step\n   - a nested point\n3. Third step\n\n> A quoted remark.\n"
    )
}

/// The last user message of the last request the server got.
fn last_user_message(server: &FakeServer) -> String {
    let requests = server.chat_requests();
    let messages = requests.last().unwrap()["messages"].as_array().unwrap().clone();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().map(str::to_owned).unwrap_or_else(|| user["content"].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_answer_reads_whole_and_the_prompt_is_what_the_keys_made() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![Scripted::text(answer()).with_delay_ms(5)]).await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[]).await;
    let tmux = launch("daily-read", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    // Written with the line editor's keys: to the start, to the end, a word cut and replaced.
    tmux.send(&["-l", "hello wide world"]);
    tmux.send(&["C-a"]);
    tmux.send(&["-l", "X"]);
    tmux.send(&["C-e", "C-w"]);
    tmux.send(&["-l", "there"]);
    tmux.send(&["Left", "Left", "Left", "Left", "Left", "BSpace"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Third step").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(last_user_message(&server).starts_with("Xhello widethere"), "{}", last_user_message(&server));

    let rows = tmux.screen();
    // Every word of the paragraph sits whole on one row.
    for word in PARAGRAPH.split_whitespace() {
        assert!(rows.lines().any(|row| row.split_whitespace().any(|w| w == word)), "{word:?} is split:\n{rows}");
    }
    // The terminal wrapped the rows itself: joined back, the paragraph is one line.
    let joined = tmux.joined();
    let squeezed = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.lines().any(|l| squeezed(l) == PARAGRAPH), "the paragraph comes back whole:\n{joined}");
    // Markdown's structure: the heading without its marks, paragraphs apart, numbers kept.
    assert!(rows.lines().any(|l| l == "Plan of attack") && !rows.contains("## "), "{rows}");
    assert!(rows.contains("\n\nA second paragraph follows after a gap.\n\n"), "{rows}");
    assert!(
        rows.contains("1. First step") && rows.contains("2. Second step") && rows.contains("3. Third step"),
        "{rows}"
    );
    assert!(rows.contains("   • a nested point") && rows.contains("│ A quoted remark."), "{rows}");
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_seen_before_they_are_allowed_and_the_session_is_there_tomorrow() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let long = "for f in alpha beta gamma delta epsilon zeta eta theta iota kappa; do echo \"checked $f\" >> checked.txt; done && touch all-checked-and-done";
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::tool_call("edit", json!({"path": "notes.txt", "old_string": "old text", "new_string": "new text"})),
        Scripted::tool_call("bash", json!({"command": long})),
        Scripted::text("The note is changed."),
        Scripted::text("Hello to Bob."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(
        dir.path(),
        &server,
        &[
            ("notes.txt", "old text\n"),
            (".claude/commands/greet.md", "---\ndescription: Greet someone\n---\nSay hello to $1, and see @notes.txt"),
        ],
    )
    .await;
    let tmux = launch("daily-change", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "fix the note"]);
    tmux.send(&["Enter"]);

    // The edit's card shows its diff, and nothing is written before it is allowed.
    let card = tmux.wait_for("Allow?").await;
    assert!(card.contains("-old text") && card.contains("+new text"), "{card}");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "old text\n");
    tmux.send(&["y"]);
    // The long command's card shows all of it at 80 columns.
    let card = tmux.wait_for("[e] edit the command").await;
    let shown = card.replace('│', " ").replace(" $ for ", " for ");
    for word in long.split_whitespace() {
        assert!(shown.split_whitespace().any(|w| w == word), "{word:?} is on the card:\n{card}");
    }
    tmux.send(&["y"]);
    let done = tmux.wait_for("The note is changed.").await;
    assert!(done.contains("Read 1 line") && done.contains("1 line added, 1 removed"), "{done}");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "new text\n");

    // `!` runs a command the person types; its output goes with the next prompt.
    tmux.send(&["-l", "!echo shell-said-this"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("⎿ done, 1 line of output\n    shell-said-this").await;
    // A custom command from the trusted project, whose text attaches a file.
    tmux.send(&["-l", "/gre"]);
    tmux.send(&["Tab"]);
    tmux.send(&["-l", "Bob"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Hello to Bob.").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = last_user_message(&server);
    assert!(sent.starts_with("Say hello to Bob, and see @notes.txt"), "{sent}");
    assert!(sent.contains("new text"), "the file went with the words: {sent}");
    assert!(sent.contains("shell-said-this"), "what the person ran went with the words: {sent}");

    // A picker: the models, chosen from with the arrows; Esc leaves it.
    tmux.send(&["-l", "/model"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("type to narrow, Enter chooses").await;
    tmux.send(&["Escape"]);
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    let left = tmux.wait_for("LEMBAS-EXITED-0").await;
    assert!(left.contains("Go on with this session: lembas --resume"), "{left}");
    drop(tmux);

    // Tomorrow: `lembas -c` opens the same session, its conversation drawn again.
    let tmux = launch("daily-continue", &home, &project, "-c", (80, 24));
    tmux.wait_for("── Resumed: fix the note ──").await;
    tmux.wait_for("Hello to Bob.").await;
    // The status line is drawn once the session has said its mode.
    tmux.wait_for("mode: manual").await;
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
}

#[tokio::test]
async fn a_session_left_before_a_word_is_not_kept_to_continue() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![Scripted::text("The first answer.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    // A real conversation, then the UI opened and left at once, twice.
    let tmux = launch("kept-1", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    // The opening line: version, project, model, mode.
    let opened = tmux.wait_for("· model fake-model · manual mode").await;
    assert!(opened.contains(&format!("lembas {} ·", env!("CARGO_PKG_VERSION"))), "{opened}");
    tmux.send(&["-l", "hello"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("The first answer.").await;
    tmux.send(&["C-d"]);
    tmux.send(&["C-d"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
    drop(tmux);
    for round in 0..2 {
        let tmux = launch(&format!("kept-empty-{round}"), &home, &project, "", (80, 24));
        tmux.wait_for("mode: manual").await;
        tmux.send(&["C-d"]);
        tmux.send(&["C-d"]);
        tmux.wait_for("LEMBAS-EXITED-0").await;
    }
    // Only the conversation is listed, and --continue opens it.
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["sessions", "--json"])
        .env("LEMBAS_HOME", &home)
        .current_dir(&project)
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let tmux = launch("kept-continue", &home, &project, "-c", (80, 24));
    tmux.wait_for("The first answer.").await;
}

#[tokio::test]
async fn esc_on_a_card_stops_the_turn_and_n_declines_and_goes_on() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("bash", json!({"command": "make deploy"})),
        Scripted::text("You stopped me."),
        Scripted::tool_call("bash", json!({"command": "make release"})),
        Scripted::text("Not released, as you said."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = launch("esc-card", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "deploy it"]);
    tmux.send(&["Enter"]);
    let card = tmux.wait_for("Allow?").await;
    assert!(card.contains("[Esc] stop"), "{card}");
    tmux.send(&["Escape"]);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let screen = tmux.screen();
    assert!(!screen.contains("You stopped me."), "the model was not asked again:\n{screen}");
    assert_eq!(server.chat_requests().len(), 1, "{screen}");
    // The input box is the person's again: the next prompt goes.
    tmux.send(&["-l", "release it"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("You stopped me.").await;
    tmux.send(&["-l", "again"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Allow?").await;
    // `n` declines, and the turn goes on to the model.
    tmux.send(&["n"]);
    tmux.wait_for("Not released, as you said.").await;
}

#[tokio::test]
async fn words_typed_during_a_turn_go_at_its_next_step_or_as_the_next_turn_and_esc_gives_them_back() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        // A few seconds of reply with no tool call: no next step for the words to go to.
        Scripted::text("Thinking it over, slowly, word by word.").with_delay_ms(300),
        Scripted::text("Checked the docs too."),
        Scripted::text("Another slow answer, word after word after word.").with_delay_ms(300),
        Scripted::text("Only this."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = launch("steer", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "first question"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Thinking").await;
    tmux.send(&["-l", "also check the docs"]);
    tmux.send(&["Enter"]);
    // Queued under the running turn, then sent as the next turn once it ends.
    tmux.wait_for("› also check the docs  (queued)").await;
    tmux.wait_for("Checked the docs too.").await;
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let last_user = |r: &serde_json::Value| {
        let messages = r["messages"].as_array().unwrap().clone();
        let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap().clone();
        user["content"].as_str().unwrap_or_default().to_owned()
    };
    assert!(last_user(&requests[1]).starts_with("also check the docs"), "{}", last_user(&requests[1]));
    assert!(!last_user(&requests[0]).contains("also check"), "the first turn did not get them late");
    // Stopped: the words come back to the input box, unsent.
    tmux.send(&["-l", "third question"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Another slow").await;
    tmux.send(&["-l", "never mind that"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("(queued)").await;
    tmux.send(&["Escape"]);
    tmux.wait_for("stopped by you").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let screen = tmux.screen();
    let input_box = screen.rsplit("┌ › ").next().unwrap_or_default();
    assert!(input_box.contains("never mind that"), "back in the input box:\n{screen}");
    assert_eq!(server.chat_requests().len(), 3, "nothing sent for them:\n{screen}");
    // And the words sent as a turn are stored like any message: there tomorrow.
    tmux.send(&["C-u"]);
    tmux.send(&["C-d"]);
    tmux.send(&["C-d"]);
    tmux.wait_for("LEMBAS-EXITED").await;
    drop(tmux);
    let tmux = launch("steer-resumed", &home, &project, "-c", (80, 24));
    tmux.wait_for("Checked the docs too.").await;
    assert!(tmux.screen().contains("also check the docs"), "{}", tmux.screen());
}

#[tokio::test]
async fn completion_is_a_menu_that_leaves_nothing_in_the_scrollback() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![Scripted::text("Read them.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) =
        make_project(dir.path(), &server, &[("README.md", "# Demo\n"), ("notes.txt", "n\n"), ("src/main.rs", "")])
            .await;
    let tmux = launch("menu", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    // Shown as soon as `@` is typed; `@main` finds src/main.rs.
    tmux.send(&["-l", "look at @main"]);
    let menu = tmux.wait_for(" @src/main.rs").await;
    assert!(!menu.contains("@notes.txt"), "{menu}");
    tmux.send(&["Tab"]);
    tmux.send(&["-l", "and /"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Read them.").await;
    let sent = last_user_message(&server);
    assert!(sent.starts_with("look at @src/main.rs and /"), "{sent}");
    // Nothing of the menu stayed above: the scrollback holds the prompt, what went with it and
    // the answer.
    let all = tmux.screen();
    assert!(all.contains("Attached src/main.rs."), "{all}");
    assert_eq!(all.matches("src/main.rs").count(), 2, "{all}");
    tmux.send(&["-l", "/co"]);
    let menu = tmux.wait_for("/compact").await;
    assert!(menu.contains("/context"), "{menu}");
    tmux.send(&["Escape"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!tmux.screen().contains("/compact"), "closed, and gone:\n{}", tmux.screen());
}

#[tokio::test]
async fn a_wrapped_paragraph_copies_as_its_words_at_any_width() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let words = "The parser drops the last token because the loop stops one short: the index is compared with len minus one, so the final token was dropped before it could be pushed, and the input ended without an end marker. The input is always handed to the tokenizer before returning, which is why the fix belongs in the loop.";
    let server = FakeServer::start(vec![Scripted::text(words)]).await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = launch("copy", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "why"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("fix belongs").await;
    // What a terminal's copy gives: wrapped rows joined back (`capture-pane -J`), blanks as one.
    let copied = |tmux: &common::tmux::Tmux| tmux.joined().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(copied(&tmux).contains(words), "at 80 columns:\n{}", tmux.joined());
    for (width, height) in [(120, 40), (60, 24), (80, 24)] {
        tmux.resize(width, height);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(copied(&tmux).contains(words), "at {width} columns:\n{}", tmux.joined());
    }
}

#[tokio::test]
async fn a_question_is_answered_with_the_arrows_and_stays_readable_above() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::text("Postgres it is."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = launch("question", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "set up storage"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("›[1] sqlite").await;
    tmux.send(&["Down"]);
    tmux.wait_for("›[2] postgres").await;
    tmux.send(&["Enter"]);
    let done = tmux.wait_for("Postgres it is.").await;
    assert!(done.contains("Which database?") && done.contains("You answered: postgres"), "{done}");
    assert!(!done.contains("The person answered"), "the model's words stay the model's:\n{done}");
}

#[tokio::test]
async fn undo_gives_back_the_typed_words_and_a_call_that_would_fail_asks_nothing() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::text("It is a demo."),
        // notes.txt exists and was not read: the write would fail, so no card.
        Scripted::tool_call("write", json!({"path": "notes.txt", "content": "overwritten\n"})),
        Scripted::text("I must read it first."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) =
        make_project(dir.path(), &server, &[("README.md", "# Demo\n"), ("notes.txt", "keep\n")]).await;
    let tmux = launch("undo-fail", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y"]);
    tmux.wait_for("manual mode").await;
    // A blank after the path closes the menu; Enter on the menu's `/undo` runs it.
    tmux.send(&["-l", "what is @README.md "]);
    tmux.send(&["Enter"]);
    tmux.wait_for("It is a demo.").await;
    tmux.send(&["-l", "/undo"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Undone:").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let screen = tmux.screen();
    let input_box = screen.rsplit("┌ › ").next().unwrap_or_default();
    assert!(input_box.contains("what is @README.md"), "the words typed:\n{screen}");
    assert!(!input_box.contains("# Demo") && !input_box.contains("sha "), "not the file:\n{screen}");
    tmux.send(&["C-u"]);
    tmux.send(&["-l", "rewrite the notes"]);
    tmux.send(&["Enter"]);
    let done = tmux.wait_for("I must read it first.").await;
    assert!(!done.contains("Allow?"), "no card for a call that would fail:\n{done}");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "keep\n");
}

#[tokio::test]
async fn the_transcript_shows_each_thing_once_and_marks_a_stopped_turn() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "missing.txt"})),
        Scripted::text("There is no such file."),
        Scripted::text("A long answer, word after word after word after word.").with_delay_ms(300),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "x\n")]).await;
    let tmux = launch("transcript", &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y"]);
    tmux.wait_for("manual mode").await;
    tmux.send(&["-l", "read missing.txt"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("There is no such file.").await;
    tmux.send(&["-l", "and now at length"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("A long").await;
    tmux.send(&["Escape"]);
    tmux.wait_for("(stopped by you)").await;
    tmux.send(&["C-o"]);
    let view = tmux.wait_for("missing.txt").await;
    let failure = view.lines().filter(|l| l.contains("not found") || l.contains("does not exist")).count();
    assert!(failure <= 1, "a failure's line once:\n{view}");
    assert!(view.contains("(stopped by you)"), "{view}");
    let lines: Vec<&str> = view.lines().collect();
    let reply = lines.iter().position(|l| l.contains("There is no such file.")).unwrap();
    assert!(lines[reply - 1].trim().is_empty(), "a blank line between the tool block and the reply:\n{view}");
}
