//! What every command reads at start: the folders, the configuration, the login, the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lembas_config::{Config, Home, Login};
use lembas_model::{ClientConfig, Learned, ModelClient};
use lembas_store::Store;

use crate::Failure;
use crate::cli::exit;

pub fn home() -> Result<Home, Failure> {
    Home::from_env().map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}

pub fn config(home: &Home) -> Result<Config, Failure> {
    Config::load(home).map_err(|e| Failure::new(exit::USAGE, e.to_string()))
}

/// The stored login, or the one-line way to make one.
pub fn login(home: &Home) -> Result<Login, Failure> {
    match Login::load(home) {
        Ok(Some(login)) => Ok(login),
        Ok(None) => Err(Failure::new(
            exit::LOGIN,
            "not logged in: run `lembas login URL` with your model server (an OpenAI-compatible one, or a LLeMbas server)",
        )),
        Err(e) => Err(Failure::new(exit::LOGIN, e.to_string())),
    }
}

pub fn store(home: &Home) -> Result<Arc<Store>, Failure> {
    Store::open(&home.sessions_db()).map(Arc::new).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}

/// The model client for a login, starting from what earlier runs learned about its server.
pub fn client(home: &Home, login: &Login) -> Result<ModelClient, Failure> {
    let mut config = ClientConfig::new(&login.base_url);
    config.api_key = login.secret.clone().or_else(|| std::env::var("LEMBAS_API_KEY").ok().filter(|k| !k.is_empty()));
    config.prompt_progress = login.llama_cpp;
    let client = ModelClient::new(config)?;
    if let Ok(text) = std::fs::read_to_string(home.learned_file())
        && let Ok(learned) = serde_json::from_str::<Learned>(&text)
    {
        client.set_learned(learned);
    }
    Ok(client)
}

/// Keeps what the client learned, for the next run.
pub fn save_learned(home: &Home, client: &ModelClient) {
    let learned = client.learned();
    if learned != Learned::default() {
        let text = serde_json::to_string_pretty(&learned).unwrap_or_default();
        let _ = lembas_config::write_atomic(&home.learned_file(), text.as_bytes(), 0o644);
    }
}

/// The project a directory belongs to: the top of its git work tree, else the directory.
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors().find(|d| d.join(".git").exists()).unwrap_or(dir).to_path_buf()
}
