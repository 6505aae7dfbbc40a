//! A team under load: `lembas run` whose main agent adds three subagents at once, each of which
//! works for 50 steps (49 reads, then its report) side by side, against the test kit's fake
//! server answering at once; the reports wake the main agent, which answers.
//!
//! Measures the process's peak memory and the harness time per step: the run's wall time from
//! the first request to the exit, over every request made (main agent and subagents), with the
//! three subagents' steps overlapping.
//!
//! `cargo bench -p lembas --bench team_load`

use std::process::{Command, Stdio};
use std::time::Instant;

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const MEMBERS: usize = 3;
const STEPS: usize = 50;

fn peak_rss_kb_of_children() -> i64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).map(|u| u.max_rss()).unwrap_or(0)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    for n in 0..20 {
        std::fs::write(project.join(format!("m{n}.rs")), format!("pub fn f{n}() -> u32 {{\n    {n}\n}}\n")).unwrap();
    }
    let mut add = Scripted::text("");
    for m in 0..MEMBERS {
        let args = json!({"name": format!("w{m}"), "role": "reads the modules", "task": "Read every module.", "goal": "know the modules"});
        add = add.with_call("team_add", &args.to_string());
    }
    let mut lead = vec![add, Scripted::text("They are at work.")];
    lead.extend((0..MEMBERS).map(|_| Scripted::text("Noted.")));
    let server = runtime.block_on(FakeServer::start(lead));
    server.keep_bodies(false);
    for m in 0..MEMBERS {
        let mut steps: Vec<Scripted> = (0..STEPS - 1)
            .map(|s| Scripted::tool_call("read", json!({"path": format!("m{}.rs", s % 20), "offset": 1 + s / 20})))
            .collect();
        steps.push(Scripted::text(format!("w{m}: read all twenty modules.")));
        server.route(&format!("You are \"w{m}\" (s{})", m + 1), steps);
    }
    let home = dir.path().join("home");
    let login = json!({ "kind": "open_ai", "server": server.url(), "base_url": server.base_url(),
                        "models": [{ "id": "fake-model", "context": 1_000_000 }] });
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/credentials.json"), login.to_string()).unwrap();

    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["run", "--mode", "auto", "read every module, with helpers"])
        .current_dir(&project)
        .env("LEMBAS_HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let end = Instant::now();
    assert!(status.success());
    let chats: Vec<_> = server.recorded().into_iter().filter(|r| r.path == "/v1/chat/completions").collect();
    let expected = 2 + MEMBERS * STEPS;
    assert!(chats.len() >= expected, "{} requests, expected at least {expected}", chats.len());
    let first = chats[0].at;
    println!(
        "team_load ({MEMBERS} subagents × {STEPS} steps, side by side): {} requests in {:.0} ms from the first to the exit — {:.2} ms of wall time per step; start to first request {:.1} ms; peak memory {:.1} MB",
        chats.len(),
        (end - first).as_secs_f64() * 1000.0,
        (end - first).as_secs_f64() * 1000.0 / chats.len() as f64,
        (first - start).as_secs_f64() * 1000.0,
        peak_rss_kb_of_children() as f64 / 1024.0,
    );
}
