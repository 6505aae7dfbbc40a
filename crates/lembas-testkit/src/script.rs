//! What the fake server answers, one scripted reply per chat request.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    /// The raw arguments text (it may be deliberately malformed).
    pub arguments: String,
}

/// One scripted answer to a chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scripted {
    /// A reply, streamed as the request asks (or whole, when it does not stream).
    Reply {
        #[serde(default)]
        reasoning: String,
        #[serde(default)]
        text: String,
        #[serde(default)]
        tool_calls: Vec<ScriptedCall>,
        /// `[prompt, completion, cached]` tokens.
        #[serde(default)]
        usage: Option<[u64; 3]>,
        #[serde(default)]
        finish_reason: Option<String>,
        /// Wait before each streamed chunk.
        #[serde(default)]
        chunk_delay_ms: u64,
        /// Drop the connection after this many chunks.
        #[serde(default)]
        cut_after: Option<usize>,
        /// Go silent after this many chunks (the client's idle timeout must end it).
        #[serde(default)]
        stall_after: Option<usize>,
        /// Send this error as a `data:` event after the chunks, as llama.cpp does.
        #[serde(default)]
        stream_error: Option<String>,
        /// After this many chunks, send only `: ping` comments from then on (a server that
        /// keeps the connection warm but never says more).
        #[serde(default)]
        pings_after: Option<usize>,
    },
    /// Never answer at all: not even the response's headers.
    Silent,
    /// An HTTP error status with a body.
    Status {
        status: u16,
        body: String,
        #[serde(default)]
        retry_after: Option<u64>,
    },
}

impl Scripted {
    pub fn text(text: impl Into<String>) -> Self {
        Scripted::Reply {
            reasoning: String::new(),
            text: text.into(),
            tool_calls: Vec::new(),
            usage: None,
            finish_reason: None,
            chunk_delay_ms: 0,
            cut_after: None,
            stall_after: None,
            stream_error: None,
            pings_after: None,
        }
    }

    /// A reply that calls one tool with `arguments` (a JSON value, sent as its text).
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Scripted::text("").with_call(name, &arguments.to_string())
    }

    /// Adds a call with raw arguments text; ids count from `call_1` within the reply.
    pub fn with_call(mut self, name: &str, arguments: &str) -> Self {
        if let Scripted::Reply { tool_calls, .. } = &mut self {
            let id = format!("call_{}", tool_calls.len() + 1);
            tool_calls.push(ScriptedCall { id, name: name.to_owned(), arguments: arguments.to_owned() });
        }
        self
    }

    pub fn with_reasoning(mut self, text: &str) -> Self {
        if let Scripted::Reply { reasoning, .. } = &mut self {
            *reasoning = text.to_owned();
        }
        self
    }

    pub fn with_usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        if let Scripted::Reply { usage, .. } = &mut self {
            *usage = Some([prompt, completion, cached]);
        }
        self
    }

    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        if let Scripted::Reply { chunk_delay_ms, .. } = &mut self {
            *chunk_delay_ms = ms;
        }
        self
    }

    pub fn cut_after(mut self, chunks: usize) -> Self {
        if let Scripted::Reply { cut_after, .. } = &mut self {
            *cut_after = Some(chunks);
        }
        self
    }

    /// The reply ends for this reason (`length`: cut off at the output limit).
    pub fn with_finish_reason(mut self, reason: &str) -> Self {
        if let Scripted::Reply { finish_reason, .. } = &mut self {
            *finish_reason = Some(reason.to_owned());
        }
        self
    }

    pub fn pings_after(mut self, chunks: usize) -> Self {
        if let Scripted::Reply { pings_after, .. } = &mut self {
            *pings_after = Some(chunks);
        }
        self
    }

    pub fn stall_after(mut self, chunks: usize) -> Self {
        if let Scripted::Reply { stall_after, .. } = &mut self {
            *stall_after = Some(chunks);
        }
        self
    }

    pub fn with_stream_error(mut self, message: &str) -> Self {
        if let Scripted::Reply { stream_error, .. } = &mut self {
            *stream_error = Some(message.to_owned());
        }
        self
    }

    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Scripted::Status { status, body: body.into(), retry_after: None }
    }

    pub fn status_retry_after(status: u16, body: impl Into<String>, seconds: u64) -> Self {
        Scripted::Status { status, body: body.into(), retry_after: Some(seconds) }
    }

    /// The streamed chunks of a reply, in order (without `[DONE]`).
    pub(crate) fn chunks(&self, model: &str, with_usage: bool) -> Vec<Value> {
        let Scripted::Reply { reasoning, text, tool_calls, usage, finish_reason, .. } = self else { return Vec::new() };
        let frame = |delta: Value, finish: Option<&str>| {
            json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
                    "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
        };
        let mut out = vec![frame(json!({ "role": "assistant" }), None)];
        for piece in reasoning.split_inclusive(' ') {
            out.push(frame(json!({ "reasoning_content": piece }), None));
        }
        for piece in text.split_inclusive(' ') {
            out.push(frame(json!({ "content": piece }), None));
        }
        for (index, call) in tool_calls.iter().enumerate() {
            out.push(frame(
                json!({ "tool_calls": [{ "index": index, "id": call.id, "type": "function", "function": { "name": call.name, "arguments": "" } }] }),
                None,
            ));
            // The arguments in two halves, as servers stream them.
            let cut = call.arguments.char_indices().nth(call.arguments.chars().count() / 2).map_or(0, |(i, _)| i);
            for part in [&call.arguments[..cut], &call.arguments[cut..]] {
                if !part.is_empty() {
                    out.push(frame(
                        json!({ "tool_calls": [{ "index": index, "function": { "arguments": part } }] }),
                        None,
                    ));
                }
            }
        }
        let finish =
            finish_reason.clone().unwrap_or_else(|| if tool_calls.is_empty() { "stop" } else { "tool_calls" }.into());
        out.push(frame(json!({}), Some(&finish)));
        if let (true, Some([p, c, cached])) = (with_usage, usage) {
            out.push(json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [],
                             "usage": { "prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c,
                                        "prompt_tokens_details": { "cached_tokens": cached } } }));
        }
        out
    }

    /// The whole reply, for a request that does not stream.
    pub(crate) fn whole(&self, model: &str) -> Value {
        let Scripted::Reply { reasoning, text, tool_calls, usage, finish_reason, .. } = self else {
            return Value::Null;
        };
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(
                |c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }),
            )
            .collect();
        let mut message = json!({ "role": "assistant", "content": text });
        if !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning);
        }
        if !calls.is_empty() {
            message["tool_calls"] = json!(calls);
        }
        let finish =
            finish_reason.clone().unwrap_or_else(|| if tool_calls.is_empty() { "stop" } else { "tool_calls" }.into());
        let mut out = json!({ "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                              "choices": [{ "index": 0, "message": message, "finish_reason": finish }] });
        if let Some([p, c, cached]) = usage {
            out["usage"] = json!({ "prompt_tokens": p, "completion_tokens": c, "prompt_tokens_details": { "cached_tokens": cached } });
        }
        out
    }
}
