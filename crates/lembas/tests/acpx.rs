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

async fn exec(
    acpx: &PathBuf,
    dir: &std::path::Path,
    home: &std::path::Path,
    approve: &str,
    prompt: &str,
) -> (bool, String) {
    let agent = format!("{} serve --stdio", env!("CARGO_BIN_EXE_lembas"));
    let out = Command::new(acpx)
        .args([approve, "--cwd", &dir.display().to_string(), "--agent", &agent, "exec", prompt])
        .env("HOME", dir.join("acpx-home"))
        .env("LEMBAS_HOME", home)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("acpx runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
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
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("acpx-home")).unwrap();
    std::fs::write(project.join("notes.txt"), "old text\n").unwrap();
    let home = project.join("lembas-home");
    // Manual mode: every edit is put to the client.
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/config.toml"), "mode = \"manual\"\n").unwrap();
    common::log_in(&home, &server).await;

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
