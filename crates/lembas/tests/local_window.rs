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

/// The window `lembas models --json` says the login's model has, after logging in to `server`.
async fn window_after_login(server: &FakeServer) -> serde_json::Value {
    let env = Env::new();
    env.login(server).await;
    let out = env.run(&["models", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let first = listed.as_array().map(|a| a[0].clone()).unwrap_or_else(|| listed["models"][0].clone());
    first["context"].clone()
}

#[tokio::test]
async fn ollamas_window_is_the_one_it_serves_not_the_trained_maximum() {
    use lembas_testkit::Ollama;
    let cases = [
        // Not loaded, no num_ctx: Ollama's default, though the model was trained on 32k.
        (Ollama { trained: 32768, num_ctx: None, loaded: None }, 4096),
        // The Modelfile sets num_ctx.
        (Ollama { trained: 32768, num_ctx: Some(8192), loaded: None }, 8192),
        // Loaded (OLLAMA_CONTEXT_LENGTH, say): the window it runs with now.
        (Ollama { trained: 32768, num_ctx: Some(8192), loaded: Some(16384) }, 16384),
        // Never above the trained maximum.
        (Ollama { trained: 2048, num_ctx: Some(8192), loaded: None }, 2048),
    ];
    for (ollama, want) in cases {
        let server = FakeServer::start(vec![]).await;
        server.set_models(json!([{"id": "qwen2.5-coder:1.5b", "object": "model"}]));
        server.set_ollama(ollama.clone());
        assert_eq!(window_after_login(&server).await, json!(want), "{ollama:?}");
    }
}
