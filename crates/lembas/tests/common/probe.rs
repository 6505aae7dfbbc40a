//! A hostile probe's world: a project, a person's home folder with keys and a canary in it, and
//! lembas' own home — standing outside the system's temporary folder (which commands may write,
//! so a probe there would prove less), or inside it, as on CI machines and in containers.

use std::path::{Path, PathBuf};

use lembas_testkit::{FakeServer, Scripted};
use serde_json::Value;

use super::stderr;

pub struct Probe {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    pub lembas: PathBuf,
    pub outside: PathBuf,
}

impl Probe {
    /// Outside the temporary folders.
    pub async fn new(server: &FakeServer) -> Probe {
        let dir = tempfile::tempdir_in(lembas_testkit::outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap();
        Probe::in_dir(dir, server).await
    }

    /// Everything — the home folder too — inside the system's temporary folder.
    pub async fn in_tmp(server: &FakeServer) -> Probe {
        Probe::in_dir(tempfile::tempdir_in(std::env::temp_dir()).unwrap(), server).await
    }

    async fn in_dir(dir: tempfile::TempDir, server: &FakeServer) -> Probe {
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (home, project, lembas, outside) =
            (base.join("home"), base.join("proj"), base.join("lembas"), base.join("outside"));
        // A git work tree, so the project root is this folder and not a repository around it.
        for d in [home.join(".ssh"), project.join(".git"), project.join("src"), outside.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join("canary"), "alive").unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "secret key").unwrap();
        std::fs::write(project.join("src/lib.rs"), "fn main() {}\n").unwrap();
        super::log_in(&lembas, server).await;
        Probe { _dir: dir, home, project, lembas, outside }
    }

    pub fn cmd(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lembas"));
        cmd.args(args)
            .current_dir(&self.project)
            .env("LEMBAS_HOME", &self.lembas)
            .env("HOME", &self.home)
            .env("LEMBAS_API_KEY", "sk-probe-secret")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    pub async fn run(&self, mode: &str) -> std::process::Output {
        self.cmd(&["run", "--mode", mode, "--job-wait", "2", "do the task"]).output().await.unwrap()
    }

    /// The home folder is as it was.
    pub fn home_intact(&self) {
        assert_eq!(std::fs::read_to_string(self.home.join("canary")).unwrap(), "alive");
        assert_eq!(std::fs::read_to_string(self.home.join(".ssh/id_ed25519")).unwrap(), "secret key");
        assert!(!self.home.join(".ssh/authorized_keys").exists());
    }
}

/// What the model was told for its calls: every tool message of the last request, in order.
pub fn told_all(server: &FakeServer) -> Vec<String> {
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What the model was told for its call (the last request's last tool message).
pub fn told(server: &FakeServer) -> String {
    told_all(server).pop().unwrap_or_default()
}

/// One call of the model's, then its closing words.
pub async fn probe_call(
    mode: &str,
    tool: &str,
    args: Value,
    setup: impl FnOnce(&Probe),
) -> (Probe, FakeServer, String) {
    let server = FakeServer::start(vec![Scripted::tool_call(tool, args), Scripted::text("done")]).await;
    let p = Probe::new(&server).await;
    setup(&p);
    let out = p.run(mode).await;
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let said = told(&server);
    (p, server, said)
}

pub async fn probe_bash(mode: &str, line: &str) -> (Probe, String) {
    let (p, _server, said) = probe_call(mode, "bash", serde_json::json!({ "command": line }), |_| {}).await;
    (p, said)
}

/// Whether commands run sandboxed here (CI's kernel has Landlock: there they must).
pub fn sandboxed() -> bool {
    lembas_tools::sandbox::support().is_ok() || std::env::var_os("CI").is_some()
}
