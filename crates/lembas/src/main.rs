//! `lembas`: the command-line front end. It only parses what the person typed, drives the
//! engine through its public API, and renders the engine's events.

/// A line on stdout that ends lembas quietly when whoever read stdout has gone (`lembas
/// sessions | head -1`), instead of the panic `println!` gives.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            crate::stdout_failed(e);
        }
    }};
}

mod cli;
mod kb;
mod login;
mod mcp;
mod memory;
mod notes;
mod project;
mod remote;
mod resuming;
mod run;
mod serve;
mod service;
mod sessions;
mod setup;
mod share;
mod trusting;
mod tui;
mod undo;
mod uninstall;
mod update;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, exit};

/// An error that ends the command: one line on stderr, and its exit status.
#[derive(Debug)]
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    pub fn new(status: u8, message: impl Into<String>) -> Self {
        Failure { status, message: message.into() }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(exit::FAILED, e.to_string())
    }
}

/// `1 model`, `2 models`.
pub(crate) fn count(n: usize, thing: &str) -> String {
    if n == 1 { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// stdout failed: a reader that closed its end is no error (the exit a shell expects of a
/// program cut off by `head`); anything else is said on stderr.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("lembas: cannot write to stdout: {e}");
    std::process::exit(i32::from(exit::FAILED));
}

fn main() -> ExitCode {
    // Started again as the sandbox's launcher for one command: that, and nothing else.
    lembas_tools::sandbox::launcher::run_if_asked();
    // A key given as LEMBAS_API_KEY is moved out of lembas' own environment block, where
    // `/proc/<pid>/environ` would show it for the whole session (lembas starts itself again).
    lembas_sys::handed::keep_out_of_environment();
    // Nothing lembas starts may read its memory or environment (`/proc/<pid>/environ`, `mem`,
    // `fd`), nor may a crash leave a core file with the login's key in it.
    let _ = nix::sys::prctl::set_dumpable(false);
    let args = cli::print_as_run(std::env::args_os().collect());
    if let Some(command) = cli::mistyped_command(&args) {
        let word = args[1].to_string_lossy();
        eprintln!("lembas: no command '{word}'; did you mean '{command}'? (As a prompt: lembas -- {word})");
        return ExitCode::from(exit::USAGE);
    }
    let cli = Cli::parse_from(args);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lembas: cannot start: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            // A `-p` that `print_as_run` could not read as `run` (inside a cluster such as `-cp`).
            None if cli.print => Err(Failure::new(exit::USAGE, "-p stands for `lembas run`: give it on its own")),
            None => tui::tui(cli.ui).await,
            Some(Command::Run(args)) => run::run(args).await,
            Some(Command::Sessions { action, json }) => sessions::sessions(action, json),
            Some(Command::Notes { action, json }) => notes::notes(action, json),
            Some(Command::Tasks { action, json }) => project::tasks(action, json),
            Some(Command::Decisions { action, json }) => project::decisions(action, json),
            Some(Command::Kb { action, json }) => kb::kb(action, json).await,
            Some(Command::Memory { action, json }) => memory::memory(action, json).await,
            Some(Command::Login(args)) => login::login(args).await,
            Some(Command::Logout) => login::logout(),
            Some(Command::Models { refresh, json }) => login::models(refresh, json).await,
            Some(Command::Trust { path, revoke }) => trust(path, revoke),
            Some(Command::Serve { stdio: _ }) => serve::serve().await,
            Some(Command::Mcp { action: cli::McpAction::List { json } }) => mcp::list(json).await,
            Some(Command::Service { action }) => remote::service(action).await,
            Some(Command::Remote { action }) => remote::remote(action),
            Some(Command::Undo { session, json, overwrite }) => undo::undo(session, json, overwrite).await,
            Some(Command::Rewind { session, to, files, conversation, both: _, overwrite, fork, json }) => {
                let how = undo::How { files_only: files, conversation_only: conversation, fork, overwrite };
                undo::rewind(session, to, how, json).await
            }
            Some(Command::Update { check, url }) => update::update(url, check).await,
            Some(Command::Uninstall { purge, yes }) => uninstall::uninstall(purge, yes),
            Some(Command::Completions { shell }) => {
                clap_complete::generate(shell, &mut cli::whole_command(), "lembas", &mut std::io::stdout());
                Ok(exit::OK)
            }
        }
    });
    // Nothing a command started outlives lembas (jobs, and what escaped their process groups).
    drop(runtime);
    lembas_tools::reaper::end_all();
    match result {
        Ok(status) => ExitCode::from(status),
        Err(failure) => {
            eprintln!("lembas: {}", failure.message);
            ExitCode::from(failure.status)
        }
    }
}

/// `lembas trust [PATH] [--revoke]`.
fn trust(path: Option<std::path::PathBuf>, revoke: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let dir = match path {
        Some(p) => p,
        None => {
            std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?
        }
    };
    let root = setup::project_root(
        &std::fs::canonicalize(&dir).map_err(|e| Failure::new(exit::USAGE, format!("{}: {e}", dir.display())))?,
    );
    let mut trust = lembas_config::Trust::load(&home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    trust.set(&root, !revoke);
    trust.save(&home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    out!("{} {}.", if revoke { "No longer trusting" } else { "Trusting" }, root.display());
    if !revoke {
        for line in crate::trusting::turns_on(&root) {
            out!("  - {line}");
        }
    }
    Ok(exit::OK)
}
