//! `bash`: a command in its own process group, stdout and stderr as one stream. A command still
//! running at its timeout — or started with `background: true` — becomes a job; without jobs
//! (a caller that has none) it is stopped with its whole group.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::jobs::{Jobs, Running, SharedSink, Sink};
use crate::process::Io;
use crate::sandbox::Sandbox;
use crate::{Args, ToolOutput, Workspace};

/// The default time a command runs in the foreground.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a call may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Output kept in memory for a foreground command; the rest is counted and dropped (a job's
/// output goes to its log file instead, whole).
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// Runs `args.command` and answers its output, with a line saying how it ended unless it exited
/// with 0 — or, for a job, how to follow it.
pub async fn run_bash(ws: &Workspace, args: &Value, cancel: &CancellationToken, jobs: Option<&Jobs>) -> ToolOutput {
    run_bash_in(ws, args, cancel, jobs, &Sandbox::none()).await.output
}

/// What a sandboxed command came to.
#[derive(Debug, Clone)]
pub struct BashOutcome {
    pub output: ToolOutput,
    /// It failed in an active sandbox with an error that a blocked write gives.
    pub maybe_blocked: bool,
}

/// Runs `args.command` inside `sandbox`.
pub async fn run_bash_in(
    ws: &Workspace,
    args: &Value,
    cancel: &CancellationToken,
    jobs: Option<&Jobs>,
    sandbox: &Sandbox,
) -> BashOutcome {
    match run(ws, &Args(args), cancel, jobs, sandbox).await {
        Ok((text, failed)) => {
            let maybe_blocked = failed && sandbox.is_active() && crate::sandbox::looks_blocked(&text);
            BashOutcome { output: ToolOutput::Text(text), maybe_blocked }
        }
        Err(e) => BashOutcome { output: ToolOutput::Error(e), maybe_blocked: false },
    }
}

/// The environment a command gets: lembas' secrets taken out (`lembas_sys::child_env`: its own
/// variables, an API key among them, and the keys it reads), and in plan mode git kept from
/// running what a repository's configuration names.
fn command_env(command: &mut crate::process::Launch, sandbox: &Sandbox) {
    for name in lembas_sys::child_env::secrets_present() {
        command.env_remove(&name);
    }
    if sandbox.tmpdir.is_some() {
        // Plan mode: `git status` must not start `core.fsmonitor`, a pager, an external diff
        // or a hook the repository names. (The sandbox still stops what such a program writes.)
        let config = [
            ("core.fsmonitor", "false"),
            ("core.hooksPath", "/dev/null"),
            ("core.pager", "cat"),
            ("diff.external", ""),
            ("core.sshCommand", "false"),
            ("gpg.program", "false"),
        ];
        command.env("GIT_CONFIG_COUNT", config.len().to_string());
        for (i, (key, value)) in config.iter().enumerate() {
            command.env(format!("GIT_CONFIG_KEY_{i}"), key).env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        command.env("GIT_OPTIONAL_LOCKS", "0");
    }
}

fn ending_text(text: String, ending: Option<String>) -> String {
    match ending {
        Some(line) if text.is_empty() => line,
        Some(line) => format!("{text}\n{line}"),
        None if text.is_empty() => "(no output)".to_owned(),
        None => text,
    }
}

/// The command's text, and whether it failed.
async fn run(
    ws: &Workspace,
    args: &Args<'_>,
    cancel: &CancellationToken,
    jobs: Option<&Jobs>,
    sandbox: &Sandbox,
) -> Result<(String, bool), String> {
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
    let background = args.bool("background")?;
    if background && jobs.is_none() {
        return Err("Background jobs are not available here: run it in the foreground.".to_owned());
    }

    let stdin = if background { Io::Piped } else { Io::Null };
    let stdio = BashStdio { stdin, stdout: Io::Piped, stderr: Io::Piped };
    let (mut child, pgid, mark) = spawn_bash(command, &cwd, stdio, sandbox)?;
    let started = Instant::now();

    let sink: SharedSink = Arc::new(Mutex::new(Sink::Memory { kept: Vec::new(), dropped: 0 }));
    let readers = read_output(&mut child, &sink);

    if let (true, Some(jobs)) = (background, jobs) {
        let stdin = child.stdin.take();
        let id =
            jobs.adopt(Running { command, child, pgid, sink: &sink, stdin, started, output_shown: false, mark })?;
        return Ok((
            format!(
                "Started {id} in the background. job_output shows what it prints, job_send gives it input, job_stop ends it; you are told when it ends."
            ),
            false,
        ));
    }

    enum End {
        Exited(Option<i32>),
        TimedOut,
        Cancelled,
    }
    let end = tokio::select! {
        status = child.wait() => End::Exited(status.map_err(|e| format!("waiting for bash failed: {e}"))?.code()),
        () = tokio::time::sleep(timeout) => End::TimedOut,
        () = cancel.cancelled() => End::Cancelled,
    };
    let failed = !matches!(end, End::Exited(Some(0)));
    let ending = match end {
        End::TimedOut if jobs.is_some() => {
            let jobs = jobs.expect("checked");
            let so_far = match &*sink.lock().expect("output sink") {
                Sink::Memory { kept, .. } => String::from_utf8_lossy(kept).trim_end_matches('\n').to_owned(),
                Sink::File(_) => String::new(),
            };
            return match jobs.adopt(Running {
                command,
                child,
                pgid,
                sink: &sink,
                stdin: None,
                started,
                output_shown: true,
                mark: mark.clone(),
            }) {
                Ok(id) => Ok((
                    ending_text(
                        so_far,
                        Some(format!(
                            "(still running after {} s: it goes on in the background as {id}; job_output shows the rest, job_stop ends it)",
                            started.elapsed().as_secs()
                        )),
                    ),
                    false,
                )),
                Err(e) => {
                    stop_group(pgid).await;
                    crate::reaper::end_marked(&mark, false);
                    Err(e)
                }
            };
        }
        End::TimedOut => {
            stop_group(pgid).await;
            let _ = child.kill().await;
            Some(format!("(stopped after {} s: it was still running at its timeout)", started.elapsed().as_secs()))
        }
        End::Cancelled => {
            stop_group(pgid).await;
            let _ = child.kill().await;
            Some("(stopped: the turn was interrupted)".to_owned())
        }
        End::Exited(Some(0)) => None,
        End::Exited(Some(code)) => Some(format!("(exit code {code})")),
        End::Exited(None) => Some("(ended by a signal)".to_owned()),
    };
    // The command has returned: what it left running (in its group, or escaped from it) ends
    // with it. Work meant to outlive it is a background job.
    if pgid.is_some_and(|g| killpg(g, None).is_ok()) {
        stop_group(pgid).await;
    }
    crate::reaper::end_marked(&mark, false);
    // The readers end when every process holding the pipes is gone; a grandchild that escaped
    // the group must not hold the answer hostage.
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
    }
    let text = taken_output(&sink);
    Ok((ending_text(text, ending), failed))
}

/// `bash` as found on `PATH`, once: looked for at each command, its start would try the folders
/// on `PATH` in turn (eight on a machine whose tool folders come first).
fn bash_program() -> &'static std::path::Path {
    static BASH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BASH.get_or_init(|| {
        crate::process::on_path(std::path::Path::new("bash"), std::env::var_os("PATH").as_deref())
            .unwrap_or_else(|| "bash".into())
    })
}

/// Where a command's input comes from and its output goes.
pub(crate) struct BashStdio {
    pub stdin: Io,
    pub stdout: Io,
    pub stderr: Io,
}

/// Starts `bash -c command` in `cwd` inside `sandbox`, in a process group of its own and marked
/// (what it leaves running is found by the mark): the child, its group, the mark.
pub(crate) fn spawn_bash(
    command: &str,
    cwd: &std::path::Path,
    stdio: BashStdio,
    sandbox: &Sandbox,
) -> Result<(crate::process::Child, Option<Pid>, String), String> {
    let mut sandboxed = crate::sandbox::command(bash_program(), sandbox);
    let bash = &mut sandboxed.command;
    bash.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(stdio.stdin)
        .stdout(stdio.stdout)
        .stderr(stdio.stderr)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LEMBAS", "1")
        .process_group();
    command_env(bash, sandbox);
    let mark = crate::reaper::new_mark();
    bash.env(crate::reaper::MARK_VAR, &mark);
    let child = crate::sandbox::spawn(sandboxed, sandbox).map_err(|e| format!("bash could not be started: {e}"))?;
    let pgid = child.id().map(|id| Pid::from_raw(id as i32));
    Ok((child, pgid, mark))
}

/// Reads the child's stdout and stderr into `sink` as they come, each on a task of its own.
fn read_output(child: &mut crate::process::Child, sink: &SharedSink) -> Vec<tokio::task::JoinHandle<()>> {
    let streams: Vec<Box<dyn tokio::io::AsyncRead + Unpin + Send>> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    .collect();
    streams
        .into_iter()
        .map(|mut stream| {
            let sink = sink.clone();
            tokio::spawn(async move {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    sink.lock().expect("output sink").write(&chunk[..n], MAX_OUTPUT_BYTES);
                }
            })
        })
        .collect()
}

/// What a foreground command printed, taken out of its sink, with how much was dropped.
fn taken_output(sink: &SharedSink) -> String {
    let taken =
        std::mem::replace(&mut *sink.lock().expect("output sink"), Sink::Memory { kept: Vec::new(), dropped: 0 });
    let (bytes, dropped) = match taken {
        Sink::Memory { kept, dropped } => (kept, dropped),
        Sink::File(_) => (Vec::new(), 0),
    };
    let mut text = String::from_utf8_lossy(&bytes).trim_end_matches('\n').to_owned();
    if dropped > 0 {
        text.push_str(&format!("\n[{dropped} more bytes of output were dropped]"));
    }
    text
}

/// Ends a command's whole process group: a polite signal, then a kill.
pub(crate) async fn stop_group(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGTERM);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}
