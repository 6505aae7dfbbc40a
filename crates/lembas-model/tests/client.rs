//! The client against the test kit's fake server, over real HTTP: what it sends, what it makes
//! of what comes back, and every fault.

use std::time::{Duration, Instant};

use lembas_model::{
    CancellationToken, ChatRequest, ClientConfig, FinishReason, ModelClient, ModelError, StreamEvent, ToolSchema,
};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Map, json};

fn client(server: &FakeServer) -> ModelClient {
    let mut config = ClientConfig::new(server.base_url());
    config.backoff = Duration::from_millis(10);
    config.idle_timeout = Duration::from_millis(300);
    ModelClient::new(config).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "fake-model".into(),
        messages: std::sync::Arc::new(vec![
            lembas_model::system_wire("be brief"),
            lembas_model::Message::user("hi").to_wire(false),
        ]),
        tools: std::sync::Arc::new(vec![ToolSchema {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }]),
        extra: Map::new(),
        max_tokens: None,
    }
}

async fn chat(client: &ModelClient, req: &ChatRequest) -> (Result<lembas_model::Reply, ModelError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let result = client.chat(req, &mut |e| events.push(e), &CancellationToken::new()).await;
    (result, events)
}

#[tokio::test]
async fn streams_text_reasoning_and_tool_calls_and_sends_what_it_should() {
    let server = FakeServer::start(vec![
        Scripted::text("Reading it now.")
            .with_reasoning("The file matters.")
            .with_call("read", r#"{"path":"src/main.rs"}"#)
            .with_usage(120, 9, 100),
    ])
    .await;
    let (reply, events) = chat(&client(&server), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Reading it now.");
    assert_eq!(reply.reasoning, "The file matters.");
    assert_eq!(reply.tool_calls[0].name, "read");
    assert_eq!(reply.tool_calls[0].arguments, r#"{"path":"src/main.rs"}"#);
    assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(reply.usage.unwrap().cached_tokens, Some(100));
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Text(_))));
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Reasoning(_))));

    let sent = &server.chat_requests()[0];
    assert_eq!(sent["model"], "fake-model");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent["messages"][1], json!({"role": "user", "content": "hi"}));
    assert_eq!(sent["tools"][0]["function"]["name"], "read");
    assert!(sent.get("return_progress").is_none(), "only asked of llama.cpp servers");
}

#[tokio::test]
async fn server_errors_are_retried_and_announced() {
    let server = FakeServer::start(vec![Scripted::status(502, "Bad Gateway"), Scripted::text("ok")]).await;
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "ok");
    let retry = events.iter().find_map(|e| match e {
        StreamEvent::Retrying { reason, attempt, .. } => Some((reason.clone(), *attempt)),
        _ => None,
    });
    assert_eq!(retry, Some(("502 Bad Gateway".into(), 1)));
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = FakeServer::start(vec![
        Scripted::status_retry_after(429, r#"{"error":{"message":"slow down"}}"#, 1),
        Scripted::text("ok"),
    ])
    .await;
    let start = Instant::now();
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "ok");
    assert!(start.elapsed() >= Duration::from_millis(950));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Retrying { in_seconds: 1, reason, .. } if reason == "429 slow down"))
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_is_retried() {
    let server = FakeServer::start(vec![
        Scripted::text("partial words here").with_stream_error("slot unavailable"),
        Scripted::text("whole"),
    ])
    .await;
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "whole");
    assert!(
        events.iter().any(|e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("slot unavailable")))
    );
}

#[tokio::test]
async fn a_dropped_stream_is_retried() {
    let server =
        FakeServer::start(vec![Scripted::text("one two three four").cut_after(2), Scripted::text("again")]).await;
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "again");
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Retrying { .. })));
}

#[tokio::test]
async fn a_stalled_stream_is_retried_after_the_idle_timeout() {
    let server = FakeServer::start(vec![Scripted::text("one two three").stall_after(2), Scripted::text("fresh")]).await;
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "fresh");
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("stalled"))));
}

#[tokio::test]
async fn a_bad_request_ends_with_the_servers_words_and_is_not_retried() {
    let server = FakeServer::start(vec![
        Scripted::status(400, r#"{"error":{"message":"context too long"}}"#),
        Scripted::text("never"),
    ])
    .await;
    let (reply, _) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap_err(), ModelError::Rejected { status: 400, message: "context too long".into() });
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn a_wrong_key_is_refused_and_the_right_one_is_sent() {
    let server = FakeServer::start(vec![Scripted::text("ok")]).await;
    server.require_key("sekret");
    let (reply, _) = chat(&client(&server), &request()).await;
    assert!(matches!(reply, Err(ModelError::Rejected { status: 401, .. })));

    let mut config = ClientConfig::new(server.base_url());
    config.api_key = Some("sekret".into());
    let (reply, _) = chat(&ModelClient::new(config).unwrap(), &request()).await;
    assert_eq!(reply.unwrap().text, "ok");
    assert_eq!(server.recorded().last().unwrap().authorization.as_deref(), Some("Bearer sekret"));
}

#[tokio::test]
async fn a_refused_connection_is_unreachable_after_the_attempts() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}/v1"));
    config.backoff = Duration::from_millis(5);
    config.max_attempts = 3;
    let (reply, events) = chat(&ModelClient::new(config).unwrap(), &request()).await;
    assert!(
        matches!(reply, Err(ModelError::Unreachable { attempts: 3, ref reason }) if reason.starts_with("cannot connect")),
        "{reply:?}"
    );
    assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::Retrying { .. })).count(), 2);
}

#[tokio::test]
async fn cancellation_stops_a_reply_at_once() {
    let server = FakeServer::start(vec![Scripted::text("a b c d e f g h i j").with_delay_ms(200)]).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let start = Instant::now();
    let mut seen = 0;
    let result = client.chat(&request(), &mut |_| seen += 1, &cancel).await;
    assert_eq!(result, Err(ModelError::Cancelled));
    assert!(start.elapsed() < Duration::from_millis(600));
}

#[tokio::test]
async fn a_refused_stream_options_field_is_dropped_and_remembered() {
    let server = FakeServer::start(vec![Scripted::text("one"), Scripted::text("two")]).await;
    server.refuse_field("stream_options");
    let client = client(&server);
    assert_eq!(chat(&client, &request()).await.0.unwrap().text, "one");
    assert_eq!(chat(&client, &request()).await.0.unwrap().text, "two");
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 3, "one refusal, then two requests without the field");
    assert!(sent[1].get("stream_options").is_none() && sent[2].get("stream_options").is_none());
    assert!(client.learned().model("fake-model").no_stream_options);
}

#[tokio::test]
async fn a_refused_effort_is_dropped() {
    let server = FakeServer::start(vec![Scripted::text("fine")]).await;
    server.refuse_field("reasoning_effort");
    let mut req = request();
    req.extra.insert("reasoning_effort".into(), json!("high"));
    req.extra.insert("chat_template_kwargs".into(), json!({"reasoning_effort": "high"}));
    assert_eq!(chat(&client(&server), &req).await.0.unwrap().text, "fine");
    let last = server.chat_requests().pop().unwrap();
    assert!(last.get("reasoning_effort").is_none() && last.get("chat_template_kwargs").is_none());
}

#[tokio::test]
async fn a_server_that_cannot_stream_gets_whole_replies() {
    let server =
        FakeServer::start(vec![Scripted::text("<think>quietly</think>Whole answer.").with_usage(10, 3, 0)]).await;
    server.refuse_field("stream");
    let (reply, events) = chat(&client(&server), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Whole answer.");
    assert_eq!(reply.reasoning, "quietly");
    assert_eq!(reply.usage.unwrap().input_tokens, 10);
    assert!(events.contains(&StreamEvent::Text("Whole answer.".into())));
    assert_eq!(server.chat_requests().last().unwrap()["stream"], false);
}

#[tokio::test]
async fn malformed_tool_arguments_are_kept_as_text() {
    let server = FakeServer::start(vec![Scripted::text("").with_call("edit", "{\"path\": \"a.rs\", oops")]).await;
    let reply = chat(&client(&server), &request()).await.0.unwrap();
    assert_eq!(reply.tool_calls[0].arguments, "{\"path\": \"a.rs\", oops");
}

#[tokio::test]
async fn a_huge_retry_after_is_capped() {
    let server = FakeServer::start(vec![Scripted::status_retry_after(
        429,
        r#"{"error":{"message":"come back tomorrow"}}"#,
        100_000,
    )])
    .await;
    let cancel = CancellationToken::new();
    let mut waits = Vec::new();
    let stop = cancel.clone();
    let mut config = ClientConfig::new(server.base_url());
    config.retry_for = Duration::from_secs(3600);
    let result = ModelClient::new(config)
        .unwrap()
        .chat(
            &request(),
            &mut |e| {
                if let StreamEvent::Retrying { in_seconds, .. } = e {
                    waits.push(in_seconds);
                    stop.cancel();
                }
            },
            &cancel,
        )
        .await;
    assert_eq!(result.unwrap_err(), ModelError::Cancelled);
    assert_eq!(waits, [lembas_model::MAX_RETRY_AFTER.as_secs()]);
    // Past how long the client keeps trying, the turn fails at once and says why.
    let server =
        FakeServer::start(vec![Scripted::status_retry_after(503, r#"{"error":{"message":"busy"}}"#, 100_000)]).await;
    let (reply, _) = chat(&client(&server), &request()).await;
    let reply = reply.unwrap_err().to_string();
    assert!(reply.contains("asked to be tried again after 120 s"), "{reply}");
}

#[tokio::test]
async fn a_server_that_never_begins_its_response_is_retried_after_a_stated_time() {
    let server = FakeServer::start(vec![Scripted::Silent, Scripted::text("late but here")]).await;
    let mut config = ClientConfig::new(server.base_url());
    config.backoff = Duration::from_millis(10);
    config.headers_timeout = Duration::from_millis(300);
    let (reply, events) = chat(&ModelClient::new(config).unwrap(), &request()).await;
    assert_eq!(reply.unwrap().text, "late but here");
    assert!(
        events.iter().any(
            |e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("did not begin its response"))
        )
    );
}

#[tokio::test]
async fn comments_do_not_keep_a_silent_stream_alive() {
    let server = FakeServer::start(vec![Scripted::text("one two three").pings_after(2), Scripted::text("fresh")]).await;
    let start = Instant::now();
    let (reply, events) = chat(&client(&server), &request()).await;
    assert_eq!(reply.unwrap().text, "fresh");
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("stalled"))));
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn an_error_body_is_read_only_as_far_as_its_message() {
    let huge = format!(r#"{{"error":{{"message":"too big"}},"pad":"{}"}}"#, "x".repeat(50 * 1024 * 1024));
    let server = FakeServer::start(vec![Scripted::status(400, huge)]).await;
    let (reply, _) = chat(&client(&server), &request()).await;
    match reply.unwrap_err() {
        ModelError::Rejected { status: 400, message } => assert!(message.len() < 2 * lembas_model::MAX_ERROR_BODY),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn retrying_stops_at_its_stated_bound() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}/v1"));
    config.backoff = Duration::from_millis(100);
    config.max_attempts = 100;
    config.retry_for = Duration::from_millis(350);
    let start = Instant::now();
    let (reply, events) = chat(&ModelClient::new(config).unwrap(), &request()).await;
    // Waits of 100 and 200 ms fit in 350; the next (400) would not.
    assert!(matches!(reply, Err(ModelError::Unreachable { attempts: 3, .. })), "{reply:?}");
    assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::Retrying { .. })).count(), 2);
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_refused_effort_narrows_the_levels_to_those_the_server_names() {
    let server = FakeServer::start(vec![
        Scripted::status(
            400,
            r#"{"error":{"message":"reasoning_effort 'high' is not supported; supported values: low, medium"}}"#,
        ),
        Scripted::text("without"),
        Scripted::text("low it is"),
        Scripted::text("high dropped"),
    ])
    .await;
    let client = client(&server);
    let with = |level: &str| {
        let mut req = request();
        req.extra.insert("reasoning_effort".into(), json!(level));
        req
    };
    assert_eq!(chat(&client, &with("high")).await.0.unwrap().text, "without");
    let learned = client.learned().model("fake-model");
    assert_eq!(learned.efforts.as_deref(), Some(&["low".to_owned(), "medium".to_owned()][..]));
    assert!(!learned.no_effort, "levels narrow; they are not all dropped");
    assert_eq!(chat(&client, &with("low")).await.0.unwrap().text, "low it is");
    assert_eq!(chat(&client, &with("high")).await.0.unwrap().text, "high dropped");
    let requests = server.chat_requests();
    assert_eq!(requests[1].get("reasoning_effort"), None, "the retry goes without");
    assert_eq!(requests[2]["reasoning_effort"], "low");
    assert_eq!(requests[3].get("reasoning_effort"), None, "a level the server does not take is not sent");
}
