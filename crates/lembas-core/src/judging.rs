//! The session's judge: the permission rules, what the person allowed for the session, and where
//! the floor's protected paths are.

use std::path::PathBuf;

use lembas_permissions::{Action, Context, Judge, Source};

use crate::session::Session;

impl Session {
    /// Where plan mode may write plans: `.agent/plans` in the project, as plan mode's text
    /// tells the model (`prompts/modes/plan.md`).
    pub(crate) fn plans_dir(&self) -> PathBuf {
        self.ws.root.join(".agent").join("plans")
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
        };
        Judge { rules, ctx }
    }
}
