//! The fake server's window, kept as the servers people run keep theirs:
//!
//! - llama.cpp (`/props` states `n_ctx`) refuses a prompt larger than the window, and ends a
//!   reply where the window ends (`finish_reason` "length");
//! - vLLM (the model list's `max_model_len`) refuses a request whose prompt and `max_tokens`
//!   together pass the window, with the message OpenAI's API gives;
//! - Ollama serves the OpenAI route at its own window and cuts a longer prompt from the front
//!   without a word — counted here, for a test to see that it never happened.
//!
//! Every server ends a reply at the request's `max_tokens`. Where counting is on, a reply
//! without scripted usage reports the tokens the server counted, as real servers do.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::server::{FakeServer, Shared};
use crate::{Scripted, tokens_in};

impl FakeServer {
    /// Reports counted usage on replies that script none, and counts `bytes_per_token` bytes a
    /// token (3 unless set) for it, for `/tokenize` and for the window.
    pub fn count_tokens(&self, bytes_per_token: f64) {
        *self.shared.counting.lock().unwrap() = Some(bytes_per_token);
    }

    /// Reads requests as a chat template that renders no tool list does (SmolLM2's): the tools
    /// sent are neither counted nor held against the window.
    pub fn template_without_tools(&self) {
        self.shared.tools_unread.store(true, Ordering::Relaxed);
    }

    /// Prompts an Ollama window cut from the front, silently.
    pub fn prompts_cut(&self) -> usize {
        self.shared.prompts_cut.load(Ordering::Relaxed)
    }
}

impl Shared {
    /// Tokens of `text` by the server's tokenizer.
    pub(crate) fn tokens(&self, text: &str) -> u64 {
        match *self.counting.lock().unwrap() {
            Some(per_token) => (text.len() as f64 / per_token).ceil() as u64,
            None => tokens_in(text) as u64,
        }
    }

    /// The tokens of a chat request's prompt: its messages and tools, as sent (the messages
    /// alone where the template renders no tool list).
    pub(crate) fn prompt_tokens(&self, request: &Value) -> u64 {
        let mut prompt = serde_json::to_string(&request["messages"]).unwrap_or_default();
        if !self.tools_unread.load(Ordering::Relaxed) {
            prompt += &serde_json::to_string(&request["tools"]).unwrap_or_default();
        }
        self.tokens(&prompt)
    }

    /// The window the model is served at, and how the server keeps it.
    fn window(&self) -> Option<(u64, Keeper)> {
        let props = self.props.lock().unwrap();
        let stated = props
            .as_ref()
            .and_then(|p| p["default_generation_settings"]["n_ctx"].as_u64().or_else(|| p["n_ctx"].as_u64()));
        if let Some(n) = stated {
            return Some((n, Keeper::LlamaCpp));
        }
        if let Some(ollama) = self.ollama.lock().unwrap().as_ref() {
            return Some((ollama.serves(), Keeper::Ollama));
        }
        let listed = self.models.lock().unwrap().get(0).and_then(|m| m["max_model_len"].as_u64());
        listed.map(|n| (n, Keeper::Vllm))
    }

    /// The answer to a request its window does not take, if any; a prompt Ollama cuts is
    /// counted and served.
    pub(crate) fn window_refusal(&self, request: &Value) -> Option<(u16, Value)> {
        let (window, keeper) = self.window()?;
        let prompt = self.prompt_tokens(request);
        let asked = request["max_tokens"].as_u64();
        match keeper {
            Keeper::LlamaCpp if prompt > window => {
                let message = format!(
                    "request ({prompt} tokens) exceeds the available context size ({window} tokens), try increasing it"
                );
                Some((
                    400,
                    json!({ "error": { "code": 400, "message": message, "type": "exceed_context_size_error" } }),
                ))
            }
            Keeper::Vllm if prompt + asked.unwrap_or(0) > window => {
                let message = format!(
                    "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, {} in the completion). Please reduce the length of the messages or completion.",
                    prompt + asked.unwrap_or(0),
                    asked.unwrap_or(0)
                );
                Some((400, json!({ "error": { "message": message, "type": "BadRequestError", "code": 400 } })))
            }
            Keeper::Ollama if prompt > window => {
                self.prompts_cut.fetch_add(1, Ordering::Relaxed);
                None
            }
            _ => None,
        }
    }

    /// `scripted` as this server would send it for `request`: its text ended at `max_tokens`
    /// or at the window's end (finish "length"), and its usage counted where counting is on.
    pub(crate) fn as_served(&self, mut scripted: Scripted, request: &Value) -> Scripted {
        let counting = self.counting.lock().unwrap().is_some();
        let window = self.window().map(|(w, _)| w);
        if !counting && request["max_tokens"].is_null() && window.is_none() {
            return scripted;
        }
        let Scripted::Reply { text, usage, finish_reason, reasoning, tool_calls, .. } = &mut scripted else {
            return scripted;
        };
        let prompt = self.prompt_tokens(request);
        let window_left = window.map(|w| w.saturating_sub(prompt.min(w)));
        let limit = match (request["max_tokens"].as_u64(), window_left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(limit) = limit
            && self.tokens(text) > limit
        {
            let per_token = self.counting.lock().unwrap().unwrap_or(3.0);
            let mut end = ((limit as f64 * per_token) as usize).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            *finish_reason = Some("length".into());
        }
        if usage.is_none() && counting {
            let written = self.tokens(text) + self.tokens(reasoning) + self.tokens(&json!(tool_calls).to_string());
            *usage = Some([prompt.min(window.unwrap_or(u64::MAX)), written, 0]);
        }
        scripted
    }
}

/// How a server keeps its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keeper {
    LlamaCpp,
    Vllm,
    Ollama,
}
