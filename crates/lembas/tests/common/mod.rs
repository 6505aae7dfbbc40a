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
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
