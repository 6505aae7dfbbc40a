//! The launcher: lembas started again as `lembas __sandbox PLAN -- PROGRAM ARGS…`, which puts
//! itself in a user and mount namespace of its own, makes the plan's mounts, restricts itself
//! with Landlock and then becomes the program (an `exec`: same process, same process group, the
//! environment and descriptors it was given). A user namespace can only be entered by a process
//! with one thread, which lembas never is — hence a process of its own, made from the binary
//! already on disk, rather than a thread. Mounts come before Landlock: a Landlock domain forbids
//! mounting, which is also what keeps the command from undoing them.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use landlock::RulesetStatus;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};
use serde::{Deserialize, Serialize};

use super::Hidden;
use super::seal::Seal;

/// The first argument that makes lembas the launcher.
pub const ARG: &str = "__sandbox";
/// The launcher's argument that only tries whether namespaces can be made here.
const PROBE: &str = "--probe";
/// The launcher's argument that makes a plan's namespace and holds it until its input ends, for
/// lembas to keep and its commands to join ([`super::joined`]).
pub(super) const HOLD: &str = "--hold";
/// What the holder says once the namespace is ready.
pub(super) const READY: &str = "ready";
/// The exit status of a command the launcher could not start (as a shell's "cannot execute").
const CANNOT_RUN: i32 = 126;

/// What the launcher sets up before it becomes the command.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Plan {
    pub writable: Vec<PathBuf>,
    pub hidden: Hidden,
    pub network: bool,
    pub seals: Vec<Seal>,
    /// What it may read, worked out ahead by lembas; `None`: the launcher works it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readable: Option<Vec<PathBuf>>,
}

/// The longest plan given whole: one argument may hold 128 KiB on Linux.
pub(super) const PLAN_MAX: usize = 96 * 1024;

/// When this process was started as the launcher, does the launcher's work and never returns.
/// Call it first thing in `main`, before any thread is started.
pub fn run_if_asked() {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == ARG) {
        let rest: Vec<OsString> = args.collect();
        std::process::exit(launch(rest));
    }
}

/// The launcher's work, which ends by becoming the command; the exit status it returns is for
/// when that could not be (said on stderr).
fn launch(args: Vec<OsString>) -> i32 {
    if args.first().is_some_and(|a| a == PROBE) {
        return match enter(&[]) {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("{why}");
                1
            }
        };
    }
    if args.first().is_some_and(|a| a == HOLD) {
        return hold(args.get(1));
    }
    let failed = |why: String| {
        eprintln!("lembas: the sandbox could not be set up for this command, so it was not run: {why}");
        CANNOT_RUN
    };
    let (Some(plan), Some(dashes), Some(program)) = (args.first(), args.get(1), args.get(2)) else {
        return failed("the launcher was started without a plan and a command".to_owned());
    };
    if dashes != "--" {
        return failed("the launcher's arguments are not PLAN -- PROGRAM".to_owned());
    }
    let plan: Plan = match plan.to_str().map(serde_json::from_str) {
        Some(Ok(plan)) => plan,
        _ => return failed("the launcher's plan could not be read".to_owned()),
    };
    if !plan.seals.is_empty()
        && let Err(why) = enter(&plan.seals)
    {
        return failed(why);
    }
    let readable = match plan.readable {
        Some(readable) => Some(readable),
        None => (!plan.hidden.folders.is_empty()).then(|| plan.hidden.readable()),
    };
    match super::landlock::restrict(&plan.writable, readable.as_deref(), plan.network) {
        Ok(RulesetStatus::NotEnforced) => return failed("Landlock is not enforced".to_owned()),
        Err(e) => return failed(format!("Landlock: {e}")),
        Ok(_) => {}
    }
    let error = std::process::Command::new(program).args(&args[3..]).exec();
    failed(format!("{} could not be started: {error}", Path::new(program).display()))
}

/// Makes the plan's namespace, says so, and holds it until its input ends (lembas keeps it by
/// then, or has gone).
fn hold(plan: Option<&OsString>) -> i32 {
    let plan: Option<Plan> = plan.and_then(|p| p.to_str()).and_then(|p| serde_json::from_str(p).ok());
    let Some(plan) = plan else {
        eprintln!("the holder's plan could not be read");
        return CANNOT_RUN;
    };
    if let Err(why) = enter(&plan.seals) {
        eprintln!("{why}");
        return CANNOT_RUN;
    }
    println!("{READY}");
    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
    0
}

/// Enters a user and mount namespace of its own and makes `seals`' mounts in it.
fn enter(seals: &[Seal]) -> Result<(), String> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("a user and mount namespace could not be made: {e}"))?;
    // The same user inside as outside, so files keep their owner and programs their user.
    let write = |file: &str, text: String| std::fs::write(file, text).map_err(|e| format!("{file}: {e}"));
    if Path::new("/proc/self/setgroups").exists() {
        write("/proc/self/setgroups", "deny".to_owned())?;
    }
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // Nothing mounted here reaches the namespace lembas runs in, while what is mounted or
    // unmounted there later still reaches this one (a namespace lembas keeps for a session's
    // commands sees a disk mounted after it was made, and does not hold one unmounted).
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_SLAVE, None::<&str>)
        .map_err(|e| format!("the mounts could not be made private: {e}"))?;
    for seal in seals {
        bind(seal)?;
    }
    Ok(())
}

/// Binds a place onto itself, read-only or writable. A place that is gone needs nothing; one
/// that cannot be made read-only stops the command; one that cannot be opened again stays
/// read-only (the file system under it may be read-only itself).
fn bind(seal: &Seal) -> Result<(), String> {
    let path = &seal.path;
    if !path.exists() {
        return Ok(());
    }
    let said = |e: nix::Error| format!("{} could not be made read-only: {e}", path.display());
    if let Err(e) = mount(Some(path), path, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>) {
        return if seal.writable { Ok(()) } else { Err(said(e)) };
    }
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | kept_flags(path);
    if !seal.writable {
        flags |= MsFlags::MS_RDONLY;
    }
    match mount(None::<&str>, path, None::<&str>, flags, None::<&str>) {
        Err(e) if !seal.writable => Err(said(e)),
        _ => Ok(()),
    }
}

/// The flags of the mount a place lies on that a remount must keep: in a user namespace the
/// kernel refuses to drop them.
fn kept_flags(path: &Path) -> MsFlags {
    let Ok(stat) = statvfs(path) else { return MsFlags::empty() };
    let have = stat.flags();
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(st, _)| have.contains(*st))
    .fold(MsFlags::empty(), |all, (_, ms)| all | ms)
}

/// Starts trying, on a thread of its own, whether `launcher` can make namespaces here (and
/// whether the kernel has Landlock), so that the answer is ready by the time a session says
/// whether its sandbox is whole — a program started and waited for is a millisecond or two
/// that lembas' start need not wait. A yes is kept in `kept_in` (lembas' state folder) for the
/// next start while nothing that decides it changes ([`super::probe`]).
pub fn try_early(launcher: PathBuf, kept_in: Option<PathBuf>) {
    if let Some(file) = kept_in {
        super::probe::keep_in(file);
    }
    std::thread::spawn(move || {
        let _ = super::support();
        let _ = namespaces(&launcher);
    });
}

/// Whether `launcher` can make namespaces on this machine: `Err` says why not. Found once per
/// process, by starting it (a process of its own: namespaces cannot be tried from a thread), or
/// from the yes an earlier start kept.
pub fn namespaces(launcher: &Path) -> Result<(), String> {
    static TRIED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    TRIED.get_or_init(|| super::probe::answer(launcher, || probe(launcher))).clone()
}

/// Starts `launcher` to try making namespaces.
fn probe(launcher: &Path) -> Result<(), String> {
    let out = std::process::Command::new(launcher)
        .args([ARG, PROBE])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{} could not be started: {e}", launcher.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        Err(if said.is_empty() { format!("the launcher ended with {}", out.status) } else { said })
    }
}
