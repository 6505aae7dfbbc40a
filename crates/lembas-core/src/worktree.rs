//! A subagent's own git worktree (`task` with `worktree: true`): subagents that change files at
//! the same time each work on a branch of their own, in a checkout of their own, so none
//! overwrites another's work or the person's. What it changed is committed on its branch when it
//! ends, for the main agent to merge; a worktree with no changes is removed.

use std::path::{Path, PathBuf};

/// A worktree made for one subagent.
#[derive(Debug, Clone)]
pub(crate) struct Worktree {
    /// The project's repository (where the branch is merged).
    repo: PathBuf,
    /// The worktree's folder.
    pub path: PathBuf,
    pub branch: String,
    /// The commit it branched from.
    base: String,
}

/// lembas' own git, outside the sandbox, on a worktree a subagent wrote: hardened
/// (`lembas_sys::git`), so nothing its repository or a submodule in it names is run.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    lembas_sys::git::run(dir, args)
}

/// A branch-safe form of the subagent's description.
fn slug(label: &str) -> String {
    let mut slug = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 32 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { "task".to_owned() } else { slug.to_owned() }
}

impl Worktree {
    /// Makes a worktree of the project at `root` (its `HEAD`, on a new branch) under `under`,
    /// named after the subagent; `unique` keeps two subagents of one description apart.
    pub fn create(root: &Path, under: &Path, label: &str, unique: &str) -> Result<Worktree, String> {
        let repo = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"]).map_err(|_| {
            "worktree: true needs a git repository, and this project is not one: run the task without it.".to_owned()
        })?);
        let base = git(&repo, &["rev-parse", "--verify", "HEAD"])
            .map_err(|_| "worktree: true needs a first commit to branch from; this repository has none.".to_owned())?;
        let name = format!("{}-{unique}", slug(label));
        let branch = format!("lembas/{name}");
        let path = under.join(&name);
        std::fs::create_dir_all(under).map_err(|e| format!("cannot make {}: {e}", under.display()))?;
        git(&repo, &["worktree", "add", "-q", "-b", &branch, &path.to_string_lossy(), &base])?;
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        Ok(Worktree { repo, path, branch, base })
    }

    /// Where the session started, inside the worktree: the same place relative to the project.
    pub fn started(&self, root: &Path, started: &Path) -> PathBuf {
        let repo_root = self.repo.as_path();
        let inside = started.strip_prefix(repo_root).or_else(|_| started.strip_prefix(root)).unwrap_or(Path::new(""));
        self.path.join(inside)
    }

    /// The subagent ended: its changes are committed on its branch and said, or, with none,
    /// the worktree and branch are removed. Answers the line for its report.
    pub fn finish(&self, label: &str) -> String {
        let changed = git(&self.path, &["status", "--porcelain"]).unwrap_or_default();
        let ahead = git(&self.path, &["rev-list", "--count", &format!("{}..{}", self.base, self.branch)])
            .ok()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0);
        if changed.is_empty() && ahead == 0 {
            let removed = git(&self.repo, &["worktree", "remove", "--force", &self.path.to_string_lossy()])
                .and_then(|_| git(&self.repo, &["branch", "-D", &self.branch]));
            return match removed {
                Ok(_) => "(It changed no file; its worktree was removed.)".to_owned(),
                Err(e) => format!("(It changed no file; its worktree {} is left: {e})", self.path.display()),
            };
        }
        if !changed.is_empty() {
            let message = format!("lembas subagent: {label}");
            let committed = git(&self.path, &["add", "-A"]).and_then(|_| {
                // The repository's identity, else the person's own (lembas' git reads no global
                // configuration), else lembas' name.
                let named = git(&self.path, &["config", "user.email"]).is_ok_and(|e| !e.is_empty());
                let (name, email) = lembas_sys::git::person_identity()
                    .unwrap_or_else(|| ("lembas".to_owned(), "lembas@localhost".to_owned()));
                let (name, email) = (format!("user.name={name}"), format!("user.email={email}"));
                let mut identity = Vec::new();
                if !named {
                    identity = vec!["-c", &name, "-c", &email];
                }
                identity.extend(["commit", "-q", "-m", &message]);
                git(&self.path, &identity)
            });
            if let Err(e) = committed {
                return format!(
                    "(Its changes are in the worktree {} on branch {}, not committed: {e})",
                    self.path.display(),
                    self.branch
                );
            }
        }
        let files = git(&self.repo, &["diff", "--stat", &self.base, &self.branch])
            .ok()
            .and_then(|stat| stat.lines().last().map(|l| l.trim().to_owned()))
            .unwrap_or_default();
        format!(
            "(Its changes are committed on branch {} ({files}); merge them with `git merge {}`. Its worktree, {}, stays until `git worktree remove` removes it.)",
            self.branch,
            self.branch,
            self.path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn a_description_becomes_a_branch_safe_name() {
        assert_eq!(slug("Fix the parser's tests!"), "fix-the-parser-s-tests");
        assert_eq!(slug("   "), "task");
        assert!(slug(&"long words ".repeat(10)).len() <= 33);
    }
}
