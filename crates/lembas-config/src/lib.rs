//! Where lembas keeps what it keeps, and what it reads at start.
//!
//! - [`Home`]: with `LEMBAS_HOME` set, everything — configuration, login, sessions, logs — lives
//!   under it; otherwise the XDG folders (`~/.config/lembas`, `~/.local/share/lembas`,
//!   `~/.local/state/lembas`).
//! - [`Login`]: the one login, in a file only the user can read (mode 0600), written atomically.
//! - [`Config`]: the settings in `config.toml`.

mod config;
mod home;
mod login;
mod mcp;
mod remote;
mod trust;

pub use config::{
    AgentsSetting, Config, DEFAULT_COMPACT_AT, KnowledgeSettings, Setting, UpdateSettings, WebSearchSettings,
    WebSettings, save_settings,
};
pub use home::Home;
pub use login::{Login, LoginKind};
pub use mcp::{DEFAULT_MCP_TIMEOUT_SECS, McpServer, McpServerPlan, McpTransport, expand_vars, project_mcp_servers};
pub use remote::{DEFAULT_APPROVAL_TIMEOUT, RemoteChange, RemoteSettings, save_remote};
pub use trust::{Standing, TRUST_BEARING, Trust, project_rules, trust_bearing_content};

/// Why something lembas keeps could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path} is not valid: {reason}")]
    Invalid { path: String, reason: String },
    #[error("no home directory: set HOME or LEMBAS_HOME")]
    NoHome,
}

impl StoreError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        StoreError::Io { path: path.display().to_string(), source }
    }
}

/// Writes `bytes` to `path` atomically (a temporary file beside it, then a rename), with
/// `mode` on Unix, making the folder when needed.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8], mode: u32) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .ok_or_else(|| StoreError::Invalid { path: path.display().to_string(), reason: "no folder".into() })?;
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        folder.mode(0o700);
    }
    folder.create(dir).map_err(|e| StoreError::io(dir, e))?;
    // Through a temporary file made exclusively under a name nobody can guess: a link planted
    // beside it is never written through (`lembas_sys::write_whole`).
    lembas_sys::write_whole_synced(path, bytes, Some(mode)).map_err(|e| StoreError::io(path, e))
}
