//! Which projects the person trusted: a project's own permission rules count only once it is
//! trusted (asked the first time in the terminal UI, or said with `lembas trust`), and the
//! answer is remembered.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Home, StoreError, write_atomic};

/// The remembered answers, by project root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trust {
    #[serde(default)]
    pub projects: BTreeMap<String, bool>,
}

impl Trust {
    pub fn load(home: &Home) -> Result<Trust, StoreError> {
        let path = home.config.join("trusted.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| StoreError::Invalid { path: path.display().to_string(), reason: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Trust::default()),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    pub fn save(&self, home: &Home) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(self).expect("trust serializes");
        write_atomic(&home.config.join("trusted.json"), text.as_bytes(), 0o600)
    }

    /// The person's answer for the project at `root`, if they gave one.
    pub fn answer(&self, root: &Path) -> Option<bool> {
        self.projects.get(&root.display().to_string()).copied()
    }

    pub fn set(&mut self, root: &Path, trusted: bool) {
        self.projects.insert(root.display().to_string(), trusted);
    }
}

/// A project's own permission rules (`.lembas/permissions.json`, in the shape of
/// `permission/defaults.json`), if it has them.
pub fn project_rules(root: &Path) -> Result<Option<serde_json::Value>, StoreError> {
    let path = root.join(".lembas/permissions.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Invalid { path: path.display().to_string(), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let mut trust = Trust::load(&home).unwrap();
        assert_eq!(trust.answer(Path::new("/p")), None);
        trust.set(Path::new("/p"), true);
        trust.save(&home).unwrap();
        assert_eq!(Trust::load(&home).unwrap().answer(Path::new("/p")), Some(true));
    }
}
