//! lembas' MCP client against real servers nobody on the project wrote the protocol side of:
//! one on the official Python SDK (`tests/peer_server.py`, `LEMBAS_MCP_PYTHON` = a Python with
//! `mcp` installed) and the reference servers from npm (`LEMBAS_MCP_NODE_BIN` = their
//! `node_modules/.bin`). `.ci/run` installs both; without them these tests say so and pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lembas_config::{McpServerPlan, McpTransport};
use lembas_mcp::{McpHub, ServerEntry, ServerState};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn peer_python() -> Option<String> {
    let python = std::env::var("LEMBAS_MCP_PYTHON").ok().filter(|p| !p.is_empty());
    if python.is_none() {
        eprintln!("LEMBAS_MCP_PYTHON is not set: the Python SDK peer is not tried here (.ci/run sets it)");
    }
    python
}

fn peer_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer_server.py").display().to_string()
}

fn stdio(name: &str, command: &str, args: &[&str], env: &[(&str, &str)], timeout_secs: u64) -> ServerEntry {
    ServerEntry {
        name: name.into(),
        plan: Ok(McpServerPlan {
            name: name.into(),
            transport: McpTransport::Stdio {
                command: command.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                cwd: None,
            },
            timeout_secs,
        }),
    }
}

fn python_peer(python: &str, env: &[(&str, &str)], timeout_secs: u64) -> ServerEntry {
    stdio("peer", python, &[&peer_script()], env, timeout_secs)
}

async fn ready(hub: &Arc<McpHub>) {
    hub.settle(Duration::from_secs(30)).await;
    for status in hub.statuses() {
        assert!(matches!(status.state, ServerState::Ready { .. }), "{status:?}");
    }
}

#[tokio::test]
async fn a_python_sdk_server_over_stdio_lists_its_tools_and_answers_calls() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hub =
        McpHub::start(vec![python_peer(&python, &[("PEER_INSTRUCTIONS", "Add before you guess.")], 2)], dir.path());
    ready(&hub).await;
    let servers = hub.ready();
    assert_eq!(servers[0].instructions.as_deref(), Some("Add before you guess."));
    let add = hub.tool("mcp__peer__add").expect("add is listed");
    assert!(add.read_only, "add says readOnlyHint");
    assert_eq!(add.description, "Adds two whole numbers.");
    assert_eq!(add.parameters["properties"]["a"]["type"], "integer");
    assert!(!hub.tool("mcp__peer__note").unwrap().read_only);

    let none = CancellationToken::new();
    let sum = hub.call("mcp__peer__add", json!({"a": 2, "b": 40}), &none).await;
    assert!(!sum.is_error && sum.text == "42", "{sum:?}");

    // The server runs in the project root it was given.
    let noted = hub.call("mcp__peer__note", json!({"text": "hello"}), &none).await;
    assert!(!noted.is_error, "{noted:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "hello\n");

    let failed = hub.call("mcp__peer__fail", json!({"why": "the disk is full"}), &none).await;
    assert!(failed.is_error && failed.text.contains("the disk is full"), "{failed:?}");

    // A call past the entry's timeout answers so; the server stays usable.
    let slow = hub.call("mcp__peer__sleep", json!({"seconds": 4}), &none).await;
    assert!(slow.is_error && slow.text.contains("did not answer within 2 s"), "{slow:?}");

    // An interrupted turn does not wait for the tool.
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let started = std::time::Instant::now();
    let interrupted = hub.call("mcp__peer__sleep", json!({"seconds": 10}), &cancel).await;
    assert!(interrupted.is_error && interrupted.text.contains("Interrupted"), "{interrupted:?}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let wrong = hub.call("mcp__peer__nope", json!({}), &none).await;
    assert!(wrong.is_error);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_dies_is_reported_with_its_last_words() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hub = McpHub::start(vec![python_peer(&python, &[], 30)], dir.path());
    ready(&hub).await;
    let none = CancellationToken::new();
    let died = hub.call("mcp__peer__die", json!({}), &none).await;
    assert!(died.is_error, "{died:?}");
    // Whether the first answer sees the closed pipe or not, the server is then not connected,
    // and its stderr says why.
    let after = hub.call("mcp__peer__add", json!({"a": 1, "b": 1}), &none).await;
    assert!(after.is_error && after.text.contains("not connected"), "{after:?}");
    assert!(after.text.contains("dying on request"), "{after:?}");
    assert!(matches!(&hub.statuses()[0].state, ServerState::Failed { .. }));
}

#[tokio::test]
async fn a_slow_server_is_still_connecting_after_a_short_wait_and_joins_later() {
    let Some(python) = peer_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hub = McpHub::start(vec![python_peer(&python, &[("PEER_DELAY_MS", "1500")], 30)], dir.path());
    let before = hub.generation();
    hub.settle(Duration::from_millis(100)).await;
    assert_eq!(hub.statuses()[0].state, ServerState::Connecting);
    let early = hub.call("mcp__peer__add", json!({"a": 1, "b": 2}), &CancellationToken::new()).await;
    assert!(early.is_error && early.text.contains("still starting"), "{early:?}");
    ready(&hub).await;
    assert_ne!(hub.generation(), before);
    hub.shutdown().await;
}

#[tokio::test]
async fn servers_that_cannot_start_say_why_and_the_others_still_connect() {
    let dir = tempfile::tempdir().unwrap();
    let missing = stdio("gone", "/nonexistent/mcp-server", &[], &[], 5);
    let broken = ServerEntry { name: "broken".into(), plan: Err("MCP server broken: needs a `command`".into()) };
    // `true` starts and ends at once: no MCP session.
    let silent = stdio("silent", "true", &[], &[], 5);
    let hub = McpHub::start(vec![missing, broken, silent], dir.path());
    hub.settle(Duration::from_secs(20)).await;
    let statuses = hub.statuses();
    let reason = |i: usize| match &statuses[i].state {
        ServerState::Failed { reason } => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert!(reason(0).contains("cannot start `/nonexistent/mcp-server`"), "{}", reason(0));
    assert!(reason(1).contains("needs a `command`"));
    assert!(reason(2).contains("did not start an MCP session"), "{}", reason(2));
    let call = hub.call("mcp__gone__x", json!({}), &CancellationToken::new()).await;
    assert!(call.is_error && call.text.contains("The MCP server gone is not connected"), "{call:?}");
}

#[tokio::test]
async fn a_python_sdk_server_over_streamable_http_answers() {
    let Some(python) = peer_python() else { return };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut child = std::process::Command::new(&python)
        .args([peer_script(), "http".into(), port.to_string()])
        .env("PEER_INSTRUCTIONS", "Over HTTP.")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "the HTTP peer did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let entry = ServerEntry {
        name: "web".into(),
        plan: Ok(McpServerPlan {
            name: "web".into(),
            transport: McpTransport::Http {
                url: format!("http://127.0.0.1:{port}/mcp"),
                headers: BTreeMap::from([("X-Trace".to_owned(), "lembas-test".to_owned())]),
            },
            timeout_secs: 30,
        }),
    };
    let dir = tempfile::tempdir().unwrap();
    let hub = McpHub::start(vec![entry], dir.path());
    ready(&hub).await;
    assert_eq!(hub.ready()[0].instructions.as_deref(), Some("Over HTTP."));
    let sum = hub.call("mcp__web__add", json!({"a": 20, "b": 22}), &CancellationToken::new()).await;
    assert_eq!(sum.text, "42", "{sum:?}");
    hub.shutdown().await;
    let _ = child.kill();
    let _ = child.wait();
}

fn node_bin(name: &str) -> Option<PathBuf> {
    let dir = std::env::var("LEMBAS_MCP_NODE_BIN").ok().filter(|d| !d.is_empty());
    if dir.is_none() {
        eprintln!("LEMBAS_MCP_NODE_BIN is not set: the npm reference servers are not tried here (.ci/run sets it)");
    }
    dir.map(|d| Path::new(&d).join(name))
}

#[tokio::test]
async fn the_reference_servers_from_npm_work() {
    let (Some(everything), Some(filesystem)) = (node_bin("mcp-server-everything"), node_bin("mcp-server-filesystem"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("hello.txt"), "hi from the project\n").unwrap();
    let hub = McpHub::start(
        vec![
            stdio("everything", &everything.display().to_string(), &[], &[], 60),
            stdio("fs", &filesystem.display().to_string(), &[&root.display().to_string()], &[], 60),
        ],
        &root,
    );
    ready(&hub).await;
    let none = CancellationToken::new();
    let echo = hub.call("mcp__everything__echo", json!({"message": "ping"}), &none).await;
    assert!(!echo.is_error && echo.text.contains("ping"), "{echo:?}");
    let read =
        hub.call("mcp__fs__read_text_file", json!({"path": root.join("hello.txt").display().to_string()}), &none).await;
    assert!(!read.is_error && read.text.contains("hi from the project"), "{read:?}");
    let outside = hub.call("mcp__fs__read_text_file", json!({"path": "/etc/hostname"}), &none).await;
    assert!(outside.is_error, "the filesystem server refuses paths outside its root: {outside:?}");
    hub.shutdown().await;
}
