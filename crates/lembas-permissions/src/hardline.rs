//! The floor (`permission/hardline.json`): commands refused in every mode, and paths no tool may
//! write — judged on the plain spelling of every part of a command, and on real paths.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lembas_spec::render;
use serde::Deserialize;

use crate::command::{SUBSTITUTION, SimpleCommand};
use crate::credentials::{credential, credentials, glob_may_name, glob_of};
use crate::effects::effects;
use crate::words::Scopes;

#[derive(Debug, Deserialize)]
pub(crate) struct Protected {
    pub(crate) refused: String,
    pub(crate) home: BTreeMap<String, String>,
    pub(crate) git: String,
    pub(crate) lembas: String,
    pub(crate) private: String,
    pub(crate) credentials: String,
    pub(crate) trust: String,
    pub(crate) unreadable: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct HardlineSpec {
    pub(crate) refused: String,
    pub(crate) commands: BTreeMap<String, String>,
    pub(crate) rm_targets: Vec<String>,
    pub(crate) format_commands: Vec<String>,
    pub(crate) power_commands: Vec<String>,
    pub(crate) devices: Vec<String>,
    pub(crate) protected: Protected,
}

pub(crate) fn spec() -> &'static HardlineSpec {
    static SPEC: OnceLock<HardlineSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text = lembas_spec::file("permission/hardline.json").expect("spec/permission/hardline.json is embedded");
        serde_json::from_str(text).expect("hardline.json parses")
    })
}

/// Where the session's paths are judged.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The person's home directory.
    pub home: Option<PathBuf>,
    /// The project root (real path).
    pub root: PathBuf,
    /// lembas' own configuration folder (login, settings).
    pub lembas_config: Option<PathBuf>,
    /// lembas' other folders (sessions, logs, job output): neither read nor written by a tool.
    pub lembas_private: Vec<PathBuf>,
    /// Where plan mode may write plans.
    pub plans_dir: Option<PathBuf>,
    /// The person's own skills folder: readable, and a change to it is asked in every mode.
    pub skills_dir: Option<PathBuf>,
    /// The home folder lies in a place commands may write, and the sandbox cannot keep it
    /// read-only there (Landlock alone): a command's write into it that can be read is asked
    /// in every mode.
    pub unsealed_home: bool,
}

fn refused(key: &str) -> String {
    render(&spec().refused, &[("what", &spec().commands[key])])
}

/// Why a write to `path` (real, absolute) is refused in every mode, if it is.
pub fn protected(path: &Path, ctx: &Context) -> Option<String> {
    let p = &spec().protected;
    let say = |what: &str| render(&p.refused, &[("path", &path.display().to_string()), ("what", what)]);
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Some(say(&p.git));
    }
    if let Some(config) = &ctx.lembas_config
        && path.starts_with(config)
    {
        return Some(say(&p.lembas));
    }
    if let Some(home) = &ctx.home {
        for (rel, what) in &p.home {
            if path.starts_with(home.join(rel)) {
                return Some(say(what));
            }
        }
    }
    None
}

fn is_device(target: &str) -> bool {
    spec().devices.iter().any(|d| target.starts_with(d.as_str()))
}

/// Whether deleting `path` (or, when `vague`, anything in it) takes the root, the home
/// directory, a system directory, or a folder holding the project or the home directory.
fn dangerous_place(path: &Path, ctx: &Context) -> bool {
    let system = spec().rm_targets.iter().any(|t| t.starts_with('/') && !t.contains('*') && Path::new(t) == path);
    let holds = |inner: &Path| inner.starts_with(path) && inner != path;
    path == Path::new("/")
        || system
        || ctx.home.as_deref() == Some(path)
        || ctx.home.as_deref().is_some_and(holds)
        || holds(&ctx.root)
}

/// Why one simple command is refused in every mode, if it is — for what its name and options
/// say; where its words lead is [`line_floor`]'s.
fn command_refusal(command: &SimpleCommand) -> Option<String> {
    let program = command.program();
    let args = &command.argv[command.argv.len().min(1)..];
    let operands: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with('-')).collect();
    match program {
        "rm" if args.iter().any(|a| a == "--no-preserve-root") => return Some(refused("rm_root")),
        "rm" if args.iter().any(|a| spec().rm_targets.contains(a))
            && args.iter().any(|a| {
                a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R']))
            }) =>
        {
            return Some(refused("rm_root"));
        }
        "dd" if args.iter().any(|a| a.strip_prefix("of=").is_some_and(is_device)) => {
            return Some(refused("device_write"));
        }
        p if spec().format_commands.iter().any(|f| f == p) || p.starts_with("mkfs.") => return Some(refused("format")),
        p if spec().power_commands.iter().any(|f| f == p) => return Some(refused("system_power")),
        "init" | "telinit" if operands.first().is_some_and(|a| *a == "0" || *a == "6") => {
            return Some(refused("system_power"));
        }
        "systemctl" if operands.iter().any(|a| matches!(*a, "poweroff" | "reboot" | "halt" | "kexec")) => {
            return Some(refused("system_power"));
        }
        _ => {}
    }
    None
}

/// A fork bomb (`:(){ :|:& };:` and its renamings), read with the blanks taken out.
fn is_fork_bomb(line: &str) -> bool {
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = 0;
    while let Some(at) = squeezed[search..].find("(){") {
        let at = search + at;
        let name: String = squeezed[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        // A function that starts itself in the background or into a pipe: `:|:&`, `:&:&`, ….
        let body = &squeezed[at + 3..];
        let body = &body[..body.find('}').unwrap_or(body.len())];
        if !name.is_empty()
            && (body.contains(&format!("{name}&")) || body.contains(&format!("{name}|")))
            && body.matches(name.as_str()).count() >= 2
        {
            return true;
        }
        search = at + 3;
    }
    false
}

/// What the floor says of a command line: refused in every mode, or asked in every mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Floor {
    Refuse(String),
    /// Asked whatever the mode (refused with nobody there), with why.
    Ask(String),
}

/// Why reading or writing `path` (real, absolute) is refused in every mode, if it is: lembas'
/// own private files (the login, sessions, logs, job output).
pub fn private(path: &Path, ctx: &Context) -> Option<String> {
    let open = |d: &Option<PathBuf>| d.as_ref().is_some_and(|d| path.starts_with(d));
    // A subagent's worktree lives among lembas' files, and is its project.
    if open(&ctx.plans_dir) || open(&ctx.skills_dir) || path.starts_with(&ctx.root) {
        return None;
    }
    ctx.lembas_private
        .iter()
        .chain(&ctx.lembas_config)
        .any(|d| path.starts_with(d))
        .then(|| render(&spec().protected.private, &[("path", &path.display().to_string())]))
}

/// Why a change to `path` (real, absolute) is asked in every mode, if it is: files that decide
/// what lembas may do in later sessions — a project's `.lembas/`, `.mcp.json`, its hooks,
/// commands, agents and skills, and the person's own skills.
pub fn trust_bearing(path: &Path, ctx: &Context) -> Option<String> {
    let say = || render(&spec().protected.trust, &[("path", &path.display().to_string())]);
    if ctx.skills_dir.as_ref().is_some_and(|d| path.starts_with(d)) {
        return Some(say());
    }
    let rel = path.strip_prefix(&ctx.root).ok()?;
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let first = parts.next()?;
    let second = parts.next();
    let bearing = match (first.as_str(), second.as_deref()) {
        (".lembas" | ".mcp.json", _) => true,
        (".agent" | ".claude" | ".codex" | ".opencode", None) => true,
        (".agent" | ".claude" | ".codex" | ".opencode", Some(sub)) => {
            matches!(
                sub,
                "commands" | "agents" | "skills" | "hooks" | "settings.json" | "settings.local.json" | "config.toml"
            )
        }
        _ => false,
    };
    bearing.then(say)
}

/// The floor for a command line: every part, plainly spelled, with its words resolved as the
/// line goes (`cd`, `X=…`, `~`, `$HOME`, braces, globs) from `cwd`, and `real` giving each
/// place's real path (links followed).
pub fn line_floor(
    line: &str,
    parts: &[SimpleCommand],
    cwd: &Path,
    real: &dyn Fn(&Path) -> PathBuf,
    ctx: &Context,
) -> Option<Floor> {
    if is_fork_bomb(line) {
        return Some(Floor::Refuse(refused("fork_bomb")));
    }
    let real = &|p: &Path| crate::words::settled(real(p));
    let mut scopes = Scopes::new(cwd, ctx.home.as_deref());
    let mut ask: Option<String> = None;
    for part in parts {
        let part = &read_program(part);
        let scope = scopes.of(&part.shell);
        if let Some(reason) = command_refusal(part) {
            return Some(Floor::Refuse(reason));
        }
        let mut fx = effects(part);
        if part.program_unknown() {
            // Whatever it turns out to be, it must not be able to take the home folder.
            fx.deletes.extend(part.argv.iter().skip(1).filter(|a| !a.starts_with('-')).cloned());
            fx.recursive = true;
        }
        let reach = |word: &str, subs: Vec<String>| {
            let mut r = scope.reach(word, &subs);
            for place in &mut r.places {
                place.path = real(&place.path);
            }
            r
        };
        for word in &fx.deletes {
            let r = reach(word, part.substitutions_of(word));
            for place in &r.places {
                if (fx.recursive || place.vague) && dangerous_place(&place.path, ctx) {
                    return Some(Floor::Refuse(refused(if part.program() == "chmod" {
                        "chmod_root"
                    } else {
                        "rm_root"
                    })));
                }
                if let Some(reason) = protected(&place.path, ctx).or_else(|| private(&place.path, ctx)) {
                    return Some(Floor::Refuse(reason));
                }
                if place.vague && !place.path.starts_with(&ctx.root) {
                    ask.get_or_insert_with(|| unreadable(word, "deletes"));
                }
            }
            if r.unknown {
                ask.get_or_insert_with(|| unreadable(word, "deletes"));
            }
        }
        if matches!(part.program(), "chmod" | "chown" | "chgrp") && fx.recursive {
            for word in &fx.writes {
                if reach(word, part.substitutions_of(word)).places.iter().any(|p| dangerous_place(&p.path, ctx)) {
                    return Some(Floor::Refuse(refused("chmod_root")));
                }
            }
        }
        for word in &fx.writes {
            if is_device(word) {
                return Some(Floor::Refuse(refused("device_write")));
            }
            let r = reach(word, part.substitutions_for_write(word));
            for place in &r.places {
                if is_device(&place.path.to_string_lossy()) {
                    return Some(Floor::Refuse(refused("device_write")));
                }
                if let Some(reason) = protected(&place.path, ctx).or_else(|| private(&place.path, ctx)) {
                    return Some(Floor::Refuse(reason));
                }
                if let Some(reason) = trust_bearing(&place.path, ctx) {
                    ask.get_or_insert(reason);
                }
                if place.vague && !place.path.starts_with(&ctx.root) {
                    ask.get_or_insert_with(|| unreadable(word, "writes"));
                }
            }
            if r.unknown {
                ask.get_or_insert_with(|| unreadable(word, "writes"));
            }
        }
        // Reading the person's credentials is asked: the files the command reads by name.
        for word in &fx.reads {
            for place in &reach(word, part.substitutions_for_read(word)).places {
                // A glob is matched against the credentials themselves: `../lemb*/x` cannot
                // name `~/.ssh`, `~/.s*/id_*` can.
                let reason = match (place.vague, glob_of(word, scope)) {
                    (true, Some(glob)) => ctx.home.as_deref().and_then(|home| {
                        credentials(home)
                            .into_iter()
                            .find(|(cred, _)| glob_may_name(&glob, cred))
                            .and_then(|(cred, _)| credential(&cred, false, ctx))
                    }),
                    _ => credential(&place.path, place.vague, ctx),
                };
                if let Some(reason) = reason {
                    ask.get_or_insert(reason);
                }
            }
        }
        // Reading lembas' private files is refused too: every word that names a place there.
        for word in part.argv.iter().skip(1) {
            let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
            if !value.contains(['/', '~', '$']) {
                continue;
            }
            for place in &reach(value, part.substitutions_of(value)).places {
                if let Some(reason) = private(&place.path, ctx) {
                    return Some(Floor::Refuse(reason));
                }
            }
        }
        scope.follow(part);
    }
    ask.map(Floor::Ask)
}

/// A command whose program is a substitution that only echoes a name, read as that name.
fn read_program(part: &SimpleCommand) -> SimpleCommand {
    let mut part = part.clone();
    if part.argv.first().is_some_and(|p| p == SUBSTITUTION)
        && let Some(name) = part.substitutions.first().and_then(|s| crate::words::echoed(s))
    {
        part.argv[0] = name;
        part.substitutions.remove(0);
    }
    part
}

fn unreadable(word: &str, what: &str) -> String {
    render(&spec().protected.unreadable, &[("word", word), ("what", what)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::split;

    fn ctx() -> Context {
        Context {
            home: Some("/home/ada".into()),
            root: "/home/ada/src/app".into(),
            lembas_config: Some("/home/ada/.config/lembas".into()),
            lembas_private: vec!["/home/ada/.local/share/lembas".into(), "/home/ada/.local/state/lembas".into()],
            plans_dir: Some("/home/ada/.local/state/lembas/plans".into()),
            skills_dir: Some("/home/ada/.local/share/lembas/skills".into()),
            unsealed_home: false,
        }
    }

    fn floor_in(cwd: &str, line: &str) -> Option<Floor> {
        line_floor(line, &split(line), Path::new(cwd), &|p: &Path| p.to_path_buf(), &ctx())
    }

    fn floor(line: &str) -> Option<Floor> {
        floor_in("/home/ada/src/app", line)
    }

    fn refused_line(line: &str) -> bool {
        matches!(floor(line), Some(Floor::Refuse(_)))
    }

    fn asked_line(line: &str) -> bool {
        matches!(floor(line), Some(Floor::Ask(_)))
    }

    #[test]
    fn what_a_line_does_is_judged_not_how_it_is_spelled() {
        for line in [
            "cd / && rm -rf *",
            "rm -rf /u*",
            "rm -rf {/,}",
            "find / -delete",
            "find ~ -delete",
            "find / -exec rm -rf {} +",
            "cp /dev/zero /dev/sda",
            "cat /dev/zero | tee /dev/sda",
            ":(){ :&:& };:",
            "X=$HOME; rm -rf \"$X\"",
            "$(echo rm) -rf ~",
            "rm -rf \"$(echo ~)\"",
            "rm -rf ${HOME%/}",
            "cd ~/.ssh && echo k >> authorized_keys",
            "echo k >> \"$(echo ~)/.ssh/authorized_keys\"",
            "rm -rf ~/*",
            "rm -rf /home",
            "mv ~ /tmp/gone",
            "rsync -a --delete empty/ ~/",
            "cat ~/.config/lembas/credentials.json",
            "cp ~/.local/share/lembas/sessions.db /tmp/x",
            "echo x > ~/.config/lembas/config.toml",
            "cat ~/.config/lembas/*",
            "head ~/.local/share/lembas/sessions.d*",
        ] {
            assert!(refused_line(line), "{line}: {:?}", floor(line));
        }
        assert!(matches!(floor_in("/", "rm -rf *"), Some(Floor::Refuse(_))));
    }

    #[test]
    fn what_cannot_be_read_before_it_runs_is_asked() {
        for line in [
            "rm -rf \"$X\"",
            "rm -rf \"$(mktemp -d)\"",
            "rm -rf /tmp/build-*",
            "echo x > \"$OUT\"",
            "cd \"$D\" && rm -rf *",
            "echo '{}' > .lembas/permissions.json",
            "cp evil.json .mcp.json",
        ] {
            assert!(asked_line(line), "{line}: {:?}", floor(line));
        }
        for line in [
            "rm -rf build/*",
            "rm -rf target",
            "echo x > notes.txt",
            "X=build; rm -rf $X",
            "cat ~/.local/state/lembas/plans/p.md",
        ] {
            assert_eq!(floor(line), None, "{line}");
        }
    }

    #[test]
    fn the_classic_disasters_are_refused() {
        for line in [
            "rm -rf /",
            "rm -rf ~",
            "rm -fr ~/",
            "rm -r -f $HOME",
            "rm -rf /*",
            "rm --recursive --force /usr",
            "rm -rf ../..",
            "rm -rf --no-preserve-root /x",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/nvme0n1 bs=1M",
            "cat image > /dev/sdb",
            ":(){ :|:& };:",
            "bomb(){ bomb|bomb& }; bomb",
            "f() { f & f & }; f",
            "sudo shutdown -h now",
            "chmod -R 777 /",
        ] {
            assert!(refused_line(line), "{line}");
        }
    }

    #[test]
    fn disguises_do_not_help() {
        for line in [
            "sudo rm -rf /",
            "env X=1 rm -rf ~",
            "bash -c 'rm -rf /'",
            "sh -c \"echo hi; rm -rf ~\"",
            "\"rm\" -rf '/'",
            "r\\m -rf /",
            "echo ok && rm -rf ~",
            "true; rm -rf ~",
            "echo $(rm -rf ~)",
            "ls | xargs rm -rf /",
            "cd / && sudo -u root rm -rf /*",
        ] {
            assert!(refused_line(line), "{line}");
        }
    }

    #[test]
    fn bash_grammar_is_read_as_bash_reads_it() {
        // Each of these ran unrefused when the line was split by hand: keywords read as
        // programs, a here-document's substitutions skipped, an ANSI-C string left encoded.
        for line in [
            "if true; then rm -rf /; fi",
            "while true; do rm -rf ~; done",
            "for x in a; do rm -rf ~; done",
            "until false; do rm -rf /usr; done",
            "case x in x) rm -rf ~;; esac",
            "cat <<EOF\n$(rm -rf ~)\nEOF",
            "$'\\x72m' -rf /",
            "rm $'-rf' /",
            "f() { rm -rf ~; }",
            "[[ -n $(rm -rf ~) ]]",
            "echo ${X:-$(rm -rf ~)}",
            "cd /; (cd /tmp/x); rm -rf *",
            "echo > /dev/sda x y",
        ] {
            assert!(refused_line(line), "{line}");
        }
        // A loop variable is not known before the line runs: asked in every mode.
        assert!(asked_line("for d in / ; do rm -rf $d; done"));
        // A quoted here-document runs nothing; `cd` in a subshell or a `&` job stays there.
        for line in ["cat <<'EOF'\n$(rm -rf ~)\nEOF", "(cd /) && rm -rf *", "cd / & rm -rf *", "cd / | rm -rf *"] {
            assert!(!refused_line(line), "{line}");
        }
    }

    #[test]
    fn ordinary_work_is_not_refused() {
        for line in [
            "rm -rf build",
            "rm -rf ./target",
            "rm file.txt",
            "dd if=a of=b",
            "echo ':(){ }'",
            "chmod -R u+w src",
            "git push",
        ] {
            assert!(!refused_line(line), "{line}");
        }
    }

    #[test]
    fn trust_bearing_and_private_files() {
        let c = ctx();
        assert!(trust_bearing(Path::new("/home/ada/src/app/.lembas/permissions.json"), &c).is_some());
        assert!(trust_bearing(Path::new("/home/ada/src/app/.claude/commands/x.md"), &c).is_some());
        assert!(trust_bearing(Path::new("/home/ada/.local/share/lembas/skills/s/SKILL.md"), &c).is_some());
        assert!(trust_bearing(Path::new("/home/ada/src/app/.agent/notes.md"), &c).is_none());
        assert!(trust_bearing(Path::new("/home/ada/src/app/src/mcp.json"), &c).is_none());
        assert!(private(Path::new("/home/ada/.local/state/lembas/jobs/x.log"), &c).is_some());
        assert!(private(Path::new("/home/ada/.local/state/lembas/plans/p.md"), &c).is_none());
        assert!(private(Path::new("/home/ada/.local/share/lembas/skills/s/SKILL.md"), &c).is_none());
    }

    #[test]
    fn protected_paths_are_not_written() {
        assert!(refused_line("echo key >> ~/.ssh/authorized_keys"));
        assert!(refused_line("rm -rf .git"));
        assert!(refused_line("cp x ~/.config/lembas/credentials.json"));
        assert!(refused_line("sed -i s/a/b/ ~/.aws/credentials"));
        assert!(!refused_line("cat ~/.ssh/config"), "reading is the rules' business, not the floor's");
        assert!(protected(Path::new("/home/ada/src/app/.git/config"), &ctx()).is_some());
        assert!(protected(Path::new("/home/ada/src/app/.gitignore"), &ctx()).is_none());
    }
}
