//! Bounds that hold against a command or a file that would never end: what read refuses, how
//! much of a job's output is kept, and that nothing a command started outlives it.

use std::time::Duration;

use lembas_tools::{JobState, Jobs, ToolOutput, Workspace, run_bash, run_file_tool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let (ws, _) = Workspace::new(dir.path(), dir.path());
    (dir, ws)
}

/// Whether a process whose command line holds `word` is alive (not a zombie).
fn alive(word: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
        !zombie && String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(word)
    })
}

#[test]
fn read_refuses_what_is_not_a_regular_file() {
    let (dir, ws) = project();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for path in [fifo.display().to_string(), "/dev/zero".to_owned()] {
        let out = run_file_tool(&ws, "read", &json!({ "path": path }));
        assert!(matches!(&out, ToolOutput::Error(e) if e.contains("not a regular file")), "{out:?}");
    }
}

#[tokio::test]
async fn a_jobs_log_keeps_its_last_megabytes_and_says_what_it_dropped() {
    let (dir, ws) = project();
    let jobs = Jobs::new(dir.path().join("jobs"));
    // 40 MB of output, far past what a log keeps.
    let out = run_bash(
        &ws,
        &json!({"command": "yes 0123456789abcdef | head -c 41943040; echo; echo the-end", "background": true}),
        &CancellationToken::new(),
        Some(&jobs),
    )
    .await;
    assert!(matches!(&out, ToolOutput::Text(t) if t.starts_with("Started job1")), "{out:?}");
    for _ in 0..300 {
        if !jobs.any_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(jobs.take_ended()[0].state, JobState::Exited(0));
    let log = std::fs::metadata(dir.path().join("jobs/job1.log")).unwrap().len();
    assert!(log <= 2 * lembas_tools::JOB_LOG_KEEP, "{log}");
    let first = jobs.output("job1", Duration::ZERO).await.unwrap();
    assert!(
        first.starts_with("(") && first.contains("bytes of output were dropped before they were read"),
        "{}",
        &first[..200]
    );
    let mut last = first;
    for _ in 0..200 {
        let next = jobs.output("job1", Duration::ZERO).await.unwrap();
        if next.contains("no new output") {
            break;
        }
        last = next;
    }
    assert!(last.contains("the-end"), "{}", &last[last.len().saturating_sub(200)..]);
}

#[tokio::test]
async fn nothing_a_command_started_outlives_it() {
    let (_dir, ws) = project();
    // One child in the background of the command's group, one escaped into a session of its own.
    let out = run_bash(
        &ws,
        &json!({"command": "sleep 41.17 & setsid sleep 41.18 & nohup sleep 41.19 >/dev/null 2>&1 & echo started"}),
        &CancellationToken::new(),
        None,
    )
    .await;
    assert!(matches!(&out, ToolOutput::Text(t) if t.contains("started")), "{out:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    for word in ["sleep 41.17", "sleep 41.18", "sleep 41.19"] {
        assert!(!alive(word), "{word} outlived its command");
    }
}

#[tokio::test]
async fn a_stopped_job_ends_what_escaped_its_group() {
    let (dir, ws) = project();
    let jobs = Jobs::new(dir.path().join("jobs"));
    run_bash(
        &ws,
        &json!({"command": "setsid sleep 42.5 & sleep 60", "background": true}),
        &CancellationToken::new(),
        Some(&jobs),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(alive("sleep 42.5"));
    jobs.stop("job1").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive("sleep 42.5"));
}

#[test]
fn grep_says_which_files_it_did_not_search_and_never_waits_on_a_pipe() {
    let (dir, ws) = project();
    std::fs::write(dir.path().join("big.log"), "needle\n".repeat(2 * 1024 * 1024)).unwrap();
    std::fs::write(dir.path().join("small.txt"), "hay\n").unwrap();
    assert!(std::process::Command::new("mkfifo").arg(dir.path().join("pipe")).status().unwrap().success());
    let out = run_file_tool(&ws, "grep", &json!({ "pattern": "needle" }));
    let ToolOutput::Text(text) = out else { panic!("{out:?}") };
    // What was not searched comes first: a model reads the first words.
    assert!(text.starts_with("(not searched, over 8 MB:") && text.contains("big.log"), "{text}");
    assert!(text.contains("No matches for needle in the 1 other file under"), "{text}");
}
