//! The commands lembas runs for the model, started without copying lembas ([`start`]) and
//! waited on through the descriptor the kernel gives for each (`pidfd`).
//!
//! `tokio::process` starts a process that has anything to do before it becomes the program —
//! a sandboxed command joins its namespace and restricts itself — with `fork`, which copies
//! lembas' page tables for a process that throws them away at once: half a millisecond of
//! every command. [`Launch`] is a command written as `tokio::process::Command` would be; its
//! [`Child`] is waited on, killed and read as tokio's is.

mod start;

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

/// Where one of a command's standard streams comes from or goes.
#[derive(Debug)]
pub enum Io {
    /// `/dev/null`.
    Null,
    /// A pipe whose other end is lembas' ([`Child::stdin`], [`Child::stdout`], …).
    Piped,
    /// This descriptor (a pipe's end lembas reads elsewhere, say).
    Given(OwnedFd),
}

/// Descriptors a command's process takes into its sandbox: the namespace it joins, the rules
/// it restricts itself with. Held until it has started.
#[derive(Debug, Default)]
pub(crate) struct Confinement {
    /// Its user and mount namespaces.
    pub namespace: Option<Arc<crate::sandbox::Namespace>>,
    /// Its Landlock rules.
    pub rules: Option<Arc<OwnedFd>>,
}

/// A command to start: a program, its arguments, its environment (lembas' own, changed), its
/// folder and standard streams.
#[derive(Debug)]
pub struct Launch {
    program: PathBuf,
    args: Vec<OsString>,
    /// Variables set (`Some`) or taken out (`None`) of lembas' own environment.
    env: BTreeMap<OsString, Option<OsString>>,
    folder: Option<PathBuf>,
    stdio: [Io; 3],
    process_group: bool,
    confinement: Confinement,
}

impl Launch {
    pub fn new(program: impl AsRef<OsStr>) -> Launch {
        Launch {
            program: PathBuf::from(program.as_ref()),
            args: Vec::new(),
            env: BTreeMap::new(),
            folder: None,
            stdio: [Io::Null, Io::Null, Io::Null],
            process_group: false,
            confinement: Confinement::default(),
        }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Launch {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Launch {
        self.env.insert(name.as_ref().to_owned(), Some(value.as_ref().to_owned()));
        self
    }

    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Launch {
        self.env.insert(name.as_ref().to_owned(), None);
        self
    }

    pub fn current_dir(&mut self, folder: impl AsRef<Path>) -> &mut Launch {
        self.folder = Some(folder.as_ref().to_owned());
        self
    }

    pub fn stdin(&mut self, io: Io) -> &mut Launch {
        self.stdio[0] = io;
        self
    }

    pub fn stdout(&mut self, io: Io) -> &mut Launch {
        self.stdio[1] = io;
        self
    }

    pub fn stderr(&mut self, io: Io) -> &mut Launch {
        self.stdio[2] = io;
        self
    }

    /// Starts it in a process group of its own (its id the group's).
    pub fn process_group(&mut self) -> &mut Launch {
        self.process_group = true;
        self
    }

    pub(crate) fn confine(&mut self, confinement: Confinement) -> &mut Launch {
        self.confinement = confinement;
        self
    }

    /// Starts it. Must be called within a tokio runtime: its end and its pipes are the
    /// runtime's to wait on.
    pub fn spawn(self) -> std::io::Result<Child> {
        let Begun { pid, pidfd, ours: [stdin, stdout, stderr] } = self.begin()?;
        let mut child = Child { pid, status: None, end: None, stdin: None, stdout: None, stderr: None };
        child.end = Some(match pidfd {
            Some(pidfd) => End::Descriptor(start::registered(pidfd)?),
            None => End::Signal(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?),
        });
        child.stdin = stdin.map(pipe::Sender::from_owned_fd).transpose()?;
        child.stdout = stdout.map(pipe::Receiver::from_owned_fd).transpose()?;
        child.stderr = stderr.map(pipe::Receiver::from_owned_fd).transpose()?;
        Ok(child)
    }

    /// Starts it, outside any runtime: its id, its descriptor and lembas' ends of its pipes.
    pub(crate) fn begin(self) -> std::io::Result<Begun> {
        let program = c_string(runnable(&self.program, self.env.get(OsStr::new("PATH")))?)?;
        let args = std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(c_string)
            .collect::<std::io::Result<Vec<_>>>()?;
        let env = environment(&self.env)?;
        // Joining a mount namespace leaves a process at its root: a relative folder would be
        // taken from there, so it is made whole first.
        let folder = match &self.folder {
            Some(folder) => Some(c_string(std::path::absolute(folder)?)?),
            None if self.confinement.namespace.is_some() => Some(c_string(std::env::current_dir()?)?),
            None => None,
        };
        let [stdin, stdout, stderr] = self.stdio;
        let (theirs_in, ours_in) = ends(stdin, true)?;
        let (theirs_out, ours_out) = ends(stdout, false)?;
        let (theirs_err, ours_err) = ends(stderr, false)?;
        let confinement = &self.confinement;
        let steps = start::Steps {
            program: &program,
            args: &args,
            env: &env,
            folder: folder.as_deref(),
            stdio: [theirs_in.as_raw_fd(), theirs_out.as_raw_fd(), theirs_err.as_raw_fd()],
            process_group: self.process_group,
            namespace: confinement.namespace.as_ref().map(|n| (n.user.as_raw_fd(), n.mount.as_raw_fd())),
            rules: confinement.rules.as_ref().map(|rules| rules.as_raw_fd()),
        };
        let started = start::start(&steps)?;
        Ok(Begun { pid: Pid::from_raw(started.pid), pidfd: started.pidfd, ours: [ours_in, ours_out, ours_err] })
    }
}

/// A process started by [`Launch::begin`].
pub(crate) struct Begun {
    pub pid: Pid,
    pidfd: Option<OwnedFd>,
    ours: [Option<OwnedFd>; 3],
}

fn c_string(text: impl AsRef<OsStr>) -> std::io::Result<CString> {
    CString::new(text.as_ref().as_bytes()).map_err(|_| std::io::Error::other("a NUL byte in a command's text"))
}

/// `program` as the path it is started from: found on `PATH` (the command's own where it is
/// given one) when it is a bare name, as the new process cannot look for it.
fn runnable(program: &Path, path: Option<&Option<OsString>>) -> std::io::Result<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Ok(program.to_owned());
    }
    let path = match path {
        Some(given) => given.clone(),
        None => std::env::var_os("PATH"),
    };
    on_path(program, path.as_deref()).ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// The first file named `program` in the folders of `path` that may be run.
pub(crate) fn on_path(program: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    let runnable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    path.into_iter().flat_map(std::env::split_paths).map(|folder| folder.join(program)).find(|p| runnable(p))
}

/// lembas' environment with `changes` made, as `NAME=value` lines.
fn environment(changes: &BTreeMap<OsString, Option<OsString>>) -> std::io::Result<Vec<CString>> {
    let kept = std::env::vars_os().filter(|(name, _)| !changes.contains_key(name));
    let set = changes.iter().filter_map(|(name, value)| Some((name.clone(), value.clone()?)));
    kept.chain(set)
        .map(|(name, value)| {
            let mut line = name.into_vec();
            line.push(b'=');
            line.extend(value.as_bytes());
            CString::new(line).map_err(|_| std::io::Error::other("a NUL byte in a command's environment"))
        })
        .collect()
}

/// A stream's two ends: the new process' (numbered 3 or above), and lembas' where it is piped.
fn ends(io: Io, input: bool) -> std::io::Result<(OwnedFd, Option<OwnedFd>)> {
    let (theirs, ours) = match io {
        Io::Null => {
            let null = std::fs::OpenOptions::new().read(input).write(!input).open("/dev/null")?;
            (OwnedFd::from(null), None)
        }
        Io::Piped => {
            let (reader, writer) = std::io::pipe()?;
            if input {
                (OwnedFd::from(reader), Some(OwnedFd::from(writer)))
            } else {
                (OwnedFd::from(writer), Some(OwnedFd::from(reader)))
            }
        }
        Io::Given(fd) => (fd, None),
    };
    Ok((start::above_stdio(theirs)?, ours))
}

/// A started command.
#[derive(Debug)]
pub struct Child {
    pid: Pid,
    /// How it ended, once gathered.
    status: Option<ExitStatus>,
    /// What tells that it ended; `None` only while it is made.
    end: Option<End>,
    pub stdin: Option<pipe::Sender>,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
}

/// What tells lembas a command ended.
#[derive(Debug)]
enum End {
    /// Its descriptor, ready once it has.
    Descriptor(AsyncFd<OwnedFd>),
    /// A kernel without one: every `SIGCHLD`, each a reason to look.
    Signal(tokio::signal::unix::Signal),
}

impl Child {
    /// Its process id, until it has been gathered.
    pub fn id(&self) -> Option<u32> {
        self.status.is_none().then_some(self.pid.as_raw() as u32)
    }

    /// How it ended, if it has.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = gather(self.pid)?;
        }
        Ok(self.status)
    }

    /// Waits for it to end. Its input is closed first, as `tokio::process` does, so that a
    /// command reading it to its end can.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        drop(self.stdin.take());
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match self.end.as_mut() {
                Some(End::Descriptor(fd)) => {
                    let mut ready = fd.readable().await?;
                    self.status = gather(self.pid)?;
                    if self.status.is_none() {
                        ready.clear_ready();
                    }
                }
                Some(End::Signal(signal)) => {
                    signal.recv().await;
                }
                None => return Err(std::io::Error::other("a command's end cannot be waited for")),
            }
        }
    }

    /// Kills it (`SIGKILL`) and waits for it.
    pub async fn kill(&mut self) -> std::io::Result<()> {
        if self.try_wait()?.is_none() {
            match nix::sys::signal::kill(self.pid, Signal::SIGKILL) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.wait().await.map(drop)
    }
}

impl Drop for Child {
    /// One dropped while it runs is gathered when it ends (its task stopped, say), so that it
    /// leaves no zombie behind.
    fn drop(&mut self) {
        if !matches!(self.try_wait(), Ok(None)) {
            return;
        }
        let pid = self.pid;
        match (self.end.take(), tokio::runtime::Handle::try_current()) {
            (Some(End::Descriptor(fd)), Ok(runtime)) => {
                runtime.spawn(async move {
                    let _ = fd.readable().await;
                    let _ = waitpid(pid, None);
                });
            }
            _ => {
                let _ = std::thread::Builder::new()
                    .name("gather-command".into())
                    .spawn(move || while let Err(Errno::EINTR) = waitpid(pid, None) {});
            }
        }
    }
}

/// How `pid`, lembas' own child, ended; `None` while it runs.
fn gather(pid: Pid) -> std::io::Result<Option<ExitStatus>> {
    loop {
        return match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => Ok(Some(ExitStatus::from_raw(code << 8))),
            Ok(WaitStatus::Signaled(_, signal, core)) => {
                Ok(Some(ExitStatus::from_raw(signal as i32 | if core { 0x80 } else { 0 })))
            }
            Ok(_) => Ok(None),
            Err(Errno::EINTR) => continue,
            Err(e) => Err(e.into()),
        };
    }
}

#[cfg(test)]
mod tests;
