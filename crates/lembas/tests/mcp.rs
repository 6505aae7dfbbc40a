//! The `lembas` binary with MCP servers from its configuration and a project's `.mcp.json`,
//! against the fake model and a real MCP server on the official Python SDK
//! (`LEMBAS_MCP_PYTHON`, set by `.ci/run`; without it the tests that need it say so and pass).

use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

mod common;
use common::{Env, stderr, stdout};

fn python() -> Option<String> {
    let python = std::env::var("LEMBAS_MCP_PYTHON").ok().filter(|p| !p.is_empty());
    if python.is_none() {
        eprintln!("LEMBAS_MCP_PYTHON is not set: no MCP peer here (.ci/run sets it)");
    }
    python
}

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../lembas-mcp/tests/peer_server.py");

fn write_config(env: &Env, text: &str) {
    std::fs::create_dir_all(env.home.join("config")).unwrap();
    std::fs::write(env.home.join("config/config.toml"), text).unwrap();
}

#[tokio::test]
async fn lembas_mcp_list_says_where_each_server_stands() {
    let env = Env::new();
    let out = env.run(&["mcp", "list"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("No MCP servers are configured"));

    let mut config = String::from(
        "[mcp_servers.gone]\ncommand = \"/nonexistent/server\"\n\n[mcp_servers.off]\ncommand = \"x\"\nenabled = false\n",
    );
    if let Some(python) = python() {
        config.push_str(&format!("\n[mcp_servers.peer]\ncommand = \"{python}\"\nargs = [\"{PEER}\"]\n"));
    }
    write_config(&env, &config);
    let out = env.run(&["mcp", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(1), "a server failed: {}", stderr(&out));
    let servers: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let servers = servers.as_array().unwrap();
    assert!(servers.iter().all(|s| s["name"] != "off"), "a disabled entry is not connected");
    let gone = servers.iter().find(|s| s["name"] == "gone").unwrap();
    assert_eq!(gone["state"], "failed");
    assert!(gone["reason"].as_str().unwrap().contains("cannot start"));
    if python().is_some() {
        let peer = servers.iter().find(|s| s["name"] == "peer").unwrap();
        assert_eq!(peer["state"], "ready", "{peer}");
        let tools: Vec<&str> =
            peer["tools"].as_array().unwrap().iter().map(|t| t["exposed"].as_str().unwrap()).collect();
        assert!(tools.contains(&"mcp__peer__add"), "{tools:?}");
    }
}

#[tokio::test]
async fn a_run_offers_the_configured_servers_tools_and_a_trusted_projects_own() {
    let Some(python) = python() else { return };
    let server = FakeServer::start(vec![
        Scripted::tool_call("mcp__local__add", json!({"a": 2, "b": 40})),
        Scripted::text("42."),
        Scripted::text("Again."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    write_config(&env, &format!("[mcp_servers.global]\ncommand = \"{python}\"\nargs = [\"{PEER}\"]\n"));
    let project_file = json!({"mcpServers": {"local": {"command": python, "args": [PEER], "env": {"PEER_INSTRUCTIONS": "From the project."}}}});
    std::fs::write(env.project.join(".mcp.json"), project_file.to_string()).unwrap();

    // Not trusted yet: the project's servers are not started.
    let out = env.run(&["run", "--mode", "auto", "add 2 and 40"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = &server.chat_requests()[0];
    let names: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"mcp__global__add") && !names.contains(&"mcp__local__add"), "{names:?}");
    assert!(stderr(&out).contains("MCP server global connected"), "{}", stderr(&out));

    let out = env.run(&["trust"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let before = server.chat_requests().len();
    let out = env.run(&["run", "--mode", "auto", "add again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    let names: Vec<&str> =
        requests[before]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"mcp__local__add"), "{names:?}");
    assert!(requests[before]["messages"][0]["content"].as_str().unwrap().contains("From the project."));
}
