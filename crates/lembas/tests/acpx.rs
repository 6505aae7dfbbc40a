//! `lembas serve --stdio` driven by a real ACP client we did not write: `acpx` from npm.
//! `.ci/run` installs it and names it in `LEMBAS_ACPX`; on a machine without it this test says so
//! and does nothing (CI always has it).

mod common;

use std::path::PathBuf;
use std::process::Stdio;

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;
use tokio::process::Command;

fn acpx() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("LEMBAS_ACPX")?);
    assert!(path.exists(), "LEMBAS_ACPX names {} but nothing is there", path.display());
    Some(path)
}

/// acpx with its own HOME, in `dir`, driving `lembas serve --stdio` with its state in `home`.
fn acpx_cmd(acpx: &PathBuf, dir: &std::path::Path, home: &std::path::Path, args: &[&str]) -> Command {
    // A project may hold `agent.sh`, a wrapper that also records what lembas sends.
    let wrapper = dir.join("agent.sh");
    let agent = if wrapper.exists() {
        wrapper.display().to_string()
    } else {
        format!("{} serve --stdio", env!("CARGO_BIN_EXE_lembas"))
    };
    let mut cmd = Command::new(acpx);
    cmd.args(["--cwd", &dir.display().to_string(), "--agent", &agent])
        .args(args)
        .env("HOME", dir.join("acpx-home"))
        .env("LEMBAS_HOME", home)
        .current_dir(dir)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

async fn run_acpx(acpx: &PathBuf, dir: &std::path::Path, home: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = acpx_cmd(acpx, dir, home, args).output().await.expect("acpx runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

async fn exec(
    acpx: &PathBuf,
    dir: &std::path::Path,
    home: &std::path::Path,
    approve: &str,
    prompt: &str,
) -> (bool, String) {
    run_acpx(acpx, dir, home, &[approve, "exec", prompt]).await
}

/// A git project with a note in it, and a LEMBAS_HOME in `mode`, logged in to `server`.
async fn project(server: &FakeServer, mode: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("acpx-home")).unwrap();
    std::fs::write(project.join("notes.txt"), "old text\n").unwrap();
    let home = project.join("lembas-home");
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/config.toml"), format!("mode = \"{mode}\"\n")).unwrap();
    common::log_in(&home, server).await;
    (dir, project, home)
}

#[tokio::test]
async fn a_real_acp_client_runs_a_turn_that_edits_after_a_permission_request() {
    let Some(acpx) = acpx() else {
        eprintln!("LEMBAS_ACPX is not set: the acpx test runs in CI (.ci/run installs acpx)");
        return;
    };
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::text("Reading first.")
            .with_call("edit", r#"{"path": "notes.txt", "old_string": "old", "new_string": "new"}"#),
        Scripted::text("Changed the note."),
        // The second run: the edit is refused by the client.
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::tool_call("edit", json!({"path": "notes.txt", "old_string": "new", "new_string": "newer"})),
        Scripted::text("The edit was not allowed."),
    ])
    .await;
    // Manual mode: every edit is put to the client.
    let (_dir, project, home) = project(&server, "manual").await;

    let (ok, text) = exec(&acpx, &project, &home, "--approve-all", "change the note").await;
    assert!(ok, "{text}");
    assert!(text.contains("Changed the note.") && text.contains("end_turn"), "{text}");
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "new text\n");

    let (_, text) = exec(&acpx, &project, &home, "--deny-all", "change it again").await;
    assert!(text.contains("The edit was not allowed."), "{text}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "new text\n",
        "a rejected edit changes nothing"
    );
}

#[tokio::test]
async fn a_real_acp_client_cancels_a_turn_and_loads_the_session_again() {
    let Some(acpx) = acpx() else {
        eprintln!("LEMBAS_ACPX is not set: the acpx test runs in CI (.ci/run installs acpx)");
        return;
    };
    let server = FakeServer::start(vec![
        Scripted::text("Hello there."),
        Scripted::text("one two three four five six seven eight nine ten eleven twelve").with_delay_ms(400),
        Scripted::text("After the cancel."),
        Scripted::text("After the load."),
    ])
    .await;
    let (_dir, project, home) = project(&server, "auto").await;
    let wrapper = project.join("agent.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec {} serve --stdio | tee -a {}\n",
            env!("CARGO_BIN_EXE_lembas"),
            project.join("wire.jsonl").display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (ok, text) = run_acpx(&acpx, &project, &home, &["sessions", "new"]).await;
    assert!(ok, "{text}");
    let (ok, text) = run_acpx(&acpx, &project, &home, &["prompt", "hi"]).await;
    assert!(ok && text.contains("Hello there."), "{text}");

    // A slow reply, cancelled from a second acpx while it streams.
    let slow = acpx_cmd(&acpx, &project, &home, &["prompt", "count slowly"]).stdout(Stdio::piped()).spawn().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let (ok, text) = run_acpx(&acpx, &project, &home, &["cancel"]).await;
    assert!(ok, "{text}");
    let out = slow.wait_with_output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[done] cancelled"), "{text}");
    assert!(!text.contains("twelve"), "the reply stopped: {text}");
    let (_, text) = run_acpx(&acpx, &project, &home, &["prompt", "go on"]).await;
    assert!(text.contains("After the cancel."), "{text}");

    // The agent process ends; the next prompt starts a new one, which loads the stored session.
    let (_, status) = run_acpx(&acpx, &project, &home, &["status"]).await;
    let pid: i32 = status
        .lines()
        .find_map(|l| l.strip_prefix("pid: "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("acpx status names the agent's pid: {status}"));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    std::fs::write(project.join("wire.jsonl"), "").unwrap();
    let (ok, text) = run_acpx(&acpx, &project, &home, &["--format", "json", "prompt", "and now?"]).await;
    assert!(ok, "{text}");
    assert!(text.contains("\"method\":\"session/load\""), "{text}");
    // The reply streams in word chunks; its last one ends the answer.
    assert!(text.contains("\"text\":\"load.\"") && text.contains("end_turn"), "{text}");
    assert_eq!(server.remaining(), 0);
    // Before answering the load, lembas replayed the conversation (acpx does not print it).
    let wire = std::fs::read_to_string(project.join("wire.jsonl")).unwrap();
    let replayed = wire.find("\"sessionUpdate\":\"user_message_chunk\"").expect("the person's words replayed");
    let answered = wire.find("\"currentModeId\"").expect("the load's answer");
    assert!(replayed < answered && wire[..answered].contains("Hello "), "{wire}");
    let requests = server.chat_requests();
    let last = requests.last().unwrap()["messages"].as_array().unwrap();
    assert!(last.iter().any(|m| m["content"] == "Hello there."), "the loaded session goes on with its history");
}

#[tokio::test]
async fn a_real_acp_client_passes_mcp_servers_that_lembas_connects() {
    let Some(acpx) = acpx() else {
        eprintln!("LEMBAS_ACPX is not set: the acpx test runs in CI (.ci/run installs acpx)");
        return;
    };
    let Some(python) = std::env::var("LEMBAS_MCP_PYTHON").ok().filter(|p| !p.is_empty()) else {
        eprintln!("LEMBAS_MCP_PYTHON is not set: no MCP peer here (.ci/run sets it)");
        return;
    };
    let server = FakeServer::start(vec![
        // A look around first, slow: a Python server on a loaded machine may take longer than
        // the first request's wait to connect, and then joins the list at the next request.
        Scripted::tool_call("list", json!({"path": "."})).with_delay_ms(1500),
        Scripted::tool_call("mcp__peer__note", json!({"text": "from the editor"})),
        Scripted::text("Noted."),
    ])
    .await;
    let (_dir, project, home) = project(&server, "manual").await;
    let config = json!({"mcpServers": [{
        "name": "peer",
        "command": python,
        "args": [concat!(env!("CARGO_MANIFEST_DIR"), "/../lembas-mcp/tests/peer_server.py")],
        "env": []
    }]});
    let config_file = project.join("acpx-mcp.json");
    std::fs::write(&config_file, config.to_string()).unwrap();
    let (ok, text) = run_acpx(
        &acpx,
        &project,
        &home,
        &["--approve-all", "--mcp-config", &config_file.display().to_string(), "exec", "note it"],
    )
    .await;
    assert!(ok, "{text}");
    assert!(text.contains("Noted.") && text.contains("mcp__peer__note"), "{text}");
    // The acting tool was put to the client (approved), and the server ran in the project.
    assert_eq!(std::fs::read_to_string(project.join("notes.txt")).unwrap(), "old text\nfrom the editor\n");
}

#[tokio::test]
async fn a_real_acp_client_approves_a_plan_and_answers_an_option_question() {
    let Some(acpx) = acpx() else {
        eprintln!("LEMBAS_ACPX is not set: the acpx test runs in CI (.ci/run installs acpx)");
        return;
    };
    let plan = json!({"title": "Store notes", "phases": [{"title": "Do", "tasks": [{"text": "add sqlite"}]}]});
    let server = FakeServer::start(vec![
        Scripted::tool_call("plan_write", plan),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::text("Going ahead with sqlite."),
    ])
    .await;
    let (_dir, project, home) = project(&server, "plan").await;
    let (ok, text) = exec(&acpx, &project, &home, "--approve-all", "plan the store").await;
    assert!(ok && text.contains("Going ahead with sqlite.") && text.contains("end_turn"), "{text}");
    let requests = server.chat_requests();
    let results: Vec<String> = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(results.iter().any(|r| r.contains("approved the plan")), "the plan was put and approved: {results:?}");
    assert!(results.iter().any(|r| r.contains("The person answered: sqlite")), "{results:?}");
}

#[tokio::test]
async fn a_real_acp_client_sees_a_failed_turn_and_switches_model_mid_session() {
    let Some(acpx) = acpx() else {
        eprintln!("LEMBAS_ACPX is not set: the acpx test runs in CI (.ci/run installs acpx)");
        return;
    };
    let server = FakeServer::start(vec![
        Scripted::status(400, "{\"error\": {\"message\": \"the prompt is not allowed here\"}}"),
        Scripted::text("Hello from the other model."),
    ])
    .await;
    server.set_models(json!([{"id": "fake-model", "object": "model"}, {"id": "other-model", "object": "model"}]));
    let (_dir, project, home) = project(&server, "auto").await;
    let (ok, text) = run_acpx(&acpx, &project, &home, &["sessions", "new"]).await;
    assert!(ok, "{text}");
    // The model server refuses: the editor is told why, and the turn ends.
    let (_, text) = run_acpx(&acpx, &project, &home, &["prompt", "say hello"]).await;
    assert!(text.contains("the prompt is not allowed here"), "the error reaches the editor: {text}");
    // The model is a session config option: switched, and the next request goes to it.
    let (ok, text) = run_acpx(&acpx, &project, &home, &["set", "model", "other-model"]).await;
    assert!(ok, "{text}");
    let (ok, text) = run_acpx(&acpx, &project, &home, &["prompt", "say hello again"]).await;
    assert!(ok && text.contains("Hello from the other model."), "{text}");
    assert_eq!(server.chat_requests().last().unwrap()["model"], "other-model");
}
