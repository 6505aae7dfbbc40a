//! Scheduled work on a linked computer (`acp.md`, `loop.json` `scheduled`): a run the server
//! starts here as an agent turn. Judged again at every `session/new` and `session/prompt` that
//! carries it; its mode is the schedule's, lowered to the device's widest and never widened
//! while it runs; its approvals wait the schedule's wait and then count as denied; nobody answers
//! its questions; its answer reports the run.

use lembas_protocol::{DoneReason, Mode};
use serde_json::{Value, json};

use crate::remote::Limits;

/// A scheduled run as the client marks it (`_meta.lembas.scheduled`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    pub schedule_id: String,
    pub run_id: String,
    /// The schedule's mode, as sent (absent: none chosen).
    pub mode: Option<String>,
    /// The schedule's approval wait in seconds, as sent.
    pub approval_wait_s: Option<f64>,
}

/// A run admitted here: its marks, the mode it runs in, how long its approvals wait.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Admitted {
    pub run: Run,
    pub mode: Mode,
    pub wait_s: u64,
}

impl Admitted {
    /// `scheduled` on a permission request of this run.
    pub(crate) fn on_permission(&self) -> Value {
        json!({ "schedule_id": self.run.schedule_id, "run_id": self.run.run_id, "wait_s": self.wait_s })
    }

    /// The feedback the model reads when nobody answered an approval in time.
    pub(crate) fn unanswered(&self) -> String {
        let minutes = (self.wait_s / 60).to_string();
        lembas_spec::render(&lembas_spec::loop_spec().scheduled.texts["denied"], &[("minutes", &minutes)])
    }
}

/// The run `meta` marks, if it marks one.
pub(crate) fn sent(meta: Option<&serde_json::Map<String, Value>>) -> Option<Run> {
    let scheduled = meta?.get("lembas")?.get("scheduled")?.as_object()?;
    let word = |key: &str| scheduled.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(Run {
        schedule_id: word("schedule_id").unwrap_or_default(),
        run_id: word("run_id").unwrap_or_default(),
        mode: word("mode"),
        approval_wait_s: scheduled.get("approval_wait_s").and_then(Value::as_f64),
    })
}

/// Whether this device takes `run` now, and how: refused with the spec's text and reason
/// (`scheduled_off`, `plan`) otherwise. Off the link (an editor on stdio) nothing is scheduled.
pub(crate) fn admit(run: Run, limits: Option<&Limits>) -> Result<Admitted, agent_client_protocol::Error> {
    let accept = limits.is_some_and(|l| l.enabled && l.scheduled);
    let max_mode = limits.map_or(Mode::Manual, |l| l.max_mode);
    match lembas_scheduled::scheduled_turn(accept, run.mode.as_deref(), max_mode, run.approval_wait_s) {
        Ok(turn) => Ok(Admitted { run, mode: turn.mode, wait_s: turn.approval_wait_seconds }),
        Err(refusal) => Err(crate::refused(&refusal.message, refusal.reason)),
    }
}

/// How a turn ended, for its prompt's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnEnd {
    pub reason: DoneReason,
    /// The turn's final reply, as written.
    pub text: String,
    /// The error that ended it, when one did.
    pub error: Option<String>,
}

/// The run's outcome in the prompt's answer: `cancelled`, `failed` (with the error, or because
/// there was no reply), `silent` (the sentinel on the reply's first or last line) or `ok`.
pub(crate) fn outcome(run_id: &str, end: &TurnEnd) -> Value {
    let texts = &lembas_spec::loop_spec().scheduled.texts;
    let (status, error) = match end.reason {
        DoneReason::Cancelled => ("cancelled", None),
        DoneReason::Failed => ("failed", Some(end.error.clone().unwrap_or_else(|| texts["no_reply"].clone()))),
        _ if end.text.trim().is_empty() => ("failed", Some(texts["no_reply"].clone())),
        _ if lembas_scheduled::silent(&end.text).0 => ("silent", None),
        _ => ("ok", None),
    };
    json!({ "run_id": run_id, "status": status, "text": end.text, "error": error })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mode: Option<&str>) -> Run {
        Run {
            schedule_id: "s1".into(),
            run_id: "r7".into(),
            mode: mode.map(str::to_owned),
            approval_wait_s: Some(90.7),
        }
    }

    fn limits(scheduled: bool, max_mode: Mode) -> Limits {
        Limits { enabled: true, roots: Vec::new(), max_mode, require_trust: true, scheduled }
    }

    #[test]
    fn a_run_is_admitted_by_the_devices_setting_and_its_mode_rules() {
        let off = admit(run(Some("edit")), Some(&limits(false, Mode::Auto))).unwrap_err();
        assert_eq!((off.code.into(), off.data.unwrap()["reason"].clone()), (-32602i32, json!("scheduled_off")));
        assert!(off.message.starts_with("This computer does not accept scheduled work"));
        assert!(admit(run(Some("edit")), None).is_err(), "nothing is scheduled off the link");
        let plan = admit(run(Some("plan")), Some(&limits(true, Mode::Auto))).unwrap_err();
        assert_eq!(plan.data.unwrap()["reason"], "plan");
        let admitted = admit(run(None), Some(&limits(true, Mode::Auto))).unwrap();
        assert_eq!((admitted.mode, admitted.wait_s), (Mode::Edit, 90));
        assert_eq!(admit(run(Some("auto")), Some(&limits(true, Mode::Edit))).unwrap().mode, Mode::Edit);
        assert_eq!(admitted.unanswered(), "Nobody answered this approval within 1 minutes, so it counts as denied.");
    }

    #[test]
    fn the_outcome_says_how_the_run_went() {
        let end = |reason, text: &str, error: Option<&str>| TurnEnd {
            reason,
            text: text.into(),
            error: error.map(str::to_owned),
        };
        assert_eq!(outcome("r", &end(DoneReason::Answered, "All wrapped.", None))["status"], "ok");
        assert_eq!(outcome("r", &end(DoneReason::Answered, "Nothing new.\n[silent].", None))["status"], "silent");
        assert_eq!(outcome("r", &end(DoneReason::Limit, "Half done.", None))["status"], "ok");
        assert_eq!(outcome("r", &end(DoneReason::Cancelled, "", None))["status"], "cancelled");
        let failed = outcome("r", &end(DoneReason::Failed, "", Some("the server refused")));
        assert_eq!((failed["status"].clone(), failed["error"].clone()), (json!("failed"), json!("the server refused")));
        let empty = outcome("r", &end(DoneReason::Answered, "  ", None));
        assert_eq!(
            (empty["status"].clone(), empty["error"].clone()),
            (json!("failed"), json!("The run ended without a reply."))
        );
    }
}
