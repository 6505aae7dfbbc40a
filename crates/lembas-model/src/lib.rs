//! The model client: OpenAI-compatible chat completions, the way real servers behave.
//!
//! - [`ModelClient::chat`] streams one reply (SSE, or a whole reply where a server cannot
//!   stream), assembling text, reasoning (fields or inline `<think>` tags), tool calls by index,
//!   usage with cached tokens, and why it finished.
//! - Faults — a refused connection, 429 and 5xx, an error sent inside a stream, a stream that
//!   drops or stalls — are retried with backoff (honouring `Retry-After`), each wait announced as
//!   [`StreamEvent::Retrying`]. A 4xx that retrying cannot mend ends the reply with the server's
//!   words. A field a server refuses is dropped and remembered ([`Learned`]).
//! - [`catalog`] finds a server's models and their metadata.

mod body;
pub mod catalog;
mod client;
mod quirks;
pub mod sse;
mod stream;
pub mod text_calls;
mod wire;

pub use client::{
    ClientConfig, MAX_BACKOFF, MAX_ERROR_BODY, MAX_REPLY_BYTES, MAX_RETRY_AFTER, ModelClient, ModelError,
};
pub use quirks::{Learned, LearnedModel, refused_for_length, window_in_refusal};
pub use stream::{Assembler, StreamEvent, StreamedError};
pub use wire::{
    ChatRequest, FinishReason, Message, MessageFields, MessageRole, Reply, ToolCall, ToolSchema, Usage, WireMessage,
    system_wire, tools_bytes, tools_text,
};

pub use tokio_util::sync::CancellationToken;
