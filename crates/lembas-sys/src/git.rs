//! Every `git` lembas itself starts, outside the sandbox: on the project's repository (a
//! subagent's worktree) or on its own snapshot store. A repository is data the model or a
//! stranger may have written — a `.git/config`, a submodule's config, an included file, a
//! `.gitattributes` — and git runs programs such data names: `core.fsmonitor` on `git status`,
//! hooks, filter drivers on `git add` and checkout, textconv and external diff drivers, a pager,
//! an SSH command, a credential helper. lembas' own git runs none of them:
//!
//! - no system or global configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`),
//!   no system or personal attributes file, and nothing of the person's `GIT_*` environment;
//! - every command-naming key set to nothing on the command line (which outranks every file):
//!   the fixed ones below, and each `filter.<driver>.*` the repository's own configuration
//!   defines, read first (reading configuration runs nothing);
//! - diffs without external diff or textconv drivers, submodules never entered (their own
//!   configuration is never read), no network protocol allowed;
//! - lembas' secrets out of its environment, and no terminal to prompt on.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// The keys that name programs git would run, set to what runs nothing.
const NEUTRAL: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.attributesFile", "/dev/null"),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("core.alternateRefsCommand", ""),
    ("advice.detachedHead", "false"),
];

/// A `git` command that runs no program the repository's data names, with `dir` as where it
/// runs (`-C`). `args` follow the hardening; a diff-family command is given `--no-ext-diff
/// --no-textconv`.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = base();
    for (key, value) in NEUTRAL {
        command.arg("-c").arg(format!("{key}={value}"));
    }
    for key in drivers(dir) {
        command.arg("-c").arg(format!("{key}="));
        if let Some(driver) = key.strip_suffix(".clean").or_else(|| key.strip_suffix(".smudge")) {
            command.arg("-c").arg(format!("{driver}.required=false"));
        }
    }
    command.arg("-C").arg(dir);
    // Options of git's own (`-c user.name=…`) before the command, then the command.
    let mut args = args.iter().peekable();
    while let Some(option) = args.next_if(|a| a.starts_with('-')) {
        command.arg(option);
        if *option == "-c"
            && let Some(value) = args.next()
        {
            command.arg(value);
        }
    }
    if let Some(sub) = args.next() {
        command.arg(sub);
        if matches!(*sub, "diff" | "log" | "show") {
            command.args(["--no-ext-diff", "--no-textconv"]);
        }
        if matches!(*sub, "status" | "diff") {
            command.arg("--ignore-submodules=all");
        }
    }
    command.args(args);
    command
}

/// `git` with the environment every lembas git has: the person's, less lembas' secrets and
/// every `GIT_*` variable (a hook's `GIT_DIR`, an editor's `GIT_INDEX_FILE`, a
/// `GIT_CONFIG_PARAMETERS`), with no system or global configuration or attributes, no prompt,
/// and its output in plain words.
pub fn base() -> Command {
    let mut command = Command::new("git");
    for name in std::env::vars_os().map(|(name, _)| name).filter(|n| n.to_string_lossy().starts_with("GIT_")) {
        command.env_remove(name);
    }
    crate::child_env::scrub_std(&mut command);
    command
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    command
}

/// The filter drivers' program keys the repository's configuration defines (its includes
/// too), for [`command`] to set to nothing; read with git itself, which runs nothing to read.
fn drivers(dir: &Path) -> Vec<String> {
    let out = base()
        .arg("-C")
        .arg(dir)
        .args(["config", "--null", "--name-only", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    let mut keys: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|k| !k.is_empty())
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// What `git args` printed in `dir`, hardened as [`command`] says; `Err` with what it said when
/// it failed.
pub fn run(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = command(dir, args).output().map_err(|e| format!("git could not be run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
    } else {
        Err(format!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The person's own name and e-mail for commits (`user.name`, `user.email` in their global
/// configuration), which [`command`] does not read; read alone from that one file.
pub fn person_identity() -> Option<(String, String)> {
    let home = std::env::var_os("HOME")?;
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(std::path::PathBuf::from);
    let files: Vec<OsString> = [Some(Path::new(&home).join(".gitconfig")), xdg.map(|x| x.join("git/config"))]
        .into_iter()
        .flatten()
        .filter(|f| f.is_file())
        .map(|f| f.into_os_string())
        .collect();
    let get = |key: &str| {
        files.iter().find_map(|file| {
            let out = base().arg("config").arg("--file").arg(file).args(["--get", key]).output().ok()?;
            let value = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            (out.status.success() && !value.is_empty()).then_some(value)
        })
    };
    Some((get("user.name")?, get("user.email")?))
}
