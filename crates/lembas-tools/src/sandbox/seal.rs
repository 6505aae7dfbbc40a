//! What Landlock cannot do: take back, inside a place it opens, what must stay read-only. Landlock
//! only grants, and a grant covers everything under it — so a command that may write the project
//! could write `.git/hooks/pre-commit`, and one that may write `/tmp` could write a home folder
//! that lies there. A mount namespace can: each such place is bound onto itself read-only, and a
//! place the mode opens that lies inside one of them is bound again writable, deepest last.
//!
//! This file decides which mounts a command gets (pure, but for finding the project's git
//! folders); [`crate::sandbox::launcher`] makes them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One bind mount of a place onto itself, in the order they are made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    pub path: PathBuf,
    /// Bound writable again (a place the mode opens inside a read-only one), else read-only.
    pub writable: bool,
}

/// The mounts that make `sealed` (never writable) and `shut` (read-only but for the `writable`
/// places inside it) read-only where they lie inside a `writable` place, ordered so that a deeper
/// mount comes after the one it lies in. A place outside every writable one needs no mount:
/// Landlock already keeps commands from writing it. All paths are real (links followed).
///
/// `pinned` places are bound onto themselves as they are (writable where they are writable):
/// a mount point cannot be renamed, removed or replaced (`EBUSY`), so a command cannot move the
/// project's `.git` aside and put a folder of its own making in its place — the read-only
/// mounts inside it would have gone with the old one.
pub fn seals(writable: &[PathBuf], sealed: &[PathBuf], shut: &[PathBuf], pinned: &[PathBuf]) -> Vec<Seal> {
    let mut out: Vec<Seal> = Vec::new();
    for place in shut {
        if writable.contains(place) || !writable.iter().any(|w| place.starts_with(w)) {
            continue;
        }
        out.push(Seal { path: place.clone(), writable: false });
        // The places the mode opens inside it stay writable — but a sealed one never is.
        for inner in writable.iter().filter(|w| w.starts_with(place) && *w != place) {
            if !sealed.iter().any(|s| inner.starts_with(s)) {
                out.push(Seal { path: inner.clone(), writable: true });
            }
        }
    }
    for place in pinned {
        if writable_at(place, writable, &out) && !sealed.iter().any(|s| place.starts_with(s)) {
            out.push(Seal { path: place.clone(), writable: true });
        }
    }
    for place in sealed {
        if writable_at(place, writable, &out) {
            out.push(Seal { path: place.clone(), writable: false });
        }
    }
    // Shallow first; at the same place, read-only last (a protected place is never writable).
    out.sort_by_key(|s| (s.path.components().count(), !s.writable, s.path.clone()));
    out.dedup();
    out
}

/// Whether `path` is writable with the `writable` grants and the `mounts` made so far: the
/// deepest of them at or above it decides.
fn writable_at(path: &Path, writable: &[PathBuf], mounts: &[Seal]) -> bool {
    let grants = writable.iter().map(|w| (w.as_path(), true));
    let mounted = mounts.iter().map(|m| (m.path.as_path(), m.writable));
    grants
        .chain(mounted)
        .filter(|(place, _)| path.starts_with(place))
        .max_by_key(|(place, writable)| (place.components().count(), !*writable))
        .is_some_and(|(_, writable)| writable)
}

/// What in a project's `.agent` folder decides what agents may do (as the judge counts it).
const AGENT_PARTS: &[&str] =
    &["commands", "agents", "skills", "hooks", "settings.json", "settings.local.json", "config.toml"];

/// The places in the project at `root` that decide what runs later, so that no command may
/// change them: git's hooks and configuration (a hook runs at the person's next commit, and the
/// configuration names programs: `core.hooksPath`, `core.fsmonitor`, a pager, filters), a
/// linked worktree's `.git` file, and the files that decide what lembas and other agents may do
/// (`.lembas`, `.mcp.json`, `.claude`, `.codex`, `.opencode`, and `.agent`'s commands, agents,
/// skills, hooks and settings). Only places that exist
/// can be mounted; a repository's missing `hooks` folder is made (git makes it too) so that
/// nothing can put a hook there. Git's objects and refs stay writable: `git commit` works.
pub fn project_places(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dot_git = root.join(".git");
    let git_dirs: Vec<PathBuf> = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => vec![dot_git.clone()],
        Ok(meta) if meta.is_file() => {
            // A linked worktree: `.git` names its own folder, and that folder the common one
            // (in its `commondir`; its `gitdir` names the worktree back).
            out.push(dot_git.clone());
            let dirs = linked_git_dirs(&dot_git, root);
            if let Some(own) = dirs.first() {
                out.extend([own.join("commondir"), own.join("gitdir")]);
            }
            dirs
        }
        _ => Vec::new(),
    };
    for dir in git_dirs {
        let hooks = dir.join("hooks");
        if !hooks.exists() && dir.join("config").is_file() {
            let _ = std::fs::create_dir(&hooks);
        }
        out.extend(["hooks", "config", "config.worktree"].iter().map(|f| dir.join(f)));
        // Hooks kept elsewhere (husky's `.husky`, a `.githooks` folder): they run all the same.
        if let Some(elsewhere) = std::fs::read_to_string(dir.join("config")).ok().as_deref().and_then(hooks_path) {
            out.push(root.join(elsewhere));
        }
    }
    out.extend([".lembas", ".mcp.json", ".claude", ".codex", ".opencode"].iter().map(|f| root.join(f)));
    // `.agent` also holds the plans, which commands may write: only its trust-bearing parts.
    let agent = root.join(".agent");
    out.extend(AGENT_PARTS.iter().map(|f| agent.join(f)));
    out.into_iter().filter(|p| p.exists()).map(|p| std::fs::canonicalize(&p).unwrap_or(p)).collect()
}

/// The project's git folders, each to be held where it is ([`seals`]'s `pinned`): `.git`, or a
/// linked worktree's own folder and the repository's common one. What is in them (objects,
/// refs, the index) stays as writable as it was.
pub fn git_folders(root: &Path) -> Vec<PathBuf> {
    let dot_git = root.join(".git");
    let dirs = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => vec![dot_git],
        Ok(meta) if meta.is_file() => linked_git_dirs(&dot_git, root),
        _ => Vec::new(),
    };
    dirs.into_iter().filter(|p| p.is_dir()).map(|p| std::fs::canonicalize(&p).unwrap_or(p)).collect()
}

/// `core.hooksPath` in a git configuration file's text, if it sets one (a path relative to the
/// work tree, or absolute; `~/` is not read). An `include` is not followed.
fn hooks_path(config: &str) -> Option<String> {
    let mut in_core = false;
    let mut found = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            let name = line.trim_start_matches('[').split([']', ' ', '"']).next().unwrap_or_default();
            in_core = name.eq_ignore_ascii_case("core");
        } else if in_core
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("hookspath")
        {
            let value = value.split(['#', ';']).next().unwrap_or_default().trim().trim_matches('"');
            found = (!value.is_empty() && !value.starts_with('~')).then(|| value.to_owned());
        }
    }
    found
}

/// The folders a worktree's `.git` file leads to: its own (`gitdir: …`) and the repository's
/// common one (that folder's `commondir`).
fn linked_git_dirs(dot_git: &Path, root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dot_git) else { return Vec::new() };
    let Some(own) = text.lines().find_map(|l| l.strip_prefix("gitdir:")).map(|d| root.join(d.trim())) else {
        return Vec::new();
    };
    let mut dirs = vec![own.clone()];
    if let Ok(common) = std::fs::read_to_string(own.join("commondir")) {
        dirs.push(own.join(common.trim()));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn seal(path: &str, writable: bool) -> Seal {
        Seal { path: p(path), writable }
    }

    #[test]
    fn a_protected_place_inside_a_writable_one_is_read_only() {
        let writable = [p("/home/ada/app"), p("/tmp")];
        let sealed = [p("/home/ada/app/.git/hooks"), p("/home/ada/app/.mcp.json"), p("/home/ada/.ssh")];
        assert_eq!(
            seals(&writable, &sealed, &[p("/home/ada")], &[]),
            [seal("/home/ada/app/.mcp.json", false), seal("/home/ada/app/.git/hooks", false)],
            "the home folder outside /tmp needs no mount: Landlock keeps it"
        );
    }

    #[test]
    fn a_home_inside_tmp_is_read_only_but_for_what_the_mode_opens() {
        let home = "/tmp/h";
        let writable = [p("/tmp/h/app"), p("/tmp"), p("/tmp/h/.cargo"), p("/tmp/h/.ssh")];
        let sealed = [p("/tmp/h/app/.git/hooks"), p("/tmp/h/.ssh"), p("/tmp/h/.config/lembas")];
        assert_eq!(
            seals(&writable, &sealed, &[p(home)], &[]),
            [
                seal("/tmp/h", false),
                seal("/tmp/h/.cargo", true),
                seal("/tmp/h/app", true),
                seal("/tmp/h/.ssh", false),
                seal("/tmp/h/app/.git/hooks", false),
            ],
            "the credentials stay read-only even when named writable; lembas' folder lies in the read-only home"
        );
    }

    #[test]
    fn the_git_folder_is_held_where_it_is_and_stays_writable() {
        let writable = [p("/home/ada/app")];
        let sealed = [p("/home/ada/app/.git/hooks"), p("/home/ada/app/.git/config")];
        assert_eq!(
            seals(&writable, &sealed, &[p("/home/ada")], &[p("/home/ada/app/.git")]),
            [
                seal("/home/ada/app/.git", true),
                seal("/home/ada/app/.git/config", false),
                seal("/home/ada/app/.git/hooks", false),
            ],
            "held first, writable; its hooks and configuration read-only inside it"
        );
        // A git folder outside every writable place cannot be moved anyway: no mount.
        assert!(seals(&writable, &[], &[], &[p("/srv/repo.git")]).is_empty());
    }

    #[test]
    fn nothing_to_take_back_means_no_mount() {
        assert!(seals(&[p("/srv/plans")], &[p("/srv/app/.git/hooks")], &[p("/home/ada")], &[]).is_empty());
        // A home the person made writable themselves stays so.
        assert!(seals(&[p("/home/ada")], &[], &[p("/home/ada")], &[]).is_empty());
    }

    #[test]
    fn the_projects_git_folders_and_trust_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        let places = project_places(&root);
        assert!(root.join(".git/hooks").is_dir(), "a missing hooks folder is made");
        for want in [".git/hooks", ".git/config", ".mcp.json"] {
            assert!(places.contains(&root.join(want)), "{want}: {places:?}");
        }
        assert!(!places.iter().any(|p| p.ends_with(".lembas")), "only what exists can be mounted");
        // Hooks kept in the project (husky) are hooks too.
        std::fs::create_dir_all(root.join(".husky")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n[Core]\n\thooksPath = .husky # husky\n")
            .unwrap();
        assert!(project_places(&root).contains(&root.join(".husky")));
        assert_eq!(hooks_path("[core \"x\"]\n[remote \"o\"]\n\thookspath = y\n"), None);
        // A linked worktree: its .git file, and the common folder's hooks and configuration.
        let wt = root.join("wt");
        std::fs::create_dir_all(root.join(".git/worktrees/wt")).unwrap();
        std::fs::write(root.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", root.join(".git/worktrees/wt").display())).unwrap();
        let places = project_places(&wt);
        assert!(places.contains(&wt.join(".git")), "{places:?}");
        assert!(places.contains(&root.join(".git/hooks")), "{places:?}");
        assert!(places.contains(&root.join(".git/config")), "{places:?}");
    }
}
