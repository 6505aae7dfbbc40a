//! The session's judge: the permission rules, what the person allowed for the session, and where
//! the floor's protected paths are.

use std::path::{Path, PathBuf};

use lembas_permissions::{Action, Context, Judge, Source};

use crate::SessionConfig;
use crate::session::Session;

/// Where the floor's protected paths are for a command run with `cfg` in the project at `root`:
/// the same for a session's calls and a schedule's watch command.
pub(crate) fn judge_context(cfg: &SessionConfig, root: &Path) -> Context {
    Context {
        home: cfg.user_home.clone(),
        root: root.to_path_buf(),
        lembas_config: cfg.lembas_config.clone(),
        lembas_private: cfg.lembas_private.clone(),
        plans_dir: Some(crate::session::plans_dir(root)),
        skills_dir: cfg.skills.own.clone(),
        unsealed_home: unsealed_home(cfg),
    }
}

/// Whether the home folder lies in a place commands may write while the sandbox, Landlock alone
/// here, cannot keep it read-only (a container's or a CI machine's home in `/tmp`).
fn unsealed_home(cfg: &SessionConfig) -> bool {
    let Some(home) = &cfg.user_home else { return false };
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let home = real(home);
    cfg.sandbox
        && lembas_tools::sandbox::state(cfg.sandbox_launcher.as_deref()).is_err()
        && [std::env::temp_dir(), PathBuf::from("/var/tmp")]
            .iter()
            .chain(&cfg.sandbox_writable)
            .any(|w| home.starts_with(real(w)) && home != real(w))
}

impl Session {
    /// Where plan mode may write plans: `.agent/plans` in the project, as plan mode's text
    /// tells the model (`prompts/modes/plan.md`).
    pub(crate) fn plans_dir(&self) -> PathBuf {
        crate::session::plans_dir(&self.ws.root)
    }

    /// The session's judge: its rules, what the person allowed for the session, and where the
    /// floor's protected paths are.
    pub(crate) fn make_judge(&self) -> Judge {
        let mut rules = self.cfg.rules.clone();
        for (tool, pattern) in &self.state.always {
            rules.add(tool, pattern.as_deref(), Action::Allow, Source::Session);
        }
        Judge { rules, ctx: judge_context(&self.cfg, &self.ws.root) }
    }
}
