//! The session's judge: the permission rules, what the person allowed for the session, and where
//! the floor's protected paths are.

use std::path::PathBuf;

use lembas_permissions::{Action, Context, Judge, Source};

use crate::session::Session;

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
        let ctx = Context {
            home: self.cfg.user_home.clone(),
            root: self.ws.root.clone(),
            lembas_config: self.cfg.lembas_config.clone(),
            lembas_private: self.cfg.lembas_private.clone(),
            plans_dir: Some(self.plans_dir()),
            skills_dir: self.cfg.skills.own.clone(),
            unsealed_home: self.unsealed_home(),
        };
        Judge { rules, ctx }
    }

    /// Whether the home folder lies in a place commands may write while the sandbox, Landlock
    /// alone here, cannot keep it read-only (a container's or a CI machine's home in `/tmp`).
    fn unsealed_home(&self) -> bool {
        let Some(home) = &self.cfg.user_home else { return false };
        let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let home = real(home);
        self.cfg.sandbox
            && lembas_tools::sandbox::state(self.cfg.sandbox_launcher.as_deref()).is_err()
            && [std::env::temp_dir(), PathBuf::from("/var/tmp")]
                .iter()
                .chain(&self.cfg.sandbox_writable)
                .any(|w| home.starts_with(real(w)) && home != real(w))
    }
}
