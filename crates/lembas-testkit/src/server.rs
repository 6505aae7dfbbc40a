//! The fake server itself: an axum app on a loopback port.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::Scripted;

/// A request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    /// The body as JSON (`null` when it had none, was not JSON, or bodies are not kept).
    pub body: Value,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// How the server plays a LLeMbas instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Llembas {
    /// The token the instance accepts.
    pub token: String,
    pub scope: String,
    pub protocols: Vec<u32>,
    pub default_model: String,
    pub version: String,
    /// Device login: polls answered `authorization_pending` before the token is given.
    pub pending_polls: u32,
    /// Whether `/api/v1/instance` exists (an older server has none).
    pub has_instance: bool,
    /// What `GET /v1/usage` answers (`None`: a 404, an instance without it).
    pub usage: Option<Value>,
    /// What `GET /v1/me/personalization` answers (`None`: a 404); a `PUT` merges into it.
    pub personalization: Option<Value>,
}

impl Default for Llembas {
    fn default() -> Self {
        Llembas {
            token: "lmb_test_token".into(),
            scope: "models memory link".into(),
            protocols: vec![3],
            default_model: "fake-model".into(),
            version: "2.0.0".into(),
            pending_polls: 1,
            has_instance: true,
            usage: None,
            personalization: None,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    script: Mutex<VecDeque<Scripted>>,
    /// Scripts of their own for requests whose system prompt contains a marker (a subagent's,
    /// say), so conversations that run side by side each get their own replies in order.
    routes: Mutex<Vec<(String, VecDeque<Scripted>)>>,
    recorded: Mutex<Vec<Recorded>>,
    pub(crate) models: Mutex<Value>,
    pub(crate) props: Mutex<Option<Value>>,
    pub(crate) ollama: Mutex<Option<crate::ollama::Ollama>>,
    api_key: Mutex<Option<String>>,
    pub(crate) llembas: Mutex<Option<Llembas>>,
    /// The device links opened, for the test to take.
    pub(crate) links: crate::link::Links,
    /// The server's schedules (`/api/v2/schedules`).
    pub(crate) schedules: Mutex<crate::schedules::Schedules>,
    /// The person's memory (`/mcp`).
    pub(crate) memory: Mutex<crate::memory::Memory>,
    refused_fields: Mutex<Vec<String>>,
    polls: Mutex<u32>,
    /// Benchmarks turn this off so the server's own memory does not grow with every request.
    forget_bodies: std::sync::atomic::AtomicBool,
    /// Bytes a token where the server counts what it reads and writes (`crate::window`).
    pub(crate) counting: Mutex<Option<f64>>,
    /// Prompts cut to an Ollama window.
    pub(crate) prompts_cut: std::sync::atomic::AtomicUsize,
    /// The chat template renders no tool list: the tools sent are not read (`crate::window`).
    pub(crate) tools_unread: std::sync::atomic::AtomicBool,
}

/// A scripted model server on `127.0.0.1`, stopped when dropped.
#[derive(Debug)]
pub struct FakeServer {
    addr: SocketAddr,
    pub(crate) shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeServer {
    /// Starts a server that answers chat requests with `script`, in order. Needs a tokio
    /// runtime.
    pub async fn start(script: Vec<Scripted>) -> FakeServer {
        let shared = Arc::new(Shared::default());
        *shared.script.lock().unwrap() = script.into();
        *shared.models.lock().unwrap() =
            json!([{ "id": "fake-model", "object": "model", "owned_by": "lembas-testkit" }]);
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .route("/props", get(props))
            .route("/tokenize", post(tokenize))
            .route("/api/show", post(crate::ollama::show))
            .route("/api/ps", get(crate::ollama::ps))
            .route("/.well-known/lembas.json", get(discovery))
            .route("/api/v1/instance", get(instance))
            .route("/v1/usage", get(usage))
            .route("/v1/me/personalization", get(personalization).put(put_personalization))
            .route("/api/v1/device/code", post(device_code))
            .route("/api/v1/device/token", post(device_token))
            .route("/api/v1/device/link", get(crate::link::device_link))
            .merge(crate::schedules::routes())
            .merge(crate::memory::routes())
            .fallback(any(not_found))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        FakeServer { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Answers requests whose system prompt contains `marker` from `script`, in order, instead
    /// of from the main script.
    pub fn route(&self, marker: &str, script: Vec<Scripted>) {
        self.shared.routes.lock().unwrap().push((marker.to_owned(), script.into()));
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, scripted: Scripted) {
        self.shared.script.lock().unwrap().push_back(scripted);
    }

    /// Replies not played yet.
    pub fn remaining(&self) -> usize {
        self.shared.script.lock().unwrap().len()
    }

    /// Every request received, in order.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().unwrap().clone()
    }

    /// The bodies of the chat requests received, in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        self.recorded().into_iter().filter(|r| r.path == "/v1/chat/completions").map(|r| r.body).collect()
    }

    /// The `/v1/models` list (the `data` entries).
    pub fn set_models(&self, models: Value) {
        *self.shared.models.lock().unwrap() = models;
    }

    /// Answer llama.cpp's `/props` with this.
    pub fn set_props(&self, props: Value) {
        *self.shared.props.lock().unwrap() = Some(props);
    }

    /// Require `Authorization: Bearer <key>` on `/v1/*`.
    pub fn require_key(&self, key: &str) {
        *self.shared.api_key.lock().unwrap() = Some(key.to_owned());
    }

    /// Keep request bodies (the default) or only that requests came (for benchmarks).
    pub fn keep_bodies(&self, keep: bool) {
        self.shared.forget_bodies.store(!keep, std::sync::atomic::Ordering::Relaxed);
    }

    /// The next device link opened, if one is within `within`.
    pub async fn next_link(&self, within: Duration) -> Option<crate::DeviceLink> {
        self.shared.links.next(within).await
    }

    /// The schedules the server holds now, as it would list them.
    pub fn schedules(&self) -> Vec<Value> {
        self.shared.schedules.lock().unwrap().list.clone()
    }

    /// Plays a server older than the device-token schedule routes: they answer 403.
    pub fn schedules_older(&self, older: bool) {
        self.shared.schedules.lock().unwrap().older = older;
    }

    /// One data group's memory (`None`: the account's), as the instance keeps it.
    pub fn memory(&self, scope: Option<&str>) -> crate::memory::Records {
        let group = scope.unwrap_or(crate::memory::ACCOUNT_GROUP);
        self.shared.memory.lock().unwrap().groups.get(group).cloned().unwrap_or_default()
    }

    /// Sets one data group's memory (`None`: the account's).
    pub fn set_memory(&self, scope: Option<&str>, records: crate::memory::Records) {
        let group = scope.unwrap_or(crate::memory::ACCOUNT_GROUP).to_owned();
        self.shared.memory.lock().unwrap().groups.insert(group, records);
    }

    /// The JSON-RPC messages `/mcp` was sent, in order.
    pub fn mcp_requests(&self) -> Vec<Value> {
        self.shared.memory.lock().unwrap().requests.clone()
    }

    /// Also play a LLeMbas instance.
    pub fn set_llembas(&self, llembas: Llembas) {
        *self.shared.llembas.lock().unwrap() = Some(llembas);
    }

    /// Refuse, with a 400 naming it, any chat request that carries `field` at its top level
    /// (`stream_options`, `reasoning_effort`, `stream` — the last refused only when true).
    pub fn refuse_field(&self, field: &str) {
        self.shared.refused_fields.lock().unwrap().push(field.to_owned());
    }
}

pub(crate) fn record(shared: &Shared, method: &str, path: &str, headers: &HeaderMap, body: &[u8]) {
    // When it came, not when the server is done reading it: a benchmark times the client.
    let at = std::time::Instant::now();
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let forget = shared.forget_bodies.load(std::sync::atomic::Ordering::Relaxed);
    let body = if forget { Value::Null } else { serde_json::from_slice(body).unwrap_or(Value::Null) };
    shared.recorded.lock().unwrap().push(Recorded {
        method: method.into(),
        path: path.into(),
        authorization,
        body,
        at,
    });
}

/// A chat request as the server reads it. A benchmark's server (bodies not kept, nothing to
/// refuse) reads only what it answers by — the model, streaming, the first message — so the time
/// it takes does not grow with the conversation as a whole tree of it would.
fn chat_request(shared: &Shared, body: &[u8]) -> Value {
    let lean = shared.forget_bodies.load(std::sync::atomic::Ordering::Relaxed)
        && shared.refused_fields.lock().unwrap().is_empty()
        && shared.props.lock().unwrap().is_none();
    if !lean {
        return serde_json::from_slice(body).unwrap_or(Value::Null);
    }
    #[derive(serde::Deserialize)]
    struct Lean {
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        stream: Option<bool>,
        #[serde(default)]
        stream_options: Option<Value>,
        #[serde(default, deserialize_with = "first_only")]
        messages: Vec<Value>,
    }
    match serde_json::from_slice::<Lean>(body) {
        Ok(lean) => json!({
            "model": lean.model, "stream": lean.stream, "stream_options": lean.stream_options,
            "messages": lean.messages,
        }),
        Err(_) => Value::Null,
    }
}

/// The first element of a list, the rest skipped unread.
fn first_only<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<Value>, D::Error> {
    struct First;
    impl<'de> serde::de::Visitor<'de> for First {
        type Value = Vec<Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
            let first: Option<Value> = seq.next_element()?;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(first.into_iter().collect())
        }
    }
    deserializer.deserialize_seq(First)
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    let Some(key) = shared.api_key.lock().unwrap().clone() else { return true };
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {key}"))
}

pub(crate) fn json_response(status: StatusCode, body: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn unauthorized() -> Response {
    json_response(
        StatusCode::UNAUTHORIZED,
        json!({ "error": { "message": "invalid api key", "type": "authentication_error" } }),
    )
}

/// What a server with quirks refuses before anything else: a field it does not know (as a
/// learned quirk), and a request larger than its window (`crate::window`).
fn refusal(shared: &Shared, request: &Value) -> Option<Response> {
    for field in shared.refused_fields.lock().unwrap().iter() {
        let present = match request.get(field) {
            Some(Value::Bool(b)) => *b,
            Some(_) => true,
            None => false,
        };
        if present {
            let message = if field == "stream" {
                "streaming is not supported".to_owned()
            } else {
                format!("unknown field: {field}")
            };
            return Some(json_response(
                StatusCode::BAD_REQUEST,
                json!({ "error": { "message": message, "code": 400 } }),
            ));
        }
    }
    // A request its window does not take, as the server played keeps its window.
    shared
        .window_refusal(request)
        .map(|(status, body)| json_response(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), body))
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/v1/chat/completions", &headers, &body);
    if !authorized(&shared, &headers) {
        return unauthorized();
    }
    let request = chat_request(&shared, &body);
    if let Some(refusal) = refusal(&shared, &request) {
        return refusal;
    }
    let system = request["messages"][0]["content"].as_str().unwrap_or_default();
    let routed = shared
        .routes
        .lock()
        .unwrap()
        .iter_mut()
        .find(|(marker, _)| system.contains(marker.as_str()))
        .map(|(_, script)| script.pop_front());
    let Some(scripted) = routed.unwrap_or_else(|| shared.script.lock().unwrap().pop_front()) else {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "error": { "message": "lembas-testkit: no scripted reply left" } }),
        );
    };
    let model = request["model"].as_str().unwrap_or("fake-model").to_owned();
    let scripted = shared.as_served(scripted, &request);
    match &scripted {
        Scripted::Status { status, body, retry_after } => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = (status, body.clone()).into_response();
            if let Some(seconds) = retry_after {
                response.headers_mut().insert(header::RETRY_AFTER, seconds.to_string().parse().unwrap());
            }
            response
        }
        Scripted::Silent => {
            // Hold the request open without a word, headers included.
            futures::future::pending::<()>().await;
            unreachable!("a pending future never resolves")
        }
        Scripted::Reply { chunk_delay_ms, cut_after, stall_after, stream_error, pings_after, .. } => {
            if request["stream"] != json!(true) {
                return json_response(StatusCode::OK, scripted.whole(&model));
            }
            let with_usage = request["stream_options"]["include_usage"] == json!(true);
            let mut frames: Vec<Result<Bytes, std::io::Error>> = scripted
                .chunks(&model, with_usage)
                .into_iter()
                .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
                .collect();
            if let Some(message) = stream_error {
                // llama.cpp's way: an error object as the last event, on an unterminated line.
                frames.insert(
                    frames.len().min(2),
                    Ok(Bytes::from(format!("data: {}", json!({ "error": { "code": 500, "message": message } })))),
                );
                frames.truncate(3);
            } else {
                frames.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
            }
            let stall = *stall_after;
            if let Some(n) = pings_after {
                // Comments keep the connection warm; no data comes after them.
                frames.truncate(*n);
                frames.extend((0..100_000).map(|_| Ok(Bytes::from_static(b": ping\n\n"))));
            }
            if let Some(n) = cut_after {
                frames.truncate(*n);
                frames.push(Err(std::io::Error::other("lembas-testkit: connection cut")));
            }
            let delay =
                Duration::from_millis(if pings_after.is_some() { (*chunk_delay_ms).max(20) } else { *chunk_delay_ms });
            let stream = futures::stream::iter(frames.into_iter().enumerate()).then(move |(i, frame)| async move {
                if stall.is_some_and(|n| i >= n) {
                    futures::future::pending::<()>().await;
                }
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                frame
            });
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "text/event-stream")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(Body::from_stream(stream))
                .unwrap()
        }
    }
}

async fn models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/v1/models", &headers, b"");
    if !authorized(&shared, &headers) {
        return unauthorized();
    }
    let data = shared.models.lock().unwrap().clone();
    json_response(StatusCode::OK, json!({ "object": "list", "data": data }))
}

/// The fake server's tokenizer: a token every 3 bytes (a small model's, about).
pub fn tokens_in(text: &str) -> usize {
    text.len().div_ceil(3)
}

/// llama.cpp's `/tokenize`: the text's tokens, by [`tokens_in`] (a server with `/props` only).
async fn tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/tokenize", &headers, &body);
    if shared.props.lock().unwrap().is_none() {
        return json_response(StatusCode::NOT_FOUND, json!({ "error": "not found" }));
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = request["content"].as_str().unwrap_or_default();
    json_response(StatusCode::OK, json!({ "tokens": (0..shared.tokens(text)).collect::<Vec<_>>() }))
}

async fn props(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/props", &headers, b"");
    match shared.props.lock().unwrap().clone() {
        Some(props) => json_response(StatusCode::OK, props),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn discovery(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/.well-known/lembas.json", &headers, b"");
    match shared.llembas.lock().unwrap().clone() {
        Some(l) => json_response(
            StatusCode::OK,
            json!({ "service": "llembas", "version": l.version, "protocol": l.protocols.iter().max().copied().unwrap_or(1),
                    "protocols": l.protocols, "device_login": "/api/v1/device/code" }),
        ),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

pub(crate) fn bearer_ok(headers: &HeaderMap, token: &str) -> bool {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {token}"))
}

async fn instance(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/api/v1/instance", &headers, b"");
    let Some(l) = shared.llembas.lock().unwrap().clone().filter(|l| l.has_instance) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if !bearer_ok(&headers, &l.token) {
        return json_response(StatusCode::UNAUTHORIZED, json!({ "error": "token not accepted" }));
    }
    json_response(
        StatusCode::OK,
        json!({ "service": "llembas", "version": l.version, "name": "Test instance", "connection": "test",
                "account": { "email": "ada@example.org", "name": "Ada" }, "scope": l.scope,
                "default_model": l.default_model, "services": [] }),
    )
}

async fn usage(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/v1/usage", &headers, b"");
    let Some(l) = shared.llembas.lock().unwrap().clone() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if !bearer_ok(&headers, &l.token) {
        return json_response(StatusCode::UNAUTHORIZED, json!({ "error": "token not accepted" }));
    }
    match l.usage {
        Some(body) => json_response(StatusCode::OK, body),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn personalization(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/v1/me/personalization", &headers, b"");
    let Some(l) = shared.llembas.lock().unwrap().clone() else { return StatusCode::NOT_FOUND.into_response() };
    if !bearer_ok(&headers, &l.token) {
        return json_response(StatusCode::UNAUTHORIZED, json!({ "error": "token not accepted" }));
    }
    match l.personalization {
        Some(body) => json_response(StatusCode::OK, body),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A partial `PUT`: the fields sent replace the instance's; 403 when personalization is not
/// available.
async fn put_personalization(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "PUT", "/v1/me/personalization", &headers, &body);
    let mut llembas = shared.llembas.lock().unwrap();
    let Some(l) = llembas.as_mut() else { return StatusCode::NOT_FOUND.into_response() };
    if !bearer_ok(&headers, &l.token) {
        return json_response(StatusCode::UNAUTHORIZED, json!({ "error": "token not accepted" }));
    }
    let Some(kept) = l.personalization.as_mut() else { return StatusCode::NOT_FOUND.into_response() };
    if kept["available"] != true {
        return json_response(StatusCode::FORBIDDEN, json!({ "error": "personalization is not available" }));
    }
    let sent: Value = serde_json::from_slice(&body).unwrap_or_default();
    for (key, value) in sent.as_object().into_iter().flatten() {
        kept[key] = value.clone();
    }
    json_response(StatusCode::OK, kept.clone())
}

async fn device_code(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/api/v1/device/code", &headers, &body);
    if shared.llembas.lock().unwrap().is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    *shared.polls.lock().unwrap() = 0;
    json_response(
        StatusCode::OK,
        json!({ "device_code": "dev-123", "user_code": "ABCD-EFGH", "verification_uri": "http://example.invalid/device",
                "verification_uri_complete": "http://example.invalid/device?code=ABCD-EFGH", "expires_in": 600, "interval": 0 }),
    )
}

async fn device_token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/api/v1/device/token", &headers, &body);
    let Some(l) = shared.llembas.lock().unwrap().clone() else { return StatusCode::NOT_FOUND.into_response() };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if request["device_code"] != "dev-123" {
        return json_response(StatusCode::BAD_REQUEST, json!({ "error": "invalid_grant" }));
    }
    let mut polls = shared.polls.lock().unwrap();
    *polls += 1;
    if *polls <= l.pending_polls {
        return json_response(StatusCode::BAD_REQUEST, json!({ "error": "authorization_pending" }));
    }
    json_response(StatusCode::OK, json!({ "access_token": l.token, "token_type": "Bearer", "scope": l.scope }))
}

async fn not_found(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    record(&shared, parts.method.as_str(), parts.uri.path(), &parts.headers, &bytes);
    StatusCode::NOT_FOUND.into_response()
}
