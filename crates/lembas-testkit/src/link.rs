//! The LLeMbas server's end of the device link (`GET /api/v1/device/link`, a WebSocket the
//! device dials with its token): each link the device opens reaches the test as a
//! [`DeviceLink`], through which the test plays the server's ACP client — reads what the device
//! says, sends requests, closes the link with a code, or drops it.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use crate::server::{Shared, bearer_ok, record};

/// How long a test waits for what the device says before giving up on it.
const PATIENCE: Duration = Duration::from_secs(20);

/// What the test makes the server do on a link.
#[derive(Debug)]
enum ServerSends {
    Text(String),
    Close(u16, String),
}

/// One link the device opened, as the server holds it. Dropping it drops the connection.
#[derive(Debug)]
pub struct DeviceLink {
    /// The `Authorization` header the device dialled with.
    pub authorization: Option<String>,
    incoming: mpsc::UnboundedReceiver<String>,
    outgoing: mpsc::UnboundedSender<ServerSends>,
    next_id: u64,
    /// Notifications the device sent while the test waited for an answer, in order.
    pub notifications: Vec<Value>,
    /// Requests the device sent (a permission asked, say) while the test waited for an answer.
    pub requests: Vec<Value>,
}

impl DeviceLink {
    /// The next message the device sends (its text when it is not JSON), or `None` when the link
    /// closed or nothing came in time.
    pub async fn recv(&mut self) -> Option<Value> {
        let text = tokio::time::timeout(PATIENCE, self.incoming.recv()).await.ok()??;
        Some(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Sends one message as a text frame.
    pub fn send(&self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// Sends `text` as a text frame, as it is (a malformed frame, say).
    pub fn send_raw(&self, text: &str) {
        let _ = self.outgoing.send(ServerSends::Text(text.to_owned()));
    }

    /// Sends the request `method` and waits for its answer (the whole message, `result` or
    /// `error`); what else the device says meanwhile is kept in `notifications` and `requests`.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.answer_to(id).await
    }

    /// Waits for the answer to the request `id`, keeping what else comes.
    pub async fn answer_to(&mut self, id: u64) -> Value {
        loop {
            let Some(message) = self.recv().await else { panic!("the link closed before answering request {id}") };
            if message.get("method").is_some() {
                if message.get("id").is_some() { self.requests.push(message) } else { self.notifications.push(message) }
            } else if message["id"] == id {
                return message;
            }
        }
    }

    /// Answers a request the device sent.
    pub fn answer(&self, id: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    /// The next request of `method` the device sends (one it sent meanwhile is taken first);
    /// what else comes is kept.
    pub async fn next_request(&mut self, method: &str) -> Value {
        loop {
            if let Some(at) = self.requests.iter().position(|r| r["method"] == method) {
                return self.requests.remove(at);
            }
            let Some(message) = self.recv().await else { panic!("the link closed before a {method} came") };
            match (message.get("method").is_some(), message.get("id").is_some()) {
                (true, true) => self.requests.push(message),
                (true, false) => self.notifications.push(message),
                _ => {}
            }
        }
    }

    /// The next `_lembas/event` whose event `pick` accepts (one that came meanwhile is taken
    /// first, in order); what else comes is kept.
    pub async fn next_event(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        let mut said = self.next_notification(|n| n["method"] == "_lembas/event" && pick(&n["params"]["event"])).await;
        said["params"]["event"].take()
    }

    /// The next notification `pick` accepts (one that came meanwhile is taken first, in order);
    /// what else comes is kept.
    pub async fn next_notification(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            if let Some(at) = self.notifications.iter().position(&pick) {
                return self.notifications.remove(at);
            }
            let Some(message) = self.recv().await else {
                panic!("the link closed before the notification came; it said: {:?}", self.notifications)
            };
            match (message.get("method").is_some(), message.get("id").is_some()) {
                (true, true) => self.requests.push(message),
                (true, false) => self.notifications.push(message),
                _ => {}
            }
        }
    }

    /// Answers an approval's card (`session/request_permission`) as a LLeMbas server's web UI
    /// and phone do by the spec's words (`acp.md`): the option the person picked, by its id —
    /// one of the card's own, as the UI draws only those (`once`, `session`, `deny`) — with
    /// `_meta.lembas` beside the outcome when the person said more (`feedback` on a denial,
    /// `command` corrected on `once`).
    pub fn choose(&self, card: &Value, option: &str, lembas: Option<Value>) {
        let offered: Vec<&str> =
            card["params"]["options"].as_array().into_iter().flatten().filter_map(|o| o["optionId"].as_str()).collect();
        assert!(offered.contains(&option), "the card offers {offered:?}, not {option:?}: {card}");
        let mut result = json!({ "outcome": { "outcome": "selected", "optionId": option } });
        if let Some(lembas) = lembas {
            result["_meta"] = json!({ "lembas": lembas });
        }
        self.answer(&card["id"], result);
    }

    /// Closes the link with `code` and `reason`, as the server does.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.outgoing.send(ServerSends::Close(code, reason.to_owned()));
    }
}

/// The links devices opened, for the test to take in order.
#[derive(Debug)]
pub(crate) struct Links {
    opened: mpsc::UnboundedSender<DeviceLink>,
    waiting: tokio::sync::Mutex<mpsc::UnboundedReceiver<DeviceLink>>,
}

impl Default for Links {
    fn default() -> Self {
        let (opened, waiting) = mpsc::unbounded_channel();
        Links { opened, waiting: tokio::sync::Mutex::new(waiting) }
    }
}

impl Links {
    /// The next link a device opens, if one does within `within`.
    pub(crate) async fn next(&self, within: Duration) -> Option<DeviceLink> {
        tokio::time::timeout(within, self.waiting.lock().await.recv()).await.ok()?
    }
}

/// `GET /api/v1/device/link`: with the instance's token, the WebSocket handshake; the link is
/// handed to the test.
pub(crate) async fn device_link(State(shared): State<Arc<Shared>>, mut request: Request) -> Response {
    let headers = request.headers().clone();
    record(&shared, "GET", "/api/v1/device/link", &headers, b"");
    let Some(llembas) = shared.llembas.lock().unwrap().clone() else { return StatusCode::NOT_FOUND.into_response() };
    if !bearer_ok(&headers, &llembas.token) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let Some(key) = headers.get("sec-websocket-key").map(|k| k.as_bytes().to_vec()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let upgrade = hyper::upgrade::on(&mut request);
    let (to_test, incoming) = mpsc::unbounded_channel();
    let (outgoing, from_test) = mpsc::unbounded_channel();
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let link =
        DeviceLink { authorization, incoming, outgoing, next_id: 0, notifications: Vec::new(), requests: Vec::new() };
    let _ = shared.links.opened.send(link);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let ws = WebSocketStream::from_raw_socket(hyper_util::rt::TokioIo::new(upgraded), Role::Server, None).await;
        pump(ws, to_test, from_test).await;
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header("sec-websocket-accept", tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key))
        .body(Body::empty())
        .expect("a handshake answer")
}

/// Carries frames between the socket and the test until either ends.
async fn pump<S>(
    ws: WebSocketStream<S>,
    to_test: mpsc::UnboundedSender<String>,
    mut from_test: mpsc::UnboundedReceiver<ServerSends>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => { let _ = to_test.send(text.as_str().to_owned()); }
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            sent = from_test.recv() => match sent {
                Some(ServerSends::Text(text)) => {
                    if sink.send(Message::text(text)).await.is_err() { return }
                }
                Some(ServerSends::Close(code, reason)) => {
                    let frame = CloseFrame { code: code.into(), reason: reason.into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    // The device answers the close; then the socket ends.
                    while let Ok(Some(Ok(_))) = tokio::time::timeout(PATIENCE, stream.next()).await {}
                    return;
                }
                // The test let the link go: the connection drops, with no close frame.
                None => return,
            },
        }
    }
}
