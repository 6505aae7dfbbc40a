//! The last request the server counted (issue #55), which the next one's size is reckoned from
//! (`room.rs`). Apart from the session, which keeps it in its state, so that the session and
//! the room's arithmetic do not import one another.

use lembas_model::WireMessage;

/// The bytes a request carries on the wire: its messages' and its tool list's, apart, since a
/// count is only reckoned from where the tool list is the same. Made once a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    pub messages: usize,
    pub tools: usize,
}

impl Size {
    /// The size of a request of `messages` with `tools`.
    pub(crate) fn of(messages: &[WireMessage], tools: &std::sync::Arc<Vec<lembas_model::ToolSchema>>) -> Size {
        Size { messages: messages.iter().map(|m| m.get().len()).sum(), tools: lembas_model::tools_bytes(tools) }
    }

    /// All its bytes.
    pub(crate) fn total(self) -> usize {
        self.messages + self.tools
    }
}

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
    /// What the server counted for a request of `size`.
    pub(crate) fn of(size: Size, tokens: u64) -> Counted {
        Counted { messages: size.messages, tools: size.tools, tokens }
    }
}
