//! The project a session works in, and what it has seen of each file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use lembas_spec::filesystem;

/// When this session last saw each file (by reading it or by its own change), keyed by the
/// resolved path: what `write` and `edit` check before they change a file.
#[derive(Debug, Clone, Default)]
pub struct FileTimes(Arc<Mutex<HashMap<PathBuf, Option<SystemTime>>>>);

impl FileTimes {
    pub fn saw(&self, path: &Path) {
        let time = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        self.0.lock().expect("file times").insert(path.to_path_buf(), time);
    }

    /// `None` when the file was never seen; else whether it is unchanged since.
    pub fn unchanged(&self, path: &Path) -> Option<bool> {
        let seen = *self.0.lock().expect("file times").get(path)?;
        let now = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        Some(seen == now)
    }

    pub fn forget(&self, path: &Path) {
        self.0.lock().expect("file times").remove(path);
    }
}

/// Files as an editor holds them: read and written through the editor when it offers it, so the
/// agent reads unsaved buffers. Each call answers `None` when the editor does not do that.
/// Called from blocking threads (file tools run off the async runtime).
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    fn read(&self, path: &Path) -> Option<Result<String, String>>;
    fn write(&self, path: &Path, content: &str) -> Option<Result<(), String>>;
}

/// The project root and the session's view of its files.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The project root as the session names it (its canonical spelling).
    pub root: PathBuf,
    /// Where the session started (at or below the root).
    pub started: PathBuf,
    pub times: FileTimes,
    /// The editor's view of the files, when the session runs in one that offers it.
    pub editor: Option<Arc<dyn EditorFiles>>,
}

impl Workspace {
    /// A workspace at `root`. The root is judged by its canonical spelling; when that differs
    /// from the one given, the returned note says so once (for the session's log).
    pub fn new(root: &Path, started: &Path) -> (Workspace, Option<String>) {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let started = std::fs::canonicalize(started).unwrap_or_else(|_| started.to_path_buf());
        let note = (canonical != root).then(|| {
            format!("The project root {} is {} on disk; paths are judged there.", root.display(), canonical.display())
        });
        (Workspace { root: canonical, started, times: FileTimes::default(), editor: None }, note)
    }

    /// The one resolution of a call's path.
    pub fn resolve(&self, path: &str) -> PathBuf {
        lembas_paths::resolve(&self.root, path.trim())
    }

    /// Where `path` really is: symlinks followed as far as the path exists, the rest by its
    /// text. What containment and protected paths are judged on.
    pub fn real_path(&self, path: &Path) -> PathBuf {
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut real = std::fs::canonicalize(&existing).unwrap_or(existing);
        real.extend(rest.iter().rev());
        real
    }

    /// Whether `path` (resolved) really lies inside the project.
    pub fn contains(&self, path: &Path) -> bool {
        self.real_path(path).starts_with(&self.root)
    }

    /// A text file's content: the editor's buffer when an editor offers it, else the disk's.
    pub(crate) fn read_text(&self, path: &Path) -> Option<Result<String, String>> {
        self.editor.as_ref().and_then(|e| e.read(path))
    }

    pub(crate) fn error(&self, key: &str, path: &Path) -> String {
        filesystem().error(key, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_project_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let outside = dir.path().join("secret");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, project.join("link")).unwrap();
        let (ws, _) = Workspace::new(&project, &project);
        assert!(ws.contains(&ws.resolve("src/new.rs")));
        #[cfg(unix)]
        assert!(!ws.contains(&ws.resolve("link/key")));
        assert!(!ws.contains(&ws.resolve("../secret/key")));
    }

    #[test]
    fn a_root_reached_through_a_symlink_is_named_by_its_real_spelling_once() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        let real = std::fs::canonicalize(&real).unwrap();
        #[cfg(unix)]
        {
            let alias = dir.path().join("alias");
            std::os::unix::fs::symlink(&real, &alias).unwrap();
            let (ws, note) = Workspace::new(&alias, &alias);
            assert_eq!(ws.root, real);
            assert!(note.unwrap().contains("is"));
        }
        let (_, note) = Workspace::new(&real, &real);
        assert!(note.is_none());
    }
}
