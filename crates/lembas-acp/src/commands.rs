//! lembas' own commands in an editor: offered with `available_commands_update`, typed as a prompt
//! (`/compact`), and run through the same host commands as the terminal's. Each is answered by
//! the event that says it was done, shown to the person as the agent's words.

use agent_client_protocol::v1::schema::{AvailableCommand, AvailableCommandsUpdate, SessionUpdate};
use lembas_protocol::{Command, Event, Mode, ServerState};

/// The commands an editor offers, and what each does.
pub const COMMANDS: &[(&str, &str)] = &[
    ("compact", "Summarise the conversation so far, to free the context window"),
    ("undo", "Take back the last turn and put back the files it changed"),
    ("overwrite", "Put back what /undo or /rewind left because it changed after the turn (those changes go)"),
    ("rewind", "List the turns to go back to; /rewind N goes back to before turn N, files and conversation"),
    ("context", "Show what fills the context window"),
    ("mcp", "Show where the MCP servers stand"),
    ("plan", "Plan mode: read and plan, change nothing until the plan is approved; /plan TASK plans that task"),
];

/// The update that tells an editor which commands there are.
pub fn offered() -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
        COMMANDS.iter().map(|(name, description)| AvailableCommand::new(*name, *description)).collect(),
    ))
}

/// What a prompt asks when it is one of the commands: the host command to send, and what kind
/// of event will say it is done.
pub fn parse(prompt: &str) -> Option<(Command, Awaited)> {
    let mut words = prompt.trim().strip_prefix('/')?.split_whitespace();
    let name = words.next()?;
    match name {
        "rewind" => match words.next().map(str::parse::<u32>) {
            None => Some((Command::ReportTurns, Awaited::Turns)),
            Some(Ok(to)) => Some((Command::Rewind { to, files: true, conversation: true }, Awaited::Undone)),
            // Not a number: words for the model, as any other prompt.
            Some(Err(_)) => None,
        },
        "compact" => Some((Command::Compact, Awaited::Compacted)),
        "undo" => Some((Command::Undo, Awaited::Undone)),
        "overwrite" => Some((Command::OverwriteKept, Awaited::Undone)),
        "context" => Some((Command::ReportContext, Awaited::Context)),
        "mcp" => Some((Command::ReportMcp, Awaited::Mcp)),
        // `/plan` alone is an action; with a task it is a prompt ([`plan_task`]).
        "plan" if words.next().is_none() => Some((Command::SetMode { mode: Mode::Plan }, Awaited::Mode)),
        _ => None,
    }
}

/// The task of `/plan TASK`: a prompt to run in plan mode (`acp.md` *Notes*).
pub fn plan_task(prompt: &str) -> Option<&str> {
    let rest = prompt.trim_start().strip_prefix("/plan")?;
    let task = rest.trim();
    (rest.starts_with(char::is_whitespace) && !task.is_empty()).then_some(task)
}

/// The event a command waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaited {
    Compacted,
    Undone,
    Turns,
    Context,
    Mcp,
    Mode,
}

impl Awaited {
    /// Whether `event` ends the command, and what to tell the person then (an error was already
    /// said as the agent's words, so it adds nothing).
    pub fn ended_by(self, event: &Event) -> Option<String> {
        match (self, event) {
            (_, Event::Error { .. }) => Some(String::new()),
            (Awaited::Compacted, Event::Compacted { .. }) => Some("Compacted the conversation.".into()),
            (Awaited::Undone, Event::Undone { prompt, later, files }) => {
                let mut said = lembas_protocol::undo_said(prompt.as_deref(), *later, files);
                if !files.kept.is_empty() {
                    said.push_str(" /overwrite puts them back as they were before the turn.");
                }
                Some(said)
            }
            (Awaited::Turns, Event::Turns { turns }) => Some(lembas_protocol::turns_said(turns, |_| None)),
            (Awaited::Context, Event::Context { window, shares, offer, cache_miss }) => {
                let used: u64 = shares.iter().map(|s| s.tokens).sum();
                let whole =
                    if *window == 0 { "a window of unknown size".to_owned() } else { format!("{window} tokens") };
                let mut lines = vec![format!("Context: {used} tokens of {whole}.")];
                lines.extend(shares.iter().map(|s| format!("- {}: {} tokens", s.category, s.tokens)));
                lines.extend(offer.iter().map(|o| format!("({o})")));
                lines.extend(cache_miss.iter().cloned());
                Some(lines.join("\n"))
            }
            (Awaited::Mode, Event::Mode { mode }) => Some(format!("Mode: {}.", mode.as_str())),
            (Awaited::Mcp, Event::McpServers { servers }) if servers.is_empty() => {
                Some("No MCP servers are connected to this session.".into())
            }
            (Awaited::Mcp, Event::McpServers { servers }) => Some(
                servers
                    .iter()
                    .map(|s| match &s.state {
                        ServerState::Connecting => format!("- {}: connecting", s.name),
                        ServerState::Ready { tools } => format!("- {}: connected, {tools} tools", s.name),
                        ServerState::Failed { reason } => format!("- {}: not connected: {reason}", s.name),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    }
}
