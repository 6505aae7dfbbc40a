//! `lembas undo` and `lembas rewind`: a session's turns taken back from a script — their files
//! put back, their messages out of the conversation — through the same host commands the TUI
//! and ACP send.

use lembas_core::{Command, Event, OpenSession, Said, Start};

use crate::cli::exit;
use crate::{Failure, resuming, setup};

/// `lembas undo [--session ID] [--json]`: `ID` (or the current project's last session).
pub async fn undo(session: Option<String>, json: bool, overwrite: bool) -> Result<u8, Failure> {
    one_command(session, Command::Undo, json, overwrite).await
}

/// How `lembas rewind` goes back: one part alone, and whether to a new session.
pub struct How {
    pub files_only: bool,
    pub conversation_only: bool,
    pub fork: bool,
    pub overwrite: bool,
}

/// `lembas rewind [--session ID] [--to N] [--files | --conversation | --both] [--fork] [--json]`:
/// without `--to`, the turns it can go back to.
pub async fn rewind(session: Option<String>, to: Option<u32>, how: How, json: bool) -> Result<u8, Failure> {
    let command = match to {
        Some(to) if how.fork => Command::Fork { to, files: !how.conversation_only },
        Some(to) => Command::Rewind { to, files: !how.conversation_only, conversation: !how.files_only },
        None => Command::ReportTurns,
    };
    one_command(session, command, json, how.overwrite).await
}

/// Opens the session, sends `command`, prints what answers it, and closes the session. With
/// `overwrite`, what an undo left because it changed after the turn is put back next.
async fn one_command(session: Option<String>, command: Command, json: bool, overwrite: bool) -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let host = start.host.clone();
    let id = match session {
        Some(id) => resuming::find_session(&host, &id)?,
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
            let root = setup::real_root(&setup::project_root(&cwd));
            let latest = host.latest_session(&root.display().to_string())?;
            latest.ok_or_else(|| Failure::new(exit::FAILED, "there is nothing to undo in this project"))?
        }
    };
    // The session's own project, wherever this runs.
    let record = host.session(&id)?.ok_or_else(|| Failure::new(exit::USAGE, format!("no session {id}")))?;
    let project = start.project(record.project.clone().into())?;
    let model = resuming::start_model(&host, &start.login, None, Some(&id), start.config.model.as_deref())?;
    let mode = setup::choose_mode(start.config.mode.as_deref())?;
    let cfg = start.project_session(&project, model, None, mode);
    let opened = host.open(OpenSession { cfg, start: Start::Resume(id.clone()), attended: false })?;
    let (handle, mut events) = (opened.handle, opened.events);
    handle.send(command);
    let mut status = exit::FAILED;
    let mut first: Option<serde_json::Value> = None;
    while let Some(Said { event, .. }) = events.recv().await {
        match event {
            Event::Undone { prompt, later, files } if first.is_none() => {
                if !json {
                    out!("{}", lembas_protocol::undo_said(prompt.as_deref(), later, &files));
                }
                let kept = !files.kept.is_empty();
                first = Some(serde_json::json!({ "session": id, "prompt": prompt, "later": later, "files": files }));
                status = exit::OK;
                if overwrite && kept {
                    handle.send(Command::OverwriteKept);
                    continue;
                }
                if json {
                    out!("{}", first.take().unwrap_or_default());
                }
                break;
            }
            // The second answer: what was overwritten.
            Event::Undone { files, .. } => {
                match (json, first.take()) {
                    (true, Some(mut said)) => {
                        said["overwritten"] = serde_json::json!(files);
                        out!("{said}");
                    }
                    _ => out!(
                        "Overwritten, as asked: {}.",
                        files.put_back.iter().chain(&files.removed).cloned().collect::<Vec<_>>().join(", ")
                    ),
                }
                break;
            }
            Event::Forked { id: fork, prompt, files } => {
                if json {
                    out!("{}", serde_json::json!({ "session": id, "fork": fork, "prompt": prompt, "files": files }));
                } else {
                    out!(
                        "{}\nThe new session: {fork} (`lembas --resume {fork}` goes on in it).",
                        lembas_protocol::fork_said(&prompt, &files)
                    );
                }
                status = exit::OK;
                break;
            }
            Event::Turns { turns } => {
                if json {
                    out!("{}", serde_json::json!({ "session": id, "turns": turns }));
                } else {
                    print_turns(&turns);
                }
                status = exit::OK;
                break;
            }
            Event::Error { message } => {
                eprintln!("lembas: {message}");
                status = exit::FAILED;
                break;
            }
            _ => {}
        }
    }
    handle.send(Command::Close { wait_for_jobs: None });
    handle.close().await;
    start.finish(Some(&project)).await;
    Ok(status)
}

/// The turns as a list a person reads, with the local time each began.
fn print_turns(turns: &[lembas_protocol::TurnPoint]) {
    let when = |at| {
        let at = chrono::DateTime::from_timestamp_millis(at)?;
        Some(at.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
    };
    out!("{}", lembas_protocol::turns_said(turns, when));
    if !turns.is_empty() {
        out!("\n`lembas rewind --to N` goes back to before turn N; `--fork` to a new session from there.");
    }
}
