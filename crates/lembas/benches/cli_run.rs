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

/// One run's figures.
struct Run {
    to_first: f64,
    per_step: f64,
    /// From the request that asks for the read to the one that carries the file.
    read_step: f64,
    /// From the request that asks for the command to the one that carries its result: the
    /// harness (the sandbox, the scan for what it left) and `cat` itself.
    bash_step: f64,
    chars: usize,
}

/// One run of the task: start to first request, time per step, the command's step, and the
/// first request's system prompt plus tool schemas in characters. With `subagents_off`, the configuration switches
/// subagents off (no `task`, no team). With `home`, that home (already used, as a person's is);
/// without, a new one (lembas' first start on a machine: its session store made).
fn one_run(runtime: &tokio::runtime::Runtime, subagents_off: bool, home: Option<&std::path::Path>) -> Run {
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
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    Run {
        to_first: ms(first_at - start),
        per_step: ms(end - first_at) / 4.0,
        read_step: ms(chats[1].at - chats[0].at),
        bash_step: ms(chats[3].at - chats[2].at),
        chars: system + tools,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (mut first, mut per_step, mut read, mut bash) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut with_team = 0;
    for _ in 0..RUNS {
        let run = one_run(&runtime, false, None);
        first.push(run.to_first);
        per_step.push(run.per_step);
        read.push(run.read_step);
        bash.push(run.bash_step);
        with_team = run.chars;
        std::thread::sleep(Duration::from_millis(20));
    }
    // A person's home: used once before, then a new project each run — and, as a person's, not
    // in the folder the projects are made in (a folder along the way to lembas' own folders that
    // changes as a command starts has its read grants worked out again: docs/permissions.md).
    let used = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    one_run(&runtime, false, Some(used.path()));
    let (mut first_used, mut per_step_used) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let run = one_run(&runtime, false, Some(used.path()));
        first_used.push(run.to_first);
        per_step_used.push(run.per_step);
        read.push(run.read_step);
        bash.push(run.bash_step);
        std::thread::sleep(Duration::from_millis(20));
    }
    let alone = one_run(&runtime, true, None).chars;
    println!(
        "cli_run ({RUNS} runs each, median): start to first request {:.1} ms in a home used before ({:.1} ms on the first start, a new home); {:.1} ms per step ({:.1} ms) (harness, tool and loopback HTTP), the read's step {:.1} ms, the command's (sandboxed `cat`) {:.1} ms; peak memory {:.1} MB (largest run); system prompt + tool schemas {with_team} characters with the team offered, {alone} with subagents off",
        median(first_used),
        median(first),
        median(per_step_used),
        median(per_step),
        median(read),
        median(bash),
        common::peak_rss_kb_of_children() as f64 / 1024.0,
    );
}
