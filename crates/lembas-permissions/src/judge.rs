//! The judgment of one call: the hardline first, then the rules, then the mode
//! (`permission/modes.json`): run it, ask the person, or refuse it.
//!
//! Precedence (docs/permissions.md): the hardline and protected paths refuse in every mode; a
//! deny rule refuses; then the mode's word for the call's risk class decides — `allow` runs it
//! (an ask rule still asks, except in auto), `ask` asks unless a rule allows it, `rules` follows
//! the rule (asking when none speaks). Plan mode refuses every change but a plan file, and runs
//! only what a rule allows. A change outside the project is always asked unless a rule allows it.

use std::path::{Path, PathBuf};

use lembas_spec::{RiskClass, modes};

use crate::Mode;
use crate::command::{SimpleCommand, split};
use crate::hardline::{Context, line_refusal, protected};
use crate::rules::{Action, RuleSet, Subject};

/// The outcome of judging one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    /// Refused, with the sentence the model is told.
    Refuse(String),
}

/// A call to judge.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub tool: &'a str,
    pub risk: RiskClass,
    /// `bash`'s command line.
    pub command: Option<&'a str>,
    /// The paths the call reaches, resolved to where they really are.
    pub paths: &'a [PathBuf],
}

/// The rules and the places a session's calls are judged against.
#[derive(Debug, Clone)]
pub struct Judge {
    pub rules: RuleSet,
    pub ctx: Context,
}

/// What the rules say of a whole call (every part of a command, every path).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Nothing,
    Allow,
    Ask,
    Deny(String),
}

fn combine(actions: impl IntoIterator<Item = (Option<Action>, String)>) -> Said {
    let mut all_allow = true;
    let mut ask = false;
    let mut any = false;
    for (action, what) in actions {
        any = true;
        match action {
            Some(Action::Deny) => return Said::Deny(format!("Refused by a permission rule: {what}.")),
            Some(Action::Ask) => ask = true,
            Some(Action::Allow) => {}
            None => all_allow = false,
        }
        if action != Some(Action::Allow) {
            all_allow = false;
        }
    }
    match (any, all_allow, ask) {
        (true, true, _) => Said::Allow,
        (_, _, true) => Said::Ask,
        _ => Said::Nothing,
    }
}

impl Judge {
    /// The default rules and nothing else, for a project at `root`.
    pub fn with_defaults(ctx: Context) -> Judge {
        Judge { rules: RuleSet::defaults(), ctx }
    }

    fn path_subject<'a>(&'a self, path: &'a Path) -> Subject<'a> {
        Subject::Path {
            absolute: path,
            relative: path.strip_prefix(&self.ctx.root).ok(),
            home: self.ctx.home.as_deref(),
        }
    }

    fn said(&self, call: &Call, parts: &[SimpleCommand]) -> Said {
        if let Some(line) = call.command {
            if parts.is_empty() {
                return Said::Nothing;
            }
            return combine(parts.iter().filter(|p| !p.argv.is_empty() || p.writes.is_empty()).map(|p| {
                let plain = p.line();
                let action =
                    if p.argv.is_empty() { None } else { self.rules.matching(call.tool, Subject::Command(&plain)) };
                (action, format!("`{}`", if plain.is_empty() { line } else { &plain }))
            }));
        }
        if call.paths.is_empty() {
            return combine([(self.rules.matching(call.tool, Subject::Tool), call.tool.to_owned())]);
        }
        combine(
            call.paths.iter().map(|p| (self.rules.matching(call.tool, self.path_subject(p)), p.display().to_string())),
        )
    }

    /// Judges `call` in `mode`. `resolve` turns a word of a command (a path as written) into the
    /// real path it names, relative to where the command runs.
    pub fn evaluate(&self, mode: Mode, call: &Call, resolve: &dyn Fn(&str) -> PathBuf) -> Decision {
        let parts = call.command.map(split).unwrap_or_default();
        if let Some(line) = call.command
            && let Some(reason) = line_refusal(line, &parts, resolve, &self.ctx)
        {
            return Decision::Refuse(reason);
        }
        if call.risk == RiskClass::Write
            && let Some(reason) = call.paths.iter().find_map(|p| protected(p, &self.ctx))
        {
            return Decision::Refuse(reason);
        }
        let said = self.said(call, &parts);
        if let Said::Deny(reason) = said {
            return Decision::Refuse(reason);
        }
        let spec = &modes().modes[mode.as_str()];
        let refused = || {
            Decision::Refuse(spec.refused.clone().unwrap_or_else(|| format!("The {mode} mode does not allow this.")))
        };
        let outside = call.risk == RiskClass::Write && call.paths.iter().any(|p| !p.starts_with(&self.ctx.root));
        if mode == Mode::Plan {
            return match call.risk {
                RiskClass::Write => {
                    let in_plans = |p: &PathBuf| self.ctx.plans_dir.as_ref().is_some_and(|d| p.starts_with(d));
                    if !call.paths.is_empty() && call.paths.iter().all(in_plans) { Decision::Allow } else { refused() }
                }
                RiskClass::Execute if said == Said::Allow => Decision::Allow,
                RiskClass::Execute => refused(),
                _ => match said {
                    Said::Allow => Decision::Allow,
                    _ if call.risk == RiskClass::Read && said == Said::Nothing => Decision::Allow,
                    _ => Decision::Ask,
                },
            };
        }
        let word = match call.risk {
            RiskClass::Read => &spec.read,
            RiskClass::Write => &spec.write,
            RiskClass::Execute => &spec.execute,
            RiskClass::Interact => &spec.interact,
        };
        if outside && said != Said::Allow {
            return Decision::Ask;
        }
        match (word.as_str(), said) {
            ("allow", Said::Ask) if mode != Mode::Auto => Decision::Ask,
            ("allow", _) => Decision::Allow,
            ("ask", Said::Allow) => Decision::Allow,
            ("ask", _) => Decision::Ask,
            (_, Said::Allow) => Decision::Allow,
            (_, Said::Nothing) if call.risk == RiskClass::Read => Decision::Allow,
            _ => Decision::Ask,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge() -> Judge {
        Judge::with_defaults(Context {
            home: Some("/home/ada".into()),
            root: "/home/ada/app".into(),
            lembas_config: Some("/home/ada/.config/lembas".into()),
            plans_dir: Some("/home/ada/.local/state/lembas/plans".into()),
        })
    }

    fn resolve(word: &str) -> PathBuf {
        lembas_paths::resolve(Path::new("/home/ada/app"), &word.replacen('~', "/home/ada", 1))
    }

    fn bash(mode: Mode, line: &str) -> Decision {
        judge().evaluate(
            mode,
            &Call { tool: "bash", risk: RiskClass::Execute, command: Some(line), paths: &[] },
            &resolve,
        )
    }

    fn file(mode: Mode, tool: &str, risk: RiskClass, path: &str) -> Decision {
        let paths = [resolve(path)];
        judge().evaluate(mode, &Call { tool, risk, command: None, paths: &paths }, &resolve)
    }

    #[test]
    fn calls_by_modes() {
        use Decision::*;
        use Mode::*;
        use RiskClass::*;
        let plan = modes().modes["plan"].refused.clone().unwrap();
        let table: Vec<(Decision, Decision)> = vec![
            (bash(Manual, "ls -la"), Allow),
            (bash(Manual, "cargo test"), Ask),
            (bash(Edit, "cargo test"), Ask),
            (bash(Auto, "cargo test"), Allow),
            (bash(Plan, "git status"), Allow),
            (bash(Plan, "cargo test"), Refuse(plan.clone())),
            (bash(Edit, "ls && cargo test"), Ask),
            (bash(Edit, "ls | wc -l"), Allow),
            (bash(Auto, "cat .env"), Allow),
            (bash(Edit, "cat .env"), Ask),
            (file(Manual, "edit", Write, "src/a.rs"), Ask),
            (file(Edit, "edit", Write, "src/a.rs"), Allow),
            (file(Auto, "edit", Write, "/etc/hosts"), Ask),
            (file(Plan, "write", Write, "src/a.rs"), Refuse(plan)),
            (file(Plan, "write", Write, "/home/ada/.local/state/lembas/plans/p.md"), Allow),
            (file(Manual, "read", Read, "src/a.rs"), Allow),
            (file(Edit, "read", Read, ".env"), Ask),
            (file(Auto, "read", Read, ".env"), Allow),
        ];
        for (i, (got, want)) in table.into_iter().enumerate() {
            assert_eq!(got, want, "row {i}");
        }
    }

    #[test]
    fn the_floor_holds_in_auto() {
        assert!(matches!(bash(Mode::Auto, "rm -rf ~"), Decision::Refuse(r) if r.contains("every mode")));
        assert!(matches!(bash(Mode::Auto, "sudo bash -c 'rm -rf /'"), Decision::Refuse(_)));
        assert!(matches!(file(Mode::Auto, "write", RiskClass::Write, "~/.ssh/authorized_keys"), Decision::Refuse(_)));
        assert!(matches!(file(Mode::Auto, "edit", RiskClass::Write, ".git/config"), Decision::Refuse(_)));
    }

    #[test]
    fn a_deny_rule_refuses_even_in_auto() {
        let mut j = judge();
        j.rules.add("bash", Some("make deploy*"), Action::Deny, crate::Source::Global);
        let d = j.evaluate(
            Mode::Auto,
            &Call { tool: "bash", risk: RiskClass::Execute, command: Some("make deploy"), paths: &[] },
            &resolve,
        );
        assert_eq!(d, Decision::Refuse("Refused by a permission rule: `make deploy`.".into()));
    }
}
