//! Which projects the person trusted: a project's own permission rules count only once it is
//! trusted (asked the first time in the terminal UI, or said with `lembas trust`), and the
//! answer is remembered.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Home, StoreError, write_atomic};

/// The remembered answers, by project root, with what the project's trust-bearing files held
/// when the person trusted it: when they change, the trust lapses until it is given again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trust {
    #[serde(default)]
    pub projects: BTreeMap<String, bool>,
    /// The hash of [`trust_bearing_content`] at the time of trusting, by project root.
    #[serde(default)]
    pub contents: BTreeMap<String, String>,
}

/// Where a project stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Trusted,
    Untrusted,
    /// Never asked.
    Unasked,
    /// Trusted once, but its trust-bearing files changed since.
    Changed,
}

/// The files of a project that decide what lembas may do there: its rules and settings
/// (`.lembas/`), its MCP servers (`.mcp.json`), and its commands, agents, hooks and skills.
pub const TRUST_BEARING: &[&str] = &[
    ".lembas",
    ".mcp.json",
    ".agent/skills",
    ".agent/commands",
    ".agent/agents",
    ".agent/hooks",
    ".claude/commands",
    ".claude/agents",
    ".claude/skills",
    ".claude/hooks",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// Files under a trust-bearing folder that decide nothing: the project's task list and decision
/// log, which the agent and the person change all the time (changing them must not ask for trust
/// again). Anything else under `.lembas/` counts.
pub const NOT_TRUST_BEARING: &[&str] = &[".lembas/tasks.md", ".lembas/decisions.md"];

/// A hash of every trust-bearing file of the project at `root`: their paths and contents.
pub fn trust_bearing_content(root: &Path) -> String {
    use sha2::{Digest, Sha256};
    fn walk(path: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>, depth: usize) {
        let Ok(meta) = std::fs::metadata(path) else { return };
        if meta.is_dir() && depth < 8 {
            let Ok(entries) = std::fs::read_dir(path) else { return };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                walk(&entry.path(), &format!("{rel}/{name}"), out, depth + 1);
            }
        } else if meta.is_file() && !NOT_TRUST_BEARING.contains(&rel) {
            out.push((rel.to_owned(), std::fs::read(path).unwrap_or_default()));
        }
    }
    let mut files = Vec::new();
    for rel in TRUST_BEARING {
        walk(&root.join(rel), rel, &mut files, 0);
    }
    files.sort();
    let mut hash = Sha256::new();
    for (rel, bytes) in &files {
        hash.update((rel.len() as u64).to_le_bytes());
        hash.update(rel.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    hex::encode(hash.finalize())
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

    /// The person's answer for the project at `root`, if it still holds: a trust whose files
    /// changed since is no answer (the person is asked again).
    pub fn answer(&self, root: &Path) -> Option<bool> {
        match self.standing(root) {
            Standing::Trusted => Some(true),
            Standing::Untrusted => Some(false),
            Standing::Unasked | Standing::Changed => None,
        }
    }

    pub fn standing(&self, root: &Path) -> Standing {
        let key = root.display().to_string();
        match self.projects.get(&key) {
            None => Standing::Unasked,
            Some(false) => Standing::Untrusted,
            Some(true) if self.contents.get(&key) == Some(&trust_bearing_content(root)) => Standing::Trusted,
            Some(true) => Standing::Changed,
        }
    }

    pub fn set(&mut self, root: &Path, trusted: bool) {
        let key = root.display().to_string();
        self.projects.insert(key.clone(), trusted);
        if trusted {
            self.contents.insert(key, trust_bearing_content(root));
        } else {
            self.contents.remove(&key);
        }
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

    #[test]
    fn trust_lapses_when_what_it_was_given_for_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".lembas")).unwrap();
        std::fs::write(root.join(".lembas/permissions.json"), "{}").unwrap();
        std::fs::write(root.join("README.md"), "hi").unwrap();
        let mut trust = Trust::default();
        trust.set(root, true);
        assert_eq!(trust.standing(root), Standing::Trusted);
        std::fs::write(root.join("README.md"), "other files do not matter").unwrap();
        assert_eq!(trust.standing(root), Standing::Trusted);
        std::fs::write(root.join(".lembas/permissions.json"), r#"{"bash": {"*": "allow"}}"#).unwrap();
        assert_eq!(trust.standing(root), Standing::Changed);
        assert_eq!(trust.answer(root), None);
        std::fs::write(root.join(".lembas/permissions.json"), "{}").unwrap();
        assert_eq!(trust.standing(root), Standing::Trusted);
        // The task list and decision log decide nothing: they change without asking again.
        std::fs::write(root.join(".lembas/tasks.md"), "# Tasks\n\n## T1 · x\n").unwrap();
        std::fs::write(root.join(".lembas/decisions.md"), "# Decisions\n").unwrap();
        assert_eq!(trust.standing(root), Standing::Trusted);
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        assert_eq!(trust.standing(root), Standing::Changed);
        trust.set(root, true);
        assert_eq!(trust.standing(root), Standing::Trusted);
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::write(root.join(".claude/commands/x.md"), "run it").unwrap();
        assert_eq!(trust.standing(root), Standing::Changed);
    }
}
