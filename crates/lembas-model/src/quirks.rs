//! What lembas learned about a server at run time (`quirks.json`): a field it refuses, an effort
//! it does not take, streaming it cannot do. Kept per model, so the next request does not trip
//! on it again; the caller stores it (`learned.json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Quirks learned about one model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedModel {
    /// The server refuses `stream_options` (`stream-options-refused`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_stream_options: bool,
    /// The server refuses effort fields (`effort-refused`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_effort: bool,
    /// The server refuses to stream: ask for whole replies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_stream: bool,
    /// The server refuses `return_progress` (`prompt-progress`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_progress: bool,
    /// The effort levels the server said it takes, when it refused another (`effort-refused`):
    /// the model's levels narrow to these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efforts: Option<Vec<String>>,
}

/// The effort levels a refusal says the server takes: the known level names after its
/// "supported" / "allowed" / "one of" / "valid", in the order given. Empty when it names none.
pub fn advertised_efforts(message: &str) -> Vec<String> {
    const LEVELS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh", "max"];
    let m = message.to_ascii_lowercase();
    let Some(at) = ["supported", "allowed", "one of", "valid", "expected"]
        .iter()
        .filter_map(|k| m.rfind(k).map(|i| i + k.len()))
        .max()
    else {
        return Vec::new();
    };
    let mut found: Vec<String> = Vec::new();
    for word in m[at..].split(|c: char| !c.is_ascii_alphanumeric()) {
        if LEVELS.contains(&word) && !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// Everything learned, by model id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    #[serde(default)]
    pub models: BTreeMap<String, LearnedModel>,
}

impl Learned {
    pub fn model(&self, id: &str) -> LearnedModel {
        self.models.get(id).cloned().unwrap_or_default()
    }

    pub fn update(&mut self, id: &str, change: impl FnOnce(&mut LearnedModel)) {
        change(self.models.entry(id.to_owned()).or_default());
    }
}

/// Which quirk a refusal's text points at, given what the request carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    StreamOptions,
    Effort,
    Stream,
    Progress,
}

/// Reads a 400/422's text for a field the server will not take.
pub(crate) fn refused_field(status: u16, body: &str, sent: &SentFields) -> Option<Refused> {
    if !matches!(status, 400 | 422 | 501) {
        return None;
    }
    let body = body.to_ascii_lowercase();
    if sent.stream_options && body.contains("stream_options") {
        return Some(Refused::StreamOptions);
    }
    if sent.progress && body.contains("return_progress") {
        return Some(Refused::Progress);
    }
    if sent.effort && ["effort", "enable_thinking", "thinking", "chat_template_kwargs"].iter().any(|k| body.contains(k))
    {
        return Some(Refused::Effort);
    }
    if sent.stream && body.contains("stream") && (body.contains("support") || body.contains("not allowed")) {
        return Some(Refused::Stream);
    }
    None
}

/// What optional parts a request carried, so a refusal can be matched to one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SentFields {
    pub stream: bool,
    pub stream_options: bool,
    pub effort: bool,
    pub progress: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_which_efforts_are_taken() {
        assert_eq!(
            advertised_efforts("reasoning_effort 'high' is not supported; supported values: low, medium"),
            ["low", "medium"]
        );
        assert_eq!(
            advertised_efforts("Unexpected value 'xhigh'. Expected one of: 'low', 'medium', 'high'"),
            ["low", "medium", "high"]
        );
        assert!(advertised_efforts("thinking is unexpected").is_empty());
    }

    #[test]
    fn refusals_are_matched_to_what_was_sent() {
        let all = SentFields { stream: true, stream_options: true, effort: true, progress: true };
        assert_eq!(refused_field(400, "Unknown field: stream_options", &all), Some(Refused::StreamOptions));
        assert_eq!(refused_field(400, "reasoning_effort 'high' is not supported", &all), Some(Refused::Effort));
        assert_eq!(
            refused_field(400, "streaming is not supported", &SentFields { stream: true, ..Default::default() }),
            Some(Refused::Stream)
        );
        assert_eq!(refused_field(401, "stream_options", &all), None);
        assert_eq!(refused_field(400, "effort", &SentFields::default()), None);
    }

    #[test]
    fn learned_round_trips_and_stays_small() {
        let mut l = Learned::default();
        l.update("m", |m| m.no_effort = true);
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(text, r#"{"models":{"m":{"no_effort":true}}}"#);
        assert_eq!(serde_json::from_str::<Learned>(&text).unwrap(), l);
    }
}

/// Whether a server's refusal is for the conversation's length (OpenAI's `context_length_exceeded`,
/// vLLM's "maximum context length", llama.cpp's `exceed_context_size_error`, …).
pub fn refused_for_length(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "context size",
        "context window",
        "exceed_context",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "input is too long",
    ]
    .iter()
    .any(|s| m.contains(s))
}

/// The window a refusal for length states, when it states one: the number after "context
/// length is", "context size (", "context window of" or "maximum context length of".
pub fn window_in_refusal(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    [
        "maximum context length is",
        "context length is",
        "context size (",
        "context window of",
        "context length of",
        "n_ctx",
    ]
    .iter()
    .find_map(|marker| {
        let at = m.find(marker)? + marker.len();
        // The number must follow the marker closely (": 8192", " 8192"), not somewhere later.
        let rest = &m[at..];
        let start = rest.find(|c: char| c.is_ascii_digit()).filter(|i| *i <= 3)?;
        let digits: String = rest[start..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok().filter(|n| *n >= 256)
    })
}

#[cfg(test)]
mod length_tests {
    use super::*;

    #[test]
    fn refusals_for_length_and_the_window_they_state() {
        let openai =
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9012 tokens.";
        let llama = "the request exceeds the available context size (4096 tokens), try increasing it";
        let plain = "prompt is too long";
        assert!(refused_for_length(openai) && refused_for_length(llama) && refused_for_length(plain));
        assert!(!refused_for_length("invalid api key"));
        assert_eq!(window_in_refusal(openai), Some(8192));
        assert_eq!(window_in_refusal(llama), Some(4096));
        assert_eq!(window_in_refusal("maximum context length is 131,072 tokens"), Some(131_072));
        assert_eq!(window_in_refusal(plain), None);
    }
}
