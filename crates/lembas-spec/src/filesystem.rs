//! `spec/filesystem.json`: the fixed texts of `filesystem.md` (errors, listings, instruction
//! file names).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The parsed `filesystem.json`, read once.
pub fn filesystem() -> &'static FilesystemSpec {
    static SPEC: OnceLock<FilesystemSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text = crate::file("filesystem.json").expect("spec/filesystem.json is embedded");
        serde_json::from_str(text).expect("spec/filesystem.json is checked by this crate's tests")
    })
}

#[derive(Debug, Deserialize)]
pub struct FilesystemSpec {
    /// Error texts by key (`not_found`, `denied`, …), each with `{{path}}`.
    pub errors: BTreeMap<String, String>,
    pub listing: Listing,
    pub instructions: Instructions,
}

impl FilesystemSpec {
    /// An error text with its path filled in. Panics on a key the file lacks: a bug in lembas.
    pub fn error(&self, key: &str, path: &str) -> String {
        let text = self.errors.get(key).unwrap_or_else(|| panic!("filesystem.json has no error {key:?}"));
        crate::render(text, &[("path", path)])
    }
}

#[derive(Debug, Deserialize)]
pub struct Listing {
    pub empty_read: String,
    pub empty_list: String,
    pub more: String,
    pub mount: String,
    pub read_only: String,
    pub max_lines: usize,
    pub default_depth: usize,
    pub max_depth: usize,
}

#[derive(Debug, Deserialize)]
pub struct Instructions {
    /// File names in order of preference within one directory.
    pub names: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_fill_the_path() {
        let fs = super::filesystem();
        assert_eq!(fs.error("not_found", "/a"), "No such file or directory: /a");
        assert_eq!(fs.instructions.names, ["AGENTS.md", "CLAUDE.md"]);
    }
}
