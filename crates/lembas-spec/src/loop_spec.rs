//! `spec/loop.json`: how one prompt runs, its numbers and its fixed texts.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

static LOOP_JSON: &str = include_str!("../../../spec/loop.json");

/// The parsed `loop.json`, read once.
pub fn loop_spec() -> &'static LoopSpec {
    static SPEC: OnceLock<LoopSpec> = OnceLock::new();
    SPEC.get_or_init(|| serde_json::from_str(LOOP_JSON).expect("spec/loop.json is checked by this crate's tests"))
}

/// `loop.json`, each section by its name. Sections that later parts of lembas type for
/// themselves (`subagents`, `team`, `phone`) and those only read whole are kept as JSON.
/// Every section is named (no `flatten`, which would read the whole file into a tree of its
/// own first and then the typed sections out of it — twice the work, on every start), so a
/// new section fails this crate's tests until it is named here.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    pub steps: Steps,
    pub budgets: Budgets,
    pub wrap_up: WrapUp,
    pub nudges: Nudges,
    pub parallel: Parallel,
    pub jobs: Jobs,
    pub context: ContextSpec,
    pub progress: ProgressSpec,
    pub scheduled: ScheduledSpec,
    pub about: Value,
    pub capacity: Value,
    pub subagents: Value,
    pub team: Value,
    pub phone: Value,
}

#[derive(Debug, Deserialize)]
pub struct Steps {
    pub max: u32,
    pub subagent_max: u32,
}

#[derive(Debug, Deserialize)]
pub struct Budgets {
    pub cli: BudgetValues,
    /// How each limit is named in the wrap-up message (`steps` → "step limit").
    pub limit: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub struct BudgetValues {
    pub tokens: Option<u64>,
    pub seconds: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub struct WrapUp {
    pub message: String,
}

#[derive(Debug, Deserialize)]
pub struct Nudges {
    pub empty_reply: String,
    pub cut_off: String,
}

#[derive(Debug, Deserialize)]
pub struct Parallel {
    pub max: usize,
}

#[derive(Debug, Deserialize)]
pub struct Jobs {
    pub marks: JobMarks,
    pub id_prefix: String,
    pub limit: JobLimit,
}

#[derive(Debug, Deserialize)]
pub struct JobMarks {
    pub finished: String,
    pub finished_body: String,
    pub killed_body: String,
    pub report_body: String,
}

#[derive(Debug, Deserialize)]
pub struct JobLimit {
    pub default: usize,
}

/// `context`: result ids, brackets, stubs, the output cap, compaction, the environment lines and
/// the session note.
#[derive(Debug, Deserialize)]
pub struct ContextSpec {
    pub ids: Ids,
    pub read_header: String,
    pub read_header_empty: String,
    pub read_more: String,
    pub read_empty: String,
    pub edit_header: String,
    pub header: String,
    pub unchanged: String,
    pub same_result: String,
    pub elided: String,
    pub created: String,
    pub no_result: String,
    pub recall_header: String,
    pub sha_digits: usize,
    pub cap: Cap,
    pub dedupe: Dedupe,
    pub compaction: Compaction,
    pub env: EnvTexts,
    pub note: NoteTexts,
    pub mcp_wait_ms: u64,
}

#[derive(Debug, Deserialize)]
pub struct Ids {
    pub digits: usize,
}

/// The output cap (`context.md` §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct Cap {
    pub max_lines: usize,
    pub max_chars: usize,
    pub head_lines: usize,
    pub head_chars: usize,
    pub tail_lines: usize,
    pub tail_chars: usize,
}

#[derive(Debug, Deserialize)]
pub struct Dedupe {
    pub by_hash: Vec<String>,
    pub by_result: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct Compaction {
    pub heading: String,
    pub line: String,
    pub rows: usize,
}

#[derive(Debug, Deserialize)]
pub struct EnvTexts {
    pub project: String,
    pub started: String,
}

/// `context.note`: the blocks of a `<session-note>`. [`NoteTexts::order`] is the order the
/// blocks go in, which is the order `loop.json` lists them.
#[derive(Debug)]
pub struct NoteTexts {
    pub open: String,
    pub close: String,
    pub empty: String,
    /// Every text of the note by its key (`date`, `mode`, `plan`, …).
    pub texts: BTreeMap<String, String>,
    /// The block keys in `loop.json`'s order, without `about`, `open`, `close`, `empty` and
    /// `personal` (which is a value, not a block).
    pub order: Vec<String>,
}

impl NoteTexts {
    /// A note text by key. Panics on a key `loop.json` does not have: that is a bug in lembas.
    pub fn text(&self, key: &str) -> &str {
        self.texts.get(key).unwrap_or_else(|| panic!("loop.json context.note has no {key:?}"))
    }
}

impl<'de> Deserialize<'de> for NoteTexts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // serde_json's preserve_order keeps the file's key order, which is the note's order.
        let map = serde_json::Map::<String, Value>::deserialize(d)?;
        let mut texts = BTreeMap::new();
        let mut order = Vec::new();
        for (key, value) in map {
            let Value::String(text) = value else {
                return Err(D::Error::custom(format!("context.note.{key} is not a string")));
            };
            if !matches!(key.as_str(), "about" | "open" | "close" | "empty" | "personal") {
                order.push(key.clone());
            }
            texts.insert(key, text);
        }
        let take = |k: &str| texts.get(k).cloned().ok_or_else(|| D::Error::custom(format!("context.note.{k} missing")));
        Ok(NoteTexts { open: take("open")?, close: take("close")?, empty: take("empty")?, texts, order })
    }
}

/// `progress`: the phases, their texts and the line (`progress.md`).
#[derive(Debug, Deserialize)]
pub struct ProgressSpec {
    pub phases: Vec<String>,
    /// By i18n key: `queued`, `queued.ahead`, …
    pub texts: BTreeMap<String, String>,
    pub reason: BTreeMap<String, String>,
    pub what: BTreeMap<String, String>,
    pub stopped_reason: BTreeMap<String, String>,
    pub line: String,
    pub no_elapsed: Vec<String>,
    pub what_max: usize,
    pub pace_per_second: u32,
}

/// `scheduled`: scheduled turns on a linked computer and the watch command.
#[derive(Debug, Deserialize)]
pub struct ScheduledSpec {
    pub modes: Vec<String>,
    pub default_mode: String,
    pub approval_wait_seconds: Range,
    pub sentinel: String,
    pub statuses: Vec<String>,
    pub monitor: MonitorSpec,
    pub texts: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub struct MonitorSpec {
    pub timeout_seconds: Range,
    pub excerpt_chars: usize,
    pub output_max_bytes: usize,
}

/// A default clamped between a minimum and a maximum.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Range {
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

impl Range {
    /// `value` clamped into the range, or the default when there is none.
    pub fn clamp(&self, value: Option<u64>) -> u64 {
        value.map_or(self.default, |v| v.clamp(self.min, self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_json_parses_with_the_spec_numbers() {
        let spec = loop_spec();
        assert_eq!(spec.parallel.max, 4);
        assert_eq!(spec.context.ids.digits, 4);
        assert_eq!(spec.context.cap.max_lines, 400);
        assert_eq!(spec.context.compaction.rows, 50);
        assert_eq!(spec.progress.phases.len(), 13);
        assert!(spec.team.is_object() && spec.subagents.is_object());
    }

    #[test]
    fn note_blocks_keep_the_files_order() {
        let order = &loop_spec().context.note.order;
        assert_eq!(&order[..4], ["date", "mode", "plan_ended", "plan"]);
        assert!(!order.iter().any(|k| k == "personal" || k == "open"));
    }

    #[test]
    fn range_clamps_and_defaults() {
        let wait = loop_spec().scheduled.approval_wait_seconds;
        assert_eq!(wait.clamp(None), 1800);
        assert_eq!(wait.clamp(Some(5)), 60);
        assert_eq!(wait.clamp(Some(10_000_000)), 86_400);
    }
}
