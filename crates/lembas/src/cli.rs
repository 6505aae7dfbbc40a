//! The command line, as clap reads it.

use clap::{Parser, Subcommand};

mod reading;
pub use reading::{mistyped_command, print_as_run, whole_command};

/// Exit statuses, as `--help` states them.
pub mod exit {
    /// The turn ended normally: an answer, or a stop at a step limit.
    pub const OK: u8 = 0;
    /// The turn could not finish: the model server refused or could not be reached after retries.
    pub const FAILED: u8 = 1;
    /// Bad arguments (an unknown model, mode or effort; a missing prompt).
    pub const USAGE: u8 = 2;
    /// Not logged in, or the login could not be made.
    pub const LOGIN: u8 = 3;
    /// `lembas service`: the link stopped for good (a protocol to update, a login to renew).
    pub const LINK_STOPPED: u8 = 4;
    /// Interrupted by Ctrl-C (the session keeps what was answered).
    pub const INTERRUPTED: u8 = 130;
}

const AFTER_HELP: &str = "\
Exit status: 0 the turn ended normally (an answer, or a stop at the step limit); 1 it could not \
finish (the model server refused, or stayed unreachable after retries); 2 bad arguments; 3 not \
logged in or the login failed; 4 (`lembas service`) the link stopped for good; 130 interrupted by \
Ctrl-C.

Everything lembas keeps lives under LEMBAS_HOME when it is set, else in ~/.config/lembas, \
~/.local/share/lembas and ~/.local/state/lembas. An API key for a plain model server can also \
come from LEMBAS_API_KEY.";

#[derive(Debug, Parser)]
#[command(
    name = "lembas",
    version,
    about = "A terminal coding agent. With no command, `lembas` opens the terminal UI in this directory's project.",
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Run one turn headless and print the answer: `lembas -p …` is `lembas run …`, with every
    /// flag `run` takes, in any order, and the prompt from standard input when none is given.
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    #[command(flatten)]
    pub ui: UiArgs,
}

/// How the terminal UI opens (`lembas` with no command).
#[derive(Debug, Default, clap::Args)]
pub struct UiArgs {
    /// Open on this project's most recent session.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,
    /// Open on a stored session by its id (or a unique start of it); with no id, choose one
    /// from a list.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "ID")]
    pub resume: Option<String>,
    /// The model (its id or name); default: a resumed session's own, else the configured one.
    #[arg(long)]
    pub model: Option<String>,
    /// The permission mode: manual, edit, auto or plan.
    #[arg(long)]
    pub mode: Option<String>,
    /// The effort level (one of the model's levels).
    #[arg(long)]
    pub effort: Option<String>,
    /// A first prompt, sent as the UI opens: `lembas "fix the tests"`.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Run one turn in the current directory's project and print the reply.
    #[command(after_help = AFTER_HELP)]
    Run(RunArgs),
    /// The stored sessions.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
        /// One JSON value for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// The notes the agent and you keep: this project's own, and yours for every project.
    Notes {
        #[command(subcommand)]
        action: Option<NotesAction>,
        /// JSON for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// This project's task list (.lembas/tasks.md), which the agent keeps too.
    Tasks {
        #[command(subcommand)]
        action: Option<TasksAction>,
        /// JSON for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// This project's decision log (.lembas/decisions.md), which the agent keeps too.
    Decisions {
        #[command(subcommand)]
        action: Option<DecisionsAction>,
        /// JSON for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// What your LLeMbas server remembers for you, which every session starts with.
    Memory {
        #[command(subcommand)]
        action: Option<MemoryAction>,
        /// JSON for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Knowledge bases: folders of documents the agent searches by meaning and by words.
    Kb {
        #[command(subcommand)]
        action: Option<KbAction>,
        /// JSON for scripts.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Log in to a LLeMbas server or an OpenAI-compatible model server.
    Login(LoginArgs),
    /// Forget the login.
    Logout,
    /// The models the login offers, with their context windows and effort levels.
    Models {
        /// Ask the server again instead of showing what it offered at login.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        json: bool,
    },
    /// Serve the Agent Client Protocol for an editor (Zed's agent_servers, …).
    Serve {
        /// Speak ACP on standard input and output (the only transport today).
        #[arg(long, required = true)]
        stdio: bool,
    },
    /// The MCP servers a session here connects ([mcp_servers.NAME] in config.toml, and a
    /// trusted project's .mcp.json).
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Trust a project, so its own permission rules (.lembas/permissions.json) and MCP servers
    /// (.mcp.json) count.
    Trust {
        /// The project (default: the current directory's).
        path: Option<std::path::PathBuf>,
        /// Take the trust back.
        #[arg(long)]
        revoke: bool,
    },
    /// Keep this computer linked to the LLeMbas server you are logged in to, so that from the
    /// server you can open agent sessions here (in the folders `lembas remote` allows). Runs in
    /// the foreground, logging to the logs folder, until Ctrl-C.
    Service {
        #[command(subcommand)]
        action: Option<ServiceAction>,
    },
    /// What the LLeMbas server may do on this computer: the folders, the widest mode, scheduled
    /// work ([remote] in config.toml).
    Remote {
        #[command(subcommand)]
        action: RemoteAction,
    },
    /// Take back the last turn of a session: every file it changed put back (a file changed
    /// again since is left and named), its messages out of the conversation.
    Undo {
        /// The session (an id or its start; default: this project's last session).
        #[arg(long)]
        session: Option<String>,
        /// One JSON object for scripts: the session, the turn's words, and the files.
        #[arg(long)]
        json: bool,
        /// Put back too the files changed after the turn (by default left as they are and
        /// named): those changes go.
        #[arg(long)]
        overwrite: bool,
    },
    /// Go back to before an earlier turn of a session: the files of it and every later turn put
    /// back (a file changed again since is left and named), those turns out of the
    /// conversation. Without --to, the turns it can go back to.
    Rewind {
        /// The session (an id or its start; default: this project's last session).
        #[arg(long)]
        session: Option<String>,
        /// The turn to go back to before (1: the first listed).
        #[arg(long)]
        to: Option<u32>,
        /// Only the files: the conversation stays.
        #[arg(long, conflicts_with = "conversation")]
        files: bool,
        /// Only the conversation: what the turns changed on disk stays.
        #[arg(long)]
        conversation: bool,
        /// Both, the files and the conversation (the default).
        #[arg(long, conflicts_with_all = ["files", "conversation"])]
        both: bool,
        /// Put back too the files changed after the turns (by default left as they are and
        /// named): those changes go.
        #[arg(long, conflicts_with = "conversation")]
        overwrite: bool,
        /// A new session from before the turn, this one kept as it is (with --conversation,
        /// the files stay as they are). Prints the new session's id.
        #[arg(long, requires = "to", conflicts_with = "files")]
        fork: bool,
        /// One JSON object for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Install a newer lembas from the release source (`--url`, `LEMBAS_UPDATE_URL`, `[update]
    /// url`, or lembas' own releases), its checksum verified, in place of this one.
    Update {
        /// Only say whether a newer lembas is out.
        #[arg(long)]
        check: bool,
        /// The release manifest to read.
        #[arg(long)]
        url: Option<String>,
    },
    /// Remove lembas (its launcher, shell completions and service too).
    Uninstall {
        /// Also delete its settings, login, sessions, snapshots, logs and jobs' output.
        #[arg(long)]
        purge: bool,
        /// Delete without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ServiceAction {
    /// Accept scheduled work from the server on this computer, or not (remote.scheduled).
    Scheduled { switch: Switch },
    /// Keep the link up with the system: a systemd user unit (Linux) or a launchd agent (macOS)
    /// that runs `lembas service` at login and again when it fails.
    Install,
    /// Stop and remove that unit.
    Uninstall,
    /// Whether the unit is installed, and how the link stands.
    Status,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum RemoteAction {
    /// The server, the link's state and what remote work may do here.
    List {
        #[arg(long)]
        json: bool,
    },
    /// The folders remote sessions may open.
    Roots {
        #[command(subcommand)]
        action: RootsAction,
    },
    /// Let the server open sessions here (in the roots).
    Enable,
    /// Refuse every remote session; the computer stays linked.
    Disable,
    /// Accept scheduled work from the server on this computer, or not (remote.scheduled).
    Scheduled { switch: Switch },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum RootsAction {
    /// Let remote sessions open DIR and every folder below it.
    Add { dir: std::path::PathBuf },
    /// Take DIR out of the roots.
    Remove { dir: std::path::PathBuf },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum McpAction {
    /// Connect each server, then say where it stands and list its tools (exit 1 if one failed).
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The model (its id or name); default: the configured one, else the server's default.
    #[arg(long)]
    pub model: Option<String>,
    /// The effort level (one of the model's levels: off, low, medium, high, …).
    #[arg(long)]
    pub effort: Option<String>,
    /// The permission mode: manual, edit, auto or plan.
    #[arg(long)]
    pub mode: Option<String>,
    /// Continue this project's most recent session.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    pub continue_last: bool,
    /// Resume a session by its id (or a unique start of it).
    #[arg(long)]
    pub resume: Option<String>,
    /// Print one JSON event per line instead of the reply (the same as --output-format stream-json).
    #[arg(long)]
    pub json: bool,
    /// What stdout gets: the reply as text; one JSON object at the end (the answer, the session
    /// id, how it ended, the usage); or the engine's events, one JSON object per line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// The answer alone: nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// How long, in seconds, to wait at the end for background jobs the run started; those
    /// still running then are stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub job_wait: u64,
    /// How many agents the session's team may have, the main agent included: MIN-MAX (1-4;
    /// 1-1 is the agent alone).
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_agents)]
    pub agents: Option<(u32, u32)>,
    /// Limit the agent's knowledge searches to this base (repeat for more); default: every base.
    #[arg(long = "kb", value_name = "NAME")]
    pub kb: Vec<String>,
    /// The prompt; `-`, or none with standard input not a terminal, reads it from standard
    /// input.
    #[arg(num_args = 0.., value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

/// `lembas run --output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SessionsAction {
    /// Newest first.
    List,
    /// A session's conversation.
    Show { id: String },
    /// Give a session a title (its id, or a unique start of it).
    Rename { id: String, title: String },
    /// Delete a session and everything kept with it (not while a lembas has it open).
    Delete { id: String },
    /// Sessions by what was said in them.
    Search {
        #[arg(required = true, num_args = 1..)]
        words: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum NotesAction {
    /// The notes, the most recently changed first (this project's and yours).
    List {
        /// Only yours, not this project's.
        #[arg(long)]
        personal: bool,
    },
    /// A note's text.
    Show {
        name: String,
        #[arg(long)]
        personal: bool,
    },
    /// The passages of the notes that hold the most of these words.
    Search {
        #[arg(required = true, num_args = 1..)]
        words: Vec<String>,
        #[arg(long)]
        personal: bool,
    },
    /// Write or change a note in $VISUAL or $EDITOR (made when it is new).
    Edit {
        name: String,
        /// Yours, for every project (default: this project's).
        #[arg(long)]
        personal: bool,
    },
    /// Delete a note.
    Delete {
        name: String,
        #[arg(long)]
        personal: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TasksAction {
    /// The open tasks and those under way (--all: every one).
    List {
        #[arg(long)]
        all: bool,
    },
    /// A task, whole.
    Show { id: String },
    /// A new task (the list is made with the first).
    Add {
        #[arg(required = true, num_args = 1..)]
        title: Vec<String>,
        /// Its text.
        #[arg(long)]
        details: Option<String>,
        /// Who does it (default: person).
        #[arg(long)]
        owner: Option<String>,
    },
    /// Mark a task under way.
    Start { id: String },
    /// Mark a task done.
    Done { id: String },
    /// Drop a task.
    Drop { id: String },
    /// Open a task again.
    Reopen { id: String },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum MemoryAction {
    /// The entries, numbered.
    List,
    /// Remember something.
    Add {
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Change entry N (as listed).
    Change {
        entry: usize,
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Forget entry N (as listed).
    Forget { entry: usize },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum KbAction {
    /// The bases, with what each holds.
    List,
    /// Add folders or files to a base (made when new) and index them.
    Add {
        name: String,
        #[arg(required = true, num_args = 1..)]
        paths: Vec<std::path::PathBuf>,
    },
    /// Take a base out, with its index (the documents stay where they are).
    Remove { name: String },
    /// Index a base again (every base without a name): only what changed is read and embedded.
    Reindex { name: Option<String> },
    /// Search the bases as the agent does.
    Search {
        #[arg(required = true, num_args = 1..)]
        words: Vec<String>,
        /// Only this base.
        #[arg(long)]
        base: Option<String>,
        #[arg(long, default_value_t = 5)]
        limit: usize,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum DecisionsAction {
    /// Every decision, oldest first.
    List,
    /// A decision, whole.
    Show { id: String },
    /// Record a decision (the log is made with the first).
    Add {
        #[arg(required = true, num_args = 1..)]
        title: Vec<String>,
        /// What was decided.
        #[arg(long)]
        decision: String,
        /// Why.
        #[arg(long)]
        why: Option<String>,
        /// The decision it replaces (D2).
        #[arg(long)]
        supersedes: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// The server: a LLeMbas server, or any OpenAI-compatible one (http://127.0.0.1:8080).
    /// Without one, a model server running on this machine is looked for where llama-server
    /// (8080), Ollama (11434), LM Studio (1234) and vLLM (8000) listen, and offered.
    pub url: Option<String>,
    /// Read an API key for the server from standard input.
    #[arg(long, conflicts_with = "token_stdin")]
    pub key_stdin: bool,
    /// Read a LLeMbas device token from standard input (with --server).
    #[arg(long, requires = "server")]
    pub token_stdin: bool,
    /// The LLeMbas server for --token-stdin.
    #[arg(long)]
    pub server: Option<String>,
    /// Print the result as one JSON line.
    #[arg(long)]
    pub json: bool,
}

/// `--agents MIN-MAX` (or one number for both), checked against the bounds.
fn parse_agents(word: &str) -> Result<(u32, u32), String> {
    let number = |w: &str| w.trim().parse::<u32>().map_err(|_| format!("{word:?} is not MIN-MAX (e.g. 1-4)"));
    let (min, max) = match word.split_once('-') {
        Some((min, max)) => (number(min)?, number(max)?),
        None => (number(word)?, number(word)?),
    };
    lembas_core::check_agents(min, max)?;
    Ok((min, max))
}
