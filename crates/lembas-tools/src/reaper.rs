//! Every process a command starts carries a mark in its environment (`LEMBAS_RUN`), so that what
//! escaped the command's process group (`setsid`, a double fork, `nohup … &`) is still found and
//! ended: when a foreground command returns, when a job ends or is stopped, and when lembas
//! exits. A process that clears its whole environment (`env -i`) loses the mark; the sandbox
//! still bounds what it can write.
//!
//! Finding them reads the environment of processes in `/proc`, which grows with the machine's
//! process count (~5 µs each). A mark says where the process ids stood when it was made, so only
//! the processes made since are read: ids are handed out in order, and a command's processes
//! are all made after its mark. When few were made (a command that ran `echo` or `cat` made one
//! or two), each of their ids is asked for by number, and `/proc` is not even listed: the cost
//! no longer grows with the machine's process count. When so many processes were made meanwhile
//! that the ids may have come round past the mark, everything is read, as it is where `/proc`
//! cannot tell.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that carries the mark.
pub const MARK_VAR: &str = "LEMBAS_RUN";

/// Where process ids stood at a moment: the last one handed out in this process' namespace, and
/// how many processes the machine had made since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Since {
    last_pid: u32,
    forks: u64,
}

impl Since {
    /// Now, when `/proc` says (and is this process' own: its ids are the ones listed).
    fn now() -> Option<Since> {
        static OWN_PROC: OnceLock<bool> = OnceLock::new();
        let own = *OWN_PROC.get_or_init(|| {
            std::fs::read_link("/proc/self").ok().and_then(|p| p.to_str()?.parse::<u32>().ok())
                == Some(std::process::id())
        });
        if !own {
            return None;
        }
        let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Some(Since { last_pid: last_pid(&loadavg)?, forks: forks(&stat)? })
    }

    /// The ids that may have been handed out between `self` and `now`: `None` when they may be
    /// any (as many processes made as there are ids, or a count that went back).
    fn span(self, now: Since, pid_max: u32) -> Option<Span> {
        let made = now.forks.checked_sub(self.forks)?;
        // Coming round to the mark again takes nearly `pid_max` new ids; half is a wide margin
        // (the count is the whole machine's, every namespace's forks in it).
        if made >= u64::from(pid_max / 2) {
            return None;
        }
        Some(Span { after: self.last_pid, upto: now.last_pid })
    }
}

/// The process ids handed out after `after` up to `upto`, coming round past the largest id when
/// `upto` is below `after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    after: u32,
    upto: u32,
}

impl Span {
    /// Every id in the span, in order, when there are at most `most` (ids come round to 1
    /// after the largest; 0 is never handed out).
    fn ids(self, most: u32) -> Option<impl Iterator<Item = u32>> {
        let (after, upto) = (self.after, self.upto);
        let count = if upto >= after { upto - after } else { pid_max().checked_sub(after)? + upto };
        (count <= most).then(|| {
            (1..=count).map(move |n| {
                let id = u64::from(after) + u64::from(n);
                if id > u64::from(pid_max()) { (id - u64::from(pid_max())) as u32 } else { id as u32 }
            })
        })
    }

    fn holds(self, pid: u32) -> bool {
        if self.upto >= self.after {
            pid > self.after && pid <= self.upto
        } else {
            pid > self.after || pid <= self.upto
        }
    }
}

/// The last process id handed out, the fifth field of `/proc/loadavg` ("1/110 14475" → 14475).
fn last_pid(loadavg: &str) -> Option<u32> {
    loadavg.split_whitespace().nth(4)?.parse().ok()
}

/// How many processes the machine has made since it started (`/proc/stat`'s `processes` line).
fn forks(stat: &str) -> Option<u64> {
    stat.lines().find_map(|line| line.strip_prefix("processes "))?.trim().parse().ok()
}

/// The largest process id (ids come round after it).
fn pid_max() -> u32 {
    static MAX: OnceLock<u32> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/pid_max").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(32_768)
    })
}

/// Where ids stood when this process made its first mark: nothing it started is older.
static FIRST: OnceLock<Option<Since>> = OnceLock::new();

/// A new mark for one command: this lembas' process id, a count, and where process ids stand
/// now (`.last_pid.forks`, or nothing when `/proc` cannot say). Made before the command starts.
pub fn new_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let since = Since::now();
    FIRST.get_or_init(|| since);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    match since {
        Some(Since { last_pid, forks }) => format!("{}-{count}.{last_pid}.{forks}", std::process::id()),
        None => format!("{}-{count}", std::process::id()),
    }
}

/// The moment a mark was made, read back from it.
fn since_of(mark: &str) -> Option<Since> {
    let mut parts = mark.rsplitn(3, '.');
    let forks = parts.next()?.parse().ok()?;
    let last_pid = parts.next()?.parse().ok()?;
    parts.next()?;
    Some(Since { last_pid, forks })
}

/// Ends (SIGKILL) every process whose mark is `mark`, or starts with it when `prefix`. Answers
/// how many it found.
pub fn end_marked(mark: &str, prefix: bool) -> usize {
    let since = if prefix { FIRST.get().copied().flatten() } else { since_of(mark) };
    // (`/proc` is read for now only when the mark says where ids stood.)
    let span = since.and_then(|then| then.span(Since::now()?, pid_max()));
    let own = std::process::id();
    let needle = format!("{MARK_VAR}={mark}");
    let marked = |pid: u32| {
        let Some(environ) = environ_of(pid) else { return false };
        environ
            .split(|b| *b == 0)
            .any(|var| var.starts_with(needle.as_bytes()) && (prefix || var.len() == needle.len()))
    };
    let candidates: Box<dyn Iterator<Item = u32>> = match span.and_then(|span| span.ids(FEW_IDS)) {
        // Few ids handed out since the mark (a command that ran `echo` or `cat` made one or
        // two): each is asked for by number, however many processes the machine has.
        Some(ids) => Box::new(ids),
        None => {
            let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
            let listed = entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok());
            Box::new(listed.filter(move |pid| span.is_none_or(|span| span.holds(*pid))))
        }
    };
    // An id asked for by number may be a thread's, which `/proc` answers for as its process
    // (even once the process' first thread has ended, when its own id reads as nothing): the
    // process it belongs to is ended, once.
    let mut ended: Vec<u32> = Vec::new();
    for pid in candidates.filter(|pid| *pid != own) {
        if !marked(pid) {
            continue;
        }
        let process = process_of(pid).unwrap_or(pid);
        if process != own && !ended.contains(&process) && kill(Pid::from_raw(process as i32), Signal::SIGKILL).is_ok() {
            ended.push(process);
        }
    }
    ended.len()
}

/// The environment of process (or thread) `id`. A process whose first thread has ended reads
/// as nothing under its own id while its other threads run on: one of theirs is read instead.
fn environ_of(id: u32) -> Option<Vec<u8>> {
    if let Ok(environ) = std::fs::read(format!("/proc/{id}/environ")) {
        return Some(environ);
    }
    let threads = std::fs::read_dir(format!("/proc/{id}/task")).ok()?;
    threads
        .flatten()
        .filter(|thread| thread.file_name() != id.to_string().as_str())
        .find_map(|thread| std::fs::read(thread.path().join("environ")).ok())
}

/// The process `id` belongs to (`Tgid` in its status): itself, or the process of a thread.
fn process_of(id: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{id}/status")).ok()?;
    status.lines().find_map(|line| line.strip_prefix("Tgid:"))?.trim().parse().ok()
}

/// Up to this many ids handed out since a mark are each asked for by number; more, and `/proc`
/// is listed (a listing costs about what this many failed lookups do).
const FEW_IDS: u32 = 64;

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
    // No mark made, no command started: nothing to look for.
    if FIRST.get().is_none() {
        return 0;
    }
    end_marked(&format!("{}-", std::process::id()), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read_for_the_last_id_and_the_count_of_processes_made() {
        assert_eq!(last_pid("0.44 0.81 0.81 1/110 14475\n"), Some(14475));
        assert_eq!(last_pid("0.44 0.81"), None);
        assert_eq!(forks("cpu  1 2 3\nctxt 99\nprocesses 274166\nprocs_running 1\n"), Some(274166));
        assert_eq!(forks("cpu  1 2 3\n"), None);
    }

    #[test]
    fn a_mark_carries_where_ids_stood_and_a_mark_without_it_reads_everything() {
        let mark = new_mark();
        let own = format!("{}-", std::process::id());
        assert!(mark.starts_with(&own), "{mark}");
        if cfg!(target_os = "linux") {
            let since = since_of(&mark).expect("Linux' /proc says where ids stand");
            assert!(since.forks > 0);
        }
        assert_eq!(since_of("12-3"), None);
        assert_eq!(since_of("12-3.400.5000"), Some(Since { last_pid: 400, forks: 5000 }));
    }

    #[test]
    fn only_the_ids_handed_out_since_are_read_unless_they_may_have_come_round() {
        let then = Since { last_pid: 1000, forks: 50 };
        let span = then.span(Since { last_pid: 1010, forks: 70 }, 32_768).unwrap();
        assert!(span.holds(1001) && span.holds(1010));
        assert!(!span.holds(1000) && !span.holds(999) && !span.holds(1011) && !span.holds(1));
        // Round past the largest id: what is above the mark and what is below the last one.
        let round = then.span(Since { last_pid: 20, forks: 60 }, 32_768).unwrap();
        assert!(round.holds(32_000) && round.holds(5) && round.holds(20));
        assert!(!round.holds(21) && !round.holds(1000) && !round.holds(500));
        // Few ids: each asked for by number, round past the largest id too.
        assert_eq!(span.ids(64).unwrap().collect::<Vec<_>>(), (1001..=1010).collect::<Vec<_>>());
        assert!(span.ids(9).is_none(), "more than asked for: /proc is listed");
        let near_top = Span { after: pid_max() - 2, upto: 1 };
        assert_eq!(near_top.ids(64).unwrap().collect::<Vec<_>>(), vec![pid_max() - 1, pid_max(), 1]);
        // As many made as could come round to the mark again: everything is read.
        assert_eq!(then.span(Since { last_pid: 1010, forks: 50 + 16_384 }, 32_768), None);
        // A count that went back (another machine's /proc): everything is read.
        assert_eq!(then.span(Since { last_pid: 1010, forks: 10 }, 32_768), None);
    }

    /// A process whose first thread ended while the others run: its own id reads as nothing in
    /// `/proc`, its threads answer for it. It is found through them, ended, counted once — by
    /// the ids asked for one by one and by the listing of `/proc` alike (tests running beside
    /// this one may make more processes than the few asked for by number).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_whose_first_thread_ended_is_found_through_its_threads_and_ended_once() {
        let mark = new_mark();
        let threads = "import threading, time, ctypes\n\
                       for _ in range(3): threading.Thread(target=time.sleep, args=(30,)).start()\n\
                       print('up', flush=True)\n\
                       ctypes.CDLL(None).pthread_exit(None)";
        let mut child = std::process::Command::new("setsid")
            .args(["python3", "-c", threads])
            .env(MARK_VAR, &mark)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("setsid and python3 are there");
        let mut up = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut up).unwrap();
        assert_eq!(up.trim(), "up");
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(end_marked(&mark, false), 1);
        assert!(child.wait().is_ok());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_that_left_its_group_is_found_through_its_span_and_ended() {
        let mark = new_mark();
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .env(MARK_VAR, &mark)
            .spawn()
            .expect("setsid and sleep are there");
        // Another command's process, made after the mark, is left alone.
        let mut other = std::process::Command::new("sleep").arg("30").env(MARK_VAR, new_mark()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(end_marked(&mark, false), 1);
        assert!(child.wait().is_ok());
        assert!(other.try_wait().unwrap().is_none(), "another mark's process runs on");
        let _ = other.kill();
        let _ = other.wait();
    }
}
