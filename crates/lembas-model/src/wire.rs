//! What lembas sends: chat messages and tool schemas in the OpenAI chat dialect.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool call as the model made it. `arguments` is the raw text the model wrote, which may not
/// be valid JSON: the engine answers that as a tool error rather than failing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A chat message as lembas keeps it and sends it: `{"role": …, …}`. Read through
/// [`MessageFields`] rather than serde's internally tagged enums, which copy every message whole
/// before reading it — a resumed session reads thousands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
        /// Images beside the text, for a model with vision.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
    Assistant {
        content: String,
        /// The reasoning the reply came with; sent back only during its turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// Whose a message is.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    System,
    User,
    Assistant,
    Tool,
}

/// A message as stored, every role's fields in one: read in one pass, then checked for what its
/// role needs ([`MessageFields::into_message`]). (Something stored beside a message's own fields
/// reads them into its own struct the same way, in one pass, rather than through serde's
/// `flatten`, which copies the whole object first.)
#[derive(Debug, Deserialize)]
pub struct MessageFields {
    pub role: MessageRole,
    pub content: Option<String>,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
}

impl MessageFields {
    /// The message, or the field its role needs that is missing.
    pub fn into_message<E: serde::de::Error>(self) -> Result<Message, E> {
        let MessageFields { role, content, images, reasoning, tool_calls, tool_call_id } = self;
        let content = content.ok_or_else(|| E::missing_field("content"))?;
        Ok(match role {
            MessageRole::System => Message::System { content },
            MessageRole::User => Message::User { content, images },
            MessageRole::Assistant => Message::Assistant { content, reasoning, tool_calls },
            MessageRole::Tool => {
                Message::Tool { tool_call_id: tool_call_id.ok_or_else(|| E::missing_field("tool_call_id"))?, content }
            }
        })
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        MessageFields::deserialize(deserializer)?.into_message()
    }
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message::User { content: content.into(), images: Vec::new() }
    }

    /// The message in the OpenAI chat dialect, as the bytes that go on the wire, written straight
    /// from the message (a resumed session makes thousands at once). `send_reasoning` says
    /// whether an assistant message carries its reasoning back (`context.md` §8); an empty
    /// reasoning is never sent.
    pub fn to_wire(&self, send_reasoning: bool) -> WireMessage {
        on_the_wire(&self.openai(send_reasoning))
    }

    fn openai(&self, send_reasoning: bool) -> OpenAiMessage<'_> {
        match self {
            Message::System { content } => OpenAiMessage::System { content },
            Message::User { content, images } if images.is_empty() => {
                OpenAiMessage::User { content: UserContent::Text(content) }
            }
            Message::User { content, images } => {
                OpenAiMessage::User { content: UserContent::Parts { text: content, images } }
            }
            Message::Assistant { content, reasoning, tool_calls } => OpenAiMessage::Assistant {
                content,
                reasoning_content: reasoning.as_deref().filter(|r| send_reasoning && !r.is_empty()),
                tool_calls: OpenAiCalls(tool_calls),
            },
            Message::Tool { tool_call_id, content } => OpenAiMessage::Tool { tool_call_id, content },
        }
    }
}

/// A system message with `content` as it goes on the wire (the same bytes as
/// [`Message::System`]'s), written from the text where it lies.
pub fn system_wire(content: &str) -> WireMessage {
    on_the_wire(&OpenAiMessage::System { content })
}

fn on_the_wire(message: &OpenAiMessage<'_>) -> WireMessage {
    std::sync::Arc::from(serde_json::value::to_raw_value(message).expect("a message serializes"))
}

/// A message in the OpenAI dialect, borrowing the message's parts. Its fields in the order they
/// have always gone out: a resumed session's messages must be the same bytes as before, or the
/// server's prompt cache misses.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum OpenAiMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        #[serde(skip_serializing_if = "OpenAiCalls::is_empty")]
        tool_calls: OpenAiCalls<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A user message's content: its text, or its text and images as parts.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    #[serde(serialize_with = "user_parts")]
    Parts {
        text: &'a str,
        images: &'a [String],
    },
}

fn user_parts<S: serde::Serializer>(text: &str, images: &[String], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    #[derive(Serialize)]
    struct Url<'a> {
        url: &'a str,
    }
    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Part<'a> {
        Text { text: &'a str },
        ImageUrl { image_url: Url<'a> },
    }
    let mut parts = serializer.serialize_seq(Some(1 + images.len()))?;
    parts.serialize_element(&Part::Text { text })?;
    for url in images {
        parts.serialize_element(&Part::ImageUrl { image_url: Url { url } })?;
    }
    parts.end()
}

/// An assistant message's tool calls in the dialect: `{"id", "type": "function", "function":
/// {"name", "arguments"}}` each.
struct OpenAiCalls<'a>(&'a [ToolCall]);

impl OpenAiCalls<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for OpenAiCalls<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: &'a str,
        }
        #[derive(Serialize)]
        struct Call<'a> {
            id: &'a str,
            r#type: &'static str,
            function: Function<'a>,
        }
        serializer.collect_seq(self.0.iter().map(|c| Call {
            id: &c.id,
            r#type: "function",
            function: Function { name: &c.name, arguments: &c.arguments },
        }))
    }
}

/// A tool as the model is offered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl ToolSchema {
    /// The tool in the OpenAI dialect, borrowing its parts (`{"type": "function", "function": …}`).
    pub(crate) fn to_openai(&self) -> OpenAiTool<'_> {
        OpenAiTool { r#type: "function", function: self }
    }
}

/// The tools as a request lists them, as text: what they cost the window.
pub fn tools_text(tools: &[ToolSchema]) -> String {
    serde_json::to_string(&tools.iter().map(ToolSchema::to_openai).collect::<Vec<_>>()).unwrap_or_default()
}

/// The length of [`tools_text`] of a shared tool list, made once per list: a session sends the
/// same list with every request, and the window's arithmetic asks its size at every step.
pub fn tools_bytes(tools: &std::sync::Arc<Vec<ToolSchema>>) -> usize {
    use std::cell::RefCell;
    use std::sync::{Arc, Weak};
    thread_local! {
        static LAST: RefCell<(Weak<Vec<ToolSchema>>, usize)> = const { RefCell::new((Weak::new(), 0)) };
    }
    if tools.is_empty() {
        return 0;
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        // The same live list (a weak handle that still reaches it): its length is known.
        if last.0.upgrade().is_some_and(|kept| Arc::ptr_eq(&kept, tools)) {
            return last.1;
        }
        let len = tools_text(tools).len();
        *last = (Arc::downgrade(tools), len);
        len
    })
}

/// A tool as a request lists it.
#[derive(Serialize)]
pub(crate) struct OpenAiTool<'a> {
    r#type: &'static str,
    function: &'a ToolSchema,
}

/// A message already in the OpenAI dialect, as the bytes that go on the wire: a session makes
/// each of its messages' once and every later request shares them (a message never changes
/// once sent).
pub type WireMessage = std::sync::Arc<serde_json::value::RawValue>;

/// One request: the messages (already decided which carry reasoning), the tools, and fields a
/// level or the caller adds (`reasoning_effort`, `chat_template_kwargs`, …).
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub model: String,
    /// Messages in the OpenAI dialect, in order: shared with the body that sends them, so a long
    /// session's thousands are not counted up and down again for each attempt.
    pub messages: std::sync::Arc<Vec<WireMessage>>,
    /// Shared with the session that made it: the list is fixed, so no request copies it.
    pub tools: std::sync::Arc<Vec<ToolSchema>>,
    pub extra: Map<String, Value>,
    pub max_tokens: Option<u64>,
}

/// Token counts of one request, as the server reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens the server took from its prompt cache, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// Cut off at the output limit.
    Length,
    Other(String),
}

impl FinishReason {
    pub fn parse(s: &str) -> FinishReason {
        match s {
            "stop" | "eos" | "end_turn" => FinishReason::Stop,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// A complete reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: Option<FinishReason>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A message's wire form read back as JSON, to look at its fields.
    fn openai(message: &Message, send_reasoning: bool) -> Value {
        serde_json::from_str(message.to_wire(send_reasoning).get()).unwrap()
    }

    #[test]
    fn the_wire_form_is_the_same_bytes_as_always() {
        // As lembas wrote them before the wire form was written straight from the message: a
        // resumed session's prefix must not change, or the server's cache misses.
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{\"path\":\"a\"}".into() };
        let cases = [
            (Message::System { content: "s".into() }, false, r#"{"role":"system","content":"s"}"#),
            (Message::user("u \"q\""), false, r#"{"role":"user","content":"u \"q\""}"#),
            (
                Message::User { content: "see".into(), images: vec!["data:a".into(), "data:b".into()] },
                false,
                r#"{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:a"}},{"type":"image_url","image_url":{"url":"data:b"}}]}"#,
            ),
            (
                Message::Assistant {
                    content: "a".into(),
                    reasoning: Some("why".into()),
                    tool_calls: vec![call.clone()],
                },
                true,
                r#"{"role":"assistant","content":"a","reasoning_content":"why","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}"#,
            ),
            (
                Message::Assistant { content: "a".into(), reasoning: Some("why".into()), tool_calls: vec![] },
                false,
                r#"{"role":"assistant","content":"a"}"#,
            ),
            (
                Message::Tool { tool_call_id: "c1".into(), content: "x\ny".into() },
                false,
                r#"{"role":"tool","tool_call_id":"c1","content":"x\ny"}"#,
            ),
        ];
        assert_eq!(system_wire("s").get(), r#"{"role":"system","content":"s"}"#);
        for (message, send, expected) in cases {
            assert_eq!(message.to_wire(send).get(), expected);
        }
    }

    #[test]
    fn a_message_reads_back_as_it_was_written_and_a_missing_field_is_an_error() {
        let messages = [
            Message::System { content: "s".into() },
            Message::User { content: "u".into(), images: vec!["data:image/png;base64,AA".into()] },
            Message::Assistant {
                content: "a".into(),
                reasoning: Some("r".into()),
                tool_calls: vec![ToolCall { id: "c1".into(), name: "read".into(), arguments: "{}".into() }],
            },
            Message::Tool { tool_call_id: "c1".into(), content: "t".into() },
        ];
        for message in messages {
            let text = serde_json::to_string(&message).unwrap();
            assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), message, "{text}");
        }
        assert!(serde_json::from_str::<Message>(r#"{"role": "tool", "content": "t"}"#).is_err());
        assert!(serde_json::from_str::<Message>(r#"{"role": "user"}"#).is_err());
        assert!(serde_json::from_str::<Message>(r#"{"role": "robot", "content": "x"}"#).is_err());
    }

    #[test]
    fn reasoning_goes_back_only_when_asked_and_never_empty() {
        let m = Message::Assistant { content: "a".into(), reasoning: Some("why".into()), tool_calls: vec![] };
        assert_eq!(openai(&m, true)["reasoning_content"], "why");
        assert!(openai(&m, false).get("reasoning_content").is_none());
        let empty = Message::Assistant { content: "a".into(), reasoning: Some(String::new()), tool_calls: vec![] };
        assert!(openai(&empty, true).get("reasoning_content").is_none());
    }

    #[test]
    fn tool_calls_and_results_in_the_dialect() {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{\"path\":\"a\"}".into() };
        let m = Message::Assistant { content: String::new(), reasoning: None, tool_calls: vec![call] };
        assert_eq!(openai(&m, false)["tool_calls"][0]["function"]["name"], "read");
        let r = Message::Tool { tool_call_id: "c1".into(), content: "[#0001]\nx".into() };
        assert_eq!(openai(&r, false), json!({"role": "tool", "tool_call_id": "c1", "content": "[#0001]\nx"}));
    }

    #[test]
    fn images_make_a_parts_list() {
        let m = Message::User { content: "look".into(), images: vec!["data:image/png;base64,AA".into()] };
        assert_eq!(openai(&m, false)["content"][1]["image_url"]["url"], "data:image/png;base64,AA");
    }
}
