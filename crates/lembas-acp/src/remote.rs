//! The ACP server on a LLeMbas server's link (`acp.md`): the device's limits, said in
//! `initialize`, and the rules a remote session opens under — a folder inside the roots (on its
//! real path), a trusted project where trust is required, a mode no wider than the device allows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lembas_protocol::Mode;
use serde_json::{Value, json};

/// What this device lets a LLeMbas server do (`remote.*` of the person's global settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Remote work on; off, every session is refused and the roots are said as none.
    pub enabled: bool,
    /// The folders remote sessions may open, each with everything below it — absolute, as the
    /// person set them.
    pub roots: Vec<PathBuf>,
    pub max_mode: Mode,
    pub require_trust: bool,
    /// Accept scheduled work (`remote.scheduled`).
    pub scheduled: bool,
}

impl Limits {
    /// The roots the server is told of: none while remote work is off.
    fn said_roots(&self) -> Vec<String> {
        if self.enabled { self.roots.iter().map(|r| r.display().to_string()).collect() } else { Vec::new() }
    }

    /// `limits` of `_lembas/hello` and `initialize`.
    pub fn said(&self) -> Value {
        json!({
            "roots": self.said_roots(),
            "max_mode": self.max_mode,
            "require_trust": self.require_trust,
            "scheduled": self.enabled && self.scheduled,
        })
    }

    /// The folder a remote session may open `cwd` as — its real path — or why not.
    pub fn admit(&self, cwd: &Path, trusted: &dyn Fn(&Path) -> bool) -> Result<PathBuf, String> {
        if !self.enabled {
            return Err("remote work is off on this computer (lembas remote enable)".into());
        }
        if self.roots.is_empty() {
            return Err("this computer accepts remote work in no folder yet (lembas remote roots add DIR)".into());
        }
        if !cwd.is_absolute() {
            return Err(format!("{} is not an absolute path", cwd.display()));
        }
        let real = std::fs::canonicalize(cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
        if !real.is_dir() {
            return Err(format!("{} is not a folder", cwd.display()));
        }
        // Containment on the real path: a link inside a root that leads out of it is outside.
        let inside = self.roots.iter().any(|root| std::fs::canonicalize(root).is_ok_and(|root| real.starts_with(root)));
        if !inside {
            return Err(format!("{} is outside the folders this computer accepts remote work in", cwd.display()));
        }
        if self.require_trust && !trusted(&real) {
            return Err(format!(
                "{} is not a trusted project on this computer (lembas trust, run there, trusts it)",
                cwd.display()
            ));
        }
        Ok(real)
    }
}

/// The ACP server as a LLeMbas server's device: the limits it says and enforces, whether a
/// folder's project is trusted (the binary reads the person's trust file), and how long an
/// approval waits for the server's answer.
#[derive(Clone)]
pub struct Remote {
    pub limits: Limits,
    /// The device's name for the instance (the login's connection).
    pub connection: Option<String>,
    pub trusted: Arc<dyn Fn(&Path) -> bool + Send + Sync>,
    /// No answer by then is a denial (`remote.approval_timeout`).
    pub approval_timeout: Duration,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("limits", &self.limits).field("connection", &self.connection).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(root: &Path) -> Limits {
        Limits {
            enabled: true,
            roots: vec![root.to_path_buf()],
            max_mode: Mode::Edit,
            require_trust: true,
            scheduled: true,
        }
    }

    #[test]
    fn a_folder_is_admitted_inside_a_root_in_a_trusted_project_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        let project = root.join("app");
        std::fs::create_dir_all(&project).unwrap();
        let outside = dir.path().join("elsewhere");
        std::fs::create_dir_all(&outside).unwrap();
        let limits = limits(&root);
        let trusted = |_: &Path| true;
        assert_eq!(limits.admit(&project, &trusted).unwrap(), std::fs::canonicalize(&project).unwrap());
        assert!(limits.admit(&outside, &trusted).unwrap_err().contains("outside"));
        assert!(limits.admit(Path::new("work/app"), &trusted).unwrap_err().contains("absolute"));
        assert!(limits.admit(&root.join("missing"), &trusted).is_err());
        // A link inside the root that leads out of it is judged where it leads.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("door")).unwrap();
            assert!(limits.admit(&root.join("door"), &trusted).unwrap_err().contains("outside"));
        }
        assert!(limits.admit(&project, &|_: &Path| false).unwrap_err().contains("not a trusted project"));
        let untrusting = Limits { require_trust: false, ..limits.clone() };
        assert!(untrusting.admit(&project, &|_: &Path| false).is_ok());
        let off = Limits { enabled: false, ..limits.clone() };
        assert!(off.admit(&project, &trusted).unwrap_err().contains("off"));
        let none = Limits { roots: Vec::new(), ..limits };
        assert!(none.admit(&project, &trusted).unwrap_err().contains("no folder"));
    }

    #[test]
    fn limits_are_said_with_no_roots_while_remote_work_is_off() {
        let l = limits(Path::new("/w"));
        assert_eq!(l.said(), json!({"roots": ["/w"], "max_mode": "edit", "require_trust": true, "scheduled": true}));
        let off = Limits { enabled: false, ..l };
        assert_eq!(off.said(), json!({"roots": [], "max_mode": "edit", "require_trust": true, "scheduled": false}));
    }
}
