//! Landlock: where a command may write, which files it may read, and whether it may use TCP —
//! granted to the calling thread and whatever it starts afterwards.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use landlock::{ABI, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules};

use super::{Hidden, Mark, Sandbox};

/// The Landlock ABI whose write rights the sandbox handles (with truncation and renames across
/// folders). A kernel with less is used as far as it goes.
const WRITE_ABI: ABI = ABI::V3;

/// Files every command may write: the sinks and terminals programs expect.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/shm"];

impl Hidden {
    /// Every place whose files may be read: Landlock only grants, so "all but these folders" is
    /// each entry along the way from `/` to a hidden folder except the folder itself (a link
    /// counts where it lands), and the open places inside. Names stay listable; what a hidden
    /// folder's files say does not. An entry made later in a folder along the way (`/`, the home
    /// folder, `~/.config`, …) is not readable until the grants are worked out again: for each
    /// command, or when one of `along` changed ([`super::ReadGrants`]).
    pub(super) fn readable(&self) -> Vec<PathBuf> {
        self.readable_along().0
    }

    /// The grants, and the folders along the way whose entries they were read from.
    pub(super) fn readable_along(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let hidden: Vec<PathBuf> =
            self.folders.iter().map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())).collect();
        let (mut out, mut along) = (Vec::new(), Vec::new());
        cover(Path::new("/"), &hidden, &mut out, &mut along);
        out.extend(self.open.iter().filter(|o| hidden.iter().any(|h| o.starts_with(h))).cloned());
        (out, along)
    }
}

/// The entries of `dir` that hold nothing hidden, and those along the way into it, recursively;
/// `along` gets each folder whose entries were read.
fn cover(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>, along: &mut Vec<PathBuf>) {
    along.push(dir.to_owned());
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if hidden.contains(&path) {
            continue;
        }
        if hidden.iter().any(|h| h.starts_with(&path)) {
            cover(&path, hidden, out, along);
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

/// Restricts the calling thread (and what it starts) to writing under `writable` and, when
/// `readable` is given, to reading files only there.
pub(super) fn restrict(
    writable: &[PathBuf],
    readable: Option<&[PathBuf]>,
    network: bool,
) -> Result<RulesetStatus, landlock::RulesetError> {
    Ok(rules(writable, readable, network)?.restrict_self()?.ruleset)
}

/// The rules for `sandbox` made ready, for a command that restricts itself as it starts
/// ([`super::joined`]). Kept for the next command with the same grants while the places it may
/// write are the ones they were made for (a rule holds the folder that stood at its path) and
/// its read grants are the very ones kept ([`super::ReadGrants`] hands out new ones when a
/// folder they were read from changed): making them is a sixth of a millisecond.
pub(super) fn ruleset_for(sandbox: &Sandbox) -> Result<Arc<OwnedFd>, String> {
    let writable = sandbox.writable.as_deref().unwrap_or_default();
    let same = |k: &KeptRules| {
        k.network == sandbox.network
            && k.writable == writable
            && Mark::all_hold(&k.marks, writable.iter().map(PathBuf::as_path))
            && match (&k.readable, &sandbox.readable) {
                (None, None) => sandbox.hidden.folders.is_empty(),
                (Some(kept), Some(now)) => Arc::ptr_eq(kept, now),
                _ => false,
            }
    };
    let mut kept = KEPT_RULES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(k) = kept.iter().find(|k| same(k)) {
        return Ok(k.fd.clone());
    }
    // Marked before they are made: a place that changes meanwhile shows as changed next time.
    let marks: Vec<Mark> = writable.iter().map(|w| Mark::of(w)).collect();
    // Grants worked out for this command alone are not kept: the next one's are new too.
    let keep = sandbox.readable.is_some() || sandbox.hidden.folders.is_empty();
    let readable: Option<Arc<[PathBuf]>> = match &sandbox.readable {
        Some(readable) => Some(readable.clone()),
        None => (!sandbox.hidden.folders.is_empty()).then(|| sandbox.hidden.readable().into()),
    };
    let rules = rules(writable, readable.as_deref(), sandbox.network).map_err(|e| format!("Landlock: {e}"))?;
    let fd: Option<OwnedFd> = rules.into();
    let fd = Arc::new(fd.ok_or("Landlock is not enforced")?);
    if keep {
        kept.retain(|k| k.writable != writable || k.network != sandbox.network);
        let readable = sandbox.readable.clone();
        let rules =
            KeptRules { writable: writable.to_vec(), marks, readable, network: sandbox.network, fd: fd.clone() };
        super::keep(&mut kept, rules);
    }
    Ok(fd)
}

/// Rules made ready, with what they were made for.
struct KeptRules {
    writable: Vec<PathBuf>,
    marks: Vec<Mark>,
    readable: Option<Arc<[PathBuf]>>,
    network: bool,
    fd: Arc<OwnedFd>,
}

static KEPT_RULES: Mutex<Vec<KeptRules>> = Mutex::new(Vec::new());

fn rules(
    writable: &[PathBuf],
    readable: Option<&[PathBuf]>,
    network: bool,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
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
    Ok(ruleset)
}
