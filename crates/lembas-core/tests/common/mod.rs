//! What the engine's tests share: a project with a little code, the fake model server, a
//! session configuration on them, and helpers to read what was sent.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lembas_core::{Event, Session, SessionConfig};
use lembas_model::{ClientConfig, ModelClient};
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_store::Store;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

pub struct Harness {
    pub server: FakeServer,
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub store: Arc<Store>,
    pub today: Arc<Mutex<String>>,
}

impl Harness {
    pub async fn new(script: Vec<Scripted>) -> Harness {
        let server = FakeServer::start(script).await;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("app");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n").unwrap();
        std::fs::write(root.join("AGENTS.md"), "Run cargo test before you finish.\n").unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        Harness {
            server,
            root,
            _dir: dir,
            store: Arc::new(Store::in_memory().unwrap()),
            today: Arc::new(Mutex::new("2026-12-02".into())),
        }
    }

    pub fn config(&self, mode: Mode, steps: u32) -> SessionConfig {
        let mut client = ClientConfig::new(self.server.base_url());
        client.backoff = std::time::Duration::from_millis(5);
        let today = self.today.clone();
        let client = ModelClient::new(client).unwrap();
        let model = ModelInfo { id: "fake-model".into(), context: Some(100_000), ..Default::default() };
        let jobs = self._dir.path().join("jobs");
        let mut cfg = SessionConfig::new(self.store.clone(), client, model, mode, jobs, Some(32_768));
        cfg.max_steps = steps;
        cfg.today = Arc::new(move || today.lock().unwrap().clone());
        cfg
    }

    /// A session with its own configuration, whose events nobody reads.
    pub fn start_with(&self, cfg: SessionConfig) -> Session {
        let (tx, _rx) = unbounded_channel();
        Session::start(cfg, &self.root, &self.root, tx).unwrap()
    }

    pub fn start(&self, mode: Mode) -> (Session, UnboundedReceiver<lembas_core::Said>) {
        let (tx, rx) = unbounded_channel();
        (Session::start(self.config(mode, 50), &self.root, &self.root, tx).unwrap(), rx)
    }
}

/// The names of the tools a request offers.
pub fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

pub fn drain(rx: &mut UnboundedReceiver<lembas_core::Said>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(said) = rx.try_recv() {
        out.push(said.event);
    }
    out
}

pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// Every request keeps the one before it as its prefix: the same system prompt, the same tools,
/// and the earlier messages unchanged.
pub fn assert_prefix_kept(requests: &[Value]) {
    for pair in requests.windows(2) {
        assert_eq!(pair[0]["tools"], pair[1]["tools"], "the tool list is fixed");
        let (a, b) = (pair[0]["messages"].as_array().unwrap(), pair[1]["messages"].as_array().unwrap());
        assert_eq!(a[0], b[0], "the system prompt is byte for byte the same");
        for (i, m) in a.iter().enumerate().skip(1) {
            // Reasoning may drop out of an earlier turn (context.md §8); nothing else changes.
            let mut earlier = m.clone();
            let mut later = b[i].clone();
            earlier.as_object_mut().unwrap().remove("reasoning_content");
            later.as_object_mut().unwrap().remove("reasoning_content");
            assert_eq!(earlier, later, "message {i} was rewritten");
        }
    }
}

/// Answers every approval the same way and keeps what it was asked.
pub struct Answering(pub lembas_core::Approval, pub Mutex<Vec<lembas_core::ApprovalRequest>>);

impl Answering {
    pub fn new(answer: lembas_core::Approval) -> Answering {
        Answering(answer, Mutex::default())
    }

    /// The requests it was asked, in order.
    pub fn asked(&self) -> Vec<lembas_core::ApprovalRequest> {
        self.1.lock().unwrap().clone()
    }
}

impl lembas_core::Approver for Answering {
    fn present(&self) -> bool {
        true
    }
    fn ask(
        &self,
        request: lembas_core::ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = lembas_core::Approval> + Send + '_>> {
        self.1.lock().unwrap().push(request);
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}
