//! Whether the launcher can make namespaces on this machine, remembered between starts.
//!
//! Finding out means starting the launcher and waiting for it (~1 ms, ~0.7 ms of CPU) on every
//! start of lembas — on two cores, time the first request waited for. The answer changes only
//! with what decides it, so a yes is kept in lembas' state folder beside what it held for: this
//! boot of the kernel, the user, the user and mount namespaces lembas runs in (a container is
//! another), the launcher's file (a new lembas is another) and the kernel's settings for user
//! namespaces. While all of those are the same the launcher is not started; any change, and it
//! is asked again. A no is never kept (it is asked again on each start, as before), and a kept
//! yes that proves wrong — a namespace that then cannot be made — is forgotten at once
//! ([`forget`]). lembas' state folder is one no command can read or write (the sandbox hides
//! it), and a yes that was wrong could only make commands fail to start, never widen what they
//! may do.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file a yes is kept in, given at start.
static KEPT_IN: OnceLock<PathBuf> = OnceLock::new();

/// Keeps this process' answer in `file` (lembas' state folder).
pub(super) fn keep_in(file: PathBuf) {
    let _ = KEPT_IN.set(file);
}

/// The kernel's settings that decide whether a user may make user namespaces.
const SETTINGS: &[&str] = &[
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
];

/// What a kept yes holds for, as text; `None` where it cannot be told (no yes is kept then).
fn circumstances(launcher: &Path) -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = |kind: &str| std::fs::read_link(format!("/proc/self/ns/{kind}")).ok();
    let (user_ns, mount_ns) = (namespace("user")?, namespace("mnt")?);
    let file = std::fs::metadata(launcher).ok()?;
    let mut text = format!(
        "boot {}\nuser {}\nnamespaces {} {}\nlauncher {} {} {} {} {}.{}\n",
        boot.trim(),
        nix::unistd::geteuid(),
        user_ns.display(),
        mount_ns.display(),
        launcher.display(),
        file.dev(),
        file.ino(),
        file.len(),
        file.mtime(),
        file.mtime_nsec(),
    );
    for setting in SETTINGS {
        if let Ok(value) = std::fs::read_to_string(setting) {
            text.push_str(&format!("{setting} {}\n", value.trim()));
        }
    }
    Some(text)
}

/// Whether `launcher` can make namespaces here: a yes kept in `kept_in` for the same
/// circumstances, else `ask` (which starts it), a yes kept for next time.
pub(super) fn answer(launcher: &Path, ask: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    answer_kept_in(KEPT_IN.get().map(PathBuf::as_path), launcher, ask)
}

fn answer_kept_in(
    kept_in: Option<&Path>,
    launcher: &Path,
    ask: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    let Some(file) = kept_in else { return ask() };
    let now = circumstances(launcher);
    if let Some(now) = &now
        && std::fs::read_to_string(file).is_ok_and(|kept| kept == *now)
    {
        return Ok(());
    }
    let answer = ask();
    match (&answer, now) {
        (Ok(()), Some(now)) => {
            if let Some(folder) = file.parent() {
                let _ = std::fs::create_dir_all(folder);
            }
            let _ = std::fs::write(file, now);
        }
        // A no, or a yes that cannot be told again: nothing kept.
        _ => {
            let _ = std::fs::remove_file(file);
        }
    }
    answer
}

/// Forgets a kept yes: a namespace could not be made after all.
pub(super) fn forget() {
    if let Some(file) = KEPT_IN.get() {
        let _ = std::fs::remove_file(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yes_is_kept_for_the_same_circumstances_and_a_no_never() {
        let dir = tempfile::tempdir().unwrap();
        let (file, launcher) = (dir.path().join("state/launcher-can-make-namespaces"), dir.path().join("launcher"));
        std::fs::write(&launcher, "one").unwrap();
        let asked = std::cell::Cell::new(0);
        let ask = |answer: Result<(), String>| {
            asked.set(asked.get() + 1);
            answer
        };
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Ok(()))).is_ok());
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Err("no".into()))).is_ok());
        assert_eq!(asked.get(), 1, "the kept yes answers the second time");

        // Another launcher (a new lembas): asked again, and its no is not kept.
        std::fs::write(&launcher, "a longer one").unwrap();
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Err("no".into()))).is_err());
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Err("no".into()))).is_err());
        assert_eq!(asked.get(), 3);
        assert!(!file.exists());

        // Kept again, then a kept yes that no longer holds for what it says is asked again.
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Ok(()))).is_ok());
        let kept = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, kept.replace("boot ", "boot another-")).unwrap();
        assert!(answer_kept_in(Some(&file), &launcher, || ask(Ok(()))).is_ok());
        assert_eq!(asked.get(), 5);
        // Without a place to keep it, every start asks.
        assert!(answer_kept_in(None, &launcher, || ask(Ok(()))).is_ok());
        assert_eq!(asked.get(), 6);
    }
}
