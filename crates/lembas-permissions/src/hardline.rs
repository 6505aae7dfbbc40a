//! The floor (`permission/hardline.json`): commands refused in every mode, and paths no tool may
//! write — judged on the plain spelling of every part of a command, and on real paths.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lembas_spec::render;
use serde::Deserialize;

use crate::command::SimpleCommand;

#[derive(Debug, Deserialize)]
struct Protected {
    refused: String,
    home: BTreeMap<String, String>,
    git: String,
    lembas: String,
}

#[derive(Debug, Deserialize)]
struct HardlineSpec {
    refused: String,
    commands: BTreeMap<String, String>,
    rm_targets: Vec<String>,
    format_commands: Vec<String>,
    power_commands: Vec<String>,
    devices: Vec<String>,
    protected: Protected,
}

fn spec() -> &'static HardlineSpec {
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
    /// Where plan mode may write plans.
    pub plans_dir: Option<PathBuf>,
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

/// Whether an `rm` target names the root, the home directory or a system directory.
fn dangerous_rm_target(target: &str, resolve: &dyn Fn(&str) -> PathBuf, ctx: &Context) -> bool {
    let trimmed = if target.len() > 1 { target.trim_end_matches('/') } else { target };
    if spec().rm_targets.iter().any(|t| t == target || t == trimmed) {
        return true;
    }
    let path = resolve(target);
    path == Path::new("/")
        || ctx.home.as_deref() == Some(path.as_path())
        || path == ctx.root.parent().unwrap_or(Path::new("/"))
}

/// Why one simple command is refused in every mode, if it is.
fn command_refusal(command: &SimpleCommand, resolve: &dyn Fn(&str) -> PathBuf, ctx: &Context) -> Option<String> {
    let program = command.program();
    let args = &command.argv[command.argv.len().min(1)..];
    let options: Vec<&str> =
        args.iter().map(String::as_str).take_while(|a| *a != "--").filter(|a| a.starts_with('-')).collect();
    let operands: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with('-')).collect();
    let recursive =
        options.iter().any(|o| *o == "--recursive" || (!o.starts_with("--") && (o.contains('r') || o.contains('R'))));
    match program {
        "rm" if options.contains(&"--no-preserve-root") => return Some(refused("rm_root")),
        "rm" if recursive && operands.iter().any(|t| dangerous_rm_target(t, resolve, ctx)) => {
            return Some(refused("rm_root"));
        }
        "chmod" | "chown" | "chgrp"
            if recursive && operands.iter().skip(1).any(|t| dangerous_rm_target(t, resolve, ctx)) =>
        {
            return Some(refused("chmod_root"));
        }
        "dd" if args.iter().any(|a| a.strip_prefix("of=").is_some_and(is_device)) => {
            return Some(refused("device_write"));
        }
        "shred" | "wipe" if operands.iter().any(|t| is_device(t)) => return Some(refused("device_write")),
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
    if command.writes.iter().any(|t| is_device(t)) {
        return Some(refused("device_write"));
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
        if !name.is_empty() && squeezed[at + 3..].starts_with(&format!("{name}|{name}&")) {
            return true;
        }
        search = at + 3;
    }
    false
}

/// The paths a simple command writes: its redirections, and the operands of commands that
/// change files.
pub fn written_paths(command: &SimpleCommand) -> Vec<&str> {
    let mut out: Vec<&str> = command.writes.iter().map(String::as_str).collect();
    let operands: Vec<&str> = command.argv.iter().skip(1).map(String::as_str).filter(|a| !a.starts_with('-')).collect();
    match command.program() {
        "rm" | "rmdir" | "unlink" | "shred" | "truncate" | "touch" | "tee" | "chmod" | "chown" | "mkdir" => {
            out.extend(&operands)
        }
        "mv" => out.extend(&operands),
        "cp" | "ln" | "install" | "rsync" | "scp" => out.extend(operands.last()),
        "sed" if command.argv.iter().any(|a| a == "-i" || a.starts_with("-i") || a == "--in-place") => {
            out.extend(operands.iter().skip(1))
        }
        "dd" => out.extend(command.argv.iter().filter_map(|a| a.strip_prefix("of="))),
        _ => {}
    }
    out
}

/// Why a command line is refused in every mode, if it is: every part, plainly spelled, and
/// every path it writes.
pub fn line_refusal(
    line: &str,
    parts: &[SimpleCommand],
    resolve: &dyn Fn(&str) -> PathBuf,
    ctx: &Context,
) -> Option<String> {
    if is_fork_bomb(line) {
        return Some(refused("fork_bomb"));
    }
    for part in parts {
        if let Some(reason) = command_refusal(part, resolve, ctx) {
            return Some(reason);
        }
        for target in written_paths(part) {
            if let Some(reason) = protected(&resolve(target), ctx) {
                return Some(reason);
            }
        }
    }
    None
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
            plans_dir: None,
        }
    }

    fn resolve(word: &str) -> PathBuf {
        let expanded = word.replacen("~", "/home/ada", 1).replace("${HOME}", "/home/ada").replace("$HOME", "/home/ada");
        lembas_paths::resolve(Path::new("/home/ada/src/app"), &expanded)
    }

    fn refused_line(line: &str) -> bool {
        line_refusal(line, &split(line), &resolve, &ctx()).is_some()
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
