//! What fills the context window, by category, for a front end's `/context`.
//!
//! The server counts tokens only as a whole (the last request's input). The split between
//! categories is measured in characters and scaled to that whole, so the shares add up to what
//! the server said; before any request the whole is the usual estimate of four characters a token.

use lembas_model::Message;
use lembas_protocol::ContextShare;

use crate::session::Session;

/// Characters per token when the server has not counted yet.
const CHARS_PER_TOKEN: u64 = 4;

impl Session {
    /// The window's use by category: system prompt, tool definitions, the person's messages
    /// (with their notes), replies (with their calls), tool results, and a compaction's summary.
    pub fn context_shares(&self) -> Vec<ContextShare> {
        let tools: usize =
            self.tools.iter().map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len()).sum();
        let mut chars = [self.system_prompt.len(), tools, 0, 0, 0, 0];
        for entry in &self.history {
            let (slot, len) = match &entry.message {
                _ if entry.summary => (5, message_chars(&entry.message)),
                Message::System { .. } | Message::User { .. } => (2, message_chars(&entry.message)),
                Message::Assistant { .. } => (3, message_chars(&entry.message)),
                Message::Tool { .. } => (4, message_chars(&entry.message)),
            };
            chars[slot] += len;
        }
        let total_chars: u64 = chars.iter().map(|&c| c as u64).sum();
        let whole = if self.state.last_input > 0 { self.state.last_input } else { total_chars / CHARS_PER_TOKEN };
        let names = ["system prompt", "tool definitions", "your messages", "replies", "tool results", "summary"];
        names
            .iter()
            .zip(chars)
            .filter(|(_, c)| *c > 0)
            .map(|(name, c)| ContextShare {
                category: (*name).to_owned(),
                tokens: (c as u64 * whole).checked_div(total_chars).unwrap_or(0),
            })
            .collect()
    }

    /// Sends the window's use as an [`crate::Event::Context`].
    pub fn report_context(&self) {
        self.emit(crate::Event::Context {
            window: self.window().unwrap_or(0),
            shares: self.context_shares(),
            offer: self.state.offer.as_ref().map(crate::session::WindowFit::said),
            cache_miss: self.state.cache_miss.clone(),
        });
    }
}

fn message_chars(message: &Message) -> usize {
    match message {
        Message::System { content } | Message::Tool { content, .. } => content.len(),
        Message::User { content, .. } => content.len(),
        Message::Assistant { content, tool_calls, .. } => {
            content.len() + tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>()
        }
    }
}
