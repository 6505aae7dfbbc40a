//! The library in a session: notes the model makes and reads back in the same session and finds
//! in the next, and what was said in an earlier session found again. Every reading tool is
//! offered from the start (`context.md` §10 rule 4: notes, skills and earlier sessions may come
//! during a session) and answers its `unavailable` text while there is nothing to read.

mod common;

use common::{Harness, offered, tool_results};
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::json;

#[tokio::test]
async fn a_note_made_in_a_session_is_read_back_in_it_and_found_in_the_next_with_what_was_said_there() {
    let h = Harness::new(vec![
        Scripted::tool_call("note_view", json!({})),
        Scripted::tool_call("session_search", json!({"query": "deploy key"})),
        Scripted::tool_call("skills_list", json!({})),
        Scripted::tool_call(
            "note_manage",
            json!({"action": "create", "name": "Deploy", "content": "# Deploying\n\nThe deploy key lives in the vault under ops/deploy."}),
        ),
        Scripted::tool_call("note_view", json!({"name": "deploy"})),
        Scripted::text("Noted where the deploy key is."),
        Scripted::tool_call("notes_search", json!({"query": "where is the deploy key"})),
        Scripted::tool_call("session_search", json!({"query": "deploy key"})),
        Scripted::tool_call("note_view", json!({})),
        Scripted::text("It is in the vault."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let notes = lembas_library::Notes { project: Some(dir.path().join("app")), personal: dir.path().join("me") };
    let mut cfg = h.config(Mode::Edit, 10);
    cfg.notes = notes.clone();
    cfg.skills = lembas_tools::SkillPlaces { search: vec![dir.path().join("skills")], own: None };
    let mut first = h.start_with(cfg);
    first.prompt("remember where the deploy key is: the vault", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let tools = offered(&requests[0]);
    for present in ["note_manage", "note_view", "notes_search", "session_search", "skill_view", "skills_list"] {
        assert!(tools.contains(&present.to_owned()), "{present} is offered before there is anything to read");
    }
    // Nothing to read yet: each says so with its definition's words.
    let said = tool_results(&requests[5]);
    assert_eq!(said[0], "[#0001]\nThere are no notes yet: make one with note_manage.");
    assert_eq!(said[1], "[#0002]\nThere are no earlier sessions in this project.");
    assert_eq!(said[2], "[#0003]\nThere are no skills here yet.");
    assert_eq!(said[3], "[#0004]\nCreated the project note deploy (3 lines).");
    // Made in this session, read back in it.
    assert!(said[4].contains("ops/deploy"), "{}", said[4]);
    assert_eq!(offered(&requests[5]), tools, "the tool list stays as it was");
    drop(first);

    let mut cfg = h.config(Mode::Edit, 10);
    cfg.notes = notes;
    let mut second = h.start_with(cfg);
    second.prompt("where was the deploy key again?", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let results = tool_results(requests.last().unwrap());
    assert!(
        results[0].starts_with(
            "[#0001]\ndeploy (project) lines 3-3:\nThe deploy key lives in the vault under ops/deploy.\n\n"
        ),
        "the passage with the most of the words first: {}",
        results[0]
    );
    assert!(results[1].contains(&format!("session {}:", requests_session(&h))), "{}", results[1]);
    assert!(results[1].contains("remember where the deploy key is: the vault"), "{}", results[1]);
    assert!(results[2].starts_with("[#0003]\n- deploy — Deploying (project, "), "{}", results[2]);
}

/// The first session's id, as the store lists it.
fn requests_session(h: &Harness) -> String {
    h.store.list(None).unwrap().into_iter().last().unwrap().id
}

#[tokio::test]
async fn the_agent_starts_the_projects_task_list_and_decision_log_and_changes_them() {
    let h = Harness::new(vec![
        Scripted::tool_call("tasks", json!({"action": "list"})),
        Scripted::tool_call("tasks", json!({"action": "add", "title": "Fix the login redirect"})),
        Scripted::text("Tracked."),
        Scripted::tool_call("tasks", json!({"action": "update", "id": "T1", "state": "doing", "details": "Started on the redirect."})),
        Scripted::tool_call("decisions", json!({"action": "record", "title": "Keep cookies", "decision": "Sessions stay in cookies.", "why": "The proxy strips headers."})),
        Scripted::tool_call("tasks", json!({"action": "list"})),
        Scripted::text("T1 is under way."),
    ])
    .await;
    let mut first = h.start_with(h.config(Mode::Edit, 10));
    first.prompt("track the redirect fix", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let tools = offered(&requests[0]);
    assert!(tools.contains(&"tasks".to_owned()) && tools.contains(&"decisions".to_owned()), "{tools:?}");
    let results = tool_results(&requests[2]);
    assert_eq!(results[0], "[#0001]\nNo tasks open.");
    assert_eq!(results[1], "[#0002]\nAdded T1.");
    let first_id = first.id().to_owned();
    drop(first);

    let mut second = h.start_with(h.config(Mode::Edit, 10));
    second.prompt("work on the redirect", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let results = tool_results(requests.last().unwrap());
    assert_eq!(results[0], "[#0001]\nT1 [doing] Fix the login redirect (main)");
    assert_eq!(results[1], "[#0002]\nRecorded D1.");
    assert_eq!(results[2], "[#0003]\nT1 [doing] Fix the login redirect (main)");
    let tasks = std::fs::read_to_string(h.root.join(".lembas/tasks.md")).unwrap();
    let sessions = tasks.lines().find(|l| l.starts_with("- sessions: ")).unwrap_or_default();
    assert!(sessions.contains(first_id.as_str()) && sessions.contains(second.id()), "the task links to both:\n{tasks}");
    assert!(tasks.contains("(main): Started on the redirect."), "{tasks}");
    let log = std::fs::read_to_string(h.root.join(".lembas/decisions.md")).unwrap();
    assert!(log.contains("## D1 · Keep cookies\n") && log.contains("Why: The proxy strips headers."), "{log}");
}

#[tokio::test]
async fn the_model_asks_to_move_to_another_model_and_effort_and_the_next_step_runs_there() {
    let h = Harness::new(vec![
        Scripted::tool_call("settings", json!({"model": "big-model", "effort": "high", "why": "a hard proof"})),
        Scripted::tool_call("settings", json!({"model": "nonesuch", "why": "x"})),
        Scripted::text("Done on the big model."),
    ])
    .await;
    let approver = std::sync::Arc::new(common::Answering::new(lembas_core::Approval::Once));
    let mut cfg = h.config(Mode::Edit, 10);
    let big = lembas_core::ModelInfo {
        id: "big-model".into(),
        efforts: Some(vec!["low".into(), "high".into()]),
        ..cfg.model.clone()
    };
    cfg.models = vec![cfg.model.clone(), big];
    cfg.approver = approver.clone();
    let mut session = h.start_with(cfg);
    session.prompt("prove it", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(offered(&requests[0]).contains(&"settings".to_owned()));
    assert_eq!(approver.asked().len(), 2, "the person is asked each time");
    assert_eq!(tool_results(&requests[1])[0], "[#0001]\nFrom the next step: the model big-model, effort high.");
    assert_eq!(requests[0]["model"], "fake-model");
    assert_eq!(requests[1]["model"], "big-model", "the next step runs on the model asked for");
    assert_eq!(tool_results(&requests[2])[1], "[#0002]\nno model nonesuch; the login's models: fake-model, big-model");
}
