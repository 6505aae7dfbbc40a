//! What the ACP tests share: a session template against the fake model, a project, and a
//! client connected to a fresh server over an in-memory pipe that records what it is sent.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOptionKind, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
    TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use lembas_core::Mode;
use lembas_core::SessionConfig;
use lembas_model::{ClientConfig, ModelClient};
use lembas_models::ModelInfo;
use lembas_store::Store;
use lembas_testkit::FakeServer;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Every permission request any test's client was sent: (tool call id, title). Tests look for
/// their own by its title.
pub static PERMISSION_ASKS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The `_meta` of every permission request any test's client got, by the call it was for.
pub static PERMISSION_META: Mutex<Vec<(String, serde_json::Value)>> = Mutex::new(Vec::new());

/// Every `_lembas/event` notification's params any test's client got (filter by session).
pub static LEMBAS_EVENTS: Mutex<Vec<serde_json::Value>> = Mutex::new(Vec::new());

pub fn template(server: &FakeServer, mode: Mode) -> SessionConfig {
    let client = ModelClient::new(ClientConfig::new(server.base_url())).unwrap();
    let model = ModelInfo { id: "fake-model".into(), context: Some(100_000), ..Default::default() };
    let jobs = std::env::temp_dir().join("lembas-acp-test-jobs");
    let mut cfg = SessionConfig::new(Arc::new(Store::in_memory().unwrap()), client, model, mode, jobs, Some(32_768));
    cfg.today = Arc::new(|| "2026-12-02".to_owned());
    cfg
}

pub fn same_dir(p: &Path) -> PathBuf {
    p.to_path_buf()
}

pub fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "old line\n").unwrap();
    (dir, root)
}

/// The agent's words among the updates a client saw, joined.
pub fn agent_words(seen: &[SessionUpdate]) -> String {
    seen.iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => serde_json::to_value(&c.content).ok(),
            _ => None,
        })
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect()
}

pub fn text(t: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::Text(TextContent::new(t.to_owned()))]
}

/// Connects a client to a fresh server; `run` gets the connection and the updates seen so far.
pub async fn with_client<F, Fut>(cfg: SessionConfig, approve: bool, run: F)
where
    F: FnOnce(ConnectionTo<Agent>, Arc<Mutex<Vec<SessionUpdate>>>, Arc<Mutex<usize>>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), agent_client_protocol::Error>> + Send,
{
    with_editor(cfg, approve, Arc::default(), run).await
}

/// Like `with_client`, for a client that holds `buffers` (unsaved files by path) and answers the
/// agent's file requests from them.
pub async fn with_editor<F, Fut>(
    cfg: SessionConfig,
    approve: bool,
    buffers: Arc<Mutex<HashMap<PathBuf, String>>>,
    run: F,
) where
    F: FnOnce(ConnectionTo<Agent>, Arc<Mutex<Vec<SessionUpdate>>>, Arc<Mutex<usize>>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), agent_client_protocol::Error>> + Send,
{
    let (agent_side, client_side) = tokio::io::duplex(1 << 20);
    let (agent_read, agent_write) = tokio::io::split(agent_side);
    let (client_read, client_write) = tokio::io::split(client_side);
    let host = Arc::new(lembas_core::Host::new(cfg.store.clone()));
    let server = tokio::spawn(lembas_acp::serve(
        ByteStreams::new(agent_write.compat_write(), agent_read.compat()),
        Arc::new(lembas_core::Opener::plain(host, cfg, same_dir)),
        None,
    ));
    let seen: Arc<Mutex<Vec<SessionUpdate>>> = Arc::default();
    let asked: Arc<Mutex<usize>> = Arc::default();
    let (seen2, asked2) = (seen.clone(), asked.clone());
    let (reads, writes) = (buffers.clone(), buffers.clone());
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                seen2.lock().unwrap().push(n.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_notification(
            async move |n: agent_client_protocol::UntypedMessage, _cx| {
                if n.method == "_lembas/event" {
                    LEMBAS_EVENTS.lock().unwrap().push(n.params);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                *asked2.lock().unwrap() += 1;
                PERMISSION_META.lock().unwrap().push((
                    request.tool_call.fields.title.clone().unwrap_or_default(),
                    serde_json::to_value(&request.meta).unwrap_or_default(),
                ));
                PERMISSION_ASKS.lock().unwrap().push((
                    request.tool_call.tool_call_id.0.to_string(),
                    request.tool_call.fields.title.clone().unwrap_or_default(),
                ));
                let kind = if approve { PermissionOptionKind::AllowOnce } else { PermissionOptionKind::RejectOnce };
                let option = request.options.iter().find(|o| o.kind == kind).unwrap().option_id.clone();
                responder.respond(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                    SelectedPermissionOutcome::new(option),
                )))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let held = reads.lock().unwrap().get(&request.path).cloned();
                let text = held.unwrap_or_else(|| std::fs::read_to_string(&request.path).unwrap_or_default());
                responder.respond(ReadTextFileResponse::new(text))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                writes.lock().unwrap().insert(request.path.clone(), request.content.clone());
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            ByteStreams::new(client_write.compat_write(), client_read.compat()),
            async move |cx: ConnectionTo<Agent>| run(cx, seen, asked).await,
        )
        .await
        .unwrap();
    server.abort();
}
