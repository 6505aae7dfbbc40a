//! The team in the terminal UI, in tmux at 80 columns: `/team` draws the tree while a subagent
//! works, the status bar counts the agents, the person stops the subagent with `/team stop`, and
//! the main agent is told on its next message; a session quit while its subagent worked finds
//! its team again when resumed, and the subagent goes on.

mod common;

use common::tmux::{launch, make_project, tmux_available};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

/// The terminal UI with a subagent at work, and what it runs on.
struct UiAtWork {
    server: FakeServer,
    tmux: common::tmux::Tmux,
    home: std::path::PathBuf,
    project: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// The UI opened (tmux `name`, 80×24) in a trusted project, where the main agent added parser
/// and said "parser is on it."; parser streams a long reply slowly, then answers `parser_next`;
/// the main agent's next reply is `lead_next`.
async fn parser_at_work(name: &str, lead_next: &str, parser_next: Vec<Scripted>) -> UiAtWork {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "team_add",
            json!({"name": "parser", "role": "reads the notes", "task": "Read notes.txt slowly.", "goal": "know the notes"}),
        ),
        Scripted::text("parser is on it."),
        Scripted::text(lead_next),
    ])
    .await;
    // The subagent takes its time: a long reply, a little at a time.
    let mut parser = vec![Scripted::text("word ".repeat(400)).with_delay_ms(50)];
    parser.extend(parser_next);
    server.route("You are \"parser\" (s1)", parser);
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[("notes.txt", "milk\n")]).await;
    let tmux = launch(name, &home, &project, "", (80, 24));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    tmux.send(&["-l", "read the notes with a helper"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("parser is on it.").await;
    tmux.wait_for("agents 2/4 · 1 subagent working").await;
    UiAtWork { server, tmux, home, project, _dir: dir }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_watches_the_tree_and_stops_a_subagent() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let UiAtWork { server, tmux, .. } = parser_at_work("team", "Understood: parser is gone.", vec![]).await;
    // Its turn over, the main agent has nothing to do but wait for the report.
    tmux.wait_for("Waiting for subagents: 1 running").await;

    tmux.send(&["-l", "/team"]);
    tmux.send(&["Enter"]);
    let tree = tmux.wait_for("parser (s1) — reads the notes · working").await;
    assert!(tree.contains("Team: 2 of 4 agents"), "{tree}");
    assert!(tree.contains("lead — the main agent · idle"), "{tree}");

    // Its transcript so far, read-only; its findings; its context.
    tmux.send(&["-l", "/team open parser"]);
    tmux.send(&["Enter"]);
    let open = tmux.wait_for("── end of \"parser\" so far ──").await;
    assert!(open.contains("── subagent \"parser\", read-only ──") && open.contains("Read notes.txt slowly."), "{open}");
    tmux.send(&["-l", "/team findings parser"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Findings of parser (s1):").await;
    tmux.send(&["-l", "/context parser"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("parser: 0 tokens in its context").await;

    tmux.send(&["-l", "/team stop parser"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("agents 1/4").await;
    tmux.send(&["-l", "/team"]);
    tmux.send(&["Enter"]);
    let after = tmux.wait_for("parser (s1) — reads the notes · stopped").await;
    assert!(after.contains("Ended:"), "{after}");

    // A smaller team from now on: said on the next message, with the stop.
    tmux.send(&["-l", "/team size 1 3"]);
    tmux.send(&["Enter"]);
    tmux.send(&["-l", "carry on"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("Understood: parser is gone.").await;
    let requests = server.chat_requests();
    let last =
        requests.iter().rev().find(|r| !r["messages"][0]["content"].as_str().unwrap().contains("You are \"")).unwrap();
    let said = last["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(said.contains("The person stopped parser; they have left the team."), "{said}");
    assert!(said.contains("The team may have 1 to 3 agents, you included."), "{said}");
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_finds_its_team_and_the_subagent_cut_short_goes_on() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    // After the resume, parser goes on and its report wakes the main agent.
    let UiAtWork { server, tmux, home, project, _dir } =
        parser_at_work("team-quit", "parser is back with its report.", vec![Scripted::text("The notes say milk.")])
            .await;
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
    drop(tmux);

    let again = launch("team-resume", &home, &project, "--continue", (80, 24));
    again.wait_for("parser is back with its report.").await;
    again.send(&["-l", "/team"]);
    again.send(&["Enter"]);
    let tree = again.wait_for("parser (s1) — reads the notes · finished").await;
    assert!(tree.contains("Team: 2 of 4 agents"), "{tree}");
    assert!(tree.contains("The session closed while parser worked; it goes on where it stopped."), "{tree}");
    let parser: Vec<_> = server
        .chat_requests()
        .into_iter()
        .filter(|r| r["messages"][0]["content"].as_str().unwrap().contains("You are \"parser\" (s1)"))
        .collect();
    assert_eq!(parser.len(), 2, "its cut-short turn, then the one it went on with");
    let woke = parser[1]["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
    assert!(woke["content"].as_str().unwrap().starts_with("The session was closed while you worked"), "{woke}");
    again.send(&["C-c"]);
    again.send(&["C-c"]);
    again.wait_for("LEMBAS-EXITED-0").await;
}
