//! The last request the server counted (issue #55), which the next one's size is reckoned from
//! (`room.rs`). Apart from the session, which keeps it in its state, so that the session and
//! the room's arithmetic do not import one another.

use lembas_model::WireMessage;

/// The last request the server counted: its messages' bytes, its tools' bytes, and the tokens
/// the server said it read. Forgotten when the history is made anew (a compaction), where a
/// count of the old one says nothing of the new.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Counted {
    pub messages: usize,
    pub tools: usize,
    pub tokens: u64,
}

impl Counted {
    /// What the server counted for a request of `messages` with `tools`.
    pub(crate) fn of(
        messages: &[WireMessage],
        tools: &std::sync::Arc<Vec<lembas_model::ToolSchema>>,
        tokens: u64,
    ) -> Counted {
        Counted { messages: messages_bytes(messages), tools: lembas_model::tools_bytes(tools), tokens }
    }
}

/// The bytes `messages` carry on the wire.
pub(crate) fn messages_bytes(messages: &[WireMessage]) -> usize {
    messages.iter().map(|m| m.get().len()).sum()
}
