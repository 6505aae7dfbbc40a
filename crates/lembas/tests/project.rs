//! The project's tasks and decisions through the real binary: the person starts the list with
//! `lembas tasks add`, the agent moves a task in a `lembas run`, and the person reads, closes and
//! records what was decided with `lembas tasks` and `lembas decisions` — the same files in the
//! project, for the team to commit.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

#[tokio::test]
async fn the_person_and_the_agent_keep_one_task_list_and_decision_log() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("tasks", json!({"action": "update", "id": "T1", "state": "doing"})),
        Scripted::text("On it."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    assert_eq!(stdout(&env.run(&["tasks"]).await), "No tasks open.\n");
    let out = env.run(&["tasks", "add", "Fix", "the", "redirect", "--details", "It loses next."]).await;
    assert_eq!(stdout(&out), "Added T1: Fix the redirect\n", "{}", stderr(&out));
    let out = env.run(&["run", "work on T1"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&env.run(&["tasks"]).await), "T1 [doing] Fix the redirect (person)\n");

    let listed: Value = serde_json::from_str(&stdout(&env.run(&["tasks", "--json"]).await)).unwrap();
    assert_eq!(listed[0]["id"], "T1");
    assert_eq!(listed[0]["fields"]["state"], "doing");
    assert_eq!(listed[0]["text"], "It loses next.");
    assert!(listed[0]["fields"]["sessions"].as_str().is_some_and(|s| !s.is_empty()), "{listed}");

    assert_eq!(stdout(&env.run(&["tasks", "done", "T1"]).await), "T1 [done] Fix the redirect (person)\n");
    assert!(stdout(&env.run(&["tasks"]).await).starts_with("No tasks open."));
    let missing = env.run(&["tasks", "done", "T7"]).await;
    assert!(!missing.status.success() && stderr(&missing).contains("There is no T7."), "{}", stderr(&missing));

    let out = env
        .run(&["decisions", "add", "Cookies", "--decision", "Keep sessions in cookies.", "--why", "The proxy."])
        .await;
    assert_eq!(stdout(&out), "Recorded D1: Cookies\n", "{}", stderr(&out));
    env.run(&["decisions", "add", "Tokens", "--decision", "Move to tokens.", "--supersedes", "D1"]).await;
    let log = stdout(&env.run(&["decisions"]).await);
    assert!(log.contains("· Cookies [superseded by D2]\nD2 · ") && log.ends_with("· Tokens\n"), "{log}");
    let file = std::fs::read_to_string(env.project.join(".lembas/decisions.md")).unwrap();
    assert!(file.starts_with("# Decisions\n") && file.contains("- supersedes: D1"), "{file}");
}
