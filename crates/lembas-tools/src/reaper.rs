//! Every process a command starts carries a mark in its environment (`LEMBAS_RUN`), so that what
//! escaped the command's process group (`setsid`, a double fork, `nohup … &`) is still found and
//! ended: when a foreground command returns, when a job ends or is stopped, and when lembas
//! exits. A process that clears its whole environment (`env -i`) loses the mark; the sandbox
//! still bounds what it can write.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that carries the mark.
pub const MARK_VAR: &str = "LEMBAS_RUN";

/// A new mark for one command: this lembas' process id and a count.
pub fn new_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Ends (SIGKILL) every process whose mark is `mark`, or starts with it when `prefix`. Answers
/// how many it found.
pub fn end_marked(mark: &str, prefix: bool) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let own = std::process::id();
    let needle = format!("{MARK_VAR}={mark}");
    let mut ended = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == own {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        let marked = environ
            .split(|b| *b == 0)
            .any(|var| var.starts_with(needle.as_bytes()) && (prefix || var.len() == needle.len()));
        if marked && kill(Pid::from_raw(pid as i32), Signal::SIGKILL).is_ok() {
            ended += 1;
        }
    }
    ended
}

/// Ends (SIGKILL) what one command started: its process group, and every process carrying its
/// mark (those that left the group).
pub(crate) fn end_command(pgid: Option<Pid>, mark: Option<&str>) {
    if let Some(pgid) = pgid {
        let _ = nix::sys::signal::killpg(pgid, Signal::SIGKILL);
    }
    if let Some(mark) = mark {
        end_marked(mark, false);
    }
}

/// Ends every process any command of this lembas started (at exit).
pub fn end_all() -> usize {
    end_marked(&format!("{}-", std::process::id()), true)
}
