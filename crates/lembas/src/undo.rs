//! `lembas undo` and `lembas rewind`: a session's turns taken back from a script — their files
//! put back, their messages out of the conversation — through the same host commands the TUI
//! and ACP send.

use lembas_core::{Command, Event, OpenSession, Said, Start};

use crate::cli::exit;
use crate::{Failure, setup};

/// `lembas undo [--session ID] [--json]`: `ID` (or the current project's last session).
pub async fn undo(session: Option<String>, json: bool) -> Result<u8, Failure> {
    one_command(session, Command::Undo, json).await
}

/// `lembas rewind [--session ID] [--to N] [--files | --conversation] [--json]`: without `--to`,
/// the turns it can go back to.
pub async fn rewind(
    session: Option<String>,
    to: Option<u32>,
    (files_only, conversation_only): (bool, bool),
    json: bool,
) -> Result<u8, Failure> {
    let command = match to {
        Some(to) => Command::Rewind { to, files: !conversation_only, conversation: !files_only },
        None => Command::ReportTurns,
    };
    one_command(session, command, json).await
}

/// Opens the session, sends `command`, prints what answers it, and closes the session.
async fn one_command(session: Option<String>, command: Command, json: bool) -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let host = start.host.clone();
    let id = match session {
        Some(id) => setup::find_session(&host, &id)?,
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
            let root = setup::real_root(&setup::project_root(&cwd));
            let latest = host.sessions(Some(&root.display().to_string()))?.into_iter().next();
            latest.ok_or_else(|| Failure::new(exit::FAILED, "there is nothing to undo in this project"))?.id
        }
    };
    // The session's own project, wherever this runs.
    let record = host.session(&id)?.ok_or_else(|| Failure::new(exit::USAGE, format!("no session {id}")))?;
    let project = start.project(record.project.clone().into())?;
    let model = setup::start_model(&host, &start.login, None, Some(&id), start.config.model.as_deref())?;
    let mode = setup::choose_mode(start.config.mode.as_deref())?;
    let cfg = start.project_session(&project, model, None, mode);
    let opened = host.open(OpenSession { cfg, start: Start::Resume(id.clone()), attended: false })?;
    let (handle, mut events) = (opened.handle, opened.events);
    handle.send(command);
    let mut status = exit::FAILED;
    while let Some(Said { event, .. }) = events.recv().await {
        match event {
            Event::Undone { prompt, files } => {
                if json {
                    out!("{}", serde_json::json!({ "session": id, "prompt": prompt, "files": files }));
                } else {
                    out!("{}", lembas_protocol::undo_said(prompt.as_deref(), &files));
                }
                status = exit::OK;
                break;
            }
            Event::Turns { turns } => {
                if json {
                    out!("{}", serde_json::json!({ "session": id, "turns": turns }));
                } else if turns.is_empty() {
                    out!("No turn of this session can be gone back to.");
                } else {
                    turns.iter().enumerate().for_each(|(i, words)| out!("{:>3}  {words}", i + 1));
                    out!("\n`lembas rewind --to N` goes back to before turn N.");
                }
                status = exit::OK;
                break;
            }
            Event::Error { message } => {
                eprintln!("lembas: {message}");
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
