//! A command's process made without copying lembas: `clone(CLONE_VM | CLONE_VFORK)`, the new
//! process running in lembas' own memory, lembas' calling thread waiting until it has become
//! the program (or failed to).
//!
//! `fork` copies the page tables of lembas' ~15 MB and tears the copy down again at `exec`:
//! half a millisecond of a command's step. The standard library starts a process without it
//! (`posix_spawn`) only when nothing is to be done between the two — and a sandboxed command
//! has to join its namespace and restrict itself there. Here the process does those steps
//! itself, made ready beforehand: each is one system call on descriptors and strings made
//! before the clone, nothing allocates, takes a lock or writes memory but its own stack and
//! the one word it reports a failure in. Signals are blocked around the clone and their
//! handlers set back to the default in the new process before they are let in, so that none of
//! lembas' handlers runs there, in lembas' memory. (What the kernel asks of a process joining a
//! user namespace — that it be alone in its thread group and hold its own filesystem state — a
//! process made this way is.)
//!
//! The workspace forbids `unsafe` but for this file (the architecture test holds it there).

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::libc;

/// What the new process does before it becomes the program, everything made ready.
pub(crate) struct Steps<'a> {
    pub program: &'a CStr,
    /// The arguments, the program's name first.
    pub args: &'a [CString],
    /// `NAME=value` each.
    pub env: &'a [CString],
    /// The folder it starts in (absolute where it joins a namespace).
    pub folder: Option<&'a CStr>,
    /// Its standard input, output and error: descriptors 3 and above.
    pub stdio: [RawFd; 3],
    /// A process group of its own.
    pub process_group: bool,
    /// The user and mount namespaces it joins.
    pub namespace: Option<(RawFd, RawFd)>,
    /// The Landlock rules it restricts itself with.
    pub rules: Option<RawFd>,
}

/// A started process: its id and a descriptor that reads as ready when it ends (`None` on a
/// kernel without them, before Linux 5.3).
pub(crate) struct Started {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
}

/// The step of [`Steps`] a process failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
enum Step {
    None = 0,
    ProcessGroup,
    Stdio,
    JoinUser,
    JoinMount,
    Folder,
    NoNewPrivileges,
    Restrict,
    Exec,
}

impl Step {
    fn what(self) -> &'static str {
        match self {
            Step::None | Step::Exec => "the program could not be started",
            Step::ProcessGroup => "no process group of its own",
            Step::Stdio => "its input and output could not be given it",
            Step::JoinUser | Step::JoinMount => "the sandbox's namespace could not be joined",
            Step::Folder => "its folder could not be entered",
            Step::NoNewPrivileges | Step::Restrict => "the sandbox's rules could not be applied",
        }
    }
}

/// What the new process reads, and the one place it writes: the step it failed at, and why.
struct Shared<'a> {
    steps: &'a Steps<'a>,
    args: *const *const libc::c_char,
    env: *const *const libc::c_char,
    failed_step: Step,
    failed_errno: i32,
}

/// The new process' stack: its steps are a few calls deep.
const STACK: usize = 64 * 1024;

/// Starts the program `steps` name. Returns once the new process has become it; a step that
/// failed is the error, the process already gone.
pub(crate) fn start(steps: &Steps) -> std::io::Result<Started> {
    let args: Vec<*const libc::c_char> =
        steps.args.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let env: Vec<*const libc::c_char> =
        steps.env.iter().map(|e| e.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let mut shared = Shared { steps, args: args.as_ptr(), env: env.as_ptr(), failed_step: Step::None, failed_errno: 0 };
    let mut stack = vec![0u8; STACK];
    let mut started = clone_with(&mut shared, &mut stack, libc::CLONE_PIDFD);
    // A kernel that cannot give a descriptor for the process (before Linux 5.2): without it.
    if matches!(&started, Err(e) if e.raw_os_error() == Some(libc::EINVAL)) {
        started = clone_with(&mut shared, &mut stack, 0);
    }
    let started = started?;
    // SAFETY: the new process wrote these before it became the program or ended, and lembas'
    // thread was held until then; read as memory another process wrote.
    let (step, errno) =
        unsafe { (std::ptr::read_volatile(&shared.failed_step), std::ptr::read_volatile(&shared.failed_errno)) };
    if step == Step::None {
        return Ok(started);
    }
    // It has ended: gathered, so that no zombie is left.
    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(started.pid), None);
    let cause = std::io::Error::from_raw_os_error(errno);
    Err(match step {
        // Said as the kernel said it, so that "not found" reads as `NotFound`.
        Step::Exec => cause,
        _ => std::io::Error::new(cause.kind(), format!("{}: {cause}", step.what())),
    })
}

/// `clone` with the new process' stack and `extra` flags, every signal blocked around it.
fn clone_with(shared: &mut Shared, stack: &mut [u8], extra: c_int) -> std::io::Result<Started> {
    let mut pidfd: c_int = -1;
    // SAFETY: `stack` outlives the new process' use of it (lembas' thread waits for its exec or
    // end); `shared` likewise; `run_steps` keeps to what may run in a process sharing lembas'
    // memory (see the module's comment). The signal masks are this thread's, restored after.
    unsafe {
        let top = stack.as_mut_ptr().add(stack.len());
        let top = top.sub(top as usize % 16);
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let pid = libc::clone(
            run_steps,
            top.cast::<c_void>(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | extra,
            std::ptr::from_mut(shared).cast::<c_void>(),
            &mut pidfd as *mut c_int,
        );
        let error = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        if pid < 0 {
            return Err(error);
        }
        let pidfd = (extra & libc::CLONE_PIDFD != 0 && pidfd >= 0).then(|| OwnedFd::from_raw_fd(pidfd));
        Ok(Started { pid, pidfd })
    }
}

/// The new process: the steps, then the program. It never returns.
extern "C" fn run_steps(shared: *mut c_void) -> c_int {
    // SAFETY: `shared` is the `Shared` lembas' waiting thread made; only its two failure words
    // are written. Every call below is one system call through the C library's wrapper.
    unsafe {
        let shared = &mut *shared.cast::<Shared>();
        let steps = shared.steps;
        default_signals();
        if steps.process_group && libc::setpgid(0, 0) != 0 {
            fail(shared, Step::ProcessGroup);
        }
        for (to, from) in steps.stdio.iter().enumerate() {
            if libc::dup2(*from, to as c_int) < 0 {
                fail(shared, Step::Stdio);
            }
        }
        if let Some((user, mount)) = steps.namespace {
            if libc::setns(user, libc::CLONE_NEWUSER) != 0 {
                fail(shared, Step::JoinUser);
            }
            if libc::setns(mount, libc::CLONE_NEWNS) != 0 {
                fail(shared, Step::JoinMount);
            }
        }
        if let Some(folder) = steps.folder
            && libc::chdir(folder.as_ptr()) != 0
        {
            fail(shared, Step::Folder);
        }
        if let Some(rules) = steps.rules {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                fail(shared, Step::NoNewPrivileges);
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, rules, 0) != 0 {
                fail(shared, Step::Restrict);
            }
        }
        libc::execve(steps.program.as_ptr(), shared.args, shared.env);
        fail(shared, Step::Exec)
    }
}

/// In the new process: says which step failed, and why, and ends.
///
/// # Safety
/// For the new process only.
unsafe fn fail(shared: &mut Shared, step: Step) -> ! {
    // SAFETY: the words lembas' waiting thread reads once this process has ended.
    unsafe {
        std::ptr::write_volatile(&mut shared.failed_errno, *libc::__errno_location());
        std::ptr::write_volatile(&mut shared.failed_step, step);
        libc::_exit(127)
    }
}

/// In the new process: every signal lembas handles back to its default (a handler of lembas'
/// must not run here, in lembas' memory), `SIGPIPE` too (lembas ignores it; a command expects
/// it), then every signal let in, as a new program expects.
///
/// # Safety
/// For the new process only, with every signal blocked.
unsafe fn default_signals() {
    // SAFETY: `sigaction` and `sigprocmask` on this process' own state.
    unsafe {
        for signal in 1..libc::SIGRTMAX() {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut now: libc::sigaction = std::mem::zeroed();
            // Signals the C library keeps for itself answer an error: left.
            if libc::sigaction(signal, std::ptr::null(), &mut now) != 0 {
                continue;
            }
            if signal == libc::SIGPIPE || (now.sa_sigaction != libc::SIG_DFL && now.sa_sigaction != libc::SIG_IGN) {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

/// `fd` as a descriptor numbered 3 or above (standard input, output and error are given to the
/// new process by number; one of lembas' own numbered below 3 would be overwritten there).
pub(crate) fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: `fcntl` duplicating a descriptor this function owns; the new one is owned here.
    unsafe {
        let new = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3);
        if new < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(new))
    }
}

/// `pidfd` made a thing the runtime waits on (ready once the process has ended).
pub(crate) fn registered(pidfd: OwnedFd) -> std::io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is open, and names the same descriptor, for as long as it lives, and
    // the `AsyncFd` owns it.
    unsafe { Ok(tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)?) }
}
