//! A streamed reply, put together from its chunks: text, reasoning (as fields or inline tags),
//! tool calls assembled from fragments, usage, and why it finished.

use serde_json::Value;

use crate::wire::{FinishReason, Reply, ToolCall, Usage};

/// What happens while a reply streams, as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    Reasoning(String),
    Text(String),
    /// A tool call began; its arguments follow as [`StreamEvent::ToolCallArgs`].
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgs {
        index: usize,
        delta: String,
    },
    /// How far the server has read the prompt (llama.cpp's prompt progress).
    PromptProgress {
        done: u64,
        total: u64,
    },
    /// The request failed and is sent again after `in_seconds`. Anything streamed before it is
    /// void: the reply starts over.
    Retrying {
        reason: String,
        in_seconds: u64,
        attempt: u32,
    },
}

/// Reasoning that arrives inline, between tags, in the reply's text (`quirks.json`
/// `reasoning-fields`). An opening tag counts only before any visible text, so a reply that
/// talks about `<think>` is not mistaken for reasoning.
#[derive(Debug, Default)]
struct ThinkSplitter {
    /// Inside tags: the closing tag being waited for.
    open: Option<&'static str>,
    /// Text held back because it may be the start of a tag.
    pending: String,
    seen_text: bool,
}

const TAGS: [(&str, &str); 3] =
    [("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<reasoning>", "</reasoning>")];

impl ThinkSplitter {
    fn push(&mut self, delta: &str, out: &mut Vec<StreamEvent>) {
        self.pending.push_str(delta);
        loop {
            let text = std::mem::take(&mut self.pending);
            match self.open {
                Some(close) => match text.find(close) {
                    Some(i) => {
                        emit_reasoning(&text[..i], out);
                        self.open = None;
                        self.pending = text[i + close.len()..].trim_start_matches('\n').to_owned();
                        // The answer after the reasoning starts fresh.
                        self.seen_text = false;
                    }
                    None => {
                        let keep = partial_suffix(&text, &[close]);
                        emit_reasoning(&text[..text.len() - keep], out);
                        self.pending = text[text.len() - keep..].to_owned();
                        return;
                    }
                },
                None if !self.seen_text => {
                    let trimmed = text.trim_start();
                    if let Some((open, close)) = TAGS.iter().find(|(open, _)| trimmed.starts_with(open)) {
                        self.open = Some(close);
                        self.pending = trimmed[open.len()..].to_owned();
                        continue;
                    }
                    let openers: Vec<&str> = TAGS.iter().map(|(o, _)| *o).collect();
                    if trimmed.is_empty() || openers.iter().any(|o| o.starts_with(trimmed)) {
                        self.pending = text;
                        return;
                    }
                    self.seen_text = true;
                    emit_text(&text, out);
                    return;
                }
                None => {
                    emit_text(&text, out);
                    return;
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let text = std::mem::take(&mut self.pending);
        if self.open.is_some() { emit_reasoning(&text, out) } else { emit_text(&text, out) }
    }
}

/// How many bytes at the end of `text` could begin one of `tags`.
fn partial_suffix(text: &str, tags: &[&str]) -> usize {
    (1..=text.len())
        .rev()
        .filter(|&n| text.is_char_boundary(text.len() - n))
        .find(|&n| tags.iter().any(|t| t.len() > n && t.starts_with(&text[text.len() - n..])))
        .unwrap_or(0)
}

fn emit_text(text: &str, out: &mut Vec<StreamEvent>) {
    if !text.is_empty() {
        out.push(StreamEvent::Text(text.to_owned()));
    }
}

fn emit_reasoning(text: &str, out: &mut Vec<StreamEvent>) {
    if !text.is_empty() {
        out.push(StreamEvent::Reasoning(text.to_owned()));
    }
}

/// Builds a [`Reply`] from chunks (streamed deltas, or one whole completion).
#[derive(Debug, Default)]
pub struct Assembler {
    reply: Reply,
    think: ThinkSplitter,
    /// Call positions by the server's index.
    indexes: Vec<Option<u64>>,
    /// Anything the person could have seen has streamed.
    pub(crate) streamed: bool,
}

/// An error the server put in its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamedError(pub String);

impl Assembler {
    /// Reads one chunk; pushes what it adds onto `out`.
    pub fn chunk(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) -> Result<(), StreamedError> {
        if let Some(error) = chunk.get("error") {
            return Err(StreamedError(error_text(error)));
        }
        if let Some(p) = chunk.get("prompt_progress")
            && let (Some(total), Some(done)) = (p["total"].as_u64(), p["processed"].as_u64())
        {
            out.push(StreamEvent::PromptProgress { done: done + p["cache"].as_u64().unwrap_or(0), total });
        }
        if let Some(usage) = usage_of(chunk) {
            self.reply.usage = Some(usage);
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else { return Ok(()) };
        // A streamed chunk has `delta`; a whole completion has `message`.
        let delta = choice.get("delta").or_else(|| choice.get("message")).unwrap_or(&Value::Null);
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(key).and_then(Value::as_str) {
                self.reply.reasoning.push_str(text);
                emit_reasoning(text, out);
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            let start = out.len();
            self.think.push(text, out);
            self.absorb(&out[start..]);
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            self.call_fragment(call, out);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.reply.finish_reason = Some(FinishReason::parse(reason));
        }
        self.streamed |= !out.is_empty();
        Ok(())
    }

    fn absorb(&mut self, events: &[StreamEvent]) {
        for e in events {
            match e {
                StreamEvent::Text(t) => self.reply.text.push_str(t),
                StreamEvent::Reasoning(r) => self.reply.reasoning.push_str(r),
                _ => {}
            }
        }
    }

    fn call_fragment(&mut self, call: &Value, out: &mut Vec<StreamEvent>) {
        let index = call.get("index").and_then(Value::as_u64);
        // A fragment without an index continues the last call (`tool-call-without-index`).
        let position = match index {
            Some(i) => self.indexes.iter().position(|x| *x == Some(i)),
            None => self.reply.tool_calls.len().checked_sub(1),
        };
        let function = call.get("function").unwrap_or(&Value::Null);
        let position = match position {
            Some(p) => p,
            None => {
                let n = self.reply.tool_calls.len();
                let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
                let id = id.map_or_else(|| format!("call_{}", n + 1), str::to_owned);
                let name = function.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                out.push(StreamEvent::ToolCallStart { index: n, id: id.clone(), name: name.clone() });
                self.reply.tool_calls.push(ToolCall { id, name, arguments: String::new() });
                self.indexes.push(index);
                n
            }
        };
        if let Some(args) = function.get("arguments") {
            // Most servers stream a string; a few send the arguments as an object.
            let delta = match args {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            if !delta.is_empty() {
                self.reply.tool_calls[position].arguments.push_str(&delta);
                out.push(StreamEvent::ToolCallArgs { index: position, delta });
            }
        }
    }

    /// Whether the server said why it stopped.
    pub fn finished(&self) -> bool {
        self.reply.finish_reason.is_some()
    }

    /// The reply, with text held back for a possible tag let out.
    pub fn finish(mut self, out: &mut Vec<StreamEvent>) -> Reply {
        let start = out.len();
        self.think.finish(out);
        self.absorb(&out[start..]);
        // Each call's result is sent back under its id: ids the model left out or gave twice
        // are made unique, or the results would be mixed up (and strict templates refuse them).
        let mut seen = std::collections::HashSet::new();
        for (i, call) in self.reply.tool_calls.iter_mut().enumerate() {
            if call.id.trim().is_empty() {
                call.id = format!("call_{}", i + 1);
            }
            while !seen.insert(call.id.clone()) {
                call.id = format!("{}_{}", call.id, i + 1);
            }
        }
        self.reply
    }
}

/// Usage from `usage` (OpenAI, with cached tokens) or llama.cpp's `timings`; a block of zeros
/// is ignored (`quirks.json` `zero-usage`).
fn usage_of(chunk: &Value) -> Option<Usage> {
    if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
        let usage = Usage {
            input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
            output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            cached_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64(),
        };
        if usage.input_tokens > 0 || usage.output_tokens > 0 {
            return Some(usage);
        }
    }
    let t = chunk.get("timings").filter(|t| t.is_object())?;
    let cached = t["cache_n"].as_u64().unwrap_or(0);
    let usage = Usage {
        input_tokens: cached + t["prompt_n"].as_u64().unwrap_or(0),
        output_tokens: t["predicted_n"].as_u64().unwrap_or(0),
        cached_tokens: Some(cached),
    };
    (usage.input_tokens > 0 || usage.output_tokens > 0).then_some(usage)
}

/// One line of text from an error object or string a server sent.
pub(crate) fn error_text(error: &Value) -> String {
    let first_line = |s: &str| s.lines().next().unwrap_or("").trim().to_owned();
    match error {
        Value::String(s) => first_line(s),
        Value::Object(o) => match (o.get("message").and_then(Value::as_str), o.get("code")) {
            (Some(m), Some(code)) if !code.is_null() => format!("{} ({code})", first_line(m)),
            (Some(m), _) => first_line(m),
            _ => first_line(&error.to_string()),
        },
        other => first_line(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_given_twice_or_not_at_all_are_made_unique() {
        let mut a = Assembler::default();
        let mut out = Vec::new();
        let chunk = serde_json::json!({"choices": [{"delta": {"tool_calls": [
            {"index": 0, "id": "call_1", "function": {"name": "read", "arguments": "{}"}},
            {"index": 1, "id": "call_1", "function": {"name": "read", "arguments": "{}"}},
            {"index": 2, "id": "", "function": {"name": "read", "arguments": "{}"}}
        ]}, "finish_reason": "tool_calls"}]});
        a.chunk(&chunk, &mut out).unwrap();
        let ids: Vec<String> = a.finish(&mut out).tool_calls.into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["call_1", "call_1_2", "call_3"]);
    }
    use serde_json::json;

    fn run(chunks: &[Value]) -> (Reply, Vec<StreamEvent>) {
        let mut a = Assembler::default();
        let mut out = Vec::new();
        for c in chunks {
            a.chunk(c, &mut out).unwrap();
        }
        let reply = a.finish(&mut out);
        (reply, out)
    }

    fn content(s: &str) -> Value {
        json!({"choices": [{"delta": {"content": s}}]})
    }

    #[test]
    fn tool_calls_are_assembled_by_index() {
        let (reply, events) = run(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": "{\"pa"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "list", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "th\":\"x\"}"}}]}, "finish_reason": "tool_calls"}]}),
        ]);
        assert_eq!(
            reply.tool_calls[0],
            ToolCall { id: "a".into(), name: "read".into(), arguments: "{\"path\":\"x\"}".into() }
        );
        assert_eq!(reply.tool_calls[1].name, "list");
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert!(matches!(events[0], StreamEvent::ToolCallStart { index: 0, .. }));
    }

    #[test]
    fn fragments_without_an_index_continue_the_last_call() {
        let (reply, _) = run(&[
            json!({"choices": [{"delta": {"tool_calls": [{"function": {"name": "bash", "arguments": "{\"comm"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "and\":\"ls\"}"}}]}}]}),
        ]);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, "{\"command\":\"ls\"}");
        assert_eq!(reply.tool_calls[0].id, "call_1");
    }

    #[test]
    fn inline_think_tags_are_reasoning_even_when_split() {
        let (reply, _) = run(&[content("<th"), content("ink>plan it</thi"), content("nk>\n\nThe answer.")]);
        assert_eq!(reply.reasoning, "plan it");
        assert_eq!(reply.text, "The answer.");
    }

    #[test]
    fn a_tag_after_text_is_text() {
        let (reply, _) = run(&[content("Use <think> tags like this.")]);
        assert_eq!(reply.text, "Use <think> tags like this.");
        assert!(reply.reasoning.is_empty());
    }

    #[test]
    fn reasoning_fields_and_cached_usage() {
        let (reply, _) = run(&[
            json!({"choices": [{"delta": {"reasoning_content": "hmm"}}]}),
            json!({"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 90}}}),
        ]);
        assert_eq!(reply.reasoning, "hmm");
        assert_eq!(reply.usage, Some(Usage { input_tokens: 100, output_tokens: 5, cached_tokens: Some(90) }));
    }

    #[test]
    fn llama_cpp_timings_count_the_cache_and_zero_usage_is_ignored() {
        let (reply, _) = run(&[
            json!({"usage": {"prompt_tokens": 0, "completion_tokens": 0}, "timings": {"cache_n": 30, "prompt_n": 10, "predicted_n": 4}}),
        ]);
        assert_eq!(reply.usage, Some(Usage { input_tokens: 40, output_tokens: 4, cached_tokens: Some(30) }));
    }

    #[test]
    fn an_error_in_the_stream_is_an_error() {
        let mut a = Assembler::default();
        let err = a
            .chunk(&json!({"error": {"code": 500, "message": "slot unavailable\nmore"}}), &mut Vec::new())
            .unwrap_err();
        assert_eq!(err, StreamedError("slot unavailable (500)".into()));
    }
}
