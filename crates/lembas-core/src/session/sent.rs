//! What the previous request sent, for the next one's prefix to be compared with
//! (the cache watch).

use std::sync::Arc;

use lembas_model::{ToolSchema, WireMessage};

/// What the previous request sent, and why lembas changed what it sends since, if it did.
#[derive(Default)]
pub(crate) struct LastSent {
    /// The request's own list (shared with it, not copied).
    messages: Arc<Vec<WireMessage>>,
    tools: Option<Arc<Vec<ToolSchema>>>,
    model: String,
    /// The server has said it caches (a request came back with cached tokens).
    pub(crate) caches: bool,
    /// A miss nothing lembas sent explains was said, and no request has been cached well since:
    /// the next such miss is the same news (a server that keeps little), not said again.
    pub(crate) unexplained_told: bool,
    /// lembas changed what it sends since the last request: why.
    because: Option<&'static str>,
}

/// How a request's prefix compares with the previous one's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shared {
    /// Bytes at the start of the request that the previous one sent as they are.
    pub bytes: usize,
    /// Where the two depart.
    departs: Departs,
    /// Why, where lembas itself changed what it sends.
    because: Option<&'static str>,
}

/// Where a request departs from the previous one. Kept as a fact, and said only when a miss is
/// worth saying (not at every request).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Departs {
    Model,
    Tools,
    SystemPrompt,
    /// The message at this index (the role it had in the previous request).
    Message(usize, String),
    Nowhere,
}

impl Shared {
    /// Nothing lembas sent changed: the server let the prefix go.
    pub(crate) fn unexplained(&self) -> bool {
        self.departs == Departs::Nowhere
    }

    /// Where the prefix changed, as the person is told it.
    pub(crate) fn said(&self) -> String {
        let because = self.because.map(|why| format!(" ({why})")).unwrap_or_default();
        match &self.departs {
            Departs::Model => format!("the model changed{because}"),
            Departs::Tools => format!("the tool list changed{because}"),
            Departs::SystemPrompt => format!("the system prompt changed{because}"),
            Departs::Message(at, role) => format!("message {at} ({role}) is not the one sent before{because}"),
            Departs::Nowhere => "nothing lembas sent changed: the server no longer had it cached (another conversation took its slot, or it was evicted)".to_owned(),
        }
    }
}

impl LastSent {
    /// lembas itself changed what it sends (`why`: "a compaction", "an undo", …).
    pub(crate) fn changed(&mut self, why: &'static str) {
        self.because = Some(why);
    }

    /// How `messages` sent with `tools` to `model` compare with what was sent last; `None`
    /// before the first request.
    pub(crate) fn compare(
        &self,
        messages: &[WireMessage],
        tools: &Arc<Vec<ToolSchema>>,
        model: &str,
    ) -> Option<Shared> {
        let last_tools = self.tools.as_ref()?;
        let because = self.because;
        if self.model != model {
            return Some(Shared { bytes: 0, departs: Departs::Model, because });
        }
        if !(Arc::ptr_eq(last_tools, tools) || last_tools == tools) {
            // Servers put the tool list before the messages: nothing after it is cached.
            return Some(Shared { bytes: 0, departs: Departs::Tools, because });
        }
        let same = |a: &WireMessage, b: &WireMessage| Arc::ptr_eq(a, b) || a.get() == b.get();
        let kept = self.messages.iter().zip(messages).take_while(|(a, b)| same(a, b)).count();
        let departs = if kept == 0 {
            Departs::SystemPrompt
        } else if kept < self.messages.len() {
            let role = serde_json::from_str::<serde_json::Value>(self.messages[kept].get())
                .ok()
                .and_then(|m| m["role"].as_str().map(str::to_owned))
                .unwrap_or_default();
            Departs::Message(kept, role)
        } else {
            Departs::Nowhere
        };
        let bytes = messages[..kept].iter().map(|m| m.get().len()).sum::<usize>() + lembas_model::tools_bytes(tools);
        Some(Shared { bytes, departs, because })
    }

    /// Keeps what a request sent (its own lists), for the next one to be compared with.
    pub(crate) fn remember(&mut self, messages: Arc<Vec<WireMessage>>, tools: Arc<Vec<ToolSchema>>, model: &str) {
        self.messages = messages;
        self.tools = Some(tools);
        model.clone_into(&mut self.model);
        self.because = None;
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
        sent.remember(Arc::new(first.clone()), tools.clone(), "m");
        let grown = vec![first[0].clone(), first[1].clone(), wire("b")];
        let shared = sent.compare(&grown, &tools, "m").unwrap();
        assert!(shared.said().starts_with("nothing lembas sent changed"), "{shared:?}");
        sent.changed("a compaction");
        let compacted = vec![first[0].clone(), wire("summary")];
        let shared = sent.compare(&compacted, &tools, "m").unwrap();
        assert_eq!(shared.said(), "message 1 (user) is not the one sent before (a compaction)");
        assert_eq!(shared.bytes, first[0].get().len());
        assert_eq!(sent.compare(&first, &tools, "other").unwrap().said(), "the model changed (a compaction)");
    }
}
