//! The terminal beside its LLeMbas server, end to end in tmux: `/schedule` makes, lists, pauses,
//! runs and shows the runs of the server's schedules with the device's token; `/share` lets the
//! server's web UI follow the session over a link of the terminal's own (the test kit plays that
//! client), answer one card while the person answers the other at the terminal, and stop.

mod common;

use std::time::Duration;

use common::tmux::{Tmux, launch, make_project, tmux_available};
use lembas_testkit::{DeviceLink, FakeServer, Llembas, Scripted};
use serde_json::{Value, json};

/// A LLeMbas server, the terminal open on a trusted project logged in to it.
async fn opened(name: &str, script: Vec<Scripted>) -> (FakeServer, tempfile::TempDir, std::path::PathBuf, Tmux) {
    let server = FakeServer::start(script).await;
    server.set_llembas(Llembas { pending_polls: 0, ..Llembas::default() });
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), &server, &[]).await;
    let tmux = launch(name, &home, &project, "", (120, 40));
    tmux.wait_for("Trust this project?").await;
    tmux.send(&["y", "Enter"]);
    tmux.wait_for("mode: manual").await;
    (server, dir, project, tmux)
}

fn typed(tmux: &Tmux, line: &str) {
    tmux.send(&["-l", line]);
    tmux.send(&["Enter"]);
}

/// What the link says until a message `pick` takes (the others are passed over).
async fn until(link: &mut DeviceLink, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    loop {
        let Some(message) = link.recv().await else { panic!("the link closed before {what}") };
        if pick(&message) {
            return message;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_made_here_listed_paused_and_run_from_the_terminal() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let (server, _dir, project, tmux) = opened("schedule", vec![]).await;
    typed(&tmux, "/schedule new every day at 09:00 check the build");
    let made = tmux.wait_for("Made: check the build").await;
    assert!(made.contains("Every day at 09:00 (UTC)"), "{made}");
    assert!(made.contains("next: 2026-12-06 09:00 UTC"), "{made}");
    // Made to run here, and told what on this computer keeps it from running.
    assert!(made.contains("lembas service scheduled on"), "{made}");
    let kept = server.schedules();
    assert_eq!(kept[0]["runs_on"]["cwd"], project.display().to_string());
    assert_eq!(kept[0]["runs_on"]["mode"], "manual");

    typed(&tmux, "/schedule");
    tmux.wait_for("1. check the build [on] · Every day at 09:00 · next 2026-12-06 09:00 UTC").await;
    typed(&tmux, "/schedule pause 1");
    tmux.wait_for("Paused: \"check the build\".").await;
    assert_eq!(server.schedules()[0]["enabled"], false);
    typed(&tmux, "/schedule run 1");
    tmux.wait_for("Started: \"check the build\".").await;
    typed(&tmux, "/schedule runs 1");
    tmux.wait_for("ok · fake-model · The build passes.").await;
    typed(&tmux, "/schedule pause 7");
    tmux.wait_for("There is no schedule 7: the list has 1.").await;
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_is_followed_and_answered_from_the_server_and_the_terminal() {
    if !tmux_available() {
        eprintln!("tmux is not installed: the terminal UI test runs in CI (.ci/run installs tmux)");
        return;
    }
    let script = vec![
        Scripted::tool_call("bash", json!({"command": "echo from-the-web > web.txt"})),
        Scripted::text("Written from the web's answer."),
        Scripted::tool_call("bash", json!({"command": "echo from-the-terminal > here.txt"})),
        Scripted::text("Written from the terminal's answer."),
    ];
    let (server, _dir, project, tmux) = opened("share", script).await;
    typed(&tmux, "/share");
    let mut link = server.next_link(Duration::from_secs(20)).await.expect("the terminal dials a link of its own");
    assert_eq!(link.authorization.as_deref(), Some("Bearer lmb_test_token"));
    let hello = link.recv().await.unwrap();
    assert_eq!(hello["method"], "_lembas/hello");
    let shared_id = hello["params"]["shares"].as_str().expect("the hello names the shared session").to_owned();
    assert_eq!(hello["params"]["limits"]["roots"], json!([]), "the server opens nothing on a share's link");
    let init = json!({ "protocolVersion": 1, "clientCapabilities": { "_meta": { "lembas": { "protocol": 3 } } } });
    link.request("initialize", init).await;
    let announce = until(&mut link, "the announcement", |m| m["method"] == "_lembas/announce").await;
    let said = &announce["params"];
    assert_eq!(said["sessionId"], shared_id.as_str());
    assert_eq!(
        (said["model"].clone(), said["mode"].clone(), said["instance"].clone()),
        (json!("fake-model"), json!("manual"), json!(true))
    );
    assert_eq!(said["cwd"], project.display().to_string());
    link.answer(&announce["id"], json!({ "url": "http://llembas.test/chats/42" }));
    tmux.wait_for("follow it at http://llembas.test/chats/42").await;
    // The status bar says so.
    tmux.wait_for("· shared").await;

    // The web answers the first card; the terminal sees it go.
    typed(&tmux, "write the file");
    tmux.wait_for("Allow?").await;
    let asked = until(&mut link, "the first card", |m| m["method"] == "session/request_permission").await;
    assert_eq!(asked["params"]["sessionId"], shared_id.as_str());
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    link.choose(&asked, "once", None);
    tmux.wait_for("Written from the web's answer.").await;
    assert_eq!(std::fs::read_to_string(project.join("web.txt")).unwrap(), "from-the-web\n");
    until(&mut link, "the turn's end", |m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "done")
        .await;

    // The terminal answers the second; the web's card is taken back.
    typed(&tmux, "write another");
    tmux.wait_for("Allow?").await;
    let asked = until(&mut link, "the second card", |m| m["method"] == "session/request_permission").await;
    let call = asked["params"]["toolCall"]["toolCallId"].clone();
    tmux.send(&["y"]);
    let settled = until(&mut link, "the card settled", |m| m["method"] == "_lembas/permission/settled").await;
    assert_eq!(settled["params"]["toolCallId"], call);
    assert_eq!(
        (settled["params"]["outcome"].clone(), settled["params"]["reason"].clone()),
        (json!("answered"), json!("elsewhere"))
    );
    tmux.wait_for("Written from the terminal's answer.").await;
    assert!(project.join("here.txt").exists());

    typed(&tmux, "/share off");
    tmux.wait_for("Sharing stopped").await;
    let closed = tokio::time::timeout(Duration::from_secs(10), async { while link.recv().await.is_some() {} }).await;
    assert!(closed.is_ok(), "the share's link is let go");

    // Shared again, then left for a new session: the share ends with the session it carried.
    typed(&tmux, "/share");
    let mut link = server.next_link(Duration::from_secs(20)).await.expect("a new link for the new share");
    link.recv().await.unwrap();
    link.request("initialize", json!({ "protocolVersion": 1, "clientCapabilities": {} })).await;
    let announce = until(&mut link, "the announcement", |m| m["method"] == "_lembas/announce").await;
    assert_eq!(announce["params"]["sessionId"], shared_id.as_str(), "the same session");
    link.answer(&announce["id"], json!({}));
    tmux.wait_for("its web UI follows this session").await;
    typed(&tmux, "/new");
    tmux.wait_for("Sharing ended: the session closed.").await;
    let closed = tokio::time::timeout(Duration::from_secs(10), async { while link.recv().await.is_some() {} }).await;
    assert!(closed.is_ok(), "the share's link is let go with its session");
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("LEMBAS-EXITED-0").await;
}
