//! A session's view of a tree: levels from grants and floors, passages, and every operation's
//! answer with `filesystem.md`'s exact texts.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use lembas_spec::filesystem;

use crate::Level;

/// What a node of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Dir,
    File,
    /// A directory that is a forge repository (server only).
    Mount,
}

impl NodeKind {
    fn is_dir(self) -> bool {
        matches!(self, NodeKind::Dir | NodeKind::Mount)
    }
}

/// An operation's refusal, with the resolved absolute path it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsError {
    NotFound(String),
    Denied(String),
    ReadOnly(String),
    NotCommitted(String),
    NothingToCommit(String),
    IsADirectory(String),
    NotADirectory(String),
    AlreadyExists(String),
    MountRemoval(String),
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, path) = match self {
            FsError::NotFound(p) => ("not_found", p),
            FsError::Denied(p) => ("denied", p),
            FsError::ReadOnly(p) => ("read_only", p),
            FsError::NotCommitted(p) => ("not_committed", p),
            FsError::NothingToCommit(p) => ("nothing_to_commit", p),
            FsError::IsADirectory(p) => ("is_a_directory", p),
            FsError::NotADirectory(p) => ("not_a_directory", p),
            FsError::AlreadyExists(p) => ("already_exists", p),
            FsError::MountRemoval(p) => ("refuse_mount_rm", p),
        };
        f.write_str(&filesystem().error(key, path))
    }
}

impl std::error::Error for FsError {}

/// A tree with a session's grants and floors.
#[derive(Debug, Clone, Default)]
pub struct View {
    nodes: BTreeMap<String, NodeKind>,
    grants: Vec<(String, Level)>,
    floors: Vec<(String, Level)>,
}

/// `path` made absolute and normal, without a trailing `/` (the root is `/`).
fn norm(path: &str) -> String {
    lembas_paths::resolve(Path::new("/"), path).to_string_lossy().into_owned()
}

/// Whether `path` is `ancestor` or below it.
fn is_under(path: &str, ancestor: &str) -> bool {
    ancestor == "/" || path == ancestor || path.strip_prefix(ancestor).is_some_and(|rest| rest.starts_with('/'))
}

fn parent(path: &str) -> Option<String> {
    (path != "/").then(|| match path.rfind('/') {
        Some(0) | None => "/".to_owned(),
        Some(i) => path[..i].to_owned(),
    })
}

fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl View {
    /// A view of `tree` (paths; a directory ends with `/`; parents are implied), with `mounts`
    /// among its directories, `grants` (most specific wins; none by default) and `floors` (the
    /// most a session may have below a path).
    pub fn new<'a>(
        tree: impl IntoIterator<Item = &'a str>,
        mounts: impl IntoIterator<Item = &'a str>,
        grants: impl IntoIterator<Item = (&'a str, Level)>,
        floors: impl IntoIterator<Item = (&'a str, Level)>,
    ) -> View {
        let mut nodes = BTreeMap::from([("/".to_owned(), NodeKind::Dir)]);
        for entry in tree {
            let path = norm(entry);
            let kind = if entry.ends_with('/') { NodeKind::Dir } else { NodeKind::File };
            let mut up = parent(&path);
            while let Some(dir) = up {
                up = parent(&dir);
                nodes.entry(dir).or_insert(NodeKind::Dir);
            }
            nodes.insert(path, kind);
        }
        for mount in mounts {
            nodes.insert(norm(mount), NodeKind::Mount);
        }
        View {
            nodes,
            grants: grants.into_iter().map(|(p, l)| (norm(p), l)).collect(),
            floors: floors.into_iter().map(|(p, l)| (norm(p), l)).collect(),
        }
    }

    fn most_specific(entries: &[(String, Level)], path: &str) -> Option<Level> {
        entries
            .iter()
            .filter(|(p, _)| is_under(path, p))
            .max_by_key(|(p, _)| if p == "/" { 0 } else { p.len() })
            .map(|(_, l)| *l)
    }

    /// The session's level at `path` (absolute): its most specific grant, lowered to the most
    /// specific floor.
    pub fn level(&self, path: &str) -> Level {
        let path = norm(path);
        let grant = Self::most_specific(&self.grants, &path).unwrap_or(Level::None);
        let floor = Self::most_specific(&self.floors, &path).unwrap_or(Level::Commit);
        grant.min(floor)
    }

    /// At none, with something granted below it.
    pub fn is_passage(&self, path: &str) -> bool {
        let path = norm(path);
        self.level(&path) == Level::None
            && self
                .grants
                .iter()
                .any(|(p, l)| *l > Level::None && p != &path && is_under(p, &path) && self.level(p) > Level::None)
    }

    pub fn kind(&self, path: &str) -> Option<NodeKind> {
        self.nodes.get(&norm(path)).copied()
    }

    /// It exists and is at read-only or above: only that exists for the model.
    pub fn is_visible(&self, path: &str) -> bool {
        self.kind(path).is_some() && self.level(path) >= Level::Ro
    }

    /// The answer for a path the session cannot see: by its nearest ancestor that is visible
    /// (not found) or a passage (denied).
    fn unseen(&self, path: &str) -> FsError {
        if self.is_passage(path) {
            return FsError::Denied(path.to_owned());
        }
        let mut up = parent(path);
        while let Some(dir) = up {
            if self.is_visible(&dir) {
                return FsError::NotFound(path.to_owned());
            }
            if self.is_passage(&dir) {
                return FsError::Denied(path.to_owned());
            }
            up = parent(&dir);
        }
        FsError::Denied(path.to_owned())
    }

    fn seen(&self, path: &str) -> Result<NodeKind, FsError> {
        match self.kind(path) {
            Some(kind) if self.level(path) >= Level::Ro => Ok(kind),
            _ => Err(self.unseen(path)),
        }
    }

    /// `read` of `path` (absolute): fine for a visible file or directory.
    pub fn read(&self, path: &str) -> Result<NodeKind, FsError> {
        self.seen(&norm(path))
    }

    /// A directory's entries as a listing names them: directories first, then by name in
    /// code-point order; only entries at read-only or above, with their marks.
    pub fn list(&self, path: &str) -> Result<Vec<String>, FsError> {
        let path = norm(path);
        if !self.seen(&path)?.is_dir() {
            return Err(FsError::NotADirectory(path));
        }
        let marks = &filesystem().listing;
        let writable = self.level(&path) >= Level::Stage;
        let mut entries: Vec<(bool, String)> = self
            .nodes
            .iter()
            .filter(|(p, _)| parent(p).as_deref() == Some(path.as_str()) && self.level(p) >= Level::Ro)
            .map(|(p, kind)| {
                let mut line = name(p).to_owned();
                if kind.is_dir() {
                    line.push('/');
                }
                if *kind == NodeKind::Mount {
                    line.push_str(&marks.mount);
                }
                if writable && self.level(p) == Level::Ro {
                    line.push_str(&marks.read_only);
                }
                (!kind.is_dir(), line)
            })
            .collect();
        entries.sort();
        Ok(entries.into_iter().map(|(_, line)| line).collect())
    }

    /// Whether a new node may be made at `path`, which does not exist.
    fn creatable(&self, path: &str) -> Result<(), FsError> {
        let mut up = parent(path);
        while let Some(dir) = up {
            if let Some(kind) = self.kind(&dir) {
                if !self.is_visible(&dir) {
                    // A passage, or a name taken by an entry at none.
                    return Err(FsError::Denied(path.to_owned()));
                }
                if !kind.is_dir() {
                    return Err(FsError::NotADirectory(dir));
                }
                return match self.level(path) {
                    Level::Stage | Level::Commit => Ok(()),
                    Level::Ro => Err(FsError::ReadOnly(path.to_owned())),
                    Level::None => Err(FsError::Denied(path.to_owned())),
                };
            }
            up = parent(&dir);
        }
        Err(FsError::Denied(path.to_owned()))
    }

    /// `write` of a file at `path`.
    pub fn write(&self, path: &str) -> Result<(), FsError> {
        let path = norm(path);
        match self.kind(&path) {
            None => self.creatable(&path),
            Some(_) if !self.is_visible(&path) => Err(FsError::Denied(path)),
            Some(kind) if kind.is_dir() => Err(FsError::IsADirectory(path)),
            Some(_) if self.level(&path) < Level::Stage => Err(FsError::ReadOnly(path)),
            Some(_) => Ok(()),
        }
    }

    /// `mkdir` of a directory at `path`.
    pub fn mkdir(&self, path: &str) -> Result<(), FsError> {
        let path = norm(path);
        match self.kind(&path) {
            None => self.creatable(&path),
            Some(_) if !self.is_visible(&path) => Err(FsError::Denied(path)),
            // A directory that is already there is what was asked for (`filesystem.md`,
            // *Errors*: `Already exists` is for a file where a directory was meant).
            Some(kind) if kind.is_dir() => Ok(()),
            Some(_) => Err(FsError::AlreadyExists(path)),
        }
    }

    /// `rm` of `path`.
    pub fn rm(&self, path: &str) -> Result<(), FsError> {
        let path = norm(path);
        let kind = self.seen(&path)?;
        if self.level(&path) < Level::Stage {
            return Err(FsError::ReadOnly(path));
        }
        if kind == NodeKind::Mount {
            return Err(FsError::MountRemoval(path));
        }
        Ok(())
    }

    /// `commit` of a change at `path`: needs a mount and the commit level.
    pub fn commit(&self, path: &str) -> Result<(), FsError> {
        let path = norm(path);
        self.seen(&path)?;
        let level = self.level(&path);
        if level < Level::Stage {
            return Err(FsError::ReadOnly(path));
        }
        let in_mount = self.nodes.iter().any(|(p, k)| *k == NodeKind::Mount && is_under(&path, p));
        if !in_mount {
            return Err(FsError::NothingToCommit(path));
        }
        if level < Level::Commit {
            return Err(FsError::NotCommitted(path));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_are_implied_and_files_are_files() {
        let v = View::new(["/a/b/c.txt"], [], [("/", Level::Ro)], []);
        assert_eq!(v.kind("/a/b"), Some(NodeKind::Dir));
        assert_eq!(v.kind("/a/b/c.txt"), Some(NodeKind::File));
        assert_eq!(v.list("/a/b/c.txt"), Err(FsError::NotADirectory("/a/b/c.txt".into())));
    }

    #[test]
    fn a_write_under_a_file_is_not_a_directory() {
        let v = View::new(["/f"], [], [("/", Level::Stage)], []);
        assert_eq!(v.write("/f/x").unwrap_err().to_string(), "Not a directory: /f");
    }

    #[test]
    fn a_mount_is_not_removed_by_a_session() {
        let v = View::new(["/repo/"], ["/repo"], [("/", Level::Commit)], []);
        assert!(matches!(v.rm("/repo"), Err(FsError::MountRemoval(_))));
        assert_eq!(v.rm("/nope"), Err(FsError::NotFound("/nope".into())));
    }

    #[test]
    fn nothing_granted_denies_everything() {
        let v = View::new(["/a"], [], [], []);
        assert_eq!(v.read("/a"), Err(FsError::Denied("/a".into())));
        assert_eq!(v.write("/b"), Err(FsError::Denied("/b".into())));
    }
}
