//! The login's key kept out of lembas' own environment block. `/proc/<pid>/environ` shows the
//! block a process started with, whatever it changes later, and root (or a process with the
//! power to trace lembas) can read it: a key given as `LEMBAS_API_KEY` would stay there for the
//! whole session. So lembas, finding one as it starts (one thread, nothing done yet), starts
//! itself again without it — the same process, the same arguments — and hands the key over on a
//! pipe that the new program reads once and closes. Nothing of it is left in the environment
//! of lembas or of anything it starts.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::sync::OnceLock;

/// The variables lembas reads a key from as it starts.
pub const SECRETS_AT_START: &[&str] = &["LEMBAS_API_KEY"];

/// The variable that names the pipe the secrets were handed over on (its number only).
const HANDED_ON: &str = "LEMBAS_HANDED_ON";

/// The secrets handed over, `NAME`, value.
static HANDED: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// First thing lembas does: takes what an earlier start of itself handed over, or, when the
/// environment holds one of `SECRETS_AT_START`, starts lembas again without it (this returns
/// only if that cannot be done; the key is then read from the environment as before).
pub fn keep_out_of_environment() {
    if let Some(fd) = std::env::var(HANDED_ON).ok().and_then(|n| n.parse::<i32>().ok()) {
        let _ = HANDED.set(take(fd));
        return;
    }
    let present: Vec<(String, String)> = SECRETS_AT_START
        .iter()
        .filter_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()).map(|v| ((*name).to_owned(), v)))
        .collect();
    if present.is_empty() {
        return;
    }
    let Ok((read_end, write_end)) = nix::unistd::pipe() else { return };
    let mut text = String::new();
    for (name, value) in &present {
        text.push_str(name);
        text.push('\0');
        text.push_str(value);
        text.push('\0');
    }
    // A key is a few hundred bytes: the pipe holds it whole, so this never waits.
    if std::fs::File::from(write_end).write_all(text.as_bytes()).is_err() {
        return;
    }
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_default();
    let mut again = std::process::Command::new("/proc/self/exe");
    again.arg0(arg0).args(args).env(HANDED_ON, read_end.as_raw_fd().to_string());
    for (name, _) in &present {
        again.env_remove(name);
    }
    // Only returns when it failed; the pipe's end goes with `read_end`.
    let _ = again.exec();
}

/// Reads what was handed over on `fd` (opened again through `/proc`, which needs no `unsafe`),
/// then closes `fd`, so no program lembas starts inherits it.
fn take(fd: i32) -> Vec<(String, String)> {
    let mut text = String::new();
    if let Ok(mut pipe) = std::fs::File::open(format!("/proc/self/fd/{fd}")) {
        let _ = pipe.read_to_string(&mut text);
    }
    let _ = nix::unistd::close(fd);
    let mut parts = text.split('\0');
    let mut handed = Vec::new();
    while let (Some(name), Some(value)) = (parts.next(), parts.next()) {
        if SECRETS_AT_START.contains(&name) {
            handed.push((name.to_owned(), value.to_owned()));
        }
    }
    handed
}

/// The value of the secret variable `name`: as handed over at start, else from the environment.
pub fn var(name: &str) -> Option<String> {
    if let Some(handed) = HANDED.get() {
        return handed.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    }
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
