//! Login against the test kit's fake servers, over real HTTP.

use lembas_config::LoginKind;
use lembas_login::{LoginError, login_token, login_url};
use lembas_testkit::{FakeServer, Llembas};
use serde_json::json;

#[tokio::test]
async fn a_plain_server_is_logged_in_with_its_models_and_context() {
    let server = FakeServer::start(vec![]).await;
    server.set_models(json!([{"id": "qwen3-8b", "object": "model"}, {"id": "gemma", "object": "model"}]));
    server.set_props(json!({"default_generation_settings": {"n_ctx": 16384}}));
    let login = login_url(&server.url(), None, &mut |_| panic!("no code for a plain server")).await.unwrap();
    assert_eq!(login.kind, LoginKind::OpenAi);
    assert_eq!(login.base_url, server.base_url());
    assert_eq!(login.models.len(), 2);
    assert_eq!(login.models[0].context, Some(16384));
    assert!(login.llama_cpp);
    assert_eq!(login.default_model().unwrap().id, "qwen3-8b");
}

#[tokio::test]
async fn llama_cpps_props_give_the_slots_and_whether_it_sees() {
    let server = FakeServer::start(vec![]).await;
    server.set_models(
        json!([{"id": "qwen-vl", "object": "model"}, {"id": "said", "object": "model", "capacity": {"parallel": 8}}]),
    );
    server.set_props(
        json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 3, "modalities": {"vision": true},
            "chat_template": "{% if enable_thinking is false %}<think></think>{% endif %}"}),
    );
    let login = login_url(&server.url(), None, &mut |_| panic!("no code")).await.unwrap();
    let qwen = &login.models[0];
    assert_eq!(qwen.capacity.as_ref().and_then(|c| c.parallel()), Some(3), "total_slots is its parallel");
    assert_eq!(qwen.vision, Some(true));
    assert_eq!(qwen.thinking_switch, Some(true), "its template reads enable_thinking");
    // What the model list said itself stands.
    assert_eq!(login.models[1].capacity.as_ref().and_then(|c| c.parallel()), Some(8));
}

#[tokio::test]
async fn a_server_that_needs_a_key_says_how_to_give_it() {
    let server = FakeServer::start(vec![]).await;
    server.require_key("k1");
    let err = login_url(&server.url(), None, &mut |_| {}).await.unwrap_err();
    assert!(err.to_string().contains("--key-stdin"), "{err}");
    // A wrong key is refused as a wrong key, in the server's words — not "wants an API key".
    let err = login_url(&server.url(), Some("wrong".into()), &mut |_| {}).await.unwrap_err().to_string();
    assert!(err.contains("refused the API key") && err.contains("invalid api key"), "{err}");
    assert!(!err.contains("--key-stdin"), "{err}");
    let login = login_url(&server.base_url(), Some("k1".into()), &mut |_| {}).await.unwrap();
    assert_eq!(login.secret.as_deref(), Some("k1"));
    assert_eq!(login.models[0].context, None, "no /props, no context field: unknown, never guessed");
}

#[tokio::test]
async fn nothing_listening_is_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = login_url(&format!("127.0.0.1:{port}"), None, &mut |_| {}).await.unwrap_err();
    assert!(matches!(err, LoginError::Unreachable(_)));
}

#[tokio::test]
async fn a_token_is_proven_on_the_instance() {
    let server = FakeServer::start(vec![]).await;
    server.set_llembas(Llembas::default());
    server.set_models(
        json!([{"id": "fake-model", "context": 65536, "efforts": ["low", "high"], "thinking_switch": true}]),
    );
    let login = login_token(&server.url(), "lmb_test_token").await.unwrap();
    assert_eq!(login.kind, LoginKind::Llembas);
    assert_eq!(login.default_model.as_deref(), Some("fake-model"));
    assert_eq!(login.models[0].context, Some(65536));
    assert_eq!(login.models[0].levels(), ["off", "low", "high"]);
    let instance = server.recorded().into_iter().find(|r| r.path == "/api/v1/instance").unwrap();
    assert_eq!(instance.authorization.as_deref(), Some("Bearer lmb_test_token"));

    let err = login_token(&server.url(), "wrong").await.unwrap_err();
    assert!(err.to_string().contains("does not accept this token"));
}

#[tokio::test]
async fn tokens_without_link_or_old_servers_are_refused() {
    let server = FakeServer::start(vec![]).await;
    server.set_llembas(Llembas { scope: "models".into(), ..Llembas::default() });
    assert!(login_token(&server.url(), "lmb_test_token").await.unwrap_err().to_string().contains("without link"));

    let older = FakeServer::start(vec![]).await;
    older.set_llembas(Llembas { has_instance: false, ..Llembas::default() });
    assert!(
        login_token(&older.url(), "lmb_test_token").await.unwrap_err().to_string().contains("older LLeMbas server")
    );

    let v1 = FakeServer::start(vec![]).await;
    v1.set_llembas(Llembas { protocols: vec![1, 2], version: "1.4.0".into(), ..Llembas::default() });
    let err = login_token(&v1.url(), "lmb_test_token").await.unwrap_err().to_string();
    assert!(err.ends_with("update the server, or use LLeMbas CLI 1.x with it"), "{err}");
}

#[tokio::test]
async fn a_llembas_server_signs_in_by_code() {
    let server = FakeServer::start(vec![]).await;
    server.set_llembas(Llembas { pending_polls: 2, ..Llembas::default() });
    let mut shown = Vec::new();
    let login = login_url(&server.url(), None, &mut |code| shown.push(code.user_code.clone())).await.unwrap();
    assert_eq!(shown, ["ABCD-EFGH"]);
    assert_eq!(login.kind, LoginKind::Llembas);
    assert_eq!(login.secret.as_deref(), Some("lmb_test_token"));
    let polls = server.recorded().iter().filter(|r| r.path == "/api/v1/device/token").count();
    assert_eq!(polls, 3);
}

#[tokio::test]
async fn the_months_use_comes_from_a_llembas_server_and_never_from_a_plain_one() {
    let server = FakeServer::start(vec![]).await;
    let usage = json!({
        "month": {"from": "2026-12-01", "tokens_in": 5000, "tokens_out": 700, "cost_money": null,
                  "cost_by_currency": {"EUR": 2.0, "USD": 0.75}},
        "device": {"tokens_in": 900, "tokens_out": 80}, "currency": "EUR", "admin": false, "unit": "money"
    });
    server.set_llembas(Llembas { usage: Some(usage), ..Llembas::default() });
    let login = login_token(&server.url(), "lmb_test_token").await.unwrap();
    let month = lembas_login::month_usage(&login).await.expect("the instance counts the month");
    assert_eq!(month.cost_text().as_deref(), Some("€2.00 · $0.75"));
    assert_eq!((month.tokens_in, month.device_tokens_in), (5000, 900));
    let asked = server.recorded().into_iter().find(|r| r.path == "/v1/usage").unwrap();
    assert_eq!(asked.authorization.as_deref(), Some("Bearer lmb_test_token"));

    // An instance without usage answers 404: nothing is shown.
    server.set_llembas(Llembas::default());
    assert_eq!(lembas_login::month_usage(&login).await, None);
    // A plain model server is never asked.
    let mut plain = login.clone();
    plain.kind = lembas_config::LoginKind::OpenAi;
    let before = server.recorded().len();
    assert_eq!(lembas_login::month_usage(&plain).await, None);
    assert_eq!(server.recorded().len(), before);
}

#[tokio::test]
async fn the_accounts_personality_is_read_when_it_is_on_and_kept_when_changed() {
    let server = FakeServer::start(vec![]).await;
    let personalization = serde_json::json!({ "enabled": true, "available": true, "personality": "teacher", "personality_custom": null, "instructions": "Answer in British English." });
    server.set_llembas(Llembas { personalization: Some(personalization), ..Llembas::default() });
    let login = login_token(&server.url(), "lmb_test_token").await.unwrap();
    let kept = lembas_login::personalization(&login).await.unwrap();
    assert_eq!((kept.personality.as_str(), kept.custom), ("teacher", None));
    assert_eq!(kept.instructions.as_deref(), Some("Answer in British English."));
    lembas_login::put_personality(&login, "concise").await.unwrap();
    assert_eq!(lembas_login::personalization(&login).await.unwrap().personality, "concise");
    let put = server.recorded().into_iter().find(|r| r.method == "PUT").unwrap();
    assert_eq!(put.body, serde_json::json!({ "enabled": true, "personality": "concise" }), "a partial PUT");

    let off = serde_json::json!({ "enabled": false, "available": true, "personality": "teacher" });
    server.set_llembas(Llembas { personalization: Some(off), ..Llembas::default() });
    assert_eq!(lembas_login::personalization(&login).await, None, "off: the local keys apply");
    let unavailable = serde_json::json!({ "enabled": true, "available": false, "personality": "teacher" });
    server.set_llembas(Llembas { personalization: Some(unavailable), ..Llembas::default() });
    assert!(lembas_login::put_personality(&login, "concise").await.unwrap_err().contains("does not keep"));
}
