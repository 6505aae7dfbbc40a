//! The floor beneath the judgement: commands run in a Landlock sandbox that lets them write only
//! where their mode allows, whatever the judgement missed, and read every file but lembas' own
//! (its login, sessions, logs and job output — the judgement keeps them from being read by name,
//! the sandbox from being read through a name it never saw). Anything else fails with
//! "Permission denied".
//!
//! Landlock restricts the calling thread and the processes it starts afterwards, so each command
//! is started from a short-lived thread of its own that restricts itself first: lembas itself is
//! never restricted, and no `unsafe` `pre_exec` is needed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{ABI, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules};

/// The Landlock ABI whose write rights the sandbox handles (with truncation and renames across
/// folders). A kernel with less is used as far as it goes.
const WRITE_ABI: ABI = ABI::V3;

/// Files every command may write: the sinks and terminals programs expect.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/shm"];

/// Where a command may write, or nothing when it runs without a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    /// The folders and files it may write (besides [`DEVICES`]); `None`: no sandbox.
    pub writable: Option<Vec<PathBuf>>,
    /// A temporary folder of its own, given as `TMPDIR`.
    pub tmpdir: Option<PathBuf>,
    /// Folders whose files it may not read (lembas' own), and places inside them it still may.
    pub hidden: Hidden,
    /// Whether it may open TCP connections or listen (Landlock's network rights, Linux 6.7+;
    /// an older kernel leaves the network open).
    pub network: bool,
}

/// Folders whose files a command may not read, with the places inside them it still may (the
/// plans, the person's skills, a subagent's worktree).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hidden {
    pub folders: Vec<PathBuf>,
    pub open: Vec<PathBuf>,
}

impl Hidden {
    /// Every place whose files may be read: Landlock only grants, so "all but these folders" is
    /// each entry along the way from `/` to a hidden folder except the folder itself (a link
    /// counts where it lands), and the open places inside. Names stay listable; what a hidden
    /// folder's files say does not. An entry made later in a folder along the way (`/`, the home
    /// folder, `~/.config`, …) is not readable until the next command.
    fn readable(&self) -> Vec<PathBuf> {
        let hidden: Vec<PathBuf> =
            self.folders.iter().map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())).collect();
        let mut out = Vec::new();
        cover(Path::new("/"), &hidden, &mut out);
        out.extend(self.open.iter().filter(|o| hidden.iter().any(|h| o.starts_with(h))).cloned());
        out
    }
}

/// The entries of `dir` that hold nothing hidden, and those along the way into it, recursively.
fn cover(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if hidden.contains(&path) {
            continue;
        }
        if hidden.iter().any(|h| h.starts_with(&path)) {
            cover(&path, hidden, out);
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            // A rule on a link is a rule on where it lands.
            match std::fs::canonicalize(&path) {
                Ok(real) if !hidden.iter().any(|h| real.starts_with(h) || h.starts_with(&real)) => {}
                _ => continue,
            }
        }
        out.push(path);
    }
}

impl Sandbox {
    /// No sandbox at all.
    pub fn none() -> Sandbox {
        Sandbox::default()
    }

    pub fn is_active(&self) -> bool {
        self.writable.is_some() && support().is_ok()
    }
}

/// Whether this kernel can sandbox commands: `Err` says why not.
pub fn support() -> Result<(), String> {
    static SUPPORT: OnceLock<Result<(), String>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            // Try it in a thread that ends right after: the restriction ends with it.
            std::thread::spawn(|| match restrict(&[], None, true) {
                Ok(RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced) => Ok(()),
                Ok(_) => {
                    Err("this kernel has no Landlock (it needs Linux 5.13 or later, with Landlock enabled)".to_owned())
                }
                Err(e) => Err(format!("Landlock could not be set up: {e}")),
            })
            .join()
            .unwrap_or_else(|_| Err("Landlock could not be tried".to_owned()))
        })
        .clone()
}

/// Restricts the calling thread (and what it starts) to writing under `writable` and, when
/// `readable` is given, to reading files only there.
fn restrict(
    writable: &[PathBuf],
    readable: Option<&[PathBuf]>,
    network: bool,
) -> Result<RulesetStatus, landlock::RulesetError> {
    let write = AccessFs::from_write(WRITE_ABI);
    let read = AccessFs::ReadFile;
    let handled = if readable.is_some() { write | read } else { write };
    let mut ruleset = Ruleset::default().handle_access(handled)?;
    if !network {
        // Handled and granted nowhere: no connection, no listening.
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let mut ruleset = ruleset
        .create()?
        .add_rules(path_beneath_rules(DEVICES, write))?
        .add_rules(path_beneath_rules(writable, write))?;
    if let Some(readable) = readable {
        ruleset = ruleset.add_rules(path_beneath_rules(readable, read))?;
    }
    Ok(ruleset.restrict_self()?.ruleset)
}

/// Starts `command` inside `sandbox` (or plainly, without one). Must be called within a tokio
/// runtime: the child is the runtime's to wait on.
pub fn spawn(mut command: tokio::process::Command, sandbox: &Sandbox) -> std::io::Result<tokio::process::Child> {
    if let Some(tmp) = &sandbox.tmpdir {
        let mut folder = std::fs::DirBuilder::new();
        {
            use std::os::unix::fs::DirBuilderExt;
            folder.recursive(true).mode(0o700);
        }
        let _ = folder.create(tmp);
        command.env("TMPDIR", tmp);
    }
    let Some(writable) = sandbox.writable.clone().filter(|_| support().is_ok()) else {
        return command.spawn();
    };
    let readable = (!sandbox.hidden.folders.is_empty()).then(|| sandbox.hidden.readable());
    let network = sandbox.network;
    let runtime = tokio::runtime::Handle::current();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let _entered = runtime.enter();
                match restrict(&writable, readable.as_deref(), network) {
                    Ok(RulesetStatus::NotEnforced) | Err(_) => Err(std::io::Error::other(
                        "the sandbox could not be set up for this command, so it was not run",
                    )),
                    Ok(_) => command.spawn(),
                }
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("starting the command failed")))
    })
}

/// The folders a command may write in a mode, before what the person added:
/// - plan: the plans folder and a private temporary folder;
/// - manual and edit: the project and the temporary folders;
/// - auto (and a command the person approved): those and the usual per-user build and package
///   caches, so builds and installs work unattended.
#[derive(Debug, Clone, Default)]
pub struct SandboxPlaces {
    pub root: PathBuf,
    pub home: Option<PathBuf>,
    pub plans_dir: Option<PathBuf>,
    /// A temporary folder for plan mode's commands.
    pub private_tmp: PathBuf,
    /// More folders the person allowed (`[sandbox] writable` in `config.toml`).
    pub extra: Vec<PathBuf>,
    /// lembas' own folders, which no command reads.
    pub hidden: Hidden,
    /// Whether commands may use the network: `None` lets them in every reach but plan mode's.
    pub network: Option<bool>,
}

/// The per-user caches builds and package managers write to (under the home folder).
pub const CACHES: &[&str] =
    &[".cache", ".cargo", ".rustup", ".npm", ".yarn", ".pnpm-store", ".m2", ".gradle", "go", ".local/share/pnpm"];

/// How far a command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Plan mode: nothing but plans and a private temporary folder.
    Plans,
    /// The project and temporary folders.
    Project,
    /// Those and the build and package caches.
    ProjectAndCaches,
}

impl SandboxPlaces {
    pub fn sandbox(&self, reach: Reach) -> Sandbox {
        let temp = std::env::temp_dir();
        let mut writable: Vec<PathBuf> = Vec::new();
        match reach {
            Reach::Plans => {
                writable.extend(self.plans_dir.clone());
                writable.push(self.private_tmp.clone());
                return Sandbox {
                    writable: Some(writable),
                    tmpdir: Some(self.private_tmp.clone()),
                    hidden: self.hidden.clone(),
                    network: self.network.unwrap_or(false),
                };
            }
            Reach::Project | Reach::ProjectAndCaches => {
                writable.push(self.root.clone());
                writable.push(temp);
                writable.push(PathBuf::from("/var/tmp"));
                writable.extend(self.plans_dir.clone());
            }
        }
        if reach == Reach::ProjectAndCaches
            && let Some(home) = &self.home
        {
            writable.extend(CACHES.iter().map(|c| home.join(c)));
        }
        writable.extend(self.extra.iter().cloned());
        Sandbox {
            writable: Some(writable),
            tmpdir: None,
            hidden: self.hidden.clone(),
            network: self.network.unwrap_or(true),
        }
    }
}

/// Whether a failed command's output looks like the sandbox stopped a write.
pub fn looks_blocked(output: &str) -> bool {
    ["Permission denied", "Read-only file system", "Operation not permitted"].iter().any(|s| output.contains(s))
}
