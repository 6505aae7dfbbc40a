//! `bash`: a command in its own process group, stdout and stderr as one stream, with a timeout
//! and cancellation that end the whole group.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::{Args, ToolOutput, Workspace};

/// The default time a command may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a call may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Output kept in memory; the rest is counted and dropped (the session stores what is kept).
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashOutcome {
    Exited(i32),
    Signalled,
    TimedOut(Duration),
    Cancelled,
}

/// Runs `args.command` and answers its output, with a line saying how it ended unless it exited
/// with 0.
pub async fn run_bash(ws: &Workspace, args: &Value, cancel: &CancellationToken) -> ToolOutput {
    match run(ws, &Args(args), cancel).await {
        Ok((text, _)) => ToolOutput::Text(text),
        Err(e) => ToolOutput::Error(e),
    }
}

async fn run(ws: &Workspace, args: &Args<'_>, cancel: &CancellationToken) -> Result<(String, BashOutcome), String> {
    let command = args.str("command")?;
    if command.trim().is_empty() {
        return Err("`command` is empty.".to_owned());
    }
    let cwd = ws.resolve(args.opt_str("cwd")?.unwrap_or("."));
    if !cwd.is_dir() {
        return Err(if cwd.exists() { ws.error("not_a_directory", &cwd) } else { ws.error("not_found", &cwd) });
    }
    let timeout =
        args.opt_usize("timeout")?.map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s as u64)).min(MAX_TIMEOUT);

    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LEMBAS", "1")
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("bash could not be started: {e}"))?;
    let pgid = child.id().map(|id| Pid::from_raw(id as i32));

    let buffer = Arc::new(Mutex::new((Vec::new(), 0usize)));
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child.stderr.take().map(|s| Box::new(s) as _),
    ]
    .into_iter()
    .flatten()
    .map(|mut stream| {
        let buffer = buffer.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = stream.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                let mut guard = buffer.lock().expect("output buffer");
                let (kept, dropped) = &mut *guard;
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
                *dropped += n.saturating_sub(room);
            }
        })
    })
    .collect();

    let started = Instant::now();
    let outcome = tokio::select! {
        status = child.wait() => match status {
            Ok(s) => s.code().map_or(BashOutcome::Signalled, BashOutcome::Exited),
            Err(e) => return Err(format!("waiting for bash failed: {e}")),
        },
        () = tokio::time::sleep(timeout) => BashOutcome::TimedOut(started.elapsed()),
        () = cancel.cancelled() => BashOutcome::Cancelled,
    };
    if matches!(outcome, BashOutcome::TimedOut(_) | BashOutcome::Cancelled) {
        stop_group(pgid, &mut child).await;
    }
    // The readers end when every process holding the pipes is gone; a grandchild that escaped
    // the group must not hold the answer hostage.
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
    }

    let (bytes, dropped) = std::mem::take(&mut *buffer.lock().expect("output buffer"));
    let mut text = String::from_utf8_lossy(&bytes).trim_end_matches('\n').to_owned();
    if dropped > 0 {
        text.push_str(&format!("\n[{dropped} more bytes of output were dropped]"));
    }
    let ending = match &outcome {
        BashOutcome::Exited(0) => None,
        BashOutcome::Exited(code) => Some(format!("(exit code {code})")),
        BashOutcome::Signalled => Some("(ended by a signal)".to_owned()),
        BashOutcome::TimedOut(after) => Some(format!(
            "(stopped after {} s: it was still running at its timeout; give a longer timeout, up to {} s)",
            after.as_secs(),
            MAX_TIMEOUT.as_secs()
        )),
        BashOutcome::Cancelled => Some("(stopped: the turn was interrupted)".to_owned()),
    };
    match ending {
        Some(line) if text.is_empty() => text = line,
        Some(line) => text = format!("{text}\n{line}"),
        None if text.is_empty() => text = "(no output)".to_owned(),
        None => {}
    }
    Ok((text, outcome))
}

/// Ends a command's whole process group: a polite signal, then a kill.
async fn stop_group(pgid: Option<Pid>, child: &mut tokio::process::Child) {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGTERM);
        if tokio::time::timeout(Duration::from_secs(2), child.wait()).await.is_err() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
        // Anything of the group still alive (a child that ignored TERM) gets the kill too.
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    let _ = child.kill().await;
}
