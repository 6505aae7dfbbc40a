//! The one login: which server, how to reach it, and what it offered.

use std::path::Path;

use lembas_models::ModelInfo;
use serde::{Deserialize, Serialize};

use crate::{Home, StoreError, write_atomic};

/// What kind of server the login is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoginKind {
    /// A LLeMbas server (protocol 3), with a device token.
    Llembas,
    /// Any OpenAI-compatible model server.
    OpenAi,
}

/// A stored login.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Login {
    pub kind: LoginKind,
    /// The server as the person named it (its root).
    pub server: String,
    /// The OpenAI-compatible base, ending in `/v1`.
    pub base_url: String,
    /// The token or API key, if the server needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// The models the server offered at login (refreshed by `lembas models`).
    #[serde(default)]
    pub models: Vec<ModelInfo>,
    /// The server answered llama.cpp's `/props`.
    #[serde(default)]
    pub llama_cpp: bool,
    /// The embedding models the server lists, by id: the knowledge bases' embedder where
    /// `config.toml` names none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embedders: Vec<String>,
}

impl Login {
    /// The model a session uses when none is named: the instance's default, else the first.
    pub fn default_model(&self) -> Option<&ModelInfo> {
        self.default_model
            .as_deref()
            .and_then(|id| self.models.iter().find(|m| m.id == id))
            .or_else(|| self.models.first())
    }

    /// Whether the login's token may reach the person's memory on the instance: a LLeMbas login
    /// whose scope has `memory` (or the older `library`, which counts as it).
    pub fn keeps_memory(&self) -> bool {
        self.kind == LoginKind::Llembas
            && self.secret.is_some()
            && self.scope.as_deref().is_some_and(|s| s.split_whitespace().any(|w| w == "memory" || w == "library"))
    }

    /// A model by id or display name.
    pub fn model(&self, name: &str) -> Option<&ModelInfo> {
        self.models
            .iter()
            .find(|m| m.id == name)
            .or_else(|| self.models.iter().find(|m| m.name.as_deref() == Some(name)))
    }

    /// The stored login, if there is one.
    pub fn load(home: &Home) -> Result<Option<Login>, StoreError> {
        load_from(&home.credentials_file())
    }

    /// Stores this login, replacing any other, readable only by the user.
    pub fn save(&self, home: &Home) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(self).expect("a login serializes");
        write_atomic(&home.credentials_file(), text.as_bytes(), 0o600)
    }

    /// Keeps `per_token` — bytes of a request per token, as a session measured them against
    /// the server's count — as the stored login's measure of `model`, where it has none yet.
    pub fn keep_measure(home: &Home, model: &str, per_token: f64) -> Result<(), StoreError> {
        let Some(mut login) = Login::load(home)? else { return Ok(()) };
        let Some(info) = login.models.iter_mut().find(|m| m.id == model && m.bytes_per_token.is_none()) else {
            return Ok(());
        };
        info.bytes_per_token = Some((per_token * 100.0).round() / 100.0);
        login.save(home)
    }

    /// Removes the stored login; whether there was one.
    pub fn remove(home: &Home) -> Result<bool, StoreError> {
        let path = home.credentials_file();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }
}

fn load_from(path: &Path) -> Result<Option<Login>, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| StoreError::Invalid { path: path.display().to_string(), reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login() -> Login {
        Login {
            kind: LoginKind::OpenAi,
            server: "http://h".into(),
            base_url: "http://h/v1".into(),
            secret: Some("k".into()),
            connection: None,
            version: None,
            scope: None,
            default_model: Some("b".into()),
            models: vec![
                ModelInfo { id: "a".into(), ..Default::default() },
                ModelInfo { id: "b".into(), name: Some("Bee".into()), ..Default::default() },
            ],
            llama_cpp: false,
            embedders: Vec::new(),
        }
    }

    #[test]
    fn saved_only_for_the_user_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        assert_eq!(Login::load(&home).unwrap(), None);
        login().save(&home).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.credentials_file()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(Login::load(&home).unwrap(), Some(login()));
        assert!(Login::remove(&home).unwrap());
        assert!(!Login::remove(&home).unwrap());
    }

    #[test]
    fn default_model_and_lookup() {
        let l = login();
        assert_eq!(l.default_model().unwrap().id, "b");
        assert_eq!(l.model("Bee").unwrap().id, "b");
        assert!(l.model("c").is_none());
    }

    #[test]
    fn a_broken_file_is_said_to_be_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        std::fs::create_dir_all(&home.config).unwrap();
        std::fs::write(home.credentials_file(), "{").unwrap();
        assert!(matches!(Login::load(&home), Err(StoreError::Invalid { .. })));
    }
}
