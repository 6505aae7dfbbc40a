//! `lembas undo` from a script: what a turn's command changed comes back, and deleting the
//! session deletes its snapshots.

use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

mod common;
use common::{Env, stderr, stdout};

/// The refs in every snapshot store under the home.
fn snapshot_refs(env: &Env) -> String {
    let mut refs = String::new();
    let stores = std::fs::read_dir(env.home.join("data/snapshots")).unwrap().flatten();
    for store in stores.filter(|entry| entry.path().extension().is_some_and(|e| e == "git")) {
        let out = std::process::Command::new("git").arg("--git-dir").arg(store.path()).arg("for-each-ref").output();
        refs.push_str(&String::from_utf8_lossy(&out.unwrap().stdout));
    }
    refs
}

#[tokio::test]
async fn a_command_that_rewrote_and_made_files_is_undone_from_a_script() {
    let command = "echo changed > notes.txt && mkdir -p gen && echo made > gen/out.txt";
    let server = FakeServer::start(vec![
        Scripted::tool_call("bash", json!({"command": command})),
        Scripted::text("Rewrote the note."),
        Scripted::tool_call("bash", json!({"command": "echo again > notes.txt"})),
        Scripted::text("Again."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "rewrite the note"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.project.join("notes.txt")).unwrap(), "changed\n");
    assert!(snapshot_refs(&env).contains("/before"), "the turn was snapshotted");

    let out = env.run(&["undo", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let undone: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(undone["prompt"], "rewrite the note");
    assert_eq!(undone["files"]["put_back"], json!(["notes.txt"]));
    assert_eq!(undone["files"]["removed"], json!(["gen/out.txt"]));
    assert_eq!(std::fs::read_to_string(env.project.join("notes.txt")).unwrap(), "remember the milk\n");
    assert!(!env.project.join("gen").exists());

    // Nothing more to take back: said, and a failure for the script.
    let out = env.run(&["undo"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nothing to undo in this project"), "{}", stderr(&out));

    // A session deleted takes its snapshots with it.
    let out = env.run(&["run", "--mode", "auto", "again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(snapshot_refs(&env).contains("/after"));
    let list: Value = serde_json::from_slice(&env.run(&["sessions", "list", "--json"]).await.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["sessions", "delete", &id]).await.status.success());
    assert_eq!(snapshot_refs(&env), "", "no snapshot of the deleted session is left");
}

#[tokio::test]
async fn rewind_lists_the_turns_and_goes_back_to_one_from_a_script() {
    let mut script = Vec::new();
    for n in 1..=3 {
        script.push(Scripted::tool_call("bash", json!({"command": format!("echo {n} > t{n}.txt")})));
        script.push(Scripted::text("Done."));
    }
    let server = FakeServer::start(script).await;
    let env = Env::new();
    env.login(&server).await;
    for n in 1..=3 {
        let resume = if n == 1 { vec![] } else { vec!["--continue"] };
        let words = format!("make t{n}");
        let args = [&["run", "--mode", "auto"][..], &resume, &[words.as_str()]].concat();
        let out = env.run(&args).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let listed = stdout(&env.run(&["rewind"]).await);
    assert!(listed.contains("  1  make t1") && listed.contains("  3  make t3"), "{listed}");
    assert!(listed.contains("changed: t3.txt"), "each turn names what it changed: {listed}");

    // A fork from before turn 3, the files left: a new session of turns 1 and 2, this one whole.
    let list: Value = serde_json::from_slice(&env.run(&["sessions", "list", "--json"]).await.stdout).unwrap();
    let old = list[0]["id"].as_str().unwrap().to_owned();
    let out = env.run(&["rewind", "--to", "3", "--fork", "--conversation", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let forked: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let fork = forked["fork"].as_str().unwrap().to_owned();
    assert_eq!((forked["session"].as_str(), forked["prompt"].as_str()), (Some(old.as_str()), Some("make t3")));
    assert!(env.project.join("t3.txt").exists(), "--conversation leaves the files");
    let in_fork = stdout(&env.run(&["rewind", "--session", &fork]).await);
    assert!(in_fork.contains("  2  make t2") && !in_fork.contains("make t3"), "{in_fork}");
    let in_old = stdout(&env.run(&["rewind", "--session", &old]).await);
    assert!(in_old.contains("  3  make t3"), "{in_old}");
    let refused = env.run(&["rewind", "--fork", "--files", "--to", "1"]).await;
    assert!(!refused.status.success());

    let out = env.run(&["rewind", "--session", &old, "--to", "2", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let back: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(back["prompt"], "make t2");
    assert_eq!(back["files"]["removed"], json!(["t2.txt", "t3.txt"]));
    assert!(env.project.join("t1.txt").exists() && !env.project.join("t2.txt").exists());
    let listed = stdout(&env.run(&["rewind"]).await);
    assert!(listed.contains("  1  make t1") && !listed.contains("make t2"), "{listed}");
}

#[tokio::test]
async fn a_file_changed_after_the_turn_is_left_unless_the_script_says_overwrite() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("bash", json!({"command": "echo by the model > notes.txt"})),
        Scripted::text("Done."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    assert!(env.run(&["run", "--mode", "auto", "change the note"]).await.status.success());
    std::fs::write(env.project.join("notes.txt"), "by the person\n").unwrap();
    let out = env.run(&["undo", "--json", "--overwrite"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(said["files"]["kept"], json!(["notes.txt"]), "{said}");
    assert_eq!(said["overwritten"]["put_back"], json!(["notes.txt"]), "{said}");
    assert_eq!(std::fs::read_to_string(env.project.join("notes.txt")).unwrap(), "remember the milk\n");
}
