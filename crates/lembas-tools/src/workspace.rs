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

pub use lembas_client::EditorFiles;

/// The project root and the session's view of its files.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The project root as the session names it (its canonical spelling).
    pub root: PathBuf,
    /// Where the session started (at or below the root).
    pub started: PathBuf,
    pub times: FileTimes,
    /// The person's home folder, for `~` in a path.
    pub home: Option<PathBuf>,
    /// The editor's view of the files, when the session runs in one that offers it.
    pub editor: Option<Arc<dyn EditorFiles>>,
    /// Folders no listing or search walks into, by their real paths: lembas' own (its login,
    /// sessions, logs) and the person's credentials (`~/.ssh`, `~/.netrc`, …), so a search of the
    /// home folder does not read the login's key or an SSH key.
    pub private: Arc<[PathBuf]>,
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
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let workspace = Workspace {
            root: canonical,
            started,
            times: FileTimes::default(),
            home,
            editor: None,
            private: Arc::new([]),
        };
        (workspace, note)
    }

    /// The one resolution of a call's path: relative to the project root, and `~` (alone or
    /// before a `/`) as the person's home folder, as in a shell.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let path = path.trim();
        match (&self.home, path.strip_prefix('~')) {
            (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
                lembas_paths::resolve(home, rest.trim_start_matches('/'))
            }
            _ => lembas_paths::resolve(&self.root, path),
        }
    }

    /// Where `path` really is: every symlink on the way followed — a link whose target does
    /// not exist yet too, since a write through it lands at its target — and what does not
    /// exist taken by its text. What containment and protected paths are judged on.
    pub fn real_path(&self, path: &Path) -> PathBuf {
        real_path(path)
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

/// Where `path` (absolute) really is: each component's symlink followed in turn, dangling ones
/// included; at most 40 links, as the kernel allows, after which the rest is taken by its text.
pub fn real_path(path: &Path) -> PathBuf {
    use std::collections::VecDeque;
    use std::path::Component;
    let mut pending: VecDeque<std::ffi::OsString> = VecDeque::new();
    let mut real = PathBuf::from("/");
    let push_components = |pending: &mut VecDeque<std::ffi::OsString>, p: &Path, front: bool| {
        let parts: Vec<std::ffi::OsString> = p
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect();
        if front {
            for part in parts.into_iter().rev() {
                pending.push_front(part);
            }
        } else {
            pending.extend(parts);
        }
    };
    push_components(&mut pending, path, false);
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            real.pop();
            continue;
        }
        let next = real.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && hops < 40 => {
                hops += 1;
                match std::fs::read_link(&next) {
                    Ok(target) => {
                        if target.is_absolute() {
                            real = PathBuf::from("/");
                        }
                        push_components(&mut pending, &target, true);
                    }
                    Err(_) => real = next,
                }
            }
            _ => real = next,
        }
    }
    real
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

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_is_judged_by_where_it_lands() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("new.txt"), project.join("dang")).unwrap();
        std::os::unix::fs::symlink("../elsewhere/deeper/x", project.join("rel")).unwrap();
        std::os::unix::fs::symlink("loop", project.join("loop")).unwrap();
        let (ws, _) = Workspace::new(&project, &project);
        let real_elsewhere = std::fs::canonicalize(&elsewhere).unwrap();
        assert_eq!(ws.real_path(&ws.resolve("dang")), real_elsewhere.join("new.txt"));
        assert!(!ws.contains(&ws.resolve("dang")));
        assert_eq!(ws.real_path(&ws.resolve("rel/y")), real_elsewhere.join("deeper/x/y"));
        assert!(!ws.contains(&ws.resolve("rel")));
        // A loop ends; what is left is taken by its text.
        let _ = ws.real_path(&ws.resolve("loop/a"));
        assert!(ws.contains(&ws.resolve("src/new/deep.rs")));
    }

    #[test]
    fn a_tilde_means_the_home_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ws, _) = Workspace::new(dir.path(), dir.path());
        ws.home = Some("/home/ada".into());
        assert_eq!(ws.resolve("~/.ssh/authorized_keys"), Path::new("/home/ada/.ssh/authorized_keys"));
        assert_eq!(ws.resolve("~"), Path::new("/home/ada"));
        assert_eq!(ws.resolve("~x"), ws.root.join("~x"));
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
