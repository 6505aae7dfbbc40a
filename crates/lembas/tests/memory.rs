//! The person's memory through the real binary (`acp.md` *Memory*): on a LLeMbas login whose token
//! has the memory scope, the instance's memory is in the prompt and the `memory` tool changes it
//! through the instance's `/mcp`; a change made elsewhere is the next message's note; without the
//! scope (or on a plain server) there is no memory and no tool.

mod common;

use common::{Env, stderr};
use lembas_testkit::{FakeServer, Llembas, MemoryRecords, Scripted};
use serde_json::{Value, json};

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .map(str::to_owned)
        .collect()
}

fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

#[tokio::test]
async fn the_instances_memory_is_in_the_prompt_and_the_model_changes_it_through_the_instance() {
    let instance = FakeServer::start(vec![
        Scripted::tool_call("memory", json!({ "action": "add", "target": "user", "content": "Is called Ada." })),
        Scripted::text("Noted."),
        Scripted::text("Hello again."),
        Scripted::text("Fine."),
    ])
    .await;
    instance.set_llembas(Llembas::default());
    instance.set_memory(None, MemoryRecords { memory: vec!["Builds with make.".into()], user: Vec::new() });
    let env = Env::new();
    env.login_with_token(&instance).await;

    let out = env.run(&["run", "my name is Ada"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = instance.chat_requests();
    let prompt = requests[0]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt.contains("# Memory\n") && prompt.contains("\n\nBuilds with make."), "{prompt}");
    assert!(tool_names(&requests[0]).contains(&"memory".to_owned()));
    // The model's call went to the instance, for the account's own data group.
    assert_eq!(instance.memory(None).user, ["Is called Ada."]);
    let calls: Vec<Value> = instance.mcp_requests().into_iter().filter(|r| r["method"] == "tools/call").collect();
    assert_eq!(calls.len(), 1);
    assert!(calls[0]["params"].pointer("/_meta/lembas/scope").is_none());

    // The model's own change needs no note on the next message.
    let out = env.run(&["run", "--continue", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = instance.chat_requests();
    let second = requests.last().unwrap();
    assert_eq!(second["messages"][0]["content"].as_str().unwrap(), prompt, "the prompt never changes under a session");
    assert!(!last_user_text(second).contains("what is remembered"), "{}", last_user_text(second));

    // A change made elsewhere (the person's chats) is the next message's note, the prompt unchanged.
    instance.set_memory(None, MemoryRecords { memory: vec!["Builds with just.".into()], user: Vec::new() });
    let out = env.run(&["run", "--continue", "and now?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = instance.chat_requests();
    let third = requests.last().unwrap();
    assert_eq!(third["messages"][0]["content"].as_str().unwrap(), prompt);
    let note = last_user_text(third);
    assert!(note.contains("The person changed what is remembered; it is now:\nBuilds with just."), "{note}");
}

#[tokio::test]
async fn without_the_memory_scope_there_is_no_memory_and_no_tool() {
    let instance = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    instance.set_llembas(Llembas { scope: "models link".into(), ..Llembas::default() });
    instance.set_memory(None, MemoryRecords { memory: vec!["Builds with make.".into()], user: Vec::new() });
    let env = Env::new();
    env.login_with_token(&instance).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let request = &instance.chat_requests()[0];
    assert!(!tool_names(request).contains(&"memory".to_owned()));
    assert!(!request["messages"][0]["content"].as_str().unwrap().contains("# Memory"));
    assert!(instance.mcp_requests().is_empty(), "nothing is asked of /mcp without the scope");

    // A plain OpenAI-compatible server: no memory either.
    let plain = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    env.login(&plain).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!tool_names(&plain.chat_requests()[0]).contains(&"memory".to_owned()));
}

#[tokio::test]
async fn library_local_keeps_the_servers_memory_out() {
    let instance = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    instance.set_llembas(Llembas::default());
    instance.set_memory(None, MemoryRecords { memory: vec!["Builds with make.".into()], user: Vec::new() });
    let env = Env::new();
    env.login_with_token(&instance).await;
    env.config_first("library = \"local\"");
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!tool_names(&instance.chat_requests()[0]).contains(&"memory".to_owned()));
    assert!(instance.mcp_requests().is_empty());
}

#[tokio::test]
async fn a_session_a_link_client_opened_has_its_chats_memory_personality_and_instructions() {
    let instance = FakeServer::start(vec![
        Scripted::tool_call("memory", json!({ "action": "add", "content": "Deploys on Fridays." })),
        Scripted::text("Noted."),
    ])
    .await;
    instance.set_llembas(Llembas::default());
    instance.set_memory(None, MemoryRecords { memory: vec!["Account-wide.".into()], user: vec![] });
    let env = Env::new();
    env.login_with_token(&instance).await;
    let root = env.project.parent().unwrap().to_str().unwrap().to_owned();
    for args in [vec!["remote", "roots", "add", &root], vec!["trust", env.project.to_str().unwrap()]] {
        let out = env.run(&args).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let (mut service, mut link) = common::ready(&instance, &env).await;
    let context = json!({ "lembas": {
        "personalization": { "personality": "teacher", "instructions": "Answer in British English." },
        "system_prompt": "This chat plans the shop's move."
    } });
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": context })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = json!({ "sessionId": id, "prompt": [{ "type": "text", "text": "remember the deploys" }] });
    let answered = link.request("session/prompt", prompt).await;
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");

    // Read and written in the chat's data group, each call carrying the session as its scope.
    assert_eq!(instance.memory(Some(&id)).memory, ["Deploys on Fridays."]);
    assert_eq!(instance.memory(None).memory, ["Account-wide."]);
    let scoped: Vec<Value> = instance
        .mcp_requests()
        .into_iter()
        .filter(|r| matches!(r["method"].as_str(), Some("tools/call" | "resources/read")))
        .collect();
    assert!(!scoped.is_empty());
    assert!(scoped.iter().all(|r| r["params"]["_meta"]["lembas"]["scope"] == id.as_str()), "{scoped:?}");
    let system = instance.chat_requests()[0]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(!system.contains("Account-wide."), "the account's own memory is not this chat's: {system}");
    // The chat's context (capability `context`): its personality and instructions.
    assert!(system.contains("## Your instructions (LLeMbas account)\nAnswer in British English."), "{system}");
    assert!(system.contains("## This chat's instructions\nThis chat plans the shop's move."), "{system}");
    assert!(system.contains("# Personality\nTeach as you work."), "{system}");
    service.kill().await.unwrap();
}

#[tokio::test]
async fn lembas_memory_lists_adds_changes_and_forgets_through_the_instance() {
    let instance = FakeServer::start(vec![]).await;
    instance.set_llembas(Llembas::default());
    let env = Env::new();
    env.login_with_token(&instance).await;
    let out = env.run(&["memory", "add", "Uses", "fish."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        common::stdout(&out).starts_with("Remembered.\n\nMemory on the LLeMbas server"),
        "{}",
        common::stdout(&out)
    );
    let out = env.run(&["memory", "change", "1", "Uses zsh."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(instance.memory(None).memory, ["Uses zsh."]);
    let out = env.run(&["memory", "--json"]).await;
    let said: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert!(said["said"].as_str().unwrap().contains("  1. Uses zsh."), "{said}");
    let out = env.run(&["memory", "forget", "3"]).await;
    assert_eq!(out.status.code(), Some(1), "no entry 3: {}", stderr(&out));
    let out = env.run(&["memory", "forget", "1"]).await;
    assert!(out.status.success() && instance.memory(None).memory.is_empty(), "{}", stderr(&out));

    // A plain model server keeps no memory: said, as a usage error.
    let plain = FakeServer::start(vec![]).await;
    env.login(&plain).await;
    let out = env.run(&["memory"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no memory here"), "{}", stderr(&out));
}
