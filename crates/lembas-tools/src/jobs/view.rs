//! The jobs as a front end sees them (`acp.md`, capability `jobs`): each as a `JobInfo`, its
//! output read from any offset — the person reading never counts as the model reading — and
//! the person's own stop, which the model is told of in the job's note.

use std::sync::atomic::{AtomicU32, Ordering};

use lembas_protocol::jobs::{JobInfo, JobKind, JobOutput, JobStatus};

use super::{Job, JobState, Jobs, READ_CHUNK};

/// Milliseconds since 1970, as the team's times are said.
pub(super) fn now_ms() -> u64 {
    lembas_progress::now_ms().max(0) as u64
}

/// What a subagent job is, for its `JobInfo`: its agent, its model, its stored session (its
/// transcript), and its steps and tool calls so far.
#[derive(Debug, Default)]
pub struct AgentAbout {
    pub agent: String,
    pub model: String,
    pub session: String,
    pub(super) steps: AtomicU32,
    pub(super) tools: AtomicU32,
}

impl AgentAbout {
    pub fn new(agent: &str, model: &str, session: &str) -> AgentAbout {
        AgentAbout {
            agent: agent.to_owned(),
            model: model.to_owned(),
            session: session.to_owned(),
            ..Default::default()
        }
    }
}

impl Job {
    /// Every byte it printed: those its log dropped from the front and those it holds.
    fn printed(&self) -> u64 {
        let held = std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0);
        self.dropped.load(Ordering::SeqCst) + held
    }

    fn info(&self) -> JobInfo {
        let about = self.about.as_deref();
        let subagent = about.is_some();
        let state = match (&self.state, subagent) {
            (JobState::Running, _) => JobStatus::Running,
            (JobState::Stopped, _) => JobStatus::Stopped,
            (JobState::Exited(0), true) | (JobState::Exited(_) | JobState::Signalled, false) => JobStatus::Done,
            (JobState::Exited(_) | JobState::Signalled, true) => JobStatus::Error,
        };
        let exit = match (&self.state, subagent) {
            (_, true) | (JobState::Running, _) => None,
            (JobState::Exited(code), false) => Some(Some(*code)),
            (JobState::Signalled | JobState::Stopped, false) => Some(None),
        };
        let description = match about {
            Some(_) => self.command.strip_prefix("subagent: ").unwrap_or(&self.command).to_owned(),
            None => self.command.lines().next().unwrap_or_default().to_owned(),
        };
        JobInfo {
            id: self.id.clone(),
            kind: if subagent { JobKind::Subagent } else { JobKind::Command },
            state,
            description,
            command: (!subagent).then(|| self.command.clone()),
            agent: about.map(|a| a.agent.clone()),
            model: about.map(|a| a.model.clone()).filter(|m| !m.is_empty()),
            started: self.started_ms,
            ended: self.ended_ms,
            exit,
            unread: self.printed().saturating_sub(self.read),
            steps: about.map(|a| a.steps.load(Ordering::Relaxed)),
            tools: about.map(|a| a.tools.load(Ordering::Relaxed)),
            owner_job_id: None,
        }
    }
}

impl Jobs {
    /// Every job of the session as a front end is told of it, running ones first (then the
    /// order they started in).
    pub fn infos(&self) -> Vec<JobInfo> {
        let inner = self.lock();
        let mut infos: Vec<JobInfo> = inner.jobs.iter().map(Job::info).collect();
        infos.sort_by_key(|info| info.state != JobStatus::Running);
        infos
    }

    /// One job's `JobInfo`; `None` when the session has no such job.
    pub fn info(&self, id: &str) -> Option<JobInfo> {
        self.lock().jobs.iter().find(|j| j.id == id).map(Job::info)
    }

    /// A subagent job's stored session (where its transcript is read); an error for a command
    /// job or an id the session does not have.
    pub fn agent_session(&self, id: &str) -> Result<(JobInfo, String), String> {
        let inner = self.lock();
        let job = inner.jobs.iter().find(|j| j.id == id).ok_or_else(|| format!("No job {id} in this session."))?;
        match job.about.as_deref() {
            Some(about) => Ok((job.info(), about.session.clone())),
            None => Err(format!("{id} is a command: it has output, not a transcript.")),
        }
    }

    /// At most `limit` bytes (and [`READ_CHUNK`]) of job `id`'s output from `offset`, for the
    /// person: what the model has read stays as it was. Bytes its log no longer holds are
    /// skipped (the answer's `offset` says from where it reads).
    pub fn read_for_person(&self, id: &str, offset: u64, limit: Option<u64>) -> Result<JobOutput, String> {
        use std::io::{Read, Seek, SeekFrom};
        let inner = self.lock();
        let job = inner.jobs.iter().find(|j| j.id == id).ok_or_else(|| format!("No job {id} in this session."))?;
        let mut file = std::fs::File::open(&job.log).map_err(|e| format!("{}: {e}", job.log.display()))?;
        let held = file.metadata().map(|m| m.len()).unwrap_or(0);
        let dropped = job.dropped.load(Ordering::SeqCst);
        let from = offset.max(dropped).min(dropped + held);
        let mut bytes = Vec::new();
        let _ = file.seek(SeekFrom::Start(from - dropped));
        let _ = file.take(limit.unwrap_or(READ_CHUNK).min(READ_CHUNK)).read_to_end(&mut bytes);
        // A read that ends inside a character leaves that character to the next one.
        let whole = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => bytes.len(),
        };
        bytes.truncate(whole);
        let next = from + bytes.len() as u64;
        Ok(JobOutput {
            job: job.info(),
            offset: from,
            text: String::from_utf8_lossy(&bytes).into_owned(),
            next,
            more: next < dropped + held,
        })
    }

    /// The person stops job `id` (and what it started); unlike the model's own `job_stop`, the
    /// model is told, in the job's note. Answers the job as it stands after.
    pub async fn stop_for_person(&self, id: &str) -> Result<JobInfo, String> {
        self.stop_telling(id, true).await?;
        self.info(id).ok_or_else(|| format!("No job {id} in this session."))
    }
}
