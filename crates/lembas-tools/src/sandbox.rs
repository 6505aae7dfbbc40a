//! The floor beneath the judgement: commands run in a Landlock sandbox that lets them write only
//! where their mode allows, whatever the judgement missed. Reading is not limited (the judgement
//! keeps lembas' private files from being read by name); writing anywhere else fails with
//! "Permission denied".
//!
//! Landlock restricts the calling thread and the processes it starts afterwards, so each command
//! is started from a short-lived thread of its own that restricts itself first: lembas itself is
//! never restricted, and no `unsafe` `pre_exec` is needed.

use std::path::PathBuf;
use std::sync::OnceLock;

use landlock::{ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules};

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
            std::thread::spawn(|| match restrict(&[]) {
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

/// Restricts the calling thread (and what it starts) to writing under `writable`.
fn restrict(writable: &[PathBuf]) -> Result<RulesetStatus, landlock::RulesetError> {
    let write = AccessFs::from_write(WRITE_ABI);
    let status = Ruleset::default()
        .handle_access(write)?
        .create()?
        .add_rules(path_beneath_rules(DEVICES, write))?
        .add_rules(path_beneath_rules(writable, write))?
        .restrict_self()?;
    Ok(status.ruleset)
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
    let runtime = tokio::runtime::Handle::current();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let _entered = runtime.enter();
                match restrict(&writable) {
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
                return Sandbox { writable: Some(writable), tmpdir: Some(self.private_tmp.clone()) };
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
        Sandbox { writable: Some(writable), tmpdir: None }
    }
}

/// Whether a failed command's output looks like the sandbox stopped a write.
pub fn looks_blocked(output: &str) -> bool {
    ["Permission denied", "Read-only file system", "Operation not permitted"].iter().any(|s| output.contains(s))
}
