//! What the `lembas run` benchmarks share: a home logged in to the fake server, one quiet run of
//! the real binary, and the chat requests the server got. Each bench uses some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use lembas_testkit::{FakeServer, Recorded};
use serde_json::json;

/// A home at `home` logged in to `server`, its one model with a `context` window.
pub fn log_in(home: &Path, server: &FakeServer, context: u64) {
    let login = json!({ "kind": "open_ai", "server": server.url(), "base_url": server.base_url(),
                        "models": [{ "id": "fake-model", "context": context }] });
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/credentials.json"), login.to_string()).unwrap();
}

/// `lembas run --mode auto PROMPT` in `project`, silently: when it started and when it exited.
pub fn run(home: &Path, project: &Path, prompt: &str) -> (Instant, Instant) {
    run_with(home, project, &[prompt])
}

/// `lembas run --mode auto` with `args` (a prompt, `--continue`, …) in `project`, silently:
/// when it started and when it exited.
pub fn run_with(home: &Path, project: &Path, args: &[&str]) -> (Instant, Instant) {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["run", "--mode", "auto"])
        .args(args)
        .current_dir(project)
        .env("LEMBAS_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let end = Instant::now();
    assert!(status.success());
    (start, end)
}

/// The chat requests the server got, in order.
pub fn chats(server: &FakeServer) -> Vec<Recorded> {
    server.recorded().into_iter().filter(|r| r.path == "/v1/chat/completions").collect()
}

/// The peak memory of the processes this one started.
pub fn peak_rss_kb_of_children() -> i64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).map(|u| u.max_rss()).unwrap_or(0)
}
