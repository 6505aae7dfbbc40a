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
use crate::credentials::credential;
use crate::effects::effects;
use crate::hardline::{Context, Floor, line_floor, private, protected, trust_bearing};
use crate::rules::{Action, RuleSet, Subject};
use crate::words::{Scope, Scopes};

/// The outcome of judging one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    /// Refused, with the sentence the model is told.
    Refuse(String),
}

/// A judgement, and whether an approval of it holds for this call only (never remembered for
/// the session): a change to what decides lembas' own permissions later, or a word the judge
/// could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub once_only: bool,
    /// Why it is asked in every mode, when it is (what makes it `once_only`).
    pub asked_because: Option<String>,
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
    /// The URL a web tool fetches.
    pub url: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A call of `tool` reaching `paths`, running `command` when it is one.
    pub fn new(tool: &'a str, risk: RiskClass, command: Option<&'a str>, paths: &'a [PathBuf]) -> Call<'a> {
        Call { tool, risk, command, paths, url: None }
    }
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
    /// Every part is allowed, and some write or delete these places (real paths; `None` for a
    /// place that cannot be told): judged as a change to them — unless every one is what an
    /// allowed program is for (`touch` making a file), which its rule covers outside plan mode.
    AllowWriting {
        places: Vec<Option<PathBuf>>,
        natural: bool,
    },
    Ask,
    Deny(String),
}

/// What the rules say of one part or path.
enum PartSaid {
    Rule(Option<Action>),
    Writing { places: Vec<Option<PathBuf>>, natural: bool },
}

fn combine(actions: impl IntoIterator<Item = (PartSaid, String)>) -> Said {
    let mut all_allow = true;
    let mut ask = false;
    let mut any = false;
    let mut writing: Option<(Vec<Option<PathBuf>>, bool)> = None;
    for (said, what) in actions {
        any = true;
        let action = match said {
            PartSaid::Rule(action) => action,
            PartSaid::Writing { places, natural } => {
                let all = writing.get_or_insert_with(|| (Vec::new(), true));
                all.0.extend(places);
                all.1 &= natural;
                Some(Action::Allow)
            }
        };
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
        (true, true, _) => writing.map_or(Said::Allow, |(places, natural)| Said::AllowWriting { places, natural }),
        (_, _, true) => Said::Ask,
        _ => Said::Nothing,
    }
}

/// Programs whose purpose is to delete or move what they are given: a rule that allows one
/// allows that (the floor still guards where). Any other program that deletes does so through
/// an option, which its rule never covers.
const DELETERS: &[&str] = &["rm", "unlink", "rmdir", "shred", "mv", "rsync"];

/// Programs whose purpose is to write what they are given (besides the [`DELETERS`]).
const WRITERS: &[&str] = &[
    "cp", "ln", "install", "scp", "tee", "touch", "truncate", "mkdir", "mkfifo", "mknod", "chmod", "chown", "chgrp",
    "chattr", "setfacl", "dd",
];

impl Judge {
    /// The default rules and nothing else, for a project at `root`.
    pub fn with_defaults(ctx: Context) -> Judge {
        Judge { rules: RuleSet::defaults(), ctx }
    }

    pub(crate) fn path_subject<'a>(&'a self, path: &'a Path) -> Subject<'a> {
        Subject::Path {
            absolute: path,
            relative: path.strip_prefix(&self.ctx.root).ok(),
            home: self.ctx.home.as_deref(),
        }
    }

    /// What the rules say of one part of a command line, given what the part does: a rule that
    /// allows its words does not allow an option that runs other code, and what it writes is
    /// judged as a change.
    fn part_said(&self, tool: &str, part: &SimpleCommand, scope: &Scope, real: &dyn Fn(&Path) -> PathBuf) -> PartSaid {
        let plain = part.line();
        let action = if part.argv.is_empty() { None } else { self.rules.matching(tool, Subject::Command(&plain)) };
        if action != Some(Action::Allow) && !part.argv.is_empty() {
            return PartSaid::Rule(action);
        }
        let fx = effects(part);
        if fx.runs.is_some() || (!fx.deletes.is_empty() && !DELETERS.contains(&part.program())) {
            return PartSaid::Rule(None);
        }
        // The files it reads are judged by the read rules, as the `read` tool's are: a rule that
        // allows `head *` does not allow reading what `read` would ask for.
        let mut read_said = None;
        for word in &fx.reads {
            for place in scope.reach(word, &part.substitutions_for_read(word)).places.iter().filter(|p| !p.vague) {
                let real = real(&place.path);
                match self.rules.matching("read", self.path_subject(&real)) {
                    Some(Action::Deny) => return PartSaid::Rule(Some(Action::Deny)),
                    Some(Action::Ask) => read_said = Some(Action::Ask),
                    _ => {}
                }
            }
        }
        if read_said.is_some() {
            return PartSaid::Rule(read_said);
        }
        let places: Vec<Option<PathBuf>> = fx
            .writes
            .iter()
            .chain(&fx.deletes)
            .flat_map(|word| {
                let reach = scope.reach(word, &part.substitutions_for_write(word));
                let mut out: Vec<Option<PathBuf>> =
                    reach.places.iter().map(|p| (!p.vague || fx.deletes.is_empty()).then(|| real(&p.path))).collect();
                if reach.unknown || reach.places.iter().any(|p| p.vague) {
                    out.push(None);
                }
                out
            })
            .collect();
        let program = part.program();
        let natural = part.writes.iter().all(|w| crate::effects::is_sink(w))
            && (DELETERS.contains(&program) || WRITERS.contains(&program));
        match (places.is_empty(), part.argv.is_empty()) {
            // Only a redirection (`{ cat; } < f`): what it reads was judged above.
            (true, true) => PartSaid::Rule(Some(Action::Allow)),
            (true, false) => PartSaid::Rule(action),
            (false, _) => PartSaid::Writing { places, natural },
        }
    }

    fn said(&self, call: &Call, parts: &[SimpleCommand], cwd: &Path, real: &dyn Fn(&Path) -> PathBuf) -> Said {
        if let Some(line) = call.command {
            if parts.is_empty() {
                return Said::Nothing;
            }
            let mut scopes = Scopes::new(cwd, self.ctx.home.as_deref());
            let mut said = Vec::with_capacity(parts.len());
            for part in parts {
                let plain = part.line();
                let scope = scopes.of(&part.shell);
                said.push((
                    self.part_said(call.tool, part, scope, real),
                    format!("`{}`", if plain.is_empty() { line } else { &plain }),
                ));
                scope.follow(part);
            }
            return combine(said);
        }
        if let Some(Ok(target)) = call.url.map(crate::network::parse) {
            return combine([(
                PartSaid::Rule(self.rules.matching(call.tool, Subject::Url(&target))),
                target.url.into(),
            )]);
        }
        if call.paths.is_empty() {
            return combine([(PartSaid::Rule(self.rules.matching(call.tool, Subject::Tool)), call.tool.to_owned())]);
        }
        combine(
            call.paths.iter().map(|p| {
                (PartSaid::Rule(self.rules.matching(call.tool, self.path_subject(p))), p.display().to_string())
            }),
        )
    }

    /// Judges `call` in `mode`. A command's words are resolved from `cwd` (where it runs);
    /// `real` gives a place's real path (every link followed).
    pub fn evaluate(&self, mode: Mode, call: &Call, cwd: &Path, real: &dyn Fn(&Path) -> PathBuf) -> Decision {
        self.verdict(mode, call, cwd, real).decision
    }

    /// The judgement of `call`, and whether an approval of it holds for this call only.
    pub fn verdict(&self, mode: Mode, call: &Call, cwd: &Path, real: &dyn Fn(&Path) -> PathBuf) -> Verdict {
        let real = &|p: &Path| crate::words::settled(real(p));
        let parts = call.command.map(split).unwrap_or_default();
        match self.floor(call, &parts, cwd, real) {
            Err(reason) => Verdict { decision: Decision::Refuse(reason), once_only: false, asked_because: None },
            Ok(always_ask) => Verdict {
                once_only: always_ask.is_some(),
                decision: self.decide(mode, call, &parts, cwd, real, always_ask.is_some()),
                asked_because: always_ask,
            },
        }
    }

    /// The floor beneath the rules: `Err` with why when the call is refused in every mode;
    /// else why it is asked in every mode, if it is (a change to what decides lembas' own
    /// permissions later, a word that cannot be read before it runs).
    fn floor(
        &self,
        call: &Call,
        parts: &[SimpleCommand],
        cwd: &Path,
        real: &dyn Fn(&Path) -> PathBuf,
    ) -> Result<Option<String>, String> {
        let mut always_ask: Option<String> = None;
        if let Some(url) = call.url {
            self.url_floor(call.tool, url)?;
        }
        if let Some(line) = call.command {
            match line_floor(line, parts, cwd, real, &self.ctx) {
                Some(Floor::Refuse(reason)) => return Err(reason),
                Some(Floor::Ask(reason)) => always_ask = Some(reason),
                None => {}
            }
        }
        if let Some(reason) = call.paths.iter().find_map(|p| private(p, &self.ctx)) {
            return Err(reason);
        }
        if call.risk == RiskClass::Read
            && let Some(reason) = call.paths.iter().find_map(|p| credential(p, false, &self.ctx))
        {
            always_ask.get_or_insert(reason);
        }
        if call.risk == RiskClass::Write {
            if let Some(reason) = call.paths.iter().find_map(|p| protected(p, &self.ctx)) {
                return Err(reason);
            }
            if let Some(reason) = call.paths.iter().find_map(|p| trust_bearing(p, &self.ctx)) {
                always_ask.get_or_insert(reason);
            }
        }
        Ok(always_ask)
    }

    /// The rules and the mode, above the floor.
    fn decide(
        &self,
        mode: Mode,
        call: &Call,
        parts: &[SimpleCommand],
        cwd: &Path,
        real: &dyn Fn(&Path) -> PathBuf,
        always_ask: bool,
    ) -> Decision {
        let said = self.said(call, parts, cwd, real);
        if let Said::Deny(reason) = said {
            return Decision::Refuse(reason);
        }
        let spec = &modes().modes[mode.as_str()];
        let refused = || {
            Decision::Refuse(spec.refused.clone().unwrap_or_else(|| format!("The {mode} mode does not allow this.")))
        };
        let in_plans = |p: &PathBuf| self.ctx.plans_dir.as_ref().is_some_and(|d| p.starts_with(d));
        let outside = call.risk == RiskClass::Write && call.paths.iter().any(|p| !p.starts_with(&self.ctx.root));
        if mode == Mode::Plan {
            return match (call.risk, &said) {
                (RiskClass::Write, _) => {
                    if !call.paths.is_empty() && call.paths.iter().all(in_plans) {
                        Decision::Allow
                    } else {
                        refused()
                    }
                }
                (_, Said::AllowWriting { places, .. }) if places.iter().all(|p| p.as_ref().is_some_and(in_plans)) => {
                    Decision::Allow
                }
                (_, Said::AllowWriting { .. }) => refused(),
                // Reading the person's credentials is theirs to allow, in plan mode too.
                (RiskClass::Read, _) if always_ask => Decision::Ask,
                _ if always_ask => refused(),
                (RiskClass::Execute, Said::Allow) => Decision::Allow,
                (RiskClass::Execute, _) => refused(),
                (_, Said::Allow) => Decision::Allow,
                (RiskClass::Read, Said::Nothing) => Decision::Allow,
                _ => Decision::Ask,
            };
        }
        if always_ask {
            return Decision::Ask;
        }
        // Auto mode leaves a command's writes to the sandbox — which here cannot keep a home
        // folder that lies in a writable place read-only.
        if let (Said::AllowWriting { places, .. }, true, Some(home)) = (&said, self.ctx.unsealed_home, &self.ctx.home)
            && places.iter().flatten().any(|p| p.starts_with(home) && !p.starts_with(&self.ctx.root))
        {
            return Decision::Ask;
        }
        // A command every part of which a rule allows, but that writes: judged as the change
        // (in auto mode commands run anyway, and the sandbox bounds where they write).
        if let Said::AllowWriting { places, natural: false } = &said
            && mode != Mode::Auto
        {
            let inside = places.iter().all(|p| p.as_ref().is_some_and(|p| p.starts_with(&self.ctx.root)));
            return match spec.write.as_str() {
                "allow" if inside => Decision::Allow,
                _ => Decision::Ask,
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
        let said = if let Said::AllowWriting { .. } = said { Said::Allow } else { said };
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
            lembas_private: vec!["/home/ada/.local/state/lembas".into()],
            plans_dir: Some("/home/ada/.local/state/lembas/plans".into()),
            skills_dir: None,
            unsealed_home: false,
        })
    }

    fn resolve(word: &str) -> PathBuf {
        lembas_paths::resolve(Path::new("/home/ada/app"), &word.replacen('~', "/home/ada", 1))
    }

    const ROOT: &str = "/home/ada/app";

    fn same(p: &Path) -> PathBuf {
        p.to_path_buf()
    }

    fn bash(mode: Mode, line: &str) -> Decision {
        judge().evaluate(mode, &Call::new("bash", RiskClass::Execute, Some(line), &[]), Path::new(ROOT), &same)
    }

    fn file(mode: Mode, tool: &str, risk: RiskClass, path: &str) -> Decision {
        let paths = [resolve(path)];
        judge().evaluate(mode, &Call::new(tool, risk, None, &paths), Path::new(ROOT), &same)
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
            // The files a command reads are judged by the read rules.
            (bash(Edit, "head -5 .env"), Ask),
            (bash(Edit, "grep -n KEY config/.env.local"), Ask),
            (bash(Edit, "wc -l < server.pem"), Ask),
            (bash(Plan, "tail .env"), Refuse(plan.clone())),
            (bash(Edit, "head -5 README.md"), Allow),
            (bash(Manual, "grep -n env src/a.rs"), Allow),
            // Credentials read by name are asked in every mode, auto too; plan mode refuses.
            (bash(Auto, "head ~/.ssh/id_rsa"), Ask),
            (bash(Auto, "cat ~/.aws/credentials"), Ask),
            (file(Auto, "read", Read, "~/.kube/config"), Ask),
            (bash(Plan, "cat ~/.netrc"), Refuse(plan.clone())),
            (file(Plan, "read", Read, "~/.ssh/id_ed25519"), Ask),
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
    fn an_allowed_program_that_writes_or_runs_is_judged_by_what_it_does() {
        use Mode::*;
        let plan_refused = |line: &str| assert!(matches!(bash(Plan, line), Decision::Refuse(_)), "{line}");
        for line in [
            "echo x > f",
            "cat /dev/null > f",
            "sort -o f a",
            "uniq IN OUT",
            "git diff --output=../x",
            "git log --output=../x",
            "find . -fprint ../x",
            "find -delete",
            "find -exec touch x \\;",
            "git grep --open-files-in-pager=vim x",
            "git -c core.pager=sh log",
            "echo $LEMBAS_API_KEY > k",
            "cat <<EOF\n$(touch x)\nEOF",
            "if git status; then touch x; fi",
            "echo ok >| f",
        ] {
            plan_refused(line);
        }
        // Reading stays allowed in plan mode.
        for line in [
            "git status",
            "git diff HEAD",
            "find . -name '*.rs'",
            "sort a | uniq",
            "ls 2>/dev/null",
            "grep -r x .",
            "cat <<'EOF'\n$(touch x)\nEOF",
        ] {
            assert_eq!(bash(Plan, line), Decision::Allow, "{line}");
        }
        // A write the rules' words allow is a change: run in edit inside the project, asked outside
        // it or in manual.
        assert_eq!(bash(Edit, "echo x > notes.txt"), Decision::Allow);
        assert_eq!(bash(Edit, "echo x > /tmp/notes.txt"), Decision::Ask);
        assert_eq!(bash(Manual, "echo x > notes.txt"), Decision::Ask);
        assert_eq!(bash(Manual, "find -delete"), Decision::Ask);
        assert_eq!(bash(Edit, "find . -exec rm {} +"), Decision::Ask);
        assert_eq!(bash(Edit, "git grep -O x"), Decision::Ask);
        // A program made to write is allowed to by a rule that names it — but never in plan mode.
        let mut j = judge();
        j.rules.add("bash", Some("touch *"), Action::Allow, crate::Source::Session);
        let touch = |mode| {
            j.evaluate(mode, &Call::new("bash", RiskClass::Execute, Some("touch a"), &[]), Path::new(ROOT), &same)
        };
        assert_eq!(touch(Manual), Decision::Allow);
        assert!(matches!(touch(Plan), Decision::Refuse(_)));
        // Plan files may be written by a command in plan mode too.
        assert_eq!(bash(Plan, "echo x > ~/.local/state/lembas/plans/p.md"), Decision::Allow);
    }

    #[test]
    fn trust_bearing_files_are_asked_in_every_mode_and_private_files_refused() {
        use Mode::*;
        assert_eq!(file(Auto, "write", RiskClass::Write, ".lembas/permissions.json"), Decision::Ask);
        assert_eq!(file(Edit, "write", RiskClass::Write, ".mcp.json"), Decision::Ask);
        assert_eq!(bash(Auto, "echo '{}' > .mcp.json"), Decision::Ask);
        assert!(matches!(
            file(Edit, "read", RiskClass::Read, "~/.config/lembas/credentials.json"),
            Decision::Refuse(_)
        ));
        assert!(matches!(
            file(Auto, "read", RiskClass::Read, "~/.local/state/lembas/learned.json"),
            Decision::Refuse(_)
        ));
        assert!(matches!(bash(Auto, "cat ~/.config/lembas/credentials.json"), Decision::Refuse(_)));
        assert_eq!(file(Plan, "read", RiskClass::Read, "~/.local/state/lembas/plans/p.md"), Decision::Allow);
    }

    #[test]
    fn paths_are_taken_as_the_kernel_takes_them() {
        // `sshdir -> ~/.ssh`: the kernel follows the link, then takes `..` from where it lands.
        let linked = |p: &Path| {
            let text = p.to_string_lossy().replace("/home/ada/app/sshdir", "/home/ada/.ssh");
            PathBuf::from(text)
        };
        let judged = |mode, line: &str| {
            judge().evaluate(mode, &Call::new("bash", RiskClass::Execute, Some(line), &[]), Path::new(ROOT), &linked)
        };
        assert_eq!(judged(Mode::Edit, "echo k >> sshdir/../.bashrc"), Decision::Ask);
        assert!(matches!(judged(Mode::Edit, "echo k >> sshdir/authorized_keys"), Decision::Refuse(_)));
        assert!(matches!(judged(Mode::Auto, "rm -rf sshdir/.."), Decision::Refuse(_)));
        // `~+` is the shell's `$PWD`, `~-` its `$OLDPWD`; `~name` someone else's home.
        assert!(matches!(bash(Mode::Edit, "echo k >> ~+/../.ssh/authorized_keys"), Decision::Refuse(_)));
        assert!(matches!(
            bash(Mode::Edit, "cd ~/.ssh && cd /tmp && echo k >> ~-/authorized_keys"),
            Decision::Refuse(_)
        ));
        assert!(matches!(
            bash(Mode::Edit, "cd ~/.ssh; cd /tmp; echo k >> $OLDPWD/authorized_keys"),
            Decision::Refuse(_)
        ));
        assert!(matches!(bash(Mode::Edit, "cd ~/.ssh; cd -; cd -; echo k >> authorized_keys"), Decision::Refuse(_)));
        assert_eq!(bash(Mode::Edit, "echo k >> ~-/x"), Decision::Ask);
        assert_eq!(bash(Mode::Auto, "echo k >> ~root/.bashrc"), Decision::Ask);
        assert_eq!(bash(Mode::Edit, "echo k >> ~+/notes.txt"), Decision::Allow);
        assert_eq!(bash(Mode::Edit, "echo k >> $PWD/notes.txt"), Decision::Allow);
    }

    #[test]
    fn a_deny_rule_refuses_even_in_auto() {
        let mut j = judge();
        j.rules.add("bash", Some("make deploy*"), Action::Deny, crate::Source::Global);
        let d = j.evaluate(
            Mode::Auto,
            &Call::new("bash", RiskClass::Execute, Some("make deploy"), &[]),
            Path::new(ROOT),
            &same,
        );
        assert_eq!(d, Decision::Refuse("Refused by a permission rule: `make deploy`.".into()));
    }
}
