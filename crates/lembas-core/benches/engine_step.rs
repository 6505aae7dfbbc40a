//! The engine's time per step and its memory after many steps.
//!
//! One prompt of `STEPS` steps against the test kit's fake server answering at once, each step a
//! tool call (read, grep, list in turn) on a small project, the session stored in a real SQLite
//! file. The time per step is an upper bound of the harness's own time: it includes the loopback
//! HTTP round trip, the fake server and the tool itself. The harness's own time is the CPU time
//! of the engine's threads alone (the fake server runs on threads of its own runtime), tools
//! included. Memory is this process's resident size (the fake server runs in it too, and keeps
//! no request bodies).
//!
//! `cargo bench -p lembas-core --bench engine_step`

use std::sync::Arc;
use std::time::Instant;

use lembas_core::{Command, DoneReason, Event, Host, OpenSession, Opened, SessionConfig, Start};
use lembas_model::{ClientConfig, ModelClient};
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_store::Store;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const STEPS: usize = 1000;

fn rss_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The engine runtime's threads, by their `/proc/self/task` id.
static ENGINE_THREADS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// CPU time the engine's threads have had so far (`schedstat`'s first field, in ns).
fn engine_cpu_ns() -> u64 {
    let threads = ENGINE_THREADS.lock().unwrap().clone();
    threads
        .iter()
        .filter_map(|tid| std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn main() {
    // The fake server on its own threads, so that the engine's threads run only the engine.
    let server_runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(|| {
            let me = std::fs::read_link("/proc/thread-self").unwrap();
            let tid = me.file_name().unwrap().to_string_lossy().into_owned();
            ENGINE_THREADS.lock().unwrap().push(tid);
        })
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("src")).unwrap();
        for n in 0..20 {
            std::fs::write(root.join(format!("src/m{n}.rs")), format!("pub fn f{n}() -> u32 {{\n    {n}\n}}\n")).unwrap();
        }
        let mut script = Vec::with_capacity(STEPS + 1);
        for n in 0..STEPS {
            script.push(match n % 3 {
                0 => Scripted::tool_call("read", json!({"path": format!("src/m{}.rs", n % 20)})),
                1 => Scripted::tool_call("grep", json!({"pattern": format!("f{}", n % 20)})),
                _ => Scripted::tool_call("list", json!({"path": "src"})),
            });
        }
        script.push(Scripted::text("Done."));
        let server = server_runtime.spawn(FakeServer::start(script)).await.unwrap();
        server.keep_bodies(false);
        let store = Arc::new(Store::open(&dir.path().join("sessions.db")).unwrap());
        let client = ModelClient::new(ClientConfig::new(server.base_url())).unwrap();
        let model = ModelInfo { id: "fake-model".into(), context: Some(10_000_000), efforts: Some(vec![]), ..Default::default() };
        let jobs = dir.path().join("jobs");
        let mut cfg = SessionConfig::new(store.clone(), client, model, Mode::Auto, jobs, Some(10_000_000));
        cfg.max_steps = STEPS as u32 + 10;
        cfg.compact_at = 0.95;
        cfg.today = Arc::new(|| "2026-12-02".to_owned());
        let before = rss_kb("VmRSS:");
        let host = Host::new(store);
        let start = Start::New { root: root.clone(), cwd: root.clone() };
        let Opened { handle, mut events } = host.open(OpenSession { cfg, start, attended: false }).unwrap();
        let began = Instant::now();
        let asked = handle.send(Command::prompt("walk the project")).unwrap();
        // When each step began, to see whether a step costs more as the session grows.
        let mut steps = Vec::with_capacity(STEPS + 1);
        let done = loop {
            let said = events.recv().await.expect("the session is open");
            match said.event {
                Event::Step { .. } => steps.push((Instant::now(), engine_cpu_ns())),
                Event::Done { reason, .. } if said.submission.as_ref() == Some(&asked) => break reason,
                _ => {}
            }
        };
        let elapsed = began.elapsed();
        assert_eq!(done, DoneReason::Answered);
        // Closed and let go, the store with it: its log is folded in, as when lembas exits.
        handle.close().await;
        drop(host);
        // The mean step around the 200th and around the 1,000th: its time, and the engine's CPU
        // time in it.
        let mean_ms = |from: usize, to: usize| {
            let to = to.min(steps.len().saturating_sub(1));
            let from = from.min(to);
            let count = (to - from).max(1) as f64;
            let wall = (steps[to].0 - steps[from].0).as_secs_f64() * 1000.0 / count;
            let cpu = (steps[to].1 - steps[from].1) as f64 / 1e6 / count;
            (wall, cpu)
        };
        if steps.len() > 250 {
            let (early, late) = (mean_ms(150, 250), mean_ms(steps.len() - 100, steps.len() - 1));
            println!(
                "engine_step: steps 150–250 {:.2} ms each, steps {}–{} {:.2} ms each",
                early.0,
                steps.len() - 100,
                steps.len() - 1,
                late.0
            );
            println!(
                "engine_step: the engine's own CPU time per step: {:.2} ms at steps 150–250, {:.2} ms at the last 100",
                early.1, late.1
            );
        }
        let per_step = elapsed / (STEPS as u32 + 1);
        println!(
            "engine_step: {} steps in {:.2} s: {:.2} ms per step (HTTP, fake model and tool included); RSS {} MB before, {} MB after, peak {} MB",
            STEPS + 1,
            elapsed.as_secs_f64(),
            per_step.as_secs_f64() * 1000.0,
            before / 1024,
            rss_kb("VmRSS:") / 1024,
            rss_kb("VmHWM:") / 1024,
        );
        // What the store keeps for it, against the conversation's own size (the messages as
        // sent): the goal is linear growth, under twice the conversation.
        let db = dir.path().join("sessions.db");
        let on_disk: u64 = ["", "-wal"]
            .iter()
            .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
            .map(|m| m.len())
            .sum();
        let reader = Store::open(&db).unwrap();
        let sessions = reader.list(None).unwrap();
        let conversation: usize =
            sessions.iter().flat_map(|s| reader.messages(&s.id).unwrap()).map(|m| m.json.len()).sum();
        println!(
            "store: {:.1} MB on disk for a {:.1} MB conversation ({:.1}×)",
            on_disk as f64 / 1e6,
            conversation as f64 / 1e6,
            on_disk as f64 / conversation.max(1) as f64
        );
    });
}
