//! What the engine's tests share: a project with a little code, the fake model server, a
//! session configuration on them, and helpers to read what was sent.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lembas_core::{
    Answer, Approver, Ask, Attachment, Command, DoneReason, Event, Host, OpenSession, Opened, Reply, Said,
    SessionConfig, SessionHandle, Start, Submission, SubmissionId,
};
use lembas_model::CancellationToken;
use lembas_model::{ClientConfig, ModelClient};
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_store::Store;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

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

    /// A new session with its own configuration, opened on a host of the harness's store as every
    /// front end opens one.
    pub fn start_with(&self, cfg: SessionConfig) -> Driven {
        Driven::open(&self.host(), cfg, Start::New { root: self.root.clone(), cwd: self.root.clone() })
    }

    pub fn start(&self, mode: Mode) -> Driven {
        self.start_with(self.config(mode, 50))
    }

    /// The stored session `id`, opened again.
    pub fn resume(&self, cfg: SessionConfig, id: &str) -> Driven {
        Driven::open(&self.host(), cfg, Start::Resume(id.to_owned()))
    }

    pub fn host(&self) -> Host {
        Host::new(self.store.clone())
    }
}

/// An undo's, a rewind's or an overwrite's answer: the words of the turn taken back (`None`: the
/// conversation stood), how many turns after it went too, and what came of the files.
#[derive(Debug)]
pub struct Undone {
    pub prompt: Option<String>,
    pub later: u32,
    pub files: lembas_protocol::FilesBack,
}

/// A session driven through the host's handle, as a front end drives one: each command is
/// submitted under an id, and what the session says under it is its answer. What the session's
/// configuration would answer to an ask (its approver: a test's `Answering`, or nobody) is
/// answered with `Command::Answer`.
pub struct Driven {
    handle: SessionHandle,
    events: UnboundedReceiver<Said>,
    approver: Arc<dyn Approver>,
    /// Everything said so far that [`Driven::drain`] has not handed out.
    said: Vec<Event>,
}

impl Driven {
    fn open(host: &Host, cfg: SessionConfig, start: Start) -> Driven {
        let approver = cfg.approver.clone();
        let attended = approver.present();
        let Opened { handle, events } = host.open(OpenSession { cfg, start, attended }).unwrap();
        Driven { handle, events, approver, said: Vec::new() }
    }

    pub fn id(&self) -> &str {
        self.handle.id()
    }

    /// The handle, for words sent while a turn runs.
    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }

    /// What the session said since this was last asked.
    pub fn drain(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.said)
    }

    /// Carries out `command`: what the session said under it, once it is done with it. (The
    /// host takes submissions in order: a report asked after it is answered after it.) A
    /// cancelled `cancel` sends a cancel.
    pub async fn carry(&mut self, command: Command, cancel: &CancellationToken) -> Vec<Event> {
        let asked = SubmissionId::fresh("test");
        let fence = SubmissionId::fresh("fence");
        assert!(self.handle.submit(Submission { id: asked.clone(), command }), "the session is open");
        assert!(self.handle.submit(Submission { id: fence.clone(), command: Command::ReportMcp }));
        let mut answer = Vec::new();
        let mut cancelled = false;
        loop {
            let said = tokio::select! {
                said = tokio::time::timeout(std::time::Duration::from_secs(60), self.events.recv()) => {
                    said.expect("the session answered within a minute").expect("the session is open")
                }
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    self.handle.send(Command::Cancel);
                    continue;
                }
            };
            if said.submission.as_ref() == Some(&fence) {
                if matches!(said.event, Event::McpServers { .. }) {
                    return answer;
                }
                continue;
            }
            if said.submission.as_ref() == Some(&asked) {
                answer.push(said.event.clone());
            }
            self.heard(said.event).await;
        }
    }

    /// Keeps what the session said for [`Driven::drain`], answering it first when it asks.
    async fn heard(&mut self, event: Event) {
        if let Event::Ask { id, ask } = &event {
            let answered = self.answer(ask.clone()).await;
            self.handle.send(Command::Answer { id: *id, answer: answered });
        }
        self.said.push(event);
    }

    /// What the session's approver answers to `ask`.
    async fn answer(&self, ask: Ask) -> Answer {
        match ask {
            Ask::Approval(request) => Answer::Approval(self.approver.ask(request).await),
            Ask::Question(question) => match self.approver.question(question).await {
                Reply::Answered { words } => Answer::Reply { words: Some(words) },
                Reply::Silent => Answer::Reply { words: None },
                Reply::NotAsked => Answer::Unasked,
            },
            Ask::Plan { call_id, plan } => Answer::Plan(self.approver.approve_plan(call_id, plan).await),
            Ask::Show(showing) => match self.approver.show(showing).await {
                Ok(()) => Answer::Shown { shown: true, reason: None },
                Err(reason) => Answer::Shown { shown: false, reason: Some(reason) },
            },
        }
    }

    /// A prompt, carried out: why its turn ended.
    pub async fn prompt(&mut self, words: &str, cancel: &CancellationToken) -> DoneReason {
        self.prompt_with(words, &[], cancel).await
    }

    pub async fn prompt_with(&mut self, words: &str, files: &[Attachment], cancel: &CancellationToken) -> DoneReason {
        let command = Command::Prompt { text: words.to_owned(), attachments: files.to_vec(), machine: false };
        let said = self.carry(command, cancel).await;
        said.iter()
            .find_map(|e| match e {
                Event::Done { reason, .. } => Some(*reason),
                _ => None,
            })
            .unwrap_or_else(|| panic!("the turn ended: {said:#?}"))
    }

    /// What a command that takes a turn back answered: its `Undone`, or the error said.
    async fn going_back(&mut self, command: Command) -> Result<Undone, String> {
        let said = self.carry(command, &CancellationToken::new()).await;
        said.into_iter()
            .find_map(|e| match e {
                Event::Undone { prompt, later, files } => Some(Ok(Undone { prompt, later, files })),
                Event::Error { message } => Some(Err(message)),
                _ => None,
            })
            .expect("an answer")
    }

    pub async fn undo(&mut self) -> Result<Undone, String> {
        self.going_back(Command::Undo).await
    }

    pub async fn rewind(&mut self, to: u32, files: bool, conversation: bool) -> Result<Undone, String> {
        self.going_back(Command::Rewind { to, files, conversation }).await
    }

    pub async fn overwrite_kept(&mut self) -> Result<Undone, String> {
        self.going_back(Command::OverwriteKept).await
    }

    /// A new session from this one before turn `to`: its id, or the error said.
    pub async fn fork(&mut self, to: u32, files: bool) -> Result<String, String> {
        let said = self.carry(Command::Fork { to, files }, &CancellationToken::new()).await;
        said.into_iter()
            .find_map(|e| match e {
                Event::Forked { id, .. } => Some(Ok(id)),
                Event::Error { message } => Some(Err(message)),
                _ => None,
            })
            .expect("an answer")
    }

    /// A compaction, carried out: the error said, if one was.
    pub async fn compact(&mut self, cancel: &CancellationToken) -> Result<(), String> {
        let said = self.carry(Command::Compact, cancel).await;
        said.into_iter()
            .find_map(|e| match e {
                Event::Error { message } => Some(Err(message)),
                _ => None,
            })
            .unwrap_or(Ok(()))
    }

    /// Waits for what the session says unasked (a job's note waking it) until `until` matches
    /// one; fails after `limit`.
    pub async fn until(&mut self, limit: std::time::Duration, until: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let said = tokio::time::timeout(limit, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("waited in vain; saw {seen:#?}"))
                .expect("the session is open");
            let done = until(&said.event);
            seen.push(said.event.clone());
            self.heard(said.event).await;
            if done {
                return seen;
            }
        }
    }

    /// Closes the session as `lembas run` does when nobody comes back later: the jobs its last
    /// turn started may end first, their notes waking it. Why the last turn it took ended.
    pub async fn settle(&mut self, limit: std::time::Duration) -> Option<DoneReason> {
        self.handle.send(Command::Close { wait_for_jobs: Some(limit.as_secs()) });
        let said = self.until(limit, |e| matches!(e, Event::Closed)).await;
        said.iter().rev().find_map(|e| match e {
            Event::Done { reason, .. } => Some(*reason),
            _ => None,
        })
    }

    /// The next thing the session says unasked within `limit`, if it says one.
    pub async fn said_within(&mut self, limit: std::time::Duration) -> Option<Event> {
        let said = tokio::time::timeout(limit, self.events.recv()).await.ok()??;
        self.heard(said.event.clone()).await;
        Some(said.event)
    }

    /// Closes the session, as a front end that leaves does, and waits until it has.
    pub async fn close(self) {
        self.handle.close().await;
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
