use std::os::unix::process::ExitStatusExt;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// `sh -c script` with its output piped, started, and read to its end with how it ended.
async fn run(script: &str, set: impl FnOnce(&mut Launch)) -> (String, ExitStatus) {
    let mut launch = Launch::new("sh");
    launch.arg("-c").arg(script).stdout(Io::Piped);
    set(&mut launch);
    let mut child = launch.spawn().unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
    let status = child.wait().await.unwrap();
    (out, status)
}

#[tokio::test]
async fn a_command_says_what_it_printed_and_how_it_ended() {
    let (out, status) = run("echo hi; exit 3", |_| {}).await;
    assert_eq!((out.as_str(), status.code()), ("hi\n", Some(3)));
    let (_, status) = run("kill -TERM $$", |_| {}).await;
    assert_eq!(status.signal(), Some(nix::libc::SIGTERM));
}

#[tokio::test]
async fn its_environment_is_lembas_own_changed_and_its_folder_the_one_given() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run("echo \"$ADDED|${HOME:-none}|$PWD\"", |l| {
        l.env("ADDED", "yes").env_remove("HOME").current_dir(dir.path());
    })
    .await;
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(out.trim_end(), format!("yes|none|{}", real.display()));
}

#[tokio::test]
async fn its_input_is_given_and_closed_when_it_is_waited_for() {
    let mut launch = Launch::new("cat");
    launch.stdin(Io::Piped).stdout(Io::Piped);
    let mut child = launch.spawn().unwrap();
    child.stdin.as_mut().unwrap().write_all(b"given\n").await.unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // `cat` ends only when its input does: `wait` closes it.
    let status = tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await.unwrap().unwrap();
    let mut out = String::new();
    stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!((out.as_str(), status.success()), ("given\n", true));
}

#[tokio::test]
async fn signals_start_as_a_new_program_expects_them() {
    // None blocked, and `SIGPIPE` (which lembas ignores) back to ending the process.
    let (out, _) = run("grep SigBlk /proc/self/status", |_| {}).await;
    assert!(out.trim_end().ends_with(&"0".repeat(16)), "{out}");
    let (_, status) = run("kill -PIPE $$; echo survived", |_| {}).await;
    assert_eq!(status.signal(), Some(nix::libc::SIGPIPE));
}

#[tokio::test]
async fn a_process_group_of_its_own_is_made_when_asked() {
    let (out, _) = run("cut -d' ' -f5 /proc/$$/stat; echo $$", |l| {
        l.process_group();
    })
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], lines[1], "{out}");
}

#[tokio::test]
async fn a_program_that_is_not_there_is_not_found() {
    let missing = Launch::new("/nonexistent/program").spawn().unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    let unnamed = Launch::new("lembas-no-such-program-anywhere").spawn().unwrap_err();
    assert_eq!(unnamed.kind(), std::io::ErrorKind::NotFound);
    let mut nowhere = Launch::new("true");
    nowhere.current_dir("/nonexistent/folder");
    let why = nowhere.spawn().unwrap_err().to_string();
    assert!(why.contains("folder could not be entered"), "{why}");
}

#[tokio::test]
async fn one_killed_ends_and_one_dropped_while_it_runs_leaves_no_zombie() {
    let mut launch = Launch::new("sleep");
    launch.arg("30");
    let mut killed = launch.spawn().unwrap();
    killed.kill().await.unwrap();
    assert_eq!(killed.try_wait().unwrap().and_then(|s| s.signal()), Some(nix::libc::SIGKILL));
    assert_eq!(killed.id(), None);

    let mut launch = Launch::new("sleep");
    launch.arg("0.2");
    let dropped = launch.spawn().unwrap();
    let pid = dropped.id().unwrap();
    drop(dropped);
    let gone = async {
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), gone).await.expect("gathered once it ended");
}
