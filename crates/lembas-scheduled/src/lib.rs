//! Scheduled work on a linked computer (`acp.md`, `loop.json` `scheduled`): what mode a
//! scheduled turn gets and how long its approvals wait, whether a reply is silent, and the hash
//! of a watch command's output.

use lembas_permissions::Mode;
use lembas_spec::loop_spec;
use sha2::{Digest, Sha256};

/// Why a scheduled turn is refused: the `data.reason` of the `-32602` error, and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `scheduled_off` or `plan`.
    pub reason: &'static str,
    pub message: String,
}

/// How a scheduled turn runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduledTurn {
    pub mode: Mode,
    /// How long an approval waits before it counts as denied.
    pub approval_wait_seconds: u64,
}

/// The mode and approval wait of a scheduled turn. `accept` is the device's Accept scheduled
/// work; `mode` the schedule's choice (a name; absent or unknown: the default, never anything
/// wider); `max_mode` the device's `remote.max_mode`; `wait` the schedule's approval wait in
/// seconds as sent — clamped into the range in whole seconds, a fraction cut, never refused.
pub fn scheduled_turn(
    accept: bool,
    mode: Option<&str>,
    max_mode: Mode,
    wait: Option<f64>,
) -> Result<ScheduledTurn, Refusal> {
    let wait = wait.map(|w| if w.is_finite() && w > 0.0 { w.trunc().min(u64::MAX as f64) as u64 } else { 0 });
    let spec = &loop_spec().scheduled;
    if !accept {
        return Err(Refusal { reason: "scheduled_off", message: spec.texts["off"].clone() });
    }
    if mode.map(str::trim) == Some("plan") {
        return Err(Refusal { reason: "plan", message: spec.texts["plan"].clone() });
    }
    // Only the modes a schedule may choose count; anything else reads as the default.
    let chosen = mode.filter(|m| spec.modes.iter().any(|allowed| allowed == m)).unwrap_or(&spec.default_mode);
    let chosen = Mode::parse(chosen).expect("loop.json scheduled.modes are mode names");
    Ok(ScheduledTurn { mode: chosen.at_most(max_mode), approval_wait_seconds: spec.approval_wait_seconds.clamp(wait) })
}

/// Whether a scheduled reply is silent — the sentinel on its first or last non-empty line,
/// trimmed, any case, trailing full stops forgiven — and the reply with every sentinel line
/// taken out, trimmed.
pub fn silent(text: &str) -> (bool, String) {
    let sentinel = &loop_spec().scheduled.sentinel;
    // Trimmed, any case, every trailing full stop forgiven — spaces before them too.
    let is_sentinel = |line: &str| {
        line.trim().trim_end_matches(|c: char| c == '.' || c.is_whitespace()).eq_ignore_ascii_case(sentinel)
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let silent = lines.first().is_some_and(|l| is_sentinel(l)) || lines.last().is_some_and(|l| is_sentinel(l));
    // What a preview shows: every sentinel line taken out, wherever it stands.
    let kept: Vec<&str> = text.lines().filter(|l| !is_sentinel(l)).collect();
    (silent, kept.join("\n").trim().to_owned())
}

/// The watch command's hash: `sha256:` over the output's bytes, a newline, then the exit
/// status in decimal.
pub fn monitor_hash(output: &[u8], exit: i32) -> String {
    let mut hasher = MonitorHasher::default();
    hasher.update(output);
    hasher.finish(exit)
}

/// [`monitor_hash`] made as the output streams, however long it is.
#[derive(Debug, Clone, Default)]
pub struct MonitorHasher(Sha256);

impl MonitorHasher {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The hash, once the command exited with `exit`.
    pub fn finish(mut self, exit: i32) -> String {
        self.0.update(b"\n");
        self.0.update(exit.to_string().as_bytes());
        format!("sha256:{}", hex::encode(self.0.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_refused_with_its_text() {
        let err = scheduled_turn(true, Some("plan"), Mode::Auto, None).unwrap_err();
        assert_eq!(err.reason, "plan");
        assert!(err.message.starts_with("A scheduled run cannot use plan mode"));
    }

    #[test]
    fn an_approval_wait_is_whole_seconds_within_its_range() {
        let wait = |w| scheduled_turn(true, None, Mode::Auto, w).unwrap().approval_wait_seconds;
        let range = &loop_spec().scheduled.approval_wait_seconds;
        assert_eq!(wait(Some(range.min as f64 + 10.9)), range.min + 10);
        assert_eq!(wait(Some(-5.0)), range.min);
        assert_eq!(wait(Some(f64::NAN)), range.min);
        assert_eq!(wait(Some(1e30)), range.max);
        assert_eq!(wait(None), range.default);
    }

    #[test]
    fn sentinel_lines_in_the_middle_do_not_make_it_silent() {
        assert_eq!(silent("a\n[SILENT]\nb"), (false, "a\nb".to_owned()));
        assert_eq!(silent("News.\n[Silent] ."), (true, "News.".to_owned()));
        assert_eq!(silent("[silent] . .\nok"), (true, "ok".to_owned()));
        assert_eq!(silent("News.\n[Silent]."), (true, "News.".to_owned()));
    }

    #[test]
    fn the_hash_depends_on_the_exit_status() {
        assert_ne!(monitor_hash(b"ok\n", 0), monitor_hash(b"ok\n", 1));
        assert!(monitor_hash(b"", 0).starts_with("sha256:"));
    }
}
