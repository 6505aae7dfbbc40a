//! A team under load: `lembas run` whose main agent adds three subagents at once, each of which
//! works for 50 steps (49 reads, then its report) side by side, against the test kit's fake
//! server answering at once; the reports wake the main agent, which answers.
//!
//! Measures the process's peak memory and the harness time per step: the run's wall time from
//! the first request to the exit, over every request made (main agent and subagents), with the
//! three subagents' steps overlapping.
//!
//! `cargo bench -p lembas --bench team_load`

mod common;

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const MEMBERS: usize = 3;
const STEPS: usize = 50;

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
    common::log_in(&home, &server, 1_000_000);

    let (start, end) = common::run(&home, &project, "read every module, with helpers");
    let chats = common::chats(&server);
    let expected = 2 + MEMBERS * STEPS;
    assert!(chats.len() >= expected, "{} requests, expected at least {expected}", chats.len());
    let first = chats[0].at;
    println!(
        "team_load ({MEMBERS} subagents × {STEPS} steps, side by side): {} requests in {:.0} ms from the first to the exit — {:.2} ms of wall time per step; start to first request {:.1} ms; peak memory {:.1} MB",
        chats.len(),
        (end - first).as_secs_f64() * 1000.0,
        (end - first).as_secs_f64() * 1000.0 / chats.len() as f64,
        (first - start).as_secs_f64() * 1000.0,
        common::peak_rss_kb_of_children() as f64 / 1024.0,
    );
}
