//! A session with MCP servers, against the fake model and a real MCP server on the official
//! Python SDK (`LEMBAS_MCP_PYTHON`, set by `.ci/run`; without it these tests say so and pass).

use std::sync::Arc;
use std::time::Duration;

use lembas_config::{McpServerPlan, McpTransport};
use lembas_core::{Approval, McpHub, ServerEntry, connect_mcp};
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::{Value, json};

mod common;
use common::*;

fn peer(env: &[(&str, &str)]) -> Option<ServerEntry> {
    let Some(python) = std::env::var("LEMBAS_MCP_PYTHON").ok().filter(|p| !p.is_empty()) else {
        eprintln!("LEMBAS_MCP_PYTHON is not set: no MCP peer here (.ci/run sets it)");
        return None;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../lembas-mcp/tests/peer_server.py");
    Some(ServerEntry {
        name: "peer".into(),
        plan: Ok(McpServerPlan {
            name: "peer".into(),
            transport: McpTransport::Stdio {
                command: python,
                args: vec![script.into()],
                env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                cwd: None,
            },
            timeout_secs: 30,
        }),
    })
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

fn last_user(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_servers_tools_are_in_the_first_list_and_its_instructions_in_the_prompt() {
    let Some(entry) = peer(&[("PEER_INSTRUCTIONS", "Use add for every sum.")]) else { return };
    let h = Harness::new(vec![
        Scripted::tool_call("mcp__peer__add", json!({"a": 2, "b": 40})),
        Scripted::text("It is 42."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.mcp = connect_mcp(vec![entry], &h.root);
    let mut session = h.start_with(cfg);
    session.prompt("What is 2 + 40?", &CancellationToken::new()).await;

    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 2);
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"mcp__peer__add".to_owned()) && names.contains(&"read".to_owned()), "{names:?}");
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("<server name=\"peer\">\nUse add for every sum.\n</server>"), "{system}");
    // Told in the prompt, so never again in a note.
    assert!(!last_user(&requests[0]).contains("MCP server"));
    let results = tool_results(&requests[1]);
    assert!(results[0].contains("42"), "{results:?}");
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn a_tool_that_only_reads_runs_and_one_that_acts_is_asked_in_manual_mode() {
    let Some(entry) = peer(&[]) else { return };
    let h = Harness::new(vec![
        Scripted::tool_call("mcp__peer__add", json!({"a": 1, "b": 2})).with_call("mcp__peer__note", r#"{"text":"x"}"#),
        Scripted::text("Done."),
    ])
    .await;
    let approver = Arc::new(Answering::new(Approval::Deny { feedback: Some("not now".into()) }));
    let mut cfg = h.config(Mode::Manual, 50);
    cfg.approver = approver.clone();
    cfg.mcp = connect_mcp(vec![entry], &h.root);
    let mut session = h.start_with(cfg);
    session.prompt("Add, then note.", &CancellationToken::new()).await;

    assert_eq!(approver.asked().len(), 1, "only the acting tool is asked");
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains('3'), "{results:?}");
    assert!(results[1].contains("declined") && results[1].contains("not now"), "{results:?}");
    assert!(!h.root.join("notes.txt").exists(), "the refused call did not run");
}

#[tokio::test]
async fn in_plan_mode_an_acting_tool_is_refused() {
    let Some(entry) = peer(&[]) else { return };
    let h =
        Harness::new(vec![Scripted::tool_call("mcp__peer__note", json!({"text": "x"})), Scripted::text("Ok.")]).await;
    let mut cfg = h.config(Mode::Plan, 50);
    cfg.mcp = connect_mcp(vec![entry], &h.root);
    let mut session = h.start_with(cfg);
    session.prompt("Note it.", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("Plan mode"), "{results:?}");
    assert!(!h.root.join("notes.txt").exists());
}

#[tokio::test]
async fn a_server_that_connects_late_joins_the_list_once_and_its_instructions_come_as_a_note() {
    let Some(entry) = peer(&[("PEER_DELAY_MS", "4000"), ("PEER_INSTRUCTIONS", "Name the ticket.")]) else {
        return;
    };
    let h =
        Harness::new(vec![Scripted::text("Hello."), Scripted::text("Now with tools."), Scripted::text("Again.")]).await;
    let hub = McpHub::start(vec![entry], &h.root);
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.mcp = Some(hub.clone());
    let mut session = h.start_with(cfg);
    let none = CancellationToken::new();
    session.prompt("Hi.", &none).await;
    hub.settle(Duration::from_secs(30)).await;
    session.prompt("And now?", &none).await;
    session.prompt("Once more.", &none).await;

    let requests = h.server.chat_requests();
    assert!(!tool_names(&requests[0]).iter().any(|n| n.starts_with("mcp__")));
    assert!(tool_names(&requests[1]).contains(&"mcp__peer__add".to_owned()));
    assert_eq!(requests[1]["tools"], requests[2]["tools"], "added once, then fixed");
    assert_eq!(requests[0]["messages"][0], requests[2]["messages"][0], "the system prompt is not remade");
    let note = last_user(&requests[1]);
    assert!(
        note.contains(
            "Instructions from an MCP server that connected since the session began:\n<server name=\"peer\">\nName the ticket.\n</server>"
        ),
        "{note}"
    );
    assert!(!last_user(&requests[2]).contains("MCP server"), "said once");

    // A resumed session keeps the server's tools without adding them again.
    let id = session.id().to_owned();
    drop(session);
    h.server.push(Scripted::text("Resumed."));
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.mcp = Some(hub.clone());
    let mut resumed = h.resume(cfg, &id);
    resumed.prompt("Still there?", &none).await;
    let requests = h.server.chat_requests();
    assert_eq!(requests[2]["tools"], requests[3]["tools"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_tools_images_go_to_a_model_that_sees_and_are_named_for_one_that_does_not() {
    let Some(entry) = peer(&[]) else { return };
    let h = Harness::new(vec![
        Scripted::tool_call("mcp__peer__snapshot", json!({})),
        Scripted::text("A pixel."),
        Scripted::tool_call("mcp__peer__snapshot", json!({})),
        Scripted::text("Something."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.model.vision = Some(true);
    cfg.mcp = connect_mcp(vec![entry.clone()], &h.root);
    let mut session = h.start_with(cfg);
    session.prompt("Look at the screen.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = tool_results(&requests[1]).pop().unwrap();
    assert!(
        result.contains("One pixel, transparent.") && result.contains("The image follows this result."),
        "{result}"
    );
    let images = messages.last().unwrap();
    assert_eq!(images["role"], "user");
    let url = images["content"].as_array().unwrap().iter().find_map(|p| p["image_url"]["url"].as_str()).unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{url}");

    // A model that does not see gets the words only.
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.mcp = connect_mcp(vec![entry], &h.root);
    let mut session = h.start_with(cfg);
    session.prompt("Look again.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let result = tool_results(&requests[3]).pop().unwrap();
    assert!(result.contains("Images not sent"), "{result}");
    assert!(!requests[3].to_string().contains("data:image/png"));
}
