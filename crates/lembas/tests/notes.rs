//! Notes through the real binary: the agent keeps one in a session, and the person lists, reads,
//! searches, edits and deletes it with `lembas notes` — the same notes, this project's own.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

#[tokio::test]
async fn a_note_the_agent_kept_is_the_persons_to_read_search_edit_and_delete() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "note_manage",
            json!({"action": "create", "name": "build", "content": "# Building\n\nRun `make all`, then `make test`."}),
        ),
        Scripted::text("Kept a note on building."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "note how to build"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let out = env.run(&["notes"]).await;
    assert!(stdout(&out).starts_with("- build — Building (project, "), "{}", stdout(&out));
    assert_eq!(
        stdout(&env.run(&["notes", "show", "build"]).await),
        "# Building\n\nRun `make all`, then `make test`.\n"
    );
    assert_eq!(
        stdout(&env.run(&["notes", "search", "test"]).await),
        "build (project) lines 3-3:\nRun `make all`, then `make test`.\n"
    );
    assert_eq!(stdout(&env.run(&["notes", "list", "--personal"]).await), "There are no notes yet.\n");

    let out = env.cmd(&["notes", "edit", "build"]).env("EDITOR", "sed -i s/all/everything/").output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Wrote the project note build (3 lines).\n");
    assert!(stdout(&env.run(&["notes", "show", "build"]).await).contains("make everything"));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&env.run(&["notes", "--json"]).await)).unwrap();
    assert_eq!(listed[0]["name"], "build");

    assert_eq!(stdout(&env.run(&["notes", "delete", "build"]).await), "Deleted the project note build.\n");
    let out = env.run(&["notes", "show", "build"]).await;
    assert!(
        !out.status.success() && stderr(&out).contains("No note build. There are no notes yet."),
        "{}",
        stderr(&out)
    );
}
