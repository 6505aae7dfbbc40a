//! Test support shared by every lembas crate.
//!
//! [`FakeServer`] is a scripted OpenAI-compatible model server on a loopback port: it plays back
//! assistant replies in order — text, reasoning, tool calls, usage, errors, a stream cut midway or
//! stalled, delays — and records every request body, so a test asserts exactly what lembas sent.
//! It also serves `/v1/models`, llama.cpp's `/props`, and, when asked, a LLeMbas server's
//! discovery, instance and device-login endpoints, and the device link (a WebSocket
//! the test plays the server's ACP client over). [`WebSite`] is a small site and search provider
//! for the web tools. It is only for tests: users run real servers.

mod embedder;
mod link;
mod memory;
mod ollama;
mod release;
mod schedules;
mod script;
mod server;
mod web;
mod window;

pub use embedder::{EMBEDDING_MODEL, EmbeddingServer};
pub use link::DeviceLink;
pub use memory::Records as MemoryRecords;
pub use ollama::Ollama;
pub use release::{ReleaseServer, tar_gz};
pub use script::{Scripted, ScriptedCall};
pub use server::{FakeServer, Llembas, Recorded, tokens_in};
pub use web::{WebSite, pdf};

/// A folder for a test's scratch folders that lies outside the system's temporary folders —
/// which lembas' sandbox lets commands write, so a test that a command must *not* write
/// somewhere needs that somewhere elsewhere. `preferred` is the caller's
/// `CARGO_TARGET_TMPDIR`, used unless it is itself under a temporary folder (a clone in /tmp);
/// then a folder under the person's home (`~/.cache/lembas-tests`).
pub fn outside_temp(preferred: &std::path::Path) -> std::path::PathBuf {
    let temps = [std::env::temp_dir(), std::path::PathBuf::from("/var/tmp"), std::path::PathBuf::from("/tmp")];
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let under_temp = |p: &std::path::Path| temps.iter().any(|t| real(p).starts_with(real(t)));
    if !under_temp(preferred) {
        return preferred.to_path_buf();
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from).filter(|h| !under_temp(h));
    let dir =
        home.expect("a home folder outside the temporary folders, for scratch folders").join(".cache/lembas-tests");
    std::fs::create_dir_all(&dir).expect("the scratch folder can be made");
    dir
}

/// The sandbox's launcher for the tests of crates below the `lembas` binary: `lembas-sandbox`,
/// which `cargo test --workspace` builds beside the test binaries (`target/<profile>/`). `None`
/// when it was not built (a crate's tests run alone): those tests then sandbox with Landlock
/// alone, and say so.
pub fn sandbox_launcher() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> → target/<profile>/lembas-sandbox
    let launcher = exe.parent()?.parent()?.join("lembas-sandbox");
    launcher.is_file().then_some(launcher)
}
