//! A session's background jobs as a front end is told of them (`acp.md`, capability `jobs`):
//! `JobInfo` on the `job` event and in `_lembas/jobs`, and what a front end asks of one job
//! ([`JobAsk`], answered with [`JobSaid`]). The shapes `acp.md`'s partial copy does not show —
//! the methods' params and results — are designed here and in `docs/spec-decisions.md`.

use serde::{Deserialize, Serialize};

/// What a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    Command,
    Subagent,
}

/// How a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    Done,
    Stopped,
    Error,
    /// It was running when the device's process ended.
    Lost,
}

/// One background job (`acp.md` `JobInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub id: String,
    pub kind: JobKind,
    pub state: JobStatus,
    /// What is shown for it: a command's first line, a subagent's description.
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A subagent's agent (`general`, a custom agent's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Milliseconds since 1970, as the team's times are.
    pub started: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<u64>,
    /// A command's exit code once it ended; `null` when a signal ended it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "exit_code")]
    pub exit: Option<Option<i32>>,
    /// Characters of output the model has not read.
    pub unread: u64,
    /// A subagent's steps and tool calls so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<u32>,
    /// The job a subagent that started this one runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_job_id: Option<String>,
}

/// `exit`: absent while it runs, a number, or `null` for a signal.
mod exit_code {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(exit: &Option<Option<i32>>, s: S) -> Result<S::Ok, S::Error> {
        exit.flatten().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i32>>, D::Error> {
        Option::<i32>::deserialize(d).map(Some)
    }
}

/// Which way a job changed, on the `job` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobChange {
    Start,
    /// New output, a subagent's step (at most four a second per job).
    Update,
    End,
}

/// A subagent running as a background job, as its card names it (`job` on
/// `session/request_permission`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRef {
    pub id: String,
    pub agent: String,
    pub description: String,
}

/// A part of a job's output, read for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOutput {
    pub job: JobInfo,
    /// Where `text` starts, counting every byte the job printed; more than asked when the log
    /// no longer holds the bytes asked.
    pub offset: u64,
    pub text: String,
    /// Where the next read starts.
    pub next: u64,
    /// Whether more was printed past `next` already.
    pub more: bool,
}

/// What a front end asks of the session's jobs. Answered at once, during a turn too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum JobAsk {
    /// Every job, running first.
    List,
    /// Its output from `offset` (bytes it printed since it started), at most `limit` bytes. The
    /// person reading it does not count as the model reading it.
    Output { id: String, offset: u64, limit: Option<u64> },
    /// The person stops it (and what it started); the model is told in the job's note.
    Stop { id: String },
    /// A line to a command's input, or a message to a subagent (one that ended is woken).
    Send { id: String, text: String },
    /// A subagent job's conversation: where it is stored.
    Transcript { id: String },
}

/// The answer to a [`JobAsk`]; what cannot be done is an `Event::Error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum JobSaid {
    Listed {
        jobs: Vec<JobInfo>,
    },
    Output(JobOutput),
    Stopped {
        job: JobInfo,
    },
    Sent {
        job: JobInfo,
        /// What the job was told, in words.
        words: String,
    },
    Transcript {
        job: JobInfo,
        /// The subagent's stored session.
        session: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_said_in_the_specs_field_names_with_its_exit_as_the_spec_has_it() {
        let mut job = JobInfo {
            id: "job1".into(),
            kind: JobKind::Command,
            state: JobStatus::Running,
            description: "cargo test".into(),
            command: Some("cargo test".into()),
            agent: None,
            model: None,
            started: 5,
            ended: None,
            exit: None,
            unread: 12,
            steps: None,
            tools: None,
            owner_job_id: Some("job0".into()),
        };
        let said = serde_json::to_value(&job).unwrap();
        assert_eq!(said["ownerJobId"], "job0");
        assert!(said.get("exit").is_none(), "no exit while it runs: {said}");
        job.exit = Some(None);
        assert_eq!(serde_json::to_value(&job).unwrap()["exit"], serde_json::Value::Null);
        job.exit = Some(Some(2));
        let said = serde_json::to_value(&job).unwrap();
        assert_eq!(said["exit"], 2);
        assert_eq!(serde_json::from_value::<JobInfo>(said).unwrap(), job);
    }
}
