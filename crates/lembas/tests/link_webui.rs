//! The link as a LLeMbas server's web UI and phone drive it, by the spec's words (`acp.md`) —
//! not by lembas' own: the test kit answers each card with one of the ids the card offers
//! (`once`, `session`, `deny`), the person's feedback and a corrected command beside it.

mod common;

use common::{Env, ready, stderr};
use lembas_testkit::{FakeServer, Llembas, Scripted};
use serde_json::{Value, json};

/// A LLeMbas instance, logged in to by token; remote work allowed in the folder holding the
/// trusted project, up to manual mode (every command asked).
async fn linked(script: Vec<Scripted>) -> (FakeServer, Env) {
    let server = FakeServer::start(script).await;
    server.set_llembas(Llembas::default());
    let env = Env::new();
    env.login_with_token(&server).await;
    let root = env.project.parent().unwrap().to_path_buf();
    let out = env.run(&["remote", "roots", "add", root.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["trust", env.project.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    (server, env)
}

/// The tool results the model read in `request`, in order.
fn results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test]
async fn approvals_answered_once_session_and_deny_with_words_do_what_the_person_chose() {
    let script = vec![
        Scripted::tool_call("bash", json!({ "command": "rm -rf build" })),
        Scripted::tool_call("bash", json!({ "command": "cargo test --all" })),
        Scripted::tool_call("bash", json!({ "command": "touch a.txt" })),
        Scripted::tool_call("bash", json!({ "command": "touch a.txt" })),
        Scripted::text("Done."),
    ];
    let (server, env) = linked(script).await;
    std::fs::create_dir_all(env.project.join("build")).unwrap();
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link
        .request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": { "mode": "manual" } }))
        .await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    link.send(&json!({ "jsonrpc": "2.0", "id": 70, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "clean, test and make a file, twice"}] } }));

    // The card, as the spec draws it: its three options by id and kind, and why it is asked.
    let card = link.next_request("session/request_permission").await;
    let options: Vec<(String, String)> = card["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap().to_owned(), o["kind"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("once", "allow_once"), ("session", "allow_always"), ("deny", "reject_once")];
    assert_eq!(options, want.map(|(i, k)| (i.to_owned(), k.to_owned())), "{card}");
    let lembas = &card["params"]["_meta"]["lembas"];
    assert!(lembas["reason"].as_str().is_some_and(|r| r.contains("manual mode asks")), "{card}");
    assert_eq!(lembas["always"], "commands matching `rm -rf build`", "{card}");
    // Denied, with the person's words: the model reads them.
    link.choose(&card, "deny", Some(json!({ "feedback": "keep the build folder, it is cached" })));

    // Allowed once, with the command corrected: the corrected one runs.
    let card = link.next_request("session/request_permission").await;
    assert!(card["params"]["toolCall"]["title"].as_str().unwrap().contains("cargo test --all"), "{card}");
    link.choose(&card, "once", Some(json!({ "command": "echo corrected > fixed.txt" })));

    // Allowed for the session: the next call of the same kind is not asked.
    let card = link.next_request("session/request_permission").await;
    assert!(card["params"]["toolCall"]["title"].as_str().unwrap().contains("touch a.txt"), "{card}");
    link.choose(&card, "session", None);

    let answer = link.answer_to(70).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(link.requests.iter().all(|r| r["method"] != "session/request_permission"), "the same call was not asked again");
    assert!(env.project.join("build").is_dir(), "the denial held");
    assert_eq!(std::fs::read_to_string(env.project.join("fixed.txt")).unwrap(), "corrected\n");
    assert!(env.project.join("a.txt").exists());
    let told = results(server.chat_requests().last().unwrap());
    assert!(told[0].contains("keep the build folder, it is cached"), "{told:?}");
    child.kill().await.unwrap();
}
