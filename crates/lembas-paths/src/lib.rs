//! How lembas reads a path, without touching the disk (`context.md` §11, `filesystem.md` *Paths*).
//!
//! A relative path given by a tool call is resolved against the **project root**, whatever
//! directory the session started in; `.` and `..` are resolved by their text and `..` above `/`
//! stays at `/`; repeated and trailing `/` change nothing. An absolute path is taken as it is.
//! This is the one resolution: tools call [`resolve`] once, and the path it returns is the one
//! they open, check, record and report. Following symlinks for containment is the tools' job,
//! on the path returned here.
//!
//! ```
//! use std::path::Path;
//! let p = lembas_paths::resolve(Path::new("/home/ada/app"), "./src//main.rs");
//! assert_eq!(p, Path::new("/home/ada/app/src/main.rs"));
//! ```

use std::path::{Component, Path, PathBuf};

use lembas_spec::{loop_spec, render};

/// The absolute path `path` means, relative paths read against `base` (the project root).
///
/// `base` must itself be absolute; a relative `base` is read as if under `/`.
pub fn resolve(base: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    let start = if given.is_absolute() { None } else { Some(base) };
    for component in start.into_iter().flat_map(Path::components).chain(given.components()) {
        match component {
            Component::RootDir | Component::Prefix(_) => parts.clear(),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(name) => parts.push(name),
        }
    }
    let mut out = PathBuf::from("/");
    out.extend(parts);
    out
}

/// `path` relative to `base`, both read as resolved absolute paths; `None` when `path` is not
/// `base` or below it. `base` itself gives an empty path.
pub fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    let path = resolve(Path::new("/"), &path.to_string_lossy());
    let base = resolve(Path::new("/"), &base.to_string_lossy());
    path.strip_prefix(&base).ok().map(Path::to_path_buf)
}

/// The environment block's lines about where the session works (`loop.json` `context.env`):
/// the project by its root's last component, and — when the session started below the root —
/// that directory relative to the root. Neither names an absolute path.
pub fn environment_lines(root: &Path, started: &Path) -> Vec<String> {
    let env = &loop_spec().context.env;
    let root = resolve(Path::new("/"), &root.to_string_lossy());
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "/".to_owned());
    let mut lines = vec![render(&env.project, &[("name", &name)])];
    if let Some(below) = relative_to(started, &root).filter(|rel| !rel.as_os_str().is_empty()) {
        lines.push(render(&env.started, &[("path", &below.to_string_lossy())]));
    }
    lines
}

/// How the prompt names a file (`context.md` §11): relative to the project root when inside
/// it, `~/…` when under the person's home, else its absolute path.
pub fn prompt_name(path: &Path, root: &Path, home: Option<&Path>) -> String {
    if let Some(rel) = relative_to(path, root) {
        return if rel.as_os_str().is_empty() { ".".to_owned() } else { rel.to_string_lossy().into_owned() };
    }
    if let Some(rel) = home.and_then(|home| relative_to(path, home)) {
        return if rel.as_os_str().is_empty() { "~".to_owned() } else { format!("~/{}", rel.to_string_lossy()) };
    }
    resolve(Path::new("/"), &path.to_string_lossy()).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(base: &str, path: &str) -> String {
        resolve(Path::new(base), path).to_string_lossy().into_owned()
    }

    #[test]
    fn relative_paths_use_the_base() {
        assert_eq!(r("/a/b", "c/d"), "/a/b/c/d");
        assert_eq!(r("/a/b", "."), "/a/b");
        assert_eq!(r("/a/b", ""), "/a/b");
    }

    #[test]
    fn dots_and_slashes_by_their_text() {
        assert_eq!(r("/a/b", "../c"), "/a/c");
        assert_eq!(r("/a/b", "x/../../y/"), "/a/y");
        assert_eq!(r("/", "../../.."), "/");
        assert_eq!(r("/a", "//x///y/./z/"), "/x/y/z");
    }

    #[test]
    fn absolute_paths_ignore_the_base() {
        assert_eq!(r("/a/b", "/etc/../etc/hosts"), "/etc/hosts");
    }

    #[test]
    fn relative_to_is_lexical() {
        assert_eq!(relative_to(Path::new("/a/b/c"), Path::new("/a/")), Some(PathBuf::from("b/c")));
        assert_eq!(relative_to(Path::new("/a/b"), Path::new("/a/b")), Some(PathBuf::new()));
        assert_eq!(relative_to(Path::new("/ab"), Path::new("/a")), None);
    }

    #[test]
    fn prompt_names_never_leak_the_root() {
        let root = Path::new("/home/ada/src/app");
        let home = Some(Path::new("/home/ada"));
        assert_eq!(prompt_name(Path::new("/home/ada/src/app/docs/AGENTS.md"), root, home), "docs/AGENTS.md");
        assert_eq!(
            prompt_name(Path::new("/home/ada/.config/lembas/AGENTS.md"), root, home),
            "~/.config/lembas/AGENTS.md"
        );
        assert_eq!(prompt_name(Path::new("/etc/lembas/AGENTS.md"), root, home), "/etc/lembas/AGENTS.md");
    }

    #[test]
    fn environment_lines_name_no_absolute_path() {
        let lines = environment_lines(Path::new("/srv/x/app"), Path::new("/srv/x/app/pkg/web"));
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| !l.contains("/srv")));
        // A start outside the root is not "below" it.
        assert_eq!(environment_lines(Path::new("/srv/x/app"), Path::new("/tmp")).len(), 1);
    }
}
