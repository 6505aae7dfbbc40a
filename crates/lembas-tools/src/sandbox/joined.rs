//! A sandbox's namespace made once and joined by each command, rather than made again for each.
//!
//! Started through the launcher, a command paid for a second program's start, a namespace of its
//! own and its mounts: about a millisecond, on every command. Instead the launcher is started
//! once per set of mounts to make them and hold them (`--hold`); lembas keeps the namespace by
//! its descriptors and each command, as it starts, joins it, goes back to its folder (joining a
//! mount namespace leaves a process at its root) and restricts itself with Landlock rules
//! lembas made ready ([`crate::process`]).
//!
//! A kept namespace holds the mounts as they were made, so it is kept only while every place it
//! seals is the one it sealed: a place removed and made again (the bind of the old one would
//! be gone with it), or one made since, means a new namespace for the next command. What is
//! mounted elsewhere later still reaches it (the launcher's `enter`).
//!
//! Where joining does not work (a seccomp filter that refuses `setns`, say), commands start
//! through the launcher as before.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::Mark;
use super::launcher::{self, Plan};
use super::seal::Seal;

/// A user and mount namespace, held by its descriptors.
#[derive(Debug)]
pub(crate) struct Namespace {
    pub user: OwnedFd,
    pub mount: OwnedFd,
}

#[derive(Debug)]
struct Kept {
    launcher: PathBuf,
    seals: Vec<Seal>,
    marks: Vec<Mark>,
    namespace: Arc<Namespace>,
}

/// The namespaces kept: a session's modes and subagents' worktrees each seal their own places.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
/// Set once a kept namespace could not be made or joined here: commands go through the launcher
/// from then on.
static UNJOINABLE: AtomicBool = AtomicBool::new(false);

/// From now on every command starts through the launcher, as where joining failed: for the tests
/// of that way, which no machine that can join takes otherwise.
#[doc(hidden)]
pub fn start_each_through_the_launcher() {
    UNJOINABLE.store(true, Ordering::Relaxed);
}

/// The namespace with `seals`' mounts for a command to join: one kept while its places are as
/// they were, else made now. `None`: it cannot be here (the command goes through the launcher).
pub(super) fn namespace(launcher: &Path, seals: &[Seal]) -> Option<Arc<Namespace>> {
    if UNJOINABLE.load(Ordering::Relaxed) {
        return None;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let same = |k: &Kept| k.launcher == launcher && k.seals == seals;
    let sealed = || seals.iter().map(|s| s.path.as_path());
    if let Some(k) = kept.iter().find(|k| same(k) && Mark::all_hold(&k.marks, sealed())) {
        return Some(k.namespace.clone());
    }
    kept.retain(|k| !same(k));
    // Marked before it is made: a place that changes while it is made shows as changed next time.
    let marks: Vec<Mark> = sealed().map(Mark::of).collect();
    // Seals the launcher cannot be told of (a path that is not UTF-8) leave this one unmade.
    let plan =
        Plan { writable: Vec::new(), hidden: Default::default(), network: true, seals: seals.to_vec(), readable: None };
    let plan = serde_json::to_string(&plan).ok()?;
    // One that cannot be made or joined here is not tried again for each command.
    let made = make(launcher, plan);
    if made.is_err() {
        // A yes kept from an earlier start that no longer holds: the next start asks again.
        super::probe::forget();
    }
    let Some(namespace) = made.ok().map(Arc::new).filter(|n| joinable(n).is_ok()) else {
        UNJOINABLE.store(true, Ordering::Relaxed);
        return None;
    };
    super::keep(
        &mut kept,
        Kept { launcher: launcher.to_owned(), seals: seals.to_vec(), marks, namespace: namespace.clone() },
    );
    Some(namespace)
}

/// Starts the launcher holding a namespace with its `plan`'s mounts, keeps its descriptors and
/// lets it end.
fn make(launcher: &Path, plan: String) -> Result<Namespace, String> {
    // No environment: lembas' own (an API key among its variables) would be readable from
    // `/proc` by any command of the person's while the holder lives.
    let mut holder = std::process::Command::new(launcher)
        .args([launcher::ARG, launcher::HOLD])
        .arg(plan)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{} could not be started: {e}", launcher.display()))?;
    let mut said = String::new();
    if let Some(out) = holder.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut said);
    }
    let held = if said.trim_end() == launcher::READY {
        let ns = |kind: &str| std::fs::File::open(format!("/proc/{}/ns/{kind}", holder.id())).map(OwnedFd::from);
        match (ns("user"), ns("mnt")) {
            (Ok(user), Ok(mount)) => Ok(Namespace { user, mount }),
            (Err(e), _) | (_, Err(e)) => Err(format!("the namespace could not be kept: {e}")),
        }
    } else {
        let mut why = String::new();
        if let Some(mut err) = holder.stderr.take() {
            let _ = err.read_to_string(&mut why);
        }
        Err(why.trim().to_owned())
    };
    // Its input ends: it ends.
    drop(holder.stdin.take());
    let _ = holder.wait();
    held
}

/// Whether a new process can join `namespace`: one is started into it to run a program that
/// cannot exist, so that the only way for it to fail with "not found" is to have joined first
/// (a `setns` that is refused fails otherwise) — no program started for the trying.
fn joinable(namespace: &Arc<Namespace>) -> Result<(), String> {
    let mut probe = crate::process::Launch::new(NO_PROGRAM);
    probe.current_dir("/").confine(crate::process::Confinement { namespace: Some(namespace.clone()), rules: None });
    match probe.begin() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("a process could not join the namespace: {e}")),
        Ok(started) => {
            let _ = nix::sys::wait::waitpid(started.pid, None);
            Err(format!("{NO_PROGRAM} was there to start"))
        }
    }
}

/// A path no program lies at (the kernel's own folder has no such entry).
const NO_PROGRAM: &str = "/proc/self/lembas-joining-probe";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_that_cannot_be_joined_is_found_out() {
        // Descriptors of a file that is no namespace: `setns` refuses them, as a filter that
        // refuses `setns` would.
        let null = || OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        let namespace = Arc::new(Namespace { user: null(), mount: null() });
        let why = joinable(&namespace).unwrap_err();
        assert!(why.contains("could not join"), "{why}");
    }

    #[test]
    fn the_holder_is_given_none_of_lembas_environment() {
        if std::env::var_os("HOME").is_none() {
            return;
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (said, holder) = (dir.path().join("environment"), dir.path().join("holder"));
        // A holder that says what it was given, then holds nothing.
        let script =
            format!("#!/bin/sh\nexport -p > '{}'\necho {}\ncat > /dev/null\n", said.display(), launcher::READY);
        std::fs::write(&holder, script).unwrap();
        std::fs::set_permissions(&holder, std::fs::Permissions::from_mode(0o755)).unwrap();
        make(&holder, "{}".to_owned()).unwrap();
        let given = std::fs::read_to_string(&said).unwrap();
        assert!(!given.contains("HOME="), "{given}");
    }
}
