//! Set-up shared by the tests that drive the real `lembas` binary.

#![allow(dead_code)]

pub mod probe;
pub mod tmux;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use tokio::process::Command;

use lembas_testkit::FakeServer;

/// Logs the binary in to the fake server, with its state in `home`.
pub async fn log_in(home: &Path, server: &FakeServer) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["login", &server.url()])
        .env("LEMBAS_HOME", home)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A project (a git work tree with a note in it) and a LEMBAS_HOME of its own.
pub struct Env {
    pub _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(project.join("notes.txt"), "remember the milk\n").unwrap();
        Env { _dir: dir, home, project }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lembas"));
        cmd.args(args)
            .current_dir(&self.project)
            .env("LEMBAS_HOME", &self.home)
            .env_remove("LEMBAS_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().await.unwrap()
    }

    pub async fn login(&self, server: &FakeServer) {
        let out = self.run(&["login", &server.url()]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Logs in to the test kit's LLeMbas instance with its token on standard input, as LLeMbas
    /// Desktop hands one over (`lembas login --token-stdin --server URL`).
    pub async fn login_with_token(&self, server: &FakeServer) {
        use tokio::io::AsyncWriteExt;
        let mut login = self.cmd(&["login", "--token-stdin", "--server", &server.url()]);
        let mut child = login.stdin(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(b"lmb_test_token").await.unwrap();
        let out = child.wait_with_output().await.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Puts `lines` at the top of `config.toml`, before any table it has.
    pub fn config_first(&self, lines: &str) {
        let config = self.home.join("config/config.toml");
        let before = std::fs::read_to_string(&config).unwrap_or_default();
        std::fs::write(&config, format!("{lines}\n{before}")).unwrap();
    }
}

/// A LLeMbas instance (the test kit's), logged in to by token; remote work allowed in the folder
/// holding the project, with `remote` lines of its own added to `[remote]`, the project trusted
/// when `trust`.
pub async fn linked_with(script: Vec<lembas_testkit::Scripted>, remote: &str, trust: bool) -> (FakeServer, Env) {
    let server = FakeServer::start(script).await;
    server.set_llembas(lembas_testkit::Llembas::default());
    let env = Env::new();
    env.login_with_token(&server).await;
    let root = env.project.parent().unwrap().to_path_buf();
    let out = env.run(&["remote", "roots", "add", root.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let config = std::fs::read_to_string(env.home.join("config/config.toml")).unwrap();
    let config = config.replace("[remote]", &format!("[remote]\n{remote}"));
    std::fs::write(env.home.join("config/config.toml"), config).unwrap();
    if trust {
        let out = env.run(&["trust", env.project.to_str().unwrap()]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    (server, env)
}

/// `lembas service` running, and the link it opened to the test kit's server.
pub async fn service(server: &FakeServer, env: &Env) -> (tokio::process::Child, lembas_testkit::DeviceLink) {
    let child = env.cmd(&["service"]).spawn().unwrap();
    let link = server.next_link(std::time::Duration::from_secs(20)).await.expect("the service dials the link");
    (child, link)
}

/// `initialize` on the link, as a client of lembas' protocol sends it.
pub async fn initialize(link: &mut lembas_testkit::DeviceLink) -> serde_json::Value {
    let params =
        serde_json::json!({ "protocolVersion": 1, "clientCapabilities": { "_meta": { "lembas": { "protocol": 3 } } } });
    link.request("initialize", params).await
}

/// Opens a session in `mode` on the link and sends `words` as a prompt (request id 70),
/// answered later; the session's id.
pub async fn prompted(link: &mut lembas_testkit::DeviceLink, env: &Env, mode: &str, words: &str) -> String {
    let opened = link
        .request("session/new", serde_json::json!({ "cwd": env.project, "mcpServers": [], "_meta": { "mode": mode } }))
        .await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    link.send(&serde_json::json!({ "jsonrpc": "2.0", "id": 70, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": words}] } }));
    id
}

/// `lembas service` running, its hello read and the link initialized by a client of lembas'
/// protocol.
pub async fn ready(server: &FakeServer, env: &Env) -> (tokio::process::Child, lembas_testkit::DeviceLink) {
    let (child, mut link) = service(server, env).await;
    assert_eq!(link.recv().await.unwrap()["method"], "_lembas/hello");
    initialize(&mut link).await;
    (child, link)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
