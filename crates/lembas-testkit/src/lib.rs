//! Test support shared by every lembas crate.
//!
//! [`FakeServer`] is a scripted OpenAI-compatible model server on a loopback port: it plays back
//! assistant replies in order — text, reasoning, tool calls, usage, errors, a stream cut midway or
//! stalled, delays — and records every request body, so a test asserts exactly what lembas sent.
//! It also serves `/v1/models`, llama.cpp's `/props`, and, when asked, a LLeMbas server's
//! discovery, instance and device-login endpoints. It is only for tests: users run real servers.

mod script;
mod server;

pub use script::{Scripted, ScriptedCall};
pub use server::{FakeServer, Llembas, Recorded};
