//! Resuming a long session: `lembas run --continue` on a session of 1,000 steps (a `read` of a
//! new file and a command in turn, over five prompts of 200 steps), against the test kit's fake
//! server answering at once. Measures the time from starting the process to the model's first
//! request (median of several runs), beside a fresh session's in the same project, and the peak
//! memory of the runs that made and resumed the session (each holds its whole history).
//!
//! `cargo bench -p lembas --bench resume` (`RESUME_PROMPTS=25` for 5,000 steps, 10,000 messages;
//! `RESUME_KEEP=1` keeps the home and project it made, and says where)

mod common;

use std::time::Instant;

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

/// Prompts of 200 steps in the session: five unless `RESUME_PROMPTS` says.
fn prompts() -> usize {
    std::env::var("RESUME_PROMPTS").ok().and_then(|v| v.parse().ok()).unwrap_or(5)
}
const STEPS_PER_PROMPT: usize = 200;
const RUNS: usize = 7;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `lembas run` with `args` in `project`: when it started.
fn run(home: &std::path::Path, project: &std::path::Path, args: &[&str]) -> Instant {
    common::run_with(home, project, args).0
}

/// The median time of a prompt's `read` steps and of its command steps, from one request to
/// the next (the model answers at once: the harness, the tool, the loopback).
struct StepTimes {
    read: f64,
    command: f64,
}

fn step_times(chats: &[lembas_testkit::Recorded], prompts: usize) -> Vec<StepTimes> {
    (0..prompts)
        .map(|p| {
            let requests = &chats[p * (STEPS_PER_PROMPT + 1)..(p + 1) * (STEPS_PER_PROMPT + 1)];
            let (mut read, mut command) = (Vec::new(), Vec::new());
            // The reply to request `n` is a `read` when `n` is even, a command when odd; its
            // step ends when request `n + 1` comes. The first two steps warm up.
            for n in 2..STEPS_PER_PROMPT {
                let ms = (requests[n + 1].at - requests[n].at).as_secs_f64() * 1000.0;
                if n % 2 == 0 { read.push(ms) } else { command.push(ms) }
            }
            StepTimes { read: median(read), command: median(command) }
        })
        .collect()
}

/// What the step's command takes on its own, started from this small process.
fn command_alone() -> f64 {
    let times = (0..100)
        .map(|_| {
            let start = Instant::now();
            let out = std::process::Command::new("bash").args(["-c", "echo 1"]).output().unwrap();
            assert!(out.status.success());
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    median(times)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    for n in 0..STEPS_PER_PROMPT {
        std::fs::write(project.join(format!("f{n}.txt")), format!("file {n}\n{}\n", "words ".repeat(20))).unwrap();
    }
    let prompts = prompts();
    let mut script = Vec::new();
    for _ in 0..prompts {
        for n in 0..STEPS_PER_PROMPT {
            script.push(if n % 2 == 0 {
                Scripted::tool_call("read", json!({"path": format!("f{n}.txt")}))
            } else {
                Scripted::tool_call("bash", json!({"command": format!("echo {n}")}))
            });
        }
        script.push(Scripted::text("Done."));
    }
    // Then one reply for each measured run, fresh or resumed.
    script.extend((0..2 * RUNS).map(|_| Scripted::text("Again.")));
    let server = runtime.block_on(FakeServer::start(script));
    server.keep_bodies(false);
    let home = dir.path().join("home");
    common::log_in(&home, &server, 10_000_000);
    std::fs::write(home.join("config/config.toml"), "steps = 1000\n").unwrap();
    run(&home, &project, &["walk the files"]);
    for _ in 1..prompts {
        run(&home, &project, &["--continue", "again"]);
    }
    let made = common::chats(&server);
    assert_eq!(made.len(), prompts * (STEPS_PER_PROMPT + 1), "the long session was made");
    let steps_timed = step_times(&made, prompts);
    // The last prompt's run held the whole session (it resumed what the others made) by its end.
    let made_peak = common::peak_rss_kb_of_children();
    let first_request = |args: &[&str]| {
        let before = common::chats(&server).len();
        let start = run(&home, &project, args);
        let chats = common::chats(&server);
        (chats[before].at - start).as_secs_f64() * 1000.0
    };
    let (mut resumed, mut fresh) = (Vec::new(), Vec::new());
    // Every resumed run first: a fresh session would be the one `--continue` takes next.
    for _ in 0..RUNS {
        resumed.push(first_request(&["--continue", "one more"]));
    }
    for _ in 0..RUNS {
        fresh.push(first_request(&["a new one"]));
    }
    let steps = prompts * STEPS_PER_PROMPT;
    println!(
        "resume ({steps} steps, median of {RUNS}): start to first request {:.1} ms resumed, {:.1} ms for a fresh session",
        median(resumed),
        median(fresh)
    );
    println!(
        "peak memory of a run holding the session ({steps} steps, {} messages): {:.1} MB",
        2 * steps + 2 * prompts,
        made_peak as f64 / 1024.0
    );
    let (first, last) = (&steps_timed[0], &steps_timed[prompts - 1]);
    println!(
        "a step while the session was made (median): `read` {:.2} ms in steps 1-200, {:.2} ms in the last 200; \
         a command (`bash`, `echo`, sandboxed) {:.2} and {:.2} ms, of it the command alone {:.2} ms \
         (`bash -c 'echo 1'` started here, by `posix_spawn`)",
        first.read,
        last.read,
        first.command,
        last.command,
        command_alone()
    );
    if std::env::var_os("RESUME_KEEP").is_some() {
        println!("kept: {}", dir.keep().display());
    }
}
