//! Cache misses explained (issue #55). lembas keeps what it sends as a growing prefix, so a
//! server's prompt cache should hold all of the previous request but its reply. When a request's
//! cached tokens fall well short of what it shares with the previous one, the person is told how
//! many tokens were read again and where the prefix changed — with the reason, where lembas
//! itself changed it (a compaction, an undo, another model) — or that nothing lembas sent changed
//! and the server let the prefix go. Locally one such miss costs minutes of prompt reading.

use std::sync::Arc;

use lembas_model::{ToolSchema, WireMessage};

use crate::session::Session;

/// A shared prefix smaller than this is not worth a word when missed.
const WORTH_SAYING: u64 = 1024;

/// What the previous request sent, and why lembas changed what it sends since, if it did.
#[derive(Default)]
pub(crate) struct LastSent {
    messages: Vec<WireMessage>,
    tools: Option<Arc<Vec<ToolSchema>>>,
    model: String,
    /// The server has said it caches (a request came back with cached tokens).
    caches: bool,
    /// lembas changed what it sends since the last request: why.
    because: Option<&'static str>,
}

/// How a request's prefix compares with the previous one's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shared {
    /// Bytes at the start of the request that the previous one sent as they are.
    pub bytes: usize,
    /// Where the two depart, as the person is told it.
    pub departs: String,
}

impl LastSent {
    /// lembas itself changed what it sends (`why`: "a compaction", "an undo", …).
    pub(crate) fn changed(&mut self, why: &'static str) {
        self.because = Some(why);
    }

    /// How `messages` sent with `tools` to `model` compare with what was sent last; `None`
    /// before the first request.
    fn compare(&self, messages: &[WireMessage], tools: &Arc<Vec<ToolSchema>>, model: &str) -> Option<Shared> {
        let last_tools = self.tools.as_ref()?;
        let because = self.because.map(|why| format!(" ({why})")).unwrap_or_default();
        if self.model != model {
            return Some(Shared { bytes: 0, departs: format!("the model changed{because}") });
        }
        let same = |a: &WireMessage, b: &WireMessage| Arc::ptr_eq(a, b) || a.get() == b.get();
        let kept = self.messages.iter().zip(messages).take_while(|(a, b)| same(a, b)).count();
        let mut bytes: usize = messages[..kept].iter().map(|m| m.get().len()).sum();
        let tools_same = Arc::ptr_eq(last_tools, tools) || last_tools == tools;
        let departs = if !tools_same {
            // Servers put the tool list before the messages: nothing after it is cached.
            bytes = 0;
            format!("the tool list changed{because}")
        } else if kept == 0 {
            format!("the system prompt changed{because}")
        } else if kept < self.messages.len() {
            let role = serde_json::from_str::<serde_json::Value>(self.messages[kept].get())
                .ok()
                .and_then(|m| m["role"].as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("message {kept} ({role}) is not the one sent before{because}")
        } else {
            "nothing lembas sent changed: the server no longer had it cached (another conversation took its slot, or it was evicted)".to_owned()
        };
        if tools_same {
            bytes += lembas_model::tools_text(tools).len();
        }
        Some(Shared { bytes, departs })
    }

    /// Keeps what a request sent, for the next one to be compared with.
    fn remember(&mut self, messages: &[WireMessage], tools: &Arc<Vec<ToolSchema>>, model: &str) {
        self.messages = messages.to_vec();
        self.tools = Some(tools.clone());
        model.clone_into(&mut self.model);
        self.because = None;
    }
}

impl Session {
    /// Before a request: how it compares with the previous one (then kept for the next).
    pub(crate) fn before_sending(&mut self, messages: &[WireMessage]) -> Option<Shared> {
        let shared = self.sent.compare(messages, &self.tools, &self.cfg.model.id);
        self.sent.remember(messages, &self.tools, &self.cfg.model.id);
        shared
    }

    /// After a request the server answered with `cached` tokens from its cache: a miss worth
    /// saying is said, and kept for `/context`.
    pub(crate) fn explain_miss(&mut self, shared: Option<Shared>, cached: Option<u64>) {
        let Some(cached) = cached else { return };
        if cached > 0 {
            self.sent.caches = true;
        }
        let Some(shared) = shared.filter(|_| self.sent.caches) else { return };
        let expected = self.tokens_of(shared.bytes);
        // Servers cache in blocks and count their template's tokens: a fifth is slack.
        if expected < WORTH_SAYING || cached as f64 >= expected as f64 * 0.8 {
            return;
        }
        let message = format!(
            "The server read about {} tokens again that it should have had cached ({cached} cached of about {expected}): {}.",
            expected - cached,
            shared.departs
        );
        self.state.cache_miss = Some(message.clone());
        self.emit(crate::Event::Notice { message });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_model::Message;

    fn wire(text: &str) -> WireMessage {
        Message::user(text).to_wire(false)
    }

    #[test]
    fn where_a_prefix_departs_is_named() {
        let tools = Arc::new(Vec::new());
        let mut sent = LastSent::default();
        let first = vec![lembas_model::system_wire("sys"), wire("a")];
        assert_eq!(sent.compare(&first, &tools, "m"), None);
        sent.remember(&first, &tools, "m");
        let grown = vec![first[0].clone(), first[1].clone(), wire("b")];
        let shared = sent.compare(&grown, &tools, "m").unwrap();
        assert!(shared.departs.starts_with("nothing lembas sent changed"), "{shared:?}");
        sent.changed("a compaction");
        let compacted = vec![first[0].clone(), wire("summary")];
        let shared = sent.compare(&compacted, &tools, "m").unwrap();
        assert_eq!(shared.departs, "message 1 (user) is not the one sent before (a compaction)");
        assert_eq!(shared.bytes, first[0].get().len() + "[]".len());
        assert_eq!(sent.compare(&first, &tools, "other").unwrap().departs, "the model changed (a compaction)");
    }
}
