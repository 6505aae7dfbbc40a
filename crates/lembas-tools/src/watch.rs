//! A schedule's watch command (`acp.md` *Monitor mode*): `bash -c` in its folder and its own
//! process group, with no input, standard output and standard error one stream (one pipe, so
//! their order is the order they were written), each chunk handed on as it comes — the caller
//! hashes all of it and keeps what it wants — and the whole group stopped at the timeout.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::process::Io;
use crate::sandbox::Sandbox;

/// How a watch command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchEnd {
    /// Its exit status; `None` on a signal or the timeout.
    pub exit: Option<i32>,
    /// The signal that ended it, when one did (before the timeout).
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
}

/// Runs `command` in `cwd` inside `sandbox` for at most `timeout`, handing each chunk of its
/// output to `on_output` as it is read.
pub async fn watch(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    sandbox: &Sandbox,
    mut on_output: impl FnMut(&[u8]) + Send + 'static,
) -> Result<WatchEnd, String> {
    let (reader, writer) = std::io::pipe().map_err(|e| format!("no pipe for the watch command: {e}"))?;
    let both = writer.try_clone().map_err(|e| format!("no pipe for the watch command: {e}"))?;
    let stdio = crate::bash::BashStdio {
        stdin: Io::Null,
        stdout: Io::Given(std::os::fd::OwnedFd::from(writer)),
        stderr: Io::Given(std::os::fd::OwnedFd::from(both)),
    };
    let started = Instant::now();
    // The command holds the pipe's writing ends now; ours went with the `Launch`.
    let (mut child, pgid, mark) = crate::bash::spawn_bash(command, cwd, stdio, sandbox)?;
    let read = tokio::task::spawn_blocking(move || {
        let mut reader = reader;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => on_output(&chunk[..n]),
            }
        }
    });
    let (status, timed_out) = tokio::select! {
        status = child.wait() => (Some(status.map_err(|e| format!("waiting for bash failed: {e}"))?), false),
        () = tokio::time::sleep(timeout) => (None, true),
    };
    let exit = status.and_then(|s| s.code());
    let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    // What the command left running ends with it (or with the timeout), so the pipe closes.
    crate::bash::stop_group(pgid).await;
    let _ = child.kill().await;
    crate::reaper::end_marked(&mark, false);
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    Ok(WatchEnd { exit, signal, timed_out, duration: started.elapsed() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    async fn watched(command: &str, timeout: Duration) -> (WatchEnd, Vec<u8>) {
        let out = Arc::new(Mutex::new(Vec::new()));
        let kept = out.clone();
        let end = watch(command, Path::new("/"), timeout, &Sandbox::none(), move |b| kept.lock().unwrap().extend(b))
            .await
            .unwrap();
        let bytes = out.lock().unwrap().clone();
        (end, bytes)
    }

    #[tokio::test]
    async fn output_and_errors_are_one_stream_in_the_order_written() {
        let (end, out) = watched("echo one; echo two >&2; echo three; exit 3", Duration::from_secs(10)).await;
        assert_eq!(String::from_utf8(out).unwrap(), "one\ntwo\nthree\n");
        assert_eq!((end.exit, end.timed_out), (Some(3), false));
    }

    #[tokio::test]
    async fn a_command_past_its_timeout_is_stopped_with_what_it_left_running() {
        let (end, out) = watched("echo started; (sleep 30 &); sleep 30", Duration::from_millis(500)).await;
        assert_eq!(String::from_utf8(out).unwrap(), "started\n");
        assert_eq!((end.exit, end.timed_out), (None, true));
        assert!(end.duration < Duration::from_secs(10), "{:?}", end.duration);
    }
}
