//! The personality through the real binary: the local key in `config.toml`, and on a LLeMbas
//! login whose account keeps personalization, the account's over it.

mod common;

use common::{Env, stderr};
use lembas_testkit::{FakeServer, Llembas, Scripted};

fn system_prompt(server: &FakeServer) -> String {
    server.chat_requests()[0]["messages"][0]["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_local_personality_or_the_accounts_is_in_the_prompt() {
    let server = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    let env = Env::new();
    env.login(&server).await;
    env.config_first("personality = \"custom\"\npersonality_custom = \"Answer in haiku.\"");
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(system_prompt(&server).contains("\n\n# Personality\nAnswer in haiku."), "{}", system_prompt(&server));

    // A LLeMbas account with personalization on: its choice stands over the local key.
    let instance = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    let kept = serde_json::json!({ "enabled": true, "available": true, "personality": "teacher", "instructions": "Answer in British English." });
    instance.set_llembas(Llembas { personalization: Some(kept), ..Llembas::default() });
    env.login_with_token(&instance).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let prompt = system_prompt(&instance);
    assert!(prompt.contains("# Personality\nTeach as you work.") && !prompt.contains("haiku"), "{prompt}");
    // The account's own instructions join the instruction files.
    assert!(prompt.contains("## Your instructions (LLeMbas account)\nAnswer in British English."), "{prompt}");
}
