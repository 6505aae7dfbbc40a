//! Schedules on a LLeMbas server (`acp.md` *Schedules*: the `/api/v2/schedules` routes, which take
//! the device's token) as `/schedule` asks for them and shows them. The shapes are the server's;
//! these read the fields the spec says a CLI relies on and let the rest pass.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Mode;

/// A schedule as the server lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Schedule {
    pub id: String,
    pub title: String,
    pub instruction: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub next_run: Option<String>,
    pub last_run: Option<LastRun>,
    pub running: bool,
    /// Where it runs, when on a linked computer (`null`: on the server).
    pub runs_on: Option<RunsOn>,
    /// What it watches, in monitor mode (`{ kind: "url" | "command", … }`).
    pub watch: Option<Value>,
}

/// How a schedule's last run went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LastRun {
    pub status: String,
    pub timing: Option<String>,
    pub due_at: Option<String>,
    pub finished_at: Option<String>,
    pub preview: Option<String>,
    pub error: Option<Value>,
}

/// The linked computer a schedule runs on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunsOn {
    pub device: Option<String>,
    pub device_name: Option<String>,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub approval_wait_minutes: Option<u32>,
}

/// One run of a schedule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScheduleRun {
    pub id: String,
    /// `ok`, `failed`, `silent`, `cancelled`, `running`, `unchanged` (a watch saw nothing new), …
    pub status: String,
    pub due_at: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub model: Option<Value>,
    pub preview: Option<String>,
    pub error: Option<Value>,
}

/// What the server made of the person's words (`POST /api/v2/schedules/compile`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Compiled {
    pub ok: bool,
    /// Why it could not, when not `ok`.
    pub reason: Option<String>,
    pub title: Option<String>,
    pub instruction: Option<String>,
    pub rule: Option<Value>,
    pub description: Option<String>,
    pub next_runs: Vec<String>,
    pub timezone: Option<String>,
}

/// An error as the server gives one: a string, or an object with `text` (or `message`).
pub fn error_text(error: &Value) -> Option<String> {
    match error {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Object(fields) => {
            fields.get("text").or_else(|| fields.get("message")).and_then(Value::as_str).map(str::to_owned)
        }
        other => Some(other.to_string()),
    }
}

impl ScheduleRun {
    /// The name of the model it ran on, when the server says.
    pub fn model_name(&self) -> Option<&str> {
        self.model.as_ref().and_then(|m| m.get("name").or(Some(m))).and_then(Value::as_str)
    }
}

/// What `/schedule` asks the server, by schedule id.
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleAsk {
    List,
    /// A schedule from the person's words, run on this computer in `cwd`, in `mode`.
    Create {
        words: String,
        cwd: String,
        mode: Mode,
    },
    Pause {
        id: String,
    },
    Resume {
        id: String,
    },
    /// Run it now, once.
    Run {
        id: String,
    },
    Runs {
        id: String,
    },
    Delete {
        id: String,
    },
}

/// The server's answer to a [`ScheduleAsk`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleSaid {
    Listed(Vec<Schedule>),
    /// Made; `note` says what else the person should know (this computer takes no scheduled
    /// work, say).
    Created {
        schedule: Box<Schedule>,
        compiled: Box<Compiled>,
        note: Option<String>,
    },
    /// The server could not read the words as a schedule.
    NotUnderstood {
        reason: String,
    },
    /// Paused, resumed, started or deleted: which, and the schedule's title.
    Done {
        what: &'static str,
        title: String,
    },
    Runs {
        title: String,
        runs: Vec<ScheduleRun>,
    },
    Failed {
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schedule_reads_what_the_cli_relies_on_and_lets_the_rest_pass() {
        let schedule: Schedule = serde_json::from_value(json!({
            "id": "sch_1", "title": "Build", "instruction": "check the build", "enabled": true,
            "next_run": "2026-12-06T09:00:00Z", "running": false, "extra": [1, 2],
            "last_run": { "status": "failed", "error": { "text": "no model" } },
            "runs_on": { "device": "dev_1", "cwd": "/w/app", "mode": "edit", "approval_wait_minutes": 30 },
            "watch": null
        }))
        .unwrap();
        assert_eq!(schedule.title, "Build");
        let last = schedule.last_run.unwrap();
        assert_eq!(error_text(last.error.as_ref().unwrap()).as_deref(), Some("no model"));
        assert_eq!(schedule.runs_on.unwrap().cwd.as_deref(), Some("/w/app"));
        let run: ScheduleRun =
            serde_json::from_value(json!({ "id": "r1", "status": "unchanged", "model": { "name": "Qwen" } })).unwrap();
        assert_eq!(run.model_name(), Some("Qwen"));
    }
}
