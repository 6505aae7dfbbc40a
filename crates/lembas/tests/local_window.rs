//! A local model's window where its server cannot count tokens (Ollama, LM Studio, many
//! proxies: no `/tokenize`): the first request is judged by a realistic estimate, so an 8k window
//! is used, not refused, and the request still takes at most half of it.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

#[tokio::test]
async fn an_8k_window_without_a_tokenizer_is_used_within_its_half() {
    let server = FakeServer::start(vec![Scripted::text("Fits.")]).await;
    // A window in the model list (vLLM's field), and no `/props` or `/tokenize`.
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 8192}]));
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Fits.\n");
    let request = &server.chat_requests()[0];
    let tokens = lembas_testkit::tokens_in(request["messages"][0]["content"].as_str().unwrap_or_default())
        + lembas_testkit::tokens_in(&serde_json::to_string(&request["tools"]).unwrap());
    assert!(tokens <= 4096, "{tokens} tokens is more than half of 8192");
}
