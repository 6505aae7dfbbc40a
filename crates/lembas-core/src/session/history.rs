//! The conversation as the session keeps it: its entries (a message and what the reasoning rule
//! and search need to know of it), written to the store as they are added, and sent with the
//! reasoning only of the current turn.

use lembas_context::reasoning::{Kind, sends_reasoning};
use lembas_model::Message;
use lembas_store::{NewMessage, NewResult};
use serde::{Deserialize, Serialize};

use crate::session::Session;
use crate::{EngineError, now_ms};

/// One message of the history, with what the reasoning rule needs to know of it. Stored as the
/// message's object with the entry's own fields beside them, and read back in one pass
/// ([`StoredEntry`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Entry {
    #[serde(flatten)]
    pub message: Message,
    /// A user message that starts a turn (false for words delivered at a step boundary). Left
    /// out when false, as the flags below are: most messages are not a turn's first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turn: bool,
    /// A compaction's summary: the history starts afresh here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary: bool,
    /// A tool result that failed or was refused (drawn so when the session is read back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// A prompt's words as the person typed them, when the message holds more (files they
    /// attached): what an undo gives back to the input box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<String>,
    /// Its wire form, made once (a message never changes once sent).
    #[serde(skip)]
    pub wire: WireCache,
}

/// An entry as stored: its message's fields and its own, all in one object, read in one pass —
/// `#[serde(flatten)]` would copy each object whole before reading it, and a resumed session
/// reads thousands.
#[derive(Deserialize)]
struct StoredEntry {
    role: lembas_model::MessageRole,
    content: Option<String>,
    #[serde(default)]
    images: Vec<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<lembas_model::ToolCall>,
    tool_call_id: Option<String>,
    #[serde(default)]
    turn: bool,
    #[serde(default)]
    summary: bool,
    #[serde(default)]
    failed: bool,
    #[serde(default)]
    typed: Option<String>,
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let StoredEntry { role, content, images, reasoning, tool_calls, tool_call_id, turn, summary, failed, typed } =
            StoredEntry::deserialize(deserializer)?;
        let fields = lembas_model::MessageFields { role, content, images, reasoning, tool_calls, tool_call_id };
        Ok(Entry { message: fields.into_message()?, turn, summary, failed, typed, wire: WireCache::default() })
    }
}

/// An entry's message in the OpenAI dialect, without and with its reasoning, made the first time
/// a request needs it. Not part of what an entry is: two entries are equal by their message.
#[derive(Default, Clone)]
pub(crate) struct WireCache([std::sync::OnceLock<lembas_model::WireMessage>; 2]);

impl std::fmt::Debug for WireCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireCache")
    }
}

impl PartialEq for WireCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Entry {
    /// `message` as the history holds it: within a turn, not a summary, not a failure.
    pub fn of(message: Message) -> Entry {
        Entry { message, turn: false, summary: false, failed: false, typed: None, wire: WireCache::default() }
    }

    pub fn user(content: String, turn: bool) -> Entry {
        Entry { turn, ..Entry::of(Message::user(content)) }
    }

    fn kind(&self) -> Kind {
        match &self.message {
            _ if self.summary => Kind::Summary,
            Message::User { .. } | Message::System { .. } => Kind::User { starts_turn: self.turn },
            Message::Assistant { .. } => Kind::Assistant,
            Message::Tool { .. } => Kind::Tool,
        }
    }

    /// The words search finds it by: what was said, without the notes lembas added.
    pub(crate) fn words(&self) -> String {
        match &self.message {
            Message::User { content, .. } => without_note(content).to_owned(),
            Message::System { content } => content.clone(),
            Message::Assistant { content, .. } => content.clone(),
            Message::Tool { .. } => String::new(),
        }
    }

    pub fn stored(&self) -> NewMessage {
        let role = match &self.message {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        };
        NewMessage {
            role: role.into(),
            json: serde_json::to_string(self).expect("an entry serializes"),
            text: self.words(),
        }
    }
}

/// The person's words without the session note lembas appended to them.
pub(crate) fn without_note(content: &str) -> &str {
    let open = &lembas_spec::loop_spec().context.note.open;
    content.split_once(&format!("\n\n{open}")).map_or(content, |(words, _)| words)
}

impl Session {
    /// Adds entries to the history and writes them, the results and the state in one go.
    pub(crate) fn commit(&mut self, entries: Vec<Entry>, results: Vec<NewResult>) -> Result<(), EngineError> {
        let stored: Vec<NewMessage> = entries.iter().map(Entry::stored).collect();
        self.history.extend(entries);
        self.cfg.store.append(&self.id, &stored, &results, &self.state_value(), None, now_ms())?;
        Ok(())
    }

    /// The messages a request carries, reasoning only in the current turn.
    pub(crate) fn request_messages(&self) -> Vec<lembas_model::WireMessage> {
        let kinds: Vec<Kind> = self.history.iter().map(Entry::kind).collect();
        let sends = sends_reasoning(&kinds);
        let system = lembas_model::system_wire(&self.system_prompt);
        std::iter::once(system)
            .chain(
                self.history
                    .iter()
                    .zip(sends)
                    .map(|(e, send)| e.wire.0[usize::from(send)].get_or_init(|| e.message.to_wire(send)).clone()),
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use lembas_model::ToolCall;

    use super::*;

    #[test]
    fn every_kind_of_entry_reads_back_as_it_was_stored() {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{\"path\":\"a\"}".into() };
        let entries = [
            Entry { typed: Some("fix it".into()), ..Entry::user("fix it\n\n(attached)".into(), true) },
            Entry {
                message: Message::User { content: "see".into(), images: vec!["data:image/png;base64,AA".into()] },
                ..Entry::of(Message::user(""))
            },
            Entry::of(Message::Assistant {
                content: "".into(),
                reasoning: Some("look first".into()),
                tool_calls: vec![call],
            }),
            Entry {
                failed: true,
                ..Entry::of(Message::Tool { tool_call_id: "c1".into(), content: "no such file".into() })
            },
            Entry { summary: true, ..Entry::of(Message::System { content: "what happened so far".into() }) },
        ];
        for entry in entries {
            let stored = entry.stored().json;
            let read: Entry = serde_json::from_str(&stored).unwrap();
            assert_eq!(read, entry, "{stored}");
        }
    }

    #[test]
    fn a_stored_entry_without_what_its_role_needs_is_refused() {
        let refused = |json: &str| serde_json::from_str::<Entry>(json).unwrap_err().to_string();
        assert!(refused(r#"{"role":"tool","content":"x","turn":false}"#).contains("tool_call_id"));
        assert!(refused(r#"{"role":"user","turn":true}"#).contains("content"));
        assert!(refused(r#"{"role":"robot","content":"x"}"#).contains("robot"));
    }
}
