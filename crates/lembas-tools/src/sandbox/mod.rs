//! The floor beneath the judgement: commands run in a sandbox that lets them write only where
//! their mode allows, whatever the judgement missed, and read every file but lembas' own (its
//! login, sessions, logs and job output) and the person's credentials (`~/.ssh`, `~/.aws`, …) —
//! the judgement keeps them from being read by name, the sandbox from being read through a name
//! it never saw. Anything else fails with "Permission denied" or "Read-only file system".
//!
//! Two parts (docs/permissions.md): Landlock grants the places a command may write and read
//! ([`landlock`]); a mount namespace takes back, inside those places, what must stay read-only —
//! git's hooks and configuration, the files that decide what agents may do, a home folder
//! that lies in `/tmp` ([`seal`]). A namespace needs a process of its own to be made in: the
//! [`launcher`] makes it once and holds it, lembas keeps it, and each command joins it and
//! restricts itself with Landlock as it starts ([`joined`]); lembas itself is never restricted.
//! Where a namespace cannot be joined, each command starts through the launcher, which makes
//! the mounts, restricts itself and becomes the command.

mod grants;
mod joined;
mod landlock;
pub mod launcher;
mod probe;
pub mod seal;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use ::landlock::RulesetStatus;
use serde::{Deserialize, Serialize};

pub use grants::ReadGrants;
pub(crate) use joined::Namespace;
#[doc(hidden)]
pub use joined::start_each_through_the_launcher;
pub use seal::Seal;

/// Where a command may write, or nothing when it runs without a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    /// The folders and files it may write (besides the devices programs expect); `None`: no
    /// sandbox.
    pub writable: Option<Vec<PathBuf>>,
    /// A temporary folder of its own, given as `TMPDIR`.
    pub tmpdir: Option<PathBuf>,
    /// Folders whose files it may not read (lembas' own, the credentials), and places inside
    /// them it still may.
    pub hidden: Hidden,
    /// Whether it may open TCP connections or listen (Landlock's network rights, Linux 6.7+;
    /// an older kernel leaves the network open).
    pub network: bool,
    /// The mounts that keep places inside the writable ones read-only; made by `launcher`.
    pub seals: Vec<Seal>,
    /// The program that makes them (lembas itself); `None`: Landlock alone.
    pub launcher: Option<PathBuf>,
    /// What it may read, worked out ahead ([`ReadGrants`]); `None`: worked out as it starts.
    pub readable: Option<std::sync::Arc<[PathBuf]>>,
}

/// Folders whose files a command may not read, with the places inside them it still may (the
/// plans, the person's skills, a subagent's worktree).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hidden {
    pub folders: Vec<PathBuf>,
    pub open: Vec<PathBuf>,
}

impl Sandbox {
    /// No sandbox at all.
    pub fn none() -> Sandbox {
        Sandbox::default()
    }

    pub fn is_active(&self) -> bool {
        self.writable.is_some() && support().is_ok()
    }

    /// Whether the command starts through the launcher (there are mounts to make).
    fn launched(&self) -> bool {
        self.launcher.is_some() && !self.seals.is_empty() && self.is_active()
    }

    /// The launcher and its plan, when the command starts through it.
    fn launch_plan(&self) -> Option<(&Path, String)> {
        if !self.launched() {
            return None;
        }
        let mut plan = launcher::Plan {
            writable: self.writable.clone().unwrap_or_default(),
            hidden: self.hidden.clone(),
            network: self.network,
            seals: self.seals.clone(),
            readable: self.readable.as_deref().map(<[PathBuf]>::to_vec),
        };
        let mut text = serde_json::to_string(&plan).ok()?;
        // An argument has a size limit; grants that would pass it are worked out by the launcher.
        if text.len() > launcher::PLAN_MAX {
            plan.readable = None;
            text = serde_json::to_string(&plan).ok()?;
        }
        Some((self.launcher.as_deref()?, text))
    }
}

/// Whether this kernel can sandbox commands: `Err` says why not.
pub fn support() -> Result<(), String> {
    static SUPPORT: OnceLock<Result<(), String>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            // Try it in a thread that ends right after: the restriction ends with it.
            std::thread::spawn(|| match landlock::restrict(&[], None, true) {
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

/// A command made to run in a sandbox ([`command`]): set it up through `command`, then start it
/// with [`spawn`].
#[derive(Debug)]
pub struct SandboxedCommand {
    pub command: crate::process::Launch,
    way: Way,
}

/// How a command gets into its sandbox.
#[derive(Debug)]
enum Way {
    /// No sandbox.
    Plain,
    /// Through the launcher, which makes the mounts and restricts itself.
    Launcher,
    /// Joining a kept namespace, if any, and restricting itself with Landlock as it starts.
    Joined(Option<Arc<joined::Namespace>>),
}

/// How a command gets into `sandbox`: joining its kept namespace where it has mounts to make
/// and one can be kept here, else through the launcher.
fn way(sandbox: &Sandbox) -> Way {
    if !sandbox.is_active() {
        return Way::Plain;
    }
    match sandbox.launcher.as_deref().filter(|_| sandbox.launched()) {
        None => Way::Joined(None),
        Some(launcher) => joined::namespace(launcher, &sandbox.seals).map_or(Way::Launcher, |n| Way::Joined(Some(n))),
    }
}

/// The command that runs `program` in `sandbox`: the program itself, joining the sandbox's kept
/// namespace as it starts; through the launcher where that namespace cannot be kept.
pub fn command(program: impl AsRef<std::ffi::OsStr>, sandbox: &Sandbox) -> SandboxedCommand {
    let program = program.as_ref();
    let plain = |way| SandboxedCommand { command: crate::process::Launch::new(program), way };
    let way = way(sandbox);
    if !matches!(way, Way::Launcher) {
        return plain(way);
    }
    // A plan that could not be written (a path that is not UTF-8): Landlock alone.
    let Some((launcher, plan)) = sandbox.launch_plan() else { return plain(Way::Joined(None)) };
    let mut command = crate::process::Launch::new(launcher);
    command.arg(launcher::ARG).arg(plan).arg("--").arg(program);
    SandboxedCommand { command, way: Way::Launcher }
}

/// Starts `command` (made by [`command`]) inside `sandbox`, or plainly without one. Must be
/// called within a tokio runtime: the child is the runtime's to wait on.
pub fn spawn(command: SandboxedCommand, sandbox: &Sandbox) -> std::io::Result<crate::process::Child> {
    let SandboxedCommand { mut command, way } = command;
    if let Some(tmp) = &sandbox.tmpdir {
        let mut folder = std::fs::DirBuilder::new();
        {
            use std::os::unix::fs::DirBuilderExt;
            folder.recursive(true).mode(0o700);
        }
        let _ = folder.create(tmp);
        command.env("TMPDIR", tmp);
    }
    let namespace = match way {
        Way::Plain | Way::Launcher => return command.spawn(),
        Way::Joined(namespace) => namespace,
    };
    let rules = landlock::ruleset_for(sandbox).map_err(|why| {
        std::io::Error::other(format!("the sandbox could not be set up for this command, so it was not run: {why}"))
    })?;
    command.confine(crate::process::Confinement { namespace, rules: Some(rules) });
    command.spawn()
}

/// Makes ready what a command in `sandbox` needs — the namespace it joins, its Landlock rules —
/// so that a session's first command does not wait for them (making the namespace is a program
/// started and waited for, ~2 ms). Blocking: call it off the async threads, while the model is
/// asked.
pub fn prepare(sandbox: &Sandbox) {
    // Through the launcher a command makes its own rules.
    if matches!(way(sandbox), Way::Joined(_)) {
        let _ = landlock::ruleset_for(sandbox);
    }
}

/// At most this many namespaces, and sets of rules, are kept at once (a session's modes, its
/// subagents' worktrees each have their own); the oldest goes first.
const KEEP_AT_MOST: usize = 8;

/// Keeps `new` in `kept`, the oldest going where there are [`KEEP_AT_MOST`] already.
fn keep<T>(kept: &mut Vec<T>, new: T) {
    if kept.len() >= KEEP_AT_MOST {
        kept.remove(0);
    }
    kept.push(new);
}

/// What stood at a place when rules or mounts were made for it: the file or folder there, held
/// open, or nothing. Rules and mounts made for a place hold the one that stood there then; a new
/// one at the path needs new ones. Held, because a number is not enough: a folder removed and
/// made again at once is often given the freed inode's number again (and the same time, to the
/// file system's clock) — while one is held open its number is given to no other.
#[derive(Debug)]
struct Mark(Option<std::fs::File>);

impl Mark {
    fn of(path: &Path) -> Mark {
        use std::os::unix::fs::OpenOptionsExt;
        // Opened as a path only: neither read nor needing the right to.
        Mark(std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_PATH).open(path).ok())
    }

    /// Whether `path` still leads where it did.
    fn holds(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (&self.0, std::fs::metadata(path)) {
            (None, Err(_)) => true,
            (Some(held), Ok(now)) => {
                held.metadata().is_ok_and(|then| then.dev() == now.dev() && then.ino() == now.ino())
            }
            _ => false,
        }
    }

    /// Whether each of `paths` still leads where its mark says.
    fn all_hold<'a>(marks: &[Mark], paths: impl ExactSizeIterator<Item = &'a Path>) -> bool {
        marks.len() == paths.len() && marks.iter().zip(paths).all(|(mark, path)| mark.holds(path))
    }
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
    /// lembas' own folders, which no command reads (and, where they lie inside a writable
    /// place, none writes but for the places opened inside them).
    pub hidden: Hidden,
    /// The person's credentials (`~/.ssh`, `~/.aws`, `~/.netrc`, …): never written, and not
    /// read unless `credentials_readable`.
    pub credentials: Vec<PathBuf>,
    /// Whether this command may read the credentials (a person's `[sandbox] credentials` rule).
    pub credentials_readable: bool,
    /// Whether commands may use the network: `None` lets them in every reach but plan mode's.
    pub network: Option<bool>,
    /// The program that makes the mounts (lembas itself, `/proc/self/exe`); `None`: Landlock
    /// alone, and nothing inside a writable place can be kept read-only.
    pub launcher: Option<PathBuf>,
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
        let mut tmpdir = None;
        match reach {
            Reach::Plans => {
                writable.extend(self.plans_dir.clone());
                writable.push(self.private_tmp.clone());
                tmpdir = Some(self.private_tmp.clone());
            }
            Reach::Project | Reach::ProjectAndCaches => {
                writable.push(self.root.clone());
                writable.push(temp);
                writable.push(PathBuf::from("/var/tmp"));
                writable.extend(self.plans_dir.clone());
                if reach == Reach::ProjectAndCaches
                    && let Some(home) = &self.home
                {
                    writable.extend(CACHES.iter().map(|c| home.join(c)));
                }
                writable.extend(self.extra.iter().cloned());
            }
        }
        let mut hidden = self.hidden.clone();
        if !self.credentials_readable {
            hidden.folders.extend(self.credentials.iter().cloned());
        }
        let mut sandbox = Sandbox {
            writable: Some(writable),
            tmpdir,
            hidden,
            network: self.network.unwrap_or(reach != Reach::Plans),
            seals: Vec::new(),
            launcher: None,
            readable: None,
        };
        if let Some(launcher) = &self.launcher
            && launcher::namespaces(launcher).is_ok()
        {
            sandbox.seals = self.seals(sandbox.writable.as_deref().unwrap_or_default());
            sandbox.launcher = Some(launcher.clone());
        }
        sandbox
    }

    /// The mounts that keep what lies inside `writable` and must not be written read-only: the
    /// project's git hooks and configuration and its trust-bearing files, the credentials (never
    /// writable), and lembas' own folders and the home folder (but for what the mode opens in
    /// them) — each only where it lies inside a writable place.
    fn seals(&self, writable: &[PathBuf]) -> Vec<Seal> {
        let real = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let writable: Vec<PathBuf> = writable.iter().map(real).collect();
        let mut sealed = seal::project_places(&self.root);
        sealed.extend(self.credentials.iter().map(real));
        let shut: Vec<PathBuf> = self.home.iter().chain(&self.hidden.folders).map(real).collect();
        seal::seals(&writable, &sealed, &shut, &seal::git_folders(&self.root))
    }
}

/// Why commands run with less than the whole sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Shortfall {
    /// The kernel has no Landlock: commands run unsandboxed.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Landlock alone: nothing inside a writable place can be kept read-only (no user
    /// namespaces here, or no launcher to make the mounts with).
    #[error("landlock only: {0}")]
    LandlockOnly(String),
}

/// Whether commands run in the whole sandbox here, and why not when they do not.
pub fn state(launcher: Option<&Path>) -> Result<(), Shortfall> {
    support().map_err(Shortfall::Unavailable)?;
    let Some(launcher) = launcher else {
        return Err(Shortfall::LandlockOnly("no launcher to make the mounts with".to_owned()));
    };
    launcher::namespaces(launcher).map_err(Shortfall::LandlockOnly)
}

/// Whether a failed command's output looks like the sandbox stopped a write.
pub fn looks_blocked(output: &str) -> bool {
    ["Permission denied", "Read-only file system", "Operation not permitted"].iter().any(|s| output.contains(s))
}
