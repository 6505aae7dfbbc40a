//! Model metadata (`models/schema.json`) and effort levels (its `levels`).
//!
//! A model's levels are `off` when its server has the thinking switch, then its efforts — or,
//! when it takes none, the one level `default`. What a request carries for a level is
//! [`request_fields`]; how a client shows the choice is [`Control`].

mod subagents;
pub use subagents::{names, names_model, subagent_model, subagent_offered};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The efforts assumed for a model whose metadata does not list any (the CLI's fallback).
pub const FALLBACK_EFFORTS: [&str; 3] = ["low", "medium", "high"];

/// Where an effort goes in an OpenAI chat request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EffortStyle {
    /// Top-level `reasoning_effort`.
    Top,
    /// `chat_template_kwargs.reasoning_effort`, which is all llama.cpp reads.
    Kwargs,
    /// Both places.
    #[default]
    Both,
}

/// How much a model's server serves at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capacity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_session: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
}

impl Capacity {
    /// Requests served at once: `parallel`, else 1 for `single_session`, else no limit.
    pub fn parallel(&self) -> Option<u32> {
        self.parallel.or(self.single_session.filter(|s| *s).map(|_| 1))
    }
}

/// What lembas knows about one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// Absent: [`FALLBACK_EFFORTS`]; empty: the model takes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efforts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_switch: Option<bool>,
    /// The level a new conversation starts with, when offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort_style: Option<EffortStyle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// How many bytes of text one of its tokens holds, as its server counted a sample
    /// (llama.cpp's `/tokenize`, at login); `None`: not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_token: Option<f64>,
}

/// Bytes of a first request (instructions in English, tools as JSON schemas) per token where
/// the server cannot count them: BPE tokenizers of current open models give 3.5–4 characters a
/// token on such text, so 3 keeps a margin. (`filesystem.md`'s `ceil(bytes / 2)` is the
/// knowledge bases' stand-in for cutting pieces; as a window's measure it refused an 8k window
/// whose half the smallest offer fits — issue #55.)
pub const ESTIMATED_BYTES_PER_TOKEN: f64 = 3.0;

/// How a client shows a model's levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Control {
    /// One level: nothing to choose.
    None,
    /// Two levels, one of them `off`: a Thinking on/off switch.
    Switch,
    /// Anything else: a slider or a list.
    Slider,
}

impl ModelInfo {
    /// About how many tokens `bytes` of text make for this model: by its own tokenizer's
    /// measure where its server counted a sample, else [`ESTIMATED_BYTES_PER_TOKEN`].
    pub fn tokens_in(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.bytes_per_token()).ceil() as u64
    }

    /// How many bytes of text one token holds: the measure where its server's count gave one,
    /// else [`ESTIMATED_BYTES_PER_TOKEN`].
    pub fn bytes_per_token(&self) -> f64 {
        self.bytes_per_token.filter(|r| r.is_finite() && *r >= 1.0).unwrap_or(ESTIMATED_BYTES_PER_TOKEN)
    }

    /// The name people see: the display name, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// Whether `name` names this model: its id, or the name people see.
    pub fn is_named(&self, name: &str) -> bool {
        self.id == name || self.display_name() == name
    }

    fn efforts(&self) -> Vec<String> {
        match &self.efforts {
            Some(list) => list.clone(),
            None => FALLBACK_EFFORTS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The levels offered, in order.
    pub fn levels(&self) -> Vec<String> {
        let mut levels = Vec::new();
        if self.thinking_switch == Some(true) {
            levels.push("off".to_owned());
        }
        let efforts = self.efforts();
        if efforts.is_empty() {
            levels.push("default".to_owned());
        } else {
            levels.extend(efforts);
        }
        levels
    }

    /// How the levels are shown.
    pub fn control(&self) -> Control {
        let levels = self.levels();
        match levels.len() {
            0 | 1 => Control::None,
            2 if levels.iter().any(|l| l == "off") => Control::Switch,
            _ => Control::Slider,
        }
    }

    /// The level a new conversation starts with: `effort` when offered, else `medium` when
    /// offered, else the first effort, else `default`.
    pub fn start_level(&self) -> String {
        let levels = self.levels();
        if let Some(effort) = self.effort.as_ref().filter(|e| levels.contains(e)) {
            return effort.clone();
        }
        if levels.iter().any(|l| l == "medium") {
            return "medium".to_owned();
        }
        self.efforts().into_iter().next().unwrap_or_else(|| "default".to_owned())
    }

    /// `level` if the model offers it, else its start level.
    pub fn effective_level(&self, level: &str) -> String {
        if self.levels().iter().any(|l| l == level) { level.to_owned() } else { self.start_level() }
    }
}

/// The fields an OpenAI chat request carries for `level` (only the keys set).
pub fn request_fields(model: &ModelInfo, level: &str) -> Map<String, Value> {
    let level = model.effective_level(level);
    let mut fields = Map::new();
    match level.as_str() {
        "off" => {
            fields.insert("chat_template_kwargs".into(), json!({ "enable_thinking": false }));
        }
        "default" => {}
        effort => {
            let style = model.effort_style.unwrap_or_default();
            if matches!(style, EffortStyle::Top | EffortStyle::Both) {
                fields.insert("reasoning_effort".into(), json!(effort));
            }
            if matches!(style, EffortStyle::Kwargs | EffortStyle::Both) {
                fields.insert("chat_template_kwargs".into(), json!({ "reasoning_effort": effort }));
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(json: Value) -> ModelInfo {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn absent_efforts_fall_back() {
        let m = model(json!({"id": "m"}));
        assert_eq!(m.levels(), ["low", "medium", "high"]);
        assert_eq!(m.start_level(), "medium");
    }

    #[test]
    fn no_efforts_is_one_default_level() {
        let m = model(json!({"id": "m", "efforts": []}));
        assert_eq!(m.levels(), ["default"]);
        assert_eq!(m.control(), Control::None);
        assert!(request_fields(&m, "high").is_empty());
    }

    #[test]
    fn capacity_reads_single_session_as_one() {
        assert_eq!(Capacity { single_session: Some(true), ..Default::default() }.parallel(), Some(1));
        assert_eq!(
            Capacity { single_session: Some(true), parallel: Some(4), ..Default::default() }.parallel(),
            Some(4)
        );
        assert_eq!(Capacity::default().parallel(), None);
    }
}
