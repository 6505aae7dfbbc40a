//! The chat client: one request, streamed, with the faults real servers have handled — retried
//! with backoff and announced, refused fields learned, cancellation at once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::body::RequestBody;
use crate::quirks::{Learned, Refused, SentFields, refused_field};
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::{Assembler, StreamEvent, error_text};
use crate::wire::{ChatRequest, Reply, ToolSchema};

/// How the client talks to one server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The OpenAI-compatible base, ending in `/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// How long a stream may go without data before it counts as stalled (comments such as
    /// `: ping` keep a connection open but are not data).
    pub idle_timeout: Duration,
    /// How long a server may take to begin its response (its headers).
    pub headers_timeout: Duration,
    /// Attempts in all before the server counts as unreachable.
    pub max_attempts: u32,
    /// The most time spent waiting between attempts, in all: a retry that would go past it is
    /// not made.
    pub retry_for: Duration,
    /// The first wait between attempts; each next one doubles, up to [`MAX_BACKOFF`].
    pub backoff: Duration,
    /// Ask for llama.cpp's prompt-progress frames.
    pub prompt_progress: bool,
}

/// The longest wait between two attempts (unless the server's `Retry-After` asks for more).
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How long a request keeps being retried, waits added up, unless configured otherwise.
pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(60);

/// The longest a server's `Retry-After` is obeyed for; past it lembas retries after this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// How much of an error response's body is read (its message is at the start).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// The most a reply may send, streamed or whole, before it counts as broken.
pub const MAX_REPLY_BYTES: usize = 64 * 1024 * 1024;

impl ClientConfig {
    pub fn new(base_url: impl Into<String>) -> Self {
        ClientConfig {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: None,
            idle_timeout: Duration::from_secs(600),
            headers_timeout: Duration::from_secs(600),
            max_attempts: 8,
            retry_for: DEFAULT_RETRY_FOR,
            backoff: Duration::from_secs(1),
            prompt_progress: false,
        }
    }
}

/// Why a request ended without a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("cancelled")]
    Cancelled,
    /// The server refused the request in a way retrying cannot mend (400, 401, 404, …).
    #[error("the model server refused the request ({status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("the model server could not be reached after {attempts} attempts: {reason}")]
    Unreachable { attempts: u32, reason: String },
    #[error("{0}")]
    Setup(String),
}

enum Attempt {
    Done(Reply),
    Retry { reason: String, after: Option<Duration> },
    Refused(Refused, ModelError),
    Fatal(ModelError),
}

/// Optional parts of a request that a refusal can take away.
#[derive(Debug, Clone, Copy)]
struct Options {
    stream: bool,
    stream_options: bool,
    effort: bool,
    progress: bool,
}

/// An OpenAI-compatible chat client.
#[derive(Debug, Clone)]
pub struct ModelClient {
    http: reqwest::Client,
    config: ClientConfig,
    learned: Arc<Mutex<Learned>>,
}

impl ModelClient {
    pub fn new(config: ClientConfig) -> Result<Self, ModelError> {
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("lembas/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(20));
        // Loading the system's certificate roots costs tens of milliseconds at start; a server
        // spoken to over plain HTTP (a local llama.cpp, vLLM, Ollama) never needs them.
        if config.base_url.starts_with("http://") {
            builder = builder.tls_certs_only(Vec::new());
        }
        let http = builder.build().map_err(|e| ModelError::Setup(format!("cannot set up HTTP: {e}")))?;
        Ok(ModelClient { http, config, learned: Arc::default() })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// What was learned about the server's models so far (to be stored).
    pub fn learned(&self) -> Learned {
        self.learned.lock().expect("learned lock").clone()
    }

    /// What was learned about one model (cloning only its entry: asked after every request).
    pub fn learned_model(&self, id: &str) -> crate::LearnedModel {
        self.learned.lock().expect("learned lock").model(id)
    }

    /// Starts from what an earlier run learned.
    pub fn set_learned(&self, learned: Learned) {
        *self.learned.lock().expect("learned lock") = learned;
    }

    /// Sends `request` and streams the reply into `on_event`. Faults are retried with backoff,
    /// each wait announced as [`StreamEvent::Retrying`]; `cancel` stops it at once.
    pub async fn chat(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<Reply, ModelError> {
        let learned = self.learned_model(&request.model);
        // An effort the server said it does not take is not sent (the levels it takes are).
        let asked = request.extra.get("reasoning_effort").and_then(Value::as_str);
        let taken = match (&learned.efforts, asked) {
            (Some(efforts), Some(level)) => efforts.iter().any(|e| e == level),
            _ => true,
        };
        let mut options = Options {
            stream: !learned.no_stream,
            stream_options: !learned.no_stream_options,
            effort: !learned.no_effort && taken,
            progress: self.config.prompt_progress && !learned.no_progress,
        };
        let mut failures = 0;
        let mut waited = Duration::ZERO;
        loop {
            let (body, sent) = self.body(request, options);
            match self.attempt(body, sent, on_event, cancel).await {
                Attempt::Done(reply) => return Ok(reply),
                Attempt::Fatal(error) => return Err(error),
                Attempt::Refused(quirk, error) => {
                    // Retry once without the refused part, and remember it for this model.
                    let mut learned = self.learned.lock().expect("learned lock");
                    match quirk {
                        Refused::StreamOptions if options.stream_options => {
                            options.stream_options = false;
                            learned.update(&request.model, |m| m.no_stream_options = true);
                        }
                        Refused::Effort if options.effort => {
                            // This request goes again without an effort; later ones keep the
                            // levels the server said it takes — all of them dropped only when
                            // it named none.
                            options.effort = false;
                            let taken = crate::quirks::advertised_efforts(&error.to_string());
                            learned.update(&request.model, |m| {
                                if taken.is_empty() {
                                    m.no_effort = true;
                                } else {
                                    m.efforts = Some(taken);
                                }
                            });
                        }
                        Refused::Stream if options.stream => {
                            options.stream = false;
                            learned.update(&request.model, |m| m.no_stream = true);
                        }
                        Refused::Progress if options.progress => {
                            options.progress = false;
                            learned.update(&request.model, |m| m.no_progress = true);
                        }
                        _ => return Err(error),
                    }
                }
                Attempt::Retry { reason, after } => {
                    failures += 1;
                    if failures >= self.config.max_attempts {
                        return Err(ModelError::Unreachable { attempts: failures, reason });
                    }
                    let wait = after.unwrap_or_else(|| backoff(self.config.backoff, failures));
                    // The waits add up to at most `retry_for`; past it the server counts as down.
                    if waited + wait > self.config.retry_for {
                        let reason = match after {
                            Some(after) => format!(
                                "{reason} (it asked to be tried again after {} s, past the {} s lembas keeps trying for)",
                                after.as_secs(),
                                self.config.retry_for.as_secs()
                            ),
                            None => reason,
                        };
                        return Err(ModelError::Unreachable { attempts: failures, reason });
                    }
                    waited += wait;
                    let in_seconds = wait.as_millis().div_ceil(1000) as u64;
                    on_event(StreamEvent::Retrying { reason, in_seconds, attempt: failures });
                    tokio::select! {
                        () = cancel.cancelled() => return Err(ModelError::Cancelled),
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
    }

    /// The request's JSON, written straight from its parts: the history as its messages' wire
    /// forms, never copied into a second tree nor into one buffer (it grows with every step);
    /// see [`RequestBody`].
    fn body(&self, request: &ChatRequest, options: Options) -> (RequestBody, SentFields) {
        /// What follows the messages.
        #[derive(serde::Serialize)]
        struct Rest<'a> {
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            tools: Vec<crate::wire::OpenAiTool<'a>>,
            stream: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            stream_options: Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            return_progress: Option<bool>,
            #[serde(flatten)]
            extra: Map<String, Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            max_tokens: Option<u64>,
        }
        let stream_options = options.stream && options.stream_options;
        let progress = options.stream && options.progress;
        let mut effort = false;
        let mut extra = Map::new();
        for (key, value) in &request.extra {
            let is_effort = matches!(key.as_str(), "reasoning_effort" | "chat_template_kwargs");
            if is_effort && !options.effort {
                continue;
            }
            effort |= is_effort;
            extra.insert(key.clone(), value.clone());
        }
        let rest = Rest {
            tools: request.tools.iter().map(ToolSchema::to_openai).collect(),
            stream: options.stream,
            stream_options: stream_options.then(|| json!({ "include_usage": true })),
            return_progress: progress.then_some(true),
            extra,
            max_tokens: request.max_tokens,
        };
        let mut head = br#"{"model":"#.to_vec();
        serde_json::to_writer(&mut head, &request.model).expect("a model name serializes");
        head.extend_from_slice(br#","messages":["#);
        // `{"tools": …, "stream": …}` becomes `],"tools": …, "stream": …}` (`stream` is always there).
        let rest = serde_json::to_vec(&rest).expect("a request serializes");
        let tail = [b"],".as_slice(), &rest[1..]].concat();
        let body = RequestBody::new(head, request.messages.clone(), tail);
        (body, SentFields { stream: options.stream, stream_options, effort, progress })
    }

    async fn attempt(
        &self,
        body: RequestBody,
        sent: SentFields,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Attempt {
        let mut req = self
            .http
            .post(format!("{}/chat/completions", self.config.base_url))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(reqwest::Body::wrap(body));
        if let Some(key) = &self.config.api_key {
            req = req.bearer_auth(key);
        }
        let headers = self.config.headers_timeout;
        let response = tokio::select! {
            () = cancel.cancelled() => return Attempt::Fatal(ModelError::Cancelled),
            r = tokio::time::timeout(headers, req.send()) => r,
        };
        let response = match response {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Attempt::Retry { reason: describe_http_error(&e), after: None },
            Err(_) => {
                return Attempt::Retry {
                    reason: format!("the server did not begin its response within {} s", headers.as_secs()),
                    after: None,
                };
            }
        };
        let status = response.status();
        if !status.is_success() {
            return refused(response, status, &sent, cancel).await;
        }
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.contains("application/json"));
        if is_json {
            return whole_reply(response, on_event, cancel).await;
        }
        self.streamed_reply(response, on_event, cancel).await
    }

    /// A streamed reply (server-sent events), assembled as it comes: a stream that stalls past
    /// the idle timeout, drops, grows past the cap or ends unfinished is tried again.
    async fn streamed_reply(
        &self,
        response: reqwest::Response,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Attempt {
        let mut assembler = Assembler::default();
        let mut out = Vec::new();
        let mut stream = response.bytes_stream();
        let mut decoder = SseDecoder::default();
        let mut events: Vec<SseEvent> = Vec::new();
        let mut done = false;
        let idle = self.config.idle_timeout;
        // The idle clock runs from the last data, not the last byte: comments do not reset it.
        let mut last_data = tokio::time::Instant::now();
        let mut received = 0usize;
        while !done {
            let next = tokio::select! {
                () = cancel.cancelled() => return Attempt::Fatal(ModelError::Cancelled),
                n = tokio::time::timeout_at(last_data + idle, stream.next()) => n,
            };
            match next {
                Err(_) => {
                    return Attempt::Retry {
                        reason: format!("the stream stalled for {} s", idle.as_secs()),
                        after: None,
                    };
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Attempt::Retry {
                        reason: format!("the connection dropped mid-reply: {}", root_cause(&e)),
                        after: None,
                    };
                }
                Ok(Some(Ok(bytes))) => {
                    received += bytes.len();
                    if received > MAX_REPLY_BYTES {
                        return Attempt::Retry { reason: too_long(), after: None };
                    }
                    decoder.feed(&bytes, &mut events);
                    if !events.is_empty() {
                        last_data = tokio::time::Instant::now();
                    }
                }
            }
            if let Some(error) = take_events(&mut events, &mut assembler, &mut out, &mut done) {
                return Attempt::Retry { reason: error, after: None };
            }
            out.drain(..).for_each(&mut *on_event);
        }
        decoder.finish(&mut events);
        if let Some(error) = take_events(&mut events, &mut assembler, &mut out, &mut done) {
            return Attempt::Retry { reason: error, after: None };
        }
        if !done && !assembler.finished() {
            return Attempt::Retry { reason: "the stream ended before the reply was complete".into(), after: None };
        }
        let reply = assembler.finish(&mut out);
        out.drain(..).for_each(&mut *on_event);
        Attempt::Done(reply)
    }
}

/// A response that is not a success: what to do about it — try again (a rate limit, a timeout,
/// the server's own error), drop the field a server refused, or give up with its words.
async fn refused(
    response: reqwest::Response,
    status: reqwest::StatusCode,
    sent: &SentFields,
    cancel: &CancellationToken,
) -> Attempt {
    let after = retry_after(&response);
    let text = tokio::select! {
        () = cancel.cancelled() => return Attempt::Fatal(ModelError::Cancelled),
        t = read_capped(response, MAX_ERROR_BODY) => t.map(|(text, _)| text).unwrap_or_default(),
    };
    let message = body_message(&text, status);
    let code = status.as_u16();
    if code == 429 || code == 408 || status.is_server_error() {
        return Attempt::Retry { reason: format!("{code} {message}"), after };
    }
    let error = ModelError::Rejected { status: code, message };
    match refused_field(code, &text, sent) {
        Some(quirk) => Attempt::Refused(quirk, error),
        None => Attempt::Fatal(error),
    }
}

/// A reply sent whole, as JSON (a server that does not stream).
async fn whole_reply(
    response: reqwest::Response,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
    cancel: &CancellationToken,
) -> Attempt {
    let text = tokio::select! {
        () = cancel.cancelled() => return Attempt::Fatal(ModelError::Cancelled),
        t = read_capped(response, MAX_REPLY_BYTES) => t,
    };
    let value: Value = match text {
        Ok((_, true)) => return Attempt::Retry { reason: too_long(), after: None },
        Ok((text, false)) => match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => return Attempt::Retry { reason: format!("the server sent a malformed reply: {e}"), after: None },
        },
        Err(e) => return Attempt::Retry { reason: describe_http_error(&e), after: None },
    };
    let mut assembler = Assembler::default();
    let mut out = Vec::new();
    if let Err(e) = assembler.chunk(&value, &mut out) {
        return Attempt::Retry { reason: e.0, after: None };
    }
    let reply = assembler.finish(&mut out);
    out.drain(..).for_each(&mut *on_event);
    Attempt::Done(reply)
}

/// Feeds decoded events to the assembler; an error the server streamed comes back as text.
fn take_events(
    events: &mut Vec<SseEvent>,
    assembler: &mut Assembler,
    out: &mut Vec<StreamEvent>,
    done: &mut bool,
) -> Option<String> {
    for event in events.drain(..) {
        let data = event.data.trim();
        if data == "[DONE]" {
            *done = true;
            continue;
        }
        // Anything that is not JSON (a loading banner) is not part of the reply.
        let Ok(value) = serde_json::from_str::<Value>(data) else { continue };
        if event.event.as_deref() == Some("error") && value.get("error").is_none() {
            return Some(error_text(&value));
        }
        if let Err(e) = assembler.chunk(&value, out) {
            return Some(e.0);
        }
    }
    None
}

fn backoff(base: Duration, failures: u32) -> Duration {
    base.saturating_mul(1 << (failures - 1).min(16)).min(MAX_BACKOFF.max(base))
}

/// The server's `Retry-After` in seconds, obeyed up to [`MAX_RETRY_AFTER`].
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER))
}

fn too_long() -> String {
    format!("the reply passed {} MB, more than any reply should be", MAX_REPLY_BYTES >> 20)
}

/// A response's body as text, at most `cap` bytes of it; and whether there was more.
pub(crate) async fn read_capped(response: reqwest::Response, cap: usize) -> Result<(String, bool), reqwest::Error> {
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok((String::from_utf8_lossy(&bytes).into_owned(), true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), false))
}

/// One line saying what the server said: its error message, else its status.
pub(crate) fn body_message(text: &str, status: reqwest::StatusCode) -> String {
    let from_json = serde_json::from_str::<Value>(text).ok().map(|v| match v.get("error") {
        Some(e) => error_text(e),
        None => v.get("message").map(error_text).unwrap_or_default(),
    });
    let message =
        from_json.filter(|m| !m.is_empty()).unwrap_or_else(|| text.lines().next().unwrap_or("").trim().to_owned());
    let message: String = message.chars().take(300).collect();
    if message.is_empty() { status.canonical_reason().unwrap_or("error").to_owned() } else { message }
}

pub(crate) fn root_cause(error: &dyn std::error::Error) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

fn describe_http_error(e: &reqwest::Error) -> String {
    if e.is_connect() {
        format!("cannot connect: {}", root_cause(e))
    } else if e.is_timeout() {
        "the server did not answer in time".to_owned()
    } else {
        root_cause(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let s = Duration::from_secs(1);
        assert_eq!(backoff(s, 1), Duration::from_secs(1));
        assert_eq!(backoff(s, 3), Duration::from_secs(4));
        assert_eq!(backoff(s, 20), MAX_BACKOFF);
    }

    #[test]
    fn error_bodies_become_one_line() {
        let status = reqwest::StatusCode::BAD_REQUEST;
        assert_eq!(body_message(r#"{"error":{"message":"bad model"}}"#, status), "bad model");
        assert_eq!(body_message("plain\ntext", status), "plain");
        assert_eq!(body_message("", status), "Bad Request");
    }

    #[test]
    fn a_request_body_has_every_part_in_order() {
        use http_body::Body as _;
        let client = ModelClient::new(ClientConfig::new("http://127.0.0.1:9/v1")).unwrap();
        let tool =
            ToolSchema { name: "read".into(), description: "reads".into(), parameters: json!({"type": "object"}) };
        let mut extra = Map::new();
        extra.insert("reasoning_effort".into(), json!("high"));
        let request = ChatRequest {
            model: "m\"1".into(),
            messages: Arc::new(vec![
                crate::Message::user("a").to_wire(false),
                crate::Message::user("b").to_wire(false),
            ]),
            tools: Arc::new(vec![tool]),
            extra,
            max_tokens: Some(9),
        };
        let options = Options { stream: true, stream_options: true, effort: true, progress: false };
        let (mut body, sent) = client.body(&request, options);
        assert!(sent.effort && sent.stream_options);
        let len = body.size_hint().exact().unwrap();
        let mut whole = Vec::new();
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        while let std::task::Poll::Ready(Some(frame)) = std::pin::Pin::new(&mut body).poll_frame(&mut cx) {
            whole.extend_from_slice(frame.unwrap().data_ref().unwrap());
        }
        assert!(body.is_end_stream());
        assert_eq!(whole.len() as u64, len);
        let expected = concat!(
            r#"{"model":"m\"1","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"#,
            r#""tools":[{"type":"function","function":{"name":"read","description":"reads","parameters":{"type":"object"}}}],"#,
            r#""stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"high","max_tokens":9}"#
        );
        assert_eq!(String::from_utf8(whole).unwrap(), expected);
    }
}
