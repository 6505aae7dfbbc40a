//! Progress (`progress.md`): what a session is doing, as one of a fixed set of phases with its
//! data, and the one line every client draws for it (`Writing: 12.5 tok/s · 5s`).
//!
//! [`Progress`] serializes exactly as the protocol's object — `{"phase": "running_tool",
//! "since": 1762790400000, "tool": "bash", "what": "cargo test"}` — with unknown fields left out,
//! so the same value crosses the ACP link unchanged.

use lembas_spec::{loop_spec, render};
use serde::{Deserialize, Serialize};

/// A progress object: the phase, its data, and when the phase began (Unix ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    #[serde(flatten)]
    pub phase: Phase,
    pub since: i64,
}

/// Why a model cannot take the turn yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelWait {
    Busy,
    Slots,
    Group,
}

/// What the person is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PersonWait {
    Approval,
    Question,
    Plan,
}

/// Why a turn stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Person,
    Steps,
    Budget,
}

/// The thirteen phases and their data (`loop.json` `progress.fields`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    Queued {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ahead: Option<u64>,
    },
    WaitingForModel {
        model: String,
        reason: ModelWait,
    },
    LoadingModel {
        model: String,
    },
    ReadingPrompt {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        done: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
    },
    Thinking,
    Writing {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
    },
    RunningTool {
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        what: Option<String>,
    },
    WaitingForPerson {
        what: PersonWait,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    WaitingForSubagents {
        running: u64,
    },
    Compacting,
    Retrying {
        reason: String,
        #[serde(rename = "in")]
        in_seconds: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u64>,
    },
    Stopped {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<StopReason>,
    },
    Failed {
        reason: String,
    },
}

impl ModelWait {
    /// The word the protocol uses, which keys `progress.reason`.
    pub fn wire_name(self) -> &'static str {
        match self {
            ModelWait::Busy => "busy",
            ModelWait::Slots => "slots",
            ModelWait::Group => "group",
        }
    }
}

impl PersonWait {
    /// The word the protocol uses, which keys `progress.what`.
    pub fn wire_name(self) -> &'static str {
        match self {
            PersonWait::Approval => "approval",
            PersonWait::Question => "question",
            PersonWait::Plan => "plan",
        }
    }
}

impl StopReason {
    /// The word the protocol uses, which keys `progress.stopped_reason`.
    pub fn wire_name(self) -> &'static str {
        match self {
            StopReason::Person => "person",
            StopReason::Steps => "steps",
            StopReason::Budget => "budget",
        }
    }
}

impl Phase {
    /// The phase's name as the protocol spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Queued { .. } => "queued",
            Phase::WaitingForModel { .. } => "waiting_for_model",
            Phase::LoadingModel { .. } => "loading_model",
            Phase::ReadingPrompt { .. } => "reading_prompt",
            Phase::Thinking => "thinking",
            Phase::Writing { .. } => "writing",
            Phase::RunningTool { .. } => "running_tool",
            Phase::WaitingForPerson { .. } => "waiting_for_person",
            Phase::WaitingForSubagents { .. } => "waiting_for_subagents",
            Phase::Compacting => "compacting",
            Phase::Retrying { .. } => "retrying",
            Phase::Stopped { .. } => "stopped",
            Phase::Failed { .. } => "failed",
        }
    }

    /// Whether `other` continues this phase (only its data changed), so `since` is kept: the
    /// same phase for the same thing — the same tool, the same model.
    pub fn continues(&self, other: &Phase) -> bool {
        match (self, other) {
            (Phase::RunningTool { tool: a, what: wa }, Phase::RunningTool { tool: b, what: wb }) => a == b && wa == wb,
            (Phase::WaitingForModel { model: a, .. }, Phase::WaitingForModel { model: b, .. })
            | (Phase::LoadingModel { model: a }, Phase::LoadingModel { model: b }) => a == b,
            (Phase::WaitingForPerson { what: a, tool: ta }, Phase::WaitingForPerson { what: b, tool: tb }) => {
                a == b && ta == tb
            }
            (Phase::Retrying { attempt: a, .. }, Phase::Retrying { attempt: b, .. }) => a == b,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// A call's short title for `running_tool`'s `what`: its first line, at most `what_max`
/// characters.
pub fn short_what(text: &str) -> String {
    let max = loop_spec().progress.what_max;
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

impl Progress {
    pub fn new(phase: Phase, since: i64) -> Self {
        Progress { phase, since }
    }

    /// The phase's text, fields filled (`progress.texts`). `now` (Unix ms) counts `retrying`'s
    /// `in` down.
    pub fn text(&self, now: i64) -> String {
        let spec = &loop_spec().progress;
        let t = |key: &str| spec.texts.get(key).map(String::as_str).unwrap_or_else(|| panic!("progress.texts.{key}"));
        match &self.phase {
            Phase::Queued { ahead: None } => t("queued").to_owned(),
            Phase::Queued { ahead: Some(n) } => render(t("queued.ahead"), &[("ahead", &n.to_string())]),
            Phase::WaitingForModel { model, reason } => {
                render(t("waiting_for_model"), &[("model", model), ("reason", &spec.reason[reason.wire_name()])])
            }
            Phase::LoadingModel { model } => render(t("loading_model"), &[("model", model)]),
            Phase::ReadingPrompt { done: Some(done), total: Some(total) } if *total > 0 => {
                let percent = done.saturating_mul(100) / total;
                render(
                    t("reading_prompt"),
                    &[("done", &done.to_string()), ("total", &total.to_string()), ("percent", &percent.to_string())],
                )
            }
            Phase::ReadingPrompt { .. } => t("reading_prompt.bare").to_owned(),
            Phase::Thinking => t("thinking").to_owned(),
            Phase::Writing { rate: Some(rate) } => render(t("writing"), &[("rate", &format!("{rate:.1}"))]),
            Phase::Writing { rate: None } => t("writing.bare").to_owned(),
            Phase::RunningTool { tool, what: Some(what) } => {
                render(t("running_tool"), &[("tool", tool), ("what", what)])
            }
            Phase::RunningTool { tool, what: None } => render(t("running_tool.bare"), &[("tool", tool)]),
            Phase::WaitingForPerson { what, tool } => {
                let what = match (what, tool) {
                    (PersonWait::Approval, Some(tool)) => render(&spec.what["approval"], &[("tool", tool)]),
                    (PersonWait::Approval, None) => spec.what["approval.bare"].clone(),
                    (other, _) => spec.what[other.wire_name()].clone(),
                };
                render(t("waiting_for_person"), &[("what", &what)])
            }
            Phase::WaitingForSubagents { running } => {
                render(t("waiting_for_subagents"), &[("running", &running.to_string())])
            }
            Phase::Compacting => t("compacting").to_owned(),
            Phase::Retrying { reason, in_seconds, .. } => {
                let passed = u64::try_from((now - self.since).max(0) / 1000).unwrap_or(0);
                let left = in_seconds.saturating_sub(passed);
                render(t("retrying"), &[("in", &left.to_string()), ("reason", reason)])
            }
            Phase::Stopped { reason: None } => t("stopped").to_owned(),
            Phase::Stopped { reason: Some(r) } => {
                render(t("stopped.reason"), &[("reason", &spec.stopped_reason[r.wire_name()])])
            }
            Phase::Failed { reason } => render(t("failed"), &[("reason", reason)]),
        }
    }

    /// The line a client draws: `text · elapsed`, or the text alone for `stopped` and `failed`.
    pub fn line(&self, now: i64) -> String {
        let spec = &loop_spec().progress;
        let text = self.text(now);
        if spec.no_elapsed.iter().any(|p| p == self.phase.name()) {
            return text;
        }
        render(&spec.line, &[("text", &text), ("elapsed", &elapsed((now - self.since).max(0) / 1000))])
    }
}

/// Milliseconds since 1970: the clock a progress object's `since` (and the team's times) are in.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// A duration as a ticking clock writes it: `5s`, `1m 05s`, `1h 02m`.
pub fn elapsed(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_is_written_like_a_clock() {
        assert_eq!(elapsed(0), "0s");
        assert_eq!(elapsed(59), "59s");
        assert_eq!(elapsed(65), "1m 05s");
        assert_eq!(elapsed(3725), "1h 02m");
    }

    #[test]
    fn serializes_as_the_protocol_object() {
        let p = Progress::new(Phase::RunningTool { tool: "bash".into(), what: Some("cargo test".into()) }, 17);
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"phase":"running_tool","tool":"bash","what":"cargo test","since":17}"#
        );
        let w = Progress::new(Phase::Writing { rate: None }, 1);
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"phase":"writing","since":1}"#);
        let back: Progress = serde_json::from_str(r#"{"phase":"retrying","since":5,"reason":"x","in":3}"#).unwrap();
        assert_eq!(back.phase, Phase::Retrying { reason: "x".into(), in_seconds: 3, attempt: None });
    }

    #[test]
    fn data_changes_continue_a_phase_and_new_things_do_not() {
        let a = Phase::Writing { rate: Some(1.0) };
        assert!(a.continues(&Phase::Writing { rate: Some(9.0) }));
        let bash = Phase::RunningTool { tool: "bash".into(), what: Some("ls".into()) };
        assert!(!bash.continues(&Phase::RunningTool { tool: "bash".into(), what: Some("pwd".into()) }));
        assert!(!a.continues(&Phase::Thinking));
    }

    #[test]
    fn what_is_one_short_line() {
        assert_eq!(short_what("ls -la\nsecond"), "ls -la");
        let long = "x".repeat(200);
        assert_eq!(short_what(&long).chars().count(), 80);
    }

    #[test]
    fn every_phase_name_is_the_specs() {
        let names = &loop_spec().progress.phases;
        for phase in [Phase::Thinking, Phase::Compacting, Phase::Failed { reason: String::new() }] {
            assert!(names.iter().any(|n| n == phase.name()));
        }
    }
}
