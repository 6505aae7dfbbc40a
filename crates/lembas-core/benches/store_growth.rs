//! What the session store keeps, and what writing it costs, as a session grows.
//!
//! A scripted model works through turns of four steps each (read, grep, list, answer) on a small
//! project, with the session stored in a real SQLite file. Two runs: 1,000 steps (250 turns,
//! never compacted) and 10,000 steps (2,500 turns, compacted every 250 turns, as a real window
//! would force). For each: the store's size on disk against the conversation's own (every
//! message as stored, compacted ones included), where the bytes are, and the store's own write
//! time per step — early in the session and late, which must be about the same for the growth
//! to be linear.
//!
//! `cargo bench -p lembas-core --bench store_growth` (`-- 1000` for one run only; with
//! `STORE_GROWTH_KEEP=PATH` each run's store is kept as `PATH.STEPS`)

use std::sync::Arc;
use std::time::Instant;

use lembas_core::{Command, DoneReason, Event, Host, OpenSession, Opened, SessionConfig, Start};
use lembas_model::{ClientConfig, ModelClient};
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_store::Store;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const STEPS_PER_TURN: usize = 4;

struct Run {
    steps: usize,
    compact_every: Option<usize>,
}

fn main() {
    let only: Option<usize> = std::env::args().skip(1).find_map(|a| a.parse().ok());
    let runs = [Run { steps: 1_000, compact_every: None }, Run { steps: 10_000, compact_every: Some(250) }];
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    for run in runs.iter().filter(|r| only.is_none_or(|n| n == r.steps)) {
        runtime.block_on(measure(run));
    }
}

async fn measure(run: &Run) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    for n in 0..20 {
        std::fs::write(root.join(format!("src/m{n}.rs")), format!("pub fn f{n}() -> u32 {{\n    {n}\n}}\n")).unwrap();
    }
    let server = FakeServer::start(Vec::new()).await;
    server.keep_bodies(false);
    let db = dir.path().join("sessions.db");
    let store = Arc::new(Store::open(&db).unwrap());
    let client = ModelClient::new(ClientConfig::new(server.base_url())).unwrap();
    let model =
        ModelInfo { id: "fake-model".into(), context: Some(10_000_000), efforts: Some(vec![]), ..Default::default() };
    let mut cfg =
        SessionConfig::new(store.clone(), client, model, Mode::Auto, dir.path().join("jobs"), Some(10_000_000));
    cfg.compact_at = 0.95;
    cfg.today = Arc::new(|| "2026-12-03".to_owned());
    let host = Host::new(store.clone());
    let start = Start::New { root: root.clone(), cwd: root.clone() };
    let Opened { handle, mut events } = host.open(OpenSession { cfg, start, attended: false }).unwrap();
    // What the session says under `command`, up to what ends it.
    let mut carry = async |command: Command, ends: fn(&Event) -> bool| -> Event {
        let asked = handle.send(command).expect("the session is open");
        loop {
            let said = events.recv().await.expect("the session is open");
            if said.submission.as_ref() == Some(&asked) && ends(&said.event) {
                break said.event;
            }
        }
    };
    let turns = run.steps / STEPS_PER_TURN;
    let tenth = turns / 10;
    let (mut early, mut late) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    let started = Instant::now();
    for turn in 0..turns {
        let n = turn % 20;
        server.push(Scripted::tool_call("read", json!({"path": format!("src/m{n}.rs")})));
        server.push(Scripted::tool_call("grep", json!({"pattern": format!("f{n}")})));
        server.push(Scripted::tool_call("list", json!({"path": "src"})));
        server.push(Scripted::text(format!("Turn {turn}: m{n}.rs defines f{n}, which answers {n}.")));
        let writing = store.write_time();
        let words = format!("what does m{n}.rs define? (turn {turn})");
        let done = carry(Command::prompt(words), |e| matches!(e, Event::Done { .. })).await;
        assert!(matches!(done, Event::Done { reason: DoneReason::Answered, .. }), "{done:?}");
        let spent = store.write_time() - writing;
        if turn < tenth {
            early += spent;
        } else if turn >= turns - tenth {
            late += spent;
        }
        if run.compact_every.is_some_and(|every| (turn + 1) % every == 0) {
            server.push(Scripted::text(format!("Up to turn {turn} the model read the project's modules.")));
            let compacted =
                carry(Command::Compact, |e| matches!(e, Event::Compacted { .. } | Event::Error { .. })).await;
            assert!(matches!(compacted, Event::Compacted { .. }), "{compacted:?}");
        }
    }
    let elapsed = started.elapsed();
    handle.close().await;
    drop(host);
    let conversation = as_sent(&store);
    drop(store);

    // The write-ahead log folded in first: its size is a cache's, not the session's.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let on_disk: u64 = ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
        .map(|m| m.len())
        .sum();
    let bytes =
        |sql: &str| -> u64 { conn.query_row(sql, [], |r| r.get::<_, Option<i64>>(0)).unwrap().unwrap_or(0) as u64 };
    // The conversation as the model is sent it (each message's wire form, compacted ones
    // included): what the store keeps, however it keeps it. Its messages as stored are the
    // other measure, which shrinks whenever the stored form does.
    let as_stored = bytes("SELECT SUM(length(json)) FROM messages");
    let results = bytes("SELECT SUM(length(text)) FROM results");
    let sessions = bytes("SELECT SUM(length(system_prompt) + length(tools) + length(state)) FROM sessions");
    let checkpoints = bytes("SELECT SUM(length(state)) FROM checkpoints");
    let words = bytes("SELECT SUM(length(text)) FROM said");
    let extra = table_bytes(&conn);
    let per_step = |d: std::time::Duration| d.as_secs_f64() * 1e6 / (tenth * STEPS_PER_TURN) as f64;
    println!(
        "store_growth {} steps ({turns} turns{}): {:.1} s, {:.2} ms per step in all",
        run.steps,
        run.compact_every.map_or(String::new(), |e| format!(", compacted every {e}")),
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / run.steps as f64,
    );
    println!(
        "  store on disk {:.2} MB for a {:.2} MB conversation as sent: {:.2}× ({:.2}× its messages as stored)",
        on_disk as f64 / 1e6,
        conversation as f64 / 1e6,
        on_disk as f64 / conversation.max(1) as f64,
        on_disk as f64 / as_stored.max(1) as f64
    );
    println!(
        "  bytes kept: messages {:.2} MB, their words for search {:.2} MB, results {:.2} MB, session rows {:.2} MB, checkpoints {:.2} MB{extra}",
        as_stored as f64 / 1e6,
        words as f64 / 1e6,
        results as f64 / 1e6,
        sessions as f64 / 1e6,
        checkpoints as f64 / 1e6,
    );
    // To look inside (`sqlite3 FILE "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"`).
    if let Some(keep) = std::env::var_os("STORE_GROWTH_KEEP") {
        std::fs::copy(&db, format!("{}.{}", keep.to_string_lossy(), run.steps)).unwrap();
    }
    println!(
        "  the store's write time per step: {:.0} µs in the first tenth, {:.0} µs in the last",
        per_step(early),
        per_step(late)
    );
}

/// Every stored message's wire form, summed (read through the store, which keeps a message's
/// JSON shorter than it gives it back).
fn as_sent(store: &Store) -> u64 {
    let sessions = store.list(None).unwrap();
    sessions
        .iter()
        .flat_map(|session| store.said(&session.id).unwrap())
        .map(|stored| {
            let message: lembas_model::Message = serde_json::from_str(&stored.json).unwrap();
            message.to_wire(false).get().len() as u64
        })
        .sum()
}

/// The tables a newer store has besides the first ones, with the bytes they hold.
fn table_bytes(conn: &rusqlite::Connection) -> String {
    let mut out = String::new();
    for (table, column) in
        [("state_log", "patch"), ("state_snapshots", "state"), ("prefixes", "text"), ("turns", "answer")]
    {
        let sql = format!("SELECT SUM(length({column})) FROM {table}");
        if let Ok(n) = conn.query_row(&sql, [], |r| r.get::<_, Option<i64>>(0)) {
            out.push_str(&format!(", {table} {:.2} MB", n.unwrap_or(0) as f64 / 1e6));
        }
    }
    out
}
