//! Background jobs (`loop.json` `jobs`): commands that run on while the session goes on — started
//! with `background: true`, or still running when their timeout passed. One id sequence per
//! session (`job1`, `job2`, …); output kept on disk, not in memory; a job that ends leaves a note
//! for the session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

mod view;

pub use view::AgentAbout;

/// The most `job_output` returns in one call.
pub const READ_CHUNK: u64 = 256 * 1024;

/// Where a running command's output goes: memory while it runs in the foreground, its log file
/// once it is a job.
#[derive(Debug)]
pub(crate) enum Sink {
    Memory { kept: Vec<u8>, dropped: usize },
    File(LogFile),
}

/// A job's log keeps the last this many bytes of its output (and holds at most twice as many on
/// disk): a command that prints without end cannot fill the disk.
pub const JOB_LOG_KEEP: u64 = 8 * 1024 * 1024;

/// A job's log file, cut from the front when it grows past twice [`JOB_LOG_KEEP`].
#[derive(Debug)]
pub(crate) struct LogFile {
    file: std::fs::File,
    len: u64,
    /// Bytes cut from the front so far (shared with the job, to place what the model read).
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl LogFile {
    fn write(&mut self, bytes: &[u8]) {
        use std::io::{Read, Seek, SeekFrom, Write};
        if self.len + bytes.len() as u64 > 2 * JOB_LOG_KEEP {
            // Keep the newest JOB_LOG_KEEP bytes, counting the older ones as dropped.
            let all = self.len + bytes.len() as u64;
            let from_file = JOB_LOG_KEEP.saturating_sub(bytes.len() as u64).min(self.len);
            let mut tail = Vec::with_capacity(from_file as usize);
            let _ = self.file.seek(SeekFrom::Start(self.len - from_file));
            let _ = (&mut self.file).take(from_file).read_to_end(&mut tail);
            let skip = bytes.len().saturating_sub(JOB_LOG_KEEP as usize);
            tail.extend_from_slice(&bytes[skip..]);
            let _ = self.file.set_len(0);
            let _ = self.file.seek(SeekFrom::Start(0));
            let _ = self.file.write_all(&tail);
            self.dropped.fetch_add(all - tail.len() as u64, std::sync::atomic::Ordering::SeqCst);
            self.len = tail.len() as u64;
            return;
        }
        if self.file.write_all(bytes).is_ok() {
            self.len += bytes.len() as u64;
        }
    }
}

impl Sink {
    pub(crate) fn write(&mut self, bytes: &[u8], cap: usize) {
        match self {
            Sink::Memory { kept, dropped } => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
                *dropped += bytes.len().saturating_sub(room);
            }
            Sink::File(log) => log.write(bytes),
        }
    }
}

pub(crate) type SharedSink = Arc<Mutex<Sink>>;

/// A command running now, handed over to become a job.
pub(crate) struct Running<'a> {
    pub command: &'a str,
    pub child: crate::process::Child,
    pub pgid: Option<Pid>,
    pub sink: &'a SharedSink,
    pub stdin: Option<tokio::net::unix::pipe::Sender>,
    pub started: Instant,
    /// The call's own answer already showed the output so far.
    pub output_shown: bool,
    /// The mark its processes carry ([`crate::reaper`]).
    pub mark: String,
}

/// How a job stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    Running,
    Exited(i32),
    Signalled,
    Stopped,
}

#[derive(Debug)]
struct Job {
    id: String,
    command: String,
    log: PathBuf,
    started: Instant,
    ended: Option<Instant>,
    state: JobState,
    /// Bytes of the output the model has read (counting what the log dropped since).
    read: u64,
    /// Bytes the log dropped from its front.
    dropped: Arc<std::sync::atomic::AtomicU64>,
    pgid: Option<Pid>,
    /// The mark of its processes, when it is a command.
    mark: Option<String>,
    stdin: Option<tokio::net::unix::pipe::Sender>,
    /// A subagent's controls, when the job is one.
    agent: Option<AgentControl>,
    /// What a front end is told of it beyond its state: when it started and ended (ms since
    /// 1970), a subagent's agent, model and counts.
    started_ms: u64,
    ended_ms: Option<u64>,
    about: Option<Arc<AgentAbout>>,
}

impl Job {
    /// It ended as `state`: its note, for the session.
    fn end(&mut self, state: JobState, report: Option<String>) -> JobEnded {
        self.state = state;
        self.ended = Some(Instant::now());
        self.ended_ms = Some(view::now_ms());
        self.stdin = None;
        JobEnded {
            id: self.id.clone(),
            command: self.command.clone(),
            state: self.state.clone(),
            after: self.started.elapsed(),
            report,
        }
    }
}

/// How a subagent job is stopped and messaged.
#[derive(Debug)]
struct AgentControl {
    stop: CancellationToken,
    /// Its steering queue: what job_send gives it arrives at its next step.
    inbox: Arc<Mutex<Vec<String>>>,
}

/// A subagent job's log, for its progress lines and, when it ends, its report.
#[derive(Debug, Clone)]
pub struct AgentLog {
    jobs: Jobs,
    id: String,
    file: Arc<Mutex<std::fs::File>>,
    about: Arc<AgentAbout>,
}

impl AgentLog {
    /// A line of progress, for job_output.
    pub fn write(&self, line: &str) {
        use std::io::Write;
        let _ = writeln!(self.file.lock().expect("agent log"), "{line}");
    }

    /// The job's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The subagent took a step (`step`) or finished a tool call: counted for its `JobInfo`.
    pub fn count(&self, step: bool) {
        let counter = if step { &self.about.steps } else { &self.about.tools };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The subagent ended: its report goes to the log and into the note that wakes the session.
    pub fn finish(&self, state: JobState, report: String) {
        self.write(&format!("\n{report}"));
        self.jobs.finish_with(&self.id, state, Some(report));
    }
}

/// A job that ended, for the note that wakes the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnded {
    pub id: String,
    pub command: String,
    pub state: JobState,
    pub after: Duration,
    /// A subagent's report.
    pub report: Option<String>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    jobs: Vec<Job>,
    ended: Vec<JobEnded>,
}

/// A session's jobs. Cloning shares them.
#[derive(Debug, Clone)]
pub struct Jobs {
    dir: PathBuf,
    inner: Arc<Mutex<Inner>>,
    changed: Arc<tokio::sync::Notify>,
}

/// A duration as jobs write it: `5s`, `1m 05s`.
pub fn elapsed_text(d: Duration) -> String {
    lembas_progress::elapsed(d.as_secs() as i64)
}

impl Jobs {
    /// Jobs whose output is kept under `dir`.
    pub fn new(dir: PathBuf) -> Jobs {
        Jobs { dir, inner: Arc::default(), changed: Arc::new(tokio::sync::Notify::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("jobs lock")
    }

    /// Takes over a running command as a job: its output so far goes to the job's log, and what
    /// follows too. Answers the job's id.
    pub(crate) fn adopt(&self, running: Running<'_>) -> Result<String, String> {
        let Running { command, mut child, pgid, sink, stdin, started, output_shown, mark } = running;
        let (id, log, file) = self.new_job()?;
        let mut read = 0;
        let dropped = Arc::new(std::sync::atomic::AtomicU64::new(0));
        {
            let mut guard = sink.lock().expect("output sink");
            let mut logfile = LogFile { file, len: 0, dropped: dropped.clone() };
            if let Sink::Memory { kept, .. } = &*guard {
                logfile.write(kept);
                // What the call's own answer already showed is not shown again.
                if output_shown {
                    read = kept.len() as u64;
                }
            }
            *guard = Sink::File(logfile);
        }
        self.lock().jobs.push(Job {
            id: id.clone(),
            command: command.to_owned(),
            log,
            started,
            ended: None,
            state: JobState::Running,
            read,
            dropped,
            pgid,
            mark: Some(mark.clone()),
            stdin,
            agent: None,
            started_ms: view::now_ms(),
            ended_ms: None,
            about: None,
        });
        self.changed.notify_waiters();
        let jobs = self.clone();
        let job_id = id.clone();
        tokio::spawn(async move {
            let state = match child.wait().await {
                Ok(status) => status.code().map_or(JobState::Signalled, JobState::Exited),
                Err(_) => JobState::Signalled,
            };
            // What it left running ends with it.
            crate::reaper::end_command(pgid, Some(&mark));
            jobs.finish(&job_id, state);
        });
        Ok(id)
    }

    /// A new job's id and its log, unless too many run already.
    fn new_job(&self) -> Result<(String, PathBuf, std::fs::File), String> {
        let limit = lembas_spec::loop_spec().jobs.limit.default;
        let (id, log) = {
            let mut inner = self.lock();
            if inner.jobs.iter().filter(|j| j.state == JobState::Running).count() >= limit {
                return Err(format!("{limit} jobs are already running: stop one with job_stop first."));
            }
            inner.next += 1;
            let id = format!("{}{}", lembas_spec::loop_spec().jobs.id_prefix, inner.next);
            (id.clone(), self.dir.join(format!("{id}.log")))
        };
        // What a command printed may hold secrets: a folder and files only the person reads.
        let mut folder = std::fs::DirBuilder::new();
        folder.recursive(true);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
            folder.mode(0o700);
            options.mode(0o600);
        }
        folder.create(&self.dir).map_err(|e| format!("cannot keep job output in {}: {e}", self.dir.display()))?;
        let file = options.open(&log).map_err(|e| format!("cannot keep job output in {}: {e}", log.display()))?;
        Ok((id, log, file))
    }

    /// Takes on a subagent working in the background as a job (`what` says what it does):
    /// job_stop cancels `stop`, job_send adds to `inbox`. The caller writes its progress to the
    /// log answered, and finishes the job with its report.
    pub fn start_agent(
        &self,
        what: &str,
        about: AgentAbout,
        stop: CancellationToken,
        inbox: Arc<Mutex<Vec<String>>>,
    ) -> Result<(String, AgentLog), String> {
        let (id, log, file) = self.new_job()?;
        let about = Arc::new(about);
        self.lock().jobs.push(Job {
            id: id.clone(),
            command: format!("subagent: {what}"),
            log,
            started: Instant::now(),
            ended: None,
            state: JobState::Running,
            read: 0,
            dropped: Arc::default(),
            mark: None,
            pgid: None,
            stdin: None,
            agent: Some(AgentControl { stop, inbox }),
            started_ms: view::now_ms(),
            ended_ms: None,
            about: Some(about.clone()),
        });
        self.changed.notify_waiters();
        Ok((id.clone(), AgentLog { jobs: self.clone(), id, file: Arc::new(Mutex::new(file)), about }))
    }

    /// A subagent job that ended, running again (job_send woke it): the same id and log, new
    /// controls. `None` when `id` is no ended subagent job.
    pub fn revive_agent(&self, id: &str, stop: CancellationToken, inbox: Arc<Mutex<Vec<String>>>) -> Option<AgentLog> {
        let mut inner = self.lock();
        let job = inner.jobs.iter_mut().find(|j| j.id == id && j.agent.is_some() && j.state != JobState::Running)?;
        let file = std::fs::OpenOptions::new().append(true).open(&job.log).ok()?;
        job.state = JobState::Running;
        job.ended = None;
        job.ended_ms = None;
        job.started = Instant::now();
        job.agent = Some(AgentControl { stop, inbox });
        let about = job.about.clone()?;
        drop(inner);
        self.changed.notify_waiters();
        let log = AgentLog { jobs: self.clone(), id: id.to_owned(), file: Arc::new(Mutex::new(file)), about };
        log.write("\n(woken by a message)");
        Some(log)
    }

    /// Whether `id` is a subagent job that has ended.
    pub fn agent_ended(&self, id: &str) -> bool {
        self.lock().jobs.iter().any(|j| j.id == id && j.agent.is_some() && j.state != JobState::Running)
    }

    fn finish(&self, id: &str, state: JobState) {
        self.finish_with(id, state, None);
    }

    fn finish_with(&self, id: &str, state: JobState, report: Option<String>) {
        let mut inner = self.lock();
        let Some(job) = inner.jobs.iter_mut().find(|j| j.id == id) else { return };
        if job.state != JobState::Running {
            return;
        }
        let ended = job.end(state, report);
        inner.ended.push(ended);
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Notes of jobs that ended since the last call (what wakes the session).
    pub fn take_ended(&self) -> Vec<JobEnded> {
        std::mem::take(&mut self.lock().ended)
    }

    /// Whether any job runs.
    pub fn any_running(&self) -> bool {
        self.running_count() > 0
    }

    /// How many jobs run now.
    pub fn running_count(&self) -> usize {
        self.lock().jobs.iter().filter(|j| j.state == JobState::Running).count()
    }

    /// How many of the running jobs are subagents.
    pub fn running_agents(&self) -> usize {
        self.lock().jobs.iter().filter(|j| j.state == JobState::Running && j.agent.is_some()).count()
    }

    /// Whether a job has ended whose note has not been taken yet.
    pub fn has_ended(&self) -> bool {
        !self.lock().ended.is_empty()
    }

    /// What is told each time a job starts, ends or is stopped, for a watcher that must not miss
    /// one between looking and waiting (it enables its `notified` before it looks).
    pub fn changes(&self) -> Arc<tokio::sync::Notify> {
        self.changed.clone()
    }

    /// Waits until some job ends (or `timeout` passes).
    pub async fn wait_change(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.changed.notified()).await;
    }

    fn state_line(job: &Job) -> String {
        match &job.state {
            JobState::Running => format!("{} is running ({})", job.id, elapsed_text(job.started.elapsed())),
            JobState::Exited(code) => format!(
                "{} exited with {code} after {}",
                job.id,
                elapsed_text(job.ended.unwrap_or_else(Instant::now) - job.started)
            ),
            JobState::Signalled => format!(
                "{} was ended by a signal after {}",
                job.id,
                elapsed_text(job.ended.unwrap_or_else(Instant::now) - job.started)
            ),
            JobState::Stopped => format!(
                "{} was stopped after {}",
                job.id,
                elapsed_text(job.ended.unwrap_or_else(Instant::now) - job.started)
            ),
        }
    }

    /// `job_list`.
    pub fn list(&self) -> String {
        let inner = self.lock();
        if inner.jobs.is_empty() {
            return "No jobs in this session.".to_owned();
        }
        inner.jobs.iter().map(|j| format!("{}: {}", Self::state_line(j), j.command)).collect::<Vec<_>>().join("\n")
    }

    /// `job_output`: what the model has not read yet, and how the job stands. `wait` waits for
    /// the job to end first, up to that long.
    pub async fn output(&self, id: &str, wait: Duration) -> Result<String, String> {
        let deadline = Instant::now() + wait;
        loop {
            let running = self.lock().jobs.iter().find(|j| j.id == id).map(|j| j.state == JobState::Running);
            match running {
                None => return Err(self.unknown(id)),
                Some(true) if Instant::now() < deadline => self.wait_change(deadline - Instant::now()).await,
                Some(_) => break,
            }
        }
        let mut inner = self.lock();
        let job = inner.jobs.iter_mut().find(|j| j.id == id).ok_or_else(|| format!("No job {id} in this session."))?;
        // At most READ_CHUNK bytes a call, so a huge log is read in parts, never whole.
        let mut file = std::fs::File::open(&job.log).map_err(|e| format!("{}: {e}", job.log.display()))?;
        let in_file = file.metadata().map(|m| m.len()).unwrap_or(0);
        // Positions count every byte the job printed; the log holds the newest of them.
        let dropped = job.dropped.load(std::sync::atomic::Ordering::SeqCst);
        let total = dropped + in_file;
        let missed = dropped.saturating_sub(job.read);
        job.read = job.read.max(dropped);
        let mut bytes = Vec::new();
        {
            use std::io::{Read, Seek, SeekFrom};
            let _ = file.seek(SeekFrom::Start((job.read - dropped).min(in_file)));
            let _ = file.take(READ_CHUNK).read_to_end(&mut bytes);
        }
        job.read = (job.read + bytes.len() as u64).min(total);
        let left = total - job.read;
        let mut new = String::from_utf8_lossy(&bytes).trim_end_matches('\n').to_owned();
        if missed > 0 {
            new = format!(
                "({missed} bytes of output were dropped before they were read: a job's log keeps its last {} MB)\n{new}",
                JOB_LOG_KEEP / (1024 * 1024)
            );
        }
        if left > 0 {
            new.push_str(&format!("\n({left} more bytes: call job_output again for them)"));
        }
        let state = Self::state_line(job);
        Ok(if new.is_empty() { format!("({state}; no new output)") } else { format!("{new}\n({state})") })
    }

    /// `job_send`: a line to the job's standard input.
    pub async fn send(&self, id: &str, input: &str) -> Result<String, String> {
        let stdin: tokio::net::unix::pipe::Sender = {
            let mut inner = self.lock();
            let job =
                inner.jobs.iter_mut().find(|j| j.id == id).ok_or_else(|| format!("No job {id} in this session."))?;
            if job.state != JobState::Running {
                return Err(format!("{} has ended: it reads nothing more.", job.id));
            }
            if let Some(agent) = &job.agent {
                agent.inbox.lock().expect("subagent inbox").push(input.to_owned());
                return Ok(format!("Sent to {id}: the subagent reads it at its next step."));
            }
            job.stdin
                .take()
                .ok_or_else(|| format!("{id} does not read input (it was not started with background: true)."))?
        };
        let mut stdin = stdin;
        let mut line = input.to_owned();
        line.push('\n');
        let result = stdin.write_all(line.as_bytes()).await.and(stdin.flush().await);
        if let Some(job) = self.lock().jobs.iter_mut().find(|j| j.id == id) {
            job.stdin = Some(stdin);
        }
        result
            .map(|()| format!("Sent {} bytes to {id}.", line.len()))
            .map_err(|e| format!("{id} no longer reads input: {e}"))
    }

    /// `job_stop`: ends the job and everything it started.
    pub async fn stop(&self, id: &str) -> Result<String, String> {
        self.stop_telling(id, false).await
    }

    /// Ends the job and everything it started; with `tell`, the job's note (that it was
    /// stopped) waits for the model from the moment it is stopped.
    async fn stop_telling(&self, id: &str, tell: bool) -> Result<String, String> {
        let pgid = {
            let inner = self.lock();
            let job = inner.jobs.iter().find(|j| j.id == id).ok_or_else(|| format!("No job {id} in this session."))?;
            if job.state != JobState::Running {
                return Ok(format!("{}.", Self::state_line(job)));
            }
            if let Some(agent) = &job.agent {
                agent.stop.cancel();
            }
            (job.pgid, job.mark.clone())
        };
        let (pgid, mark) = pgid;
        {
            let mut inner = self.lock();
            if let Some(job) = inner.jobs.iter_mut().find(|j| j.id == id) {
                // A job stopped on purpose says so, whatever signal ended it.
                let ended = job.end(JobState::Stopped, None);
                if tell {
                    inner.ended.push(ended);
                }
            }
        }
        self.changed.notify_waiters();
        if let Some(pgid) = pgid {
            let _ = killpg(pgid, Signal::SIGTERM);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        crate::reaper::end_command(pgid, mark.as_deref());
        Ok(format!("Stopped {id}."))
    }

    /// Stops every running job (the session ends, or is deleted).
    pub fn stop_all(&self) {
        let mut inner = self.lock();
        for job in inner.jobs.iter_mut().filter(|j| j.state == JobState::Running) {
            crate::reaper::end_command(job.pgid, job.mark.as_deref());
            if let Some(agent) = &job.agent {
                agent.stop.cancel();
            }
            // Nobody is told: the session itself ends.
            job.end(JobState::Stopped, None);
        }
        drop(inner);
        self.changed.notify_waiters();
    }

    fn unknown(&self, id: &str) -> String {
        let ids: Vec<String> = self.lock().jobs.iter().map(|j| j.id.clone()).collect();
        if ids.is_empty() {
            format!("No job {id}: this session has no jobs.")
        } else {
            format!("No job {id}. The jobs: {}.", ids.join(", "))
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // As in stop_all: a job's group, and what escaped it.
        for job in self.jobs.iter().filter(|j| j.state == JobState::Running) {
            crate::reaper::end_command(job.pgid, job.mark.as_deref());
            if let Some(agent) = &job.agent {
                agent.stop.cancel();
            }
        }
    }
}
