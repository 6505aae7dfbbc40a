//! `lembas serve --stdio` as a process: bad input gets JSON-RPC errors and never ends the
//! server; closing stdin ends it cleanly.

mod common;

use std::process::Stdio;
use std::time::Duration;

use lembas_testkit::FakeServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn bad_lines_and_unknown_methods_are_answered_and_stdin_closing_ends_it() {
    let server = FakeServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    common::log_in(&home, &server).await;

    let mut child = Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["serve", "--stdio"])
        .env("LEMBAS_HOME", &home)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };

    stdin.write_all(b"this is not json\n").await.unwrap();
    let parse_error = next().await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}\n")
        .await
        .unwrap();
    let init = next().await;
    assert_eq!(init["id"], 8);
    assert_eq!(init["result"]["agentInfo"]["name"], "LLeMbas CLI", "{init}");
    assert_eq!(init["result"]["_meta"]["lembas"]["protocol"], 3);

    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"no/such/method\",\"params\":{}}\n").await.unwrap();
    let unknown = next().await;
    assert_eq!(unknown["id"], 7);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"nope\",\"prompt\":[]}}\n").await.unwrap();
    let no_session = next().await;
    assert_eq!(no_session["id"], 9);
    assert!(no_session["error"].is_object(), "{no_session}");

    drop(stdin);
    let status =
        tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("it exits when stdin closes").unwrap();
    assert!(status.success());
}
