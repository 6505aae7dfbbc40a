//! `lembas run` on the short scripted task the project's bar is set on: read a file, edit it,
//! run a command, answer — against the test kit's fake server answering at once.
//!
//! Measures, over several runs (median): the time from starting the process to the model's
//! first request; the time per step from then to the process's exit (harness, tools and the
//! loopback round trip); the peak memory of the process; and the size of the system prompt plus
//! the tool schemas as sent.
//!
//! `cargo bench -p lembas --bench cli_run`

mod common;

use std::time::Duration;

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

const RUNS: usize = 10;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

/// One run of the task: start to first request, time per step, and the first request's system
/// prompt plus tool schemas in characters. With `subagents_off`, the configuration switches
/// subagents off (no `task`, no team). With `home`, that home (already used, as a person's is);
/// without, a new one (lembas' first start on a machine: its session store made).
fn one_run(
    runtime: &tokio::runtime::Runtime,
    subagents_off: bool,
    home: Option<&std::path::Path>,
) -> (f64, f64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("main.py"), "print('helo')\n").unwrap();
    let script = vec![
        Scripted::tool_call("read", json!({"path": "main.py"})),
        Scripted::tool_call("edit", json!({"path": "main.py", "old_string": "helo", "new_string": "hello"})),
        Scripted::tool_call("bash", json!({"command": "cat main.py"})),
        Scripted::text("Fixed the typo; it prints hello."),
    ];
    let server = runtime.block_on(FakeServer::start(script));
    let home = home.map_or_else(|| dir.path().join("home"), std::path::Path::to_path_buf);
    common::log_in(&home, &server, 32768);
    if subagents_off {
        std::fs::write(home.join("config/config.toml"), "subagents = false\n").unwrap();
    }

    let (start, end) = common::run(&home, &project, "fix the typo in main.py");
    let chats = common::chats(&server);
    assert_eq!(chats.len(), 4);
    let first_at = chats[0].at;
    let body = &chats[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap_or("").chars().count();
    let tools = serde_json::to_string(&body["tools"]).unwrap_or_default().chars().count();
    ((first_at - start).as_secs_f64() * 1000.0, (end - first_at).as_secs_f64() * 1000.0 / 4.0, system + tools)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (mut first, mut per_step) = (Vec::new(), Vec::new());
    let mut with_team = 0;
    for _ in 0..RUNS {
        let (to_first, step, chars) = one_run(&runtime, false, None);
        first.push(to_first);
        per_step.push(step);
        with_team = chars;
        std::thread::sleep(Duration::from_millis(20));
    }
    // A person's home: used once before, then a new project each run.
    let used = tempfile::tempdir().unwrap();
    one_run(&runtime, false, Some(used.path()));
    let (mut first_used, mut per_step_used) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (to_first, step, _) = one_run(&runtime, false, Some(used.path()));
        first_used.push(to_first);
        per_step_used.push(step);
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, _, alone) = one_run(&runtime, true, None);
    println!(
        "cli_run ({RUNS} runs each, median): start to first request {:.1} ms in a home used before ({:.1} ms on the first start, a new home); {:.1} ms per step ({:.1} ms) (harness, tool and loopback HTTP); peak memory {:.1} MB (largest run); system prompt + tool schemas {with_team} characters with the team offered, {alone} with subagents off",
        median(first_used),
        median(first),
        median(per_step_used),
        median(per_step),
        common::peak_rss_kb_of_children() as f64 / 1024.0,
    );
}
