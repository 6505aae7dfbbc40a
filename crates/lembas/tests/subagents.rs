//! `task` through the real binary: a subagent's steps show under its task, its report comes
//! back, it may run on another of the login's models once the person names it, and its session
//! is kept but not listed.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

const SUBAGENT: &str = "You work for the main agent";

#[tokio::test]
async fn a_headless_run_hands_work_to_a_subagent_on_the_model_the_person_named() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "task",
            json!({"description": "find the note", "prompt": "What does notes.txt say?", "model": "other"}),
        ),
        Scripted::text("The note says to remember the milk."),
    ])
    .await;
    server.route(
        SUBAGENT,
        vec![
            Scripted::tool_call("read", json!({"path": "notes.txt"})),
            Scripted::text("notes.txt:1 says: remember the milk."),
        ],
    );
    server.set_models(json!([{"id": "small-coder", "object": "model"}, {"id": "other", "object": "model"}]));
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "Ask other what the note says."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The note says to remember the milk.\n");
    let said = stderr(&out);
    assert!(said.contains("› task find the note"), "{said}");
    assert!(said.contains("  › find the note: read notes.txt"), "{said}");

    let requests = server.chat_requests();
    let sub: Vec<&Value> =
        requests.iter().filter(|r| r["messages"][0]["content"].as_str().unwrap().contains(SUBAGENT)).collect();
    assert_eq!(sub.len(), 2);
    assert!(sub.iter().all(|r| r["model"] == "other"), "the model the person named");
    let main = requests.last().unwrap();
    assert_eq!(main["model"], "small-coder");
    let result = main["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").unwrap();
    assert!(result["content"].as_str().unwrap().contains("notes.txt:1 says: remember the milk."));

    // One session listed: the subagent's is kept under it, not beside it.
    let listed = env.run(&["sessions", "--json"]).await;
    let sessions: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    let main_id = sessions[0]["id"].as_str().unwrap();
    let shown = env.run(&["sessions", "show", main_id]).await;
    let text = stdout(&shown);
    assert!(text.contains("Subagents (`lembas sessions show ID` shows one):"), "{text}");
    let line = text.lines().rev().find(|l| l.contains("find the note")).unwrap();
    let sub_id = line.split_whitespace().next().unwrap();
    // Its transcript, by its full id: the brief, its call, its report.
    let sub = stdout(&env.run(&["sessions", "show", sub_id, "--json"]).await);
    let sub: Value = serde_json::from_str(&sub).unwrap();
    assert_eq!(sub["parent"], main_id);
    assert_eq!(sub["model"], "other");
    assert_eq!(sub["messages"].as_array().unwrap().len(), 4);
    assert_eq!(sub["messages"][3]["content"], "notes.txt:1 says: remember the milk.");
}

#[tokio::test]
async fn json_carries_the_subagents_events_inside_its_own() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("task", json!({"description": "look", "prompt": "List the project."})),
        Scripted::text("Done."),
    ])
    .await;
    server.route(SUBAGENT, vec![Scripted::tool_call("list", json!({})), Scripted::text("One file: notes.txt.")]);
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--json", "what is here?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let inner: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").map(|e| &e["event"]).collect();
    assert!(inner.iter().any(|e| e["type"] == "tool_start" && e["tool"] == "list"), "{inner:?}");
    assert!(inner.iter().any(|e| e["type"] == "done" && e["text"] == "One file: notes.txt."), "{inner:?}");
    assert!(events.iter().any(|e| e["type"] == "subagent" && e["agent"] == "look"));
}
