//! `[remote]`: what a LLeMbas server may do on this computer over the link (`acp.md`, the
//! `remote.*` settings). Global only: it is read from the person's own `config.toml`, never from a
//! project, so a project the model can write cannot widen it.

use serde::{Deserialize, Serialize};

use crate::{Home, StoreError};

/// How long an approval put to the server waits for an answer when nothing else says (seconds).
pub const DEFAULT_APPROVAL_TIMEOUT: u64 = 600;

/// `[remote]` in `config.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteSettings {
    /// Remote work on or off. Off, the device still links and says `roots: []`.
    pub enabled: bool,
    /// The folders remote sessions may open, each with everything below it (`~/` is the home
    /// folder). None: every `session/new` is refused.
    pub roots: Vec<String>,
    /// The widest mode a remote session runs in (`manual`, `edit` or `auto`).
    pub max_mode: String,
    /// A remote session opens only in a project the person trusted.
    pub require_trust: bool,
    /// Seconds an approval put to the server waits; no answer by then is a denial.
    pub approval_timeout: u64,
    /// Accept scheduled work (`loop.json` `scheduled.setting`), off by default.
    pub scheduled: bool,
}

impl Default for RemoteSettings {
    fn default() -> Self {
        RemoteSettings {
            enabled: true,
            roots: Vec::new(),
            max_mode: "edit".into(),
            require_trust: true,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            scheduled: false,
        }
    }
}

/// A change the person makes to `[remote]` (`lembas remote …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteChange {
    Enabled(bool),
    Scheduled(bool),
    /// A root added, as the person wrote it once made absolute.
    AddRoot(String),
    /// A root taken out; whether it was there is answered by [`save_remote`].
    RemoveRoot(String),
}

/// Writes `change` into `[remote]` of `config.toml`, keeping the rest of the file as the person
/// wrote it. Answers whether anything changed (adding a root already there, or removing one that
/// is not, changes nothing).
pub fn save_remote(home: &Home, change: &RemoteChange) -> Result<bool, StoreError> {
    crate::config::edit_config(home, |doc| write_remote(doc, change))
}

fn write_remote(doc: &mut toml_edit::DocumentMut, change: &RemoteChange) -> Result<(), String> {
    let table = doc
        .entry("remote")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or("remote is not a table")?;
    match change {
        RemoteChange::Enabled(on) => table.insert("enabled", toml_edit::value(*on)),
        RemoteChange::Scheduled(on) => table.insert("scheduled", toml_edit::value(*on)),
        RemoteChange::AddRoot(root) | RemoteChange::RemoveRoot(root) => {
            let mut roots: Vec<String> = table
                .get("roots")
                .and_then(toml_edit::Item::as_array)
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            let had = roots.iter().any(|r| r == root);
            match change {
                RemoteChange::AddRoot(_) if !had => roots.push(root.clone()),
                RemoteChange::RemoveRoot(_) => roots.retain(|r| r != root),
                _ => {}
            }
            table.insert("roots", toml_edit::value(roots.into_iter().collect::<toml_edit::Array>()))
        }
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn remote_work_is_read_with_safe_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let remote = Config::load(&home).unwrap().remote;
        assert!(remote.roots.is_empty() && remote.require_trust && !remote.scheduled);
        assert_eq!(remote.max_mode, "edit");
        std::fs::create_dir_all(&home.config).unwrap();
        std::fs::write(home.config_file(), "[remote]\nroots = [\"~/work\"]\nmax_mode = \"auto\"\n").unwrap();
        let remote = Config::load(&home).unwrap().remote;
        assert_eq!((remote.roots, remote.max_mode.as_str()), (vec!["~/work".to_owned()], "auto"));
        std::fs::write(home.config_file(), "[remote]\nroot = []\n").unwrap();
        assert!(Config::load(&home).is_err(), "a misspelt key is refused, not ignored");
    }

    #[test]
    fn changes_keep_the_file_and_say_whether_anything_changed() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        std::fs::create_dir_all(&home.config).unwrap();
        std::fs::write(home.config_file(), "# mine\nmodel = \"a\"\n").unwrap();
        assert!(save_remote(&home, &RemoteChange::AddRoot("/w/a".into())).unwrap());
        assert!(!save_remote(&home, &RemoteChange::AddRoot("/w/a".into())).unwrap());
        assert!(save_remote(&home, &RemoteChange::AddRoot("/w/b".into())).unwrap());
        assert!(save_remote(&home, &RemoteChange::Scheduled(true)).unwrap());
        assert!(save_remote(&home, &RemoteChange::RemoveRoot("/w/a".into())).unwrap());
        assert!(!save_remote(&home, &RemoteChange::RemoveRoot("/w/a".into())).unwrap());
        let text = std::fs::read_to_string(home.config_file()).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"a\"\n"), "{text}");
        let config = Config::load(&home).unwrap();
        assert_eq!(config.remote.roots, vec!["/w/b".to_owned()]);
        assert!(config.remote.scheduled && config.remote.enabled);
        assert!(save_remote(&home, &RemoteChange::Enabled(false)).unwrap());
        assert!(!Config::load(&home).unwrap().remote.enabled);
    }
}
