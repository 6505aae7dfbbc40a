//! Undo: the last turn the person started is taken back — the files lembas' own tools changed
//! in it are put back as they were, and its messages leave the conversation (`context.md` §2:
//! after an undo its results are gone from what is sent; nothing before it changes, so the
//! prompt cache still holds up to there).
//!
//! How: when a turn the person started begins, the store marks where (a checkpoint with the
//! engine's state); before a file tool changes a file, the file as it was is kept once per turn.
//! Commands (`bash`) are not followed: what a command changed stays, and the undo says so.

use std::path::PathBuf;

use lembas_model::Message;

use crate::history::Entry;
use crate::session::{Session, State};
use crate::{EngineError, Event, now_ms};

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The person's words that started the turn taken back (a front end offers them again).
    pub prompt: String,
    /// The files put back, as the person reads them.
    pub files: Vec<String>,
    /// The turn ran commands, whose effects an undo does not reach.
    pub ran_commands: bool,
}

impl Session {
    /// Marks where a turn the person started begins.
    pub(crate) fn mark_turn(&mut self) -> Result<(), EngineError> {
        let seq = self.cfg.store.checkpoint(&self.id, self.history.len(), &self.state_value())?;
        self.turn_seq = Some(seq);
        Ok(())
    }

    /// Before a call changes files: keeps each as it is now, the first time this turn touches it.
    /// A subagent keeps them in its parent's turn (an undo there takes its changes back too); one
    /// in a worktree of its own changes nothing of the project's.
    pub(crate) fn back_up(&self, tool: &str, paths: &[PathBuf]) {
        // The tools whose changes an undo puts back: those that change files.
        if !lembas_spec::tool(tool).is_some_and(|t| t.changes_files()) {
            return;
        }
        let (session, seq) = match &self.subagent {
            Some(of) => match (&of.backup_to, of.in_worktree) {
                (Some((parent, seq)), false) => (parent.as_str(), *seq),
                _ => return,
            },
            None => match self.turn_seq {
                Some(seq) => (self.id.as_str(), seq),
                None => return,
            },
        };
        for path in paths {
            let real = self.ws.real_path(path);
            let before = match std::fs::read(&real) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                // Not a file lembas could change (a folder, unreadable): nothing to keep.
                Err(_) => continue,
            };
            let _ = self.cfg.store.back_up(session, seq, &real.to_string_lossy(), before.as_deref());
        }
    }

    /// Takes back the last turn the person started (and any turn a job's note started after it).
    pub fn undo(&mut self) -> Result<Undone, EngineError> {
        let nothing = || EngineError::Undo("There is nothing to undo in this session.".into());
        let checkpoint = loop {
            let checkpoint = self.cfg.store.last_checkpoint(&self.id)?.ok_or_else(nothing)?;
            if checkpoint.history_len < self.history.len() {
                break checkpoint;
            }
            // A turn that failed before its first message was kept: nothing of it to take back,
            // so the undo goes to the turn before.
            self.cfg.store.take_back(&self.id, checkpoint.seq, &self.state_value(), &[], now_ms())?;
        };
        let taken = &self.history[checkpoint.history_len..];
        // The words the person typed — not the files they attached, which went with them.
        let prompt = match taken.first() {
            Some(Entry { typed: Some(typed), .. }) => typed.clone(),
            Some(Entry { message: Message::User { content, .. }, .. }) => {
                crate::history::without_note(content).to_owned()
            }
            _ => String::new(),
        };
        let ran_commands = taken.iter().any(|e| {
            matches!(&e.message, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| crate::handlers::handler(&c.name).runs_a_command()))
        });
        let mut files = Vec::new();
        for lembas_store::Backup { path, before } in self.cfg.store.backups(&self.id, checkpoint.seq)? {
            let path = PathBuf::from(path);
            let put_back = match &before {
                Some(bytes) => {
                    path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, bytes))
                }
                None => match std::fs::remove_file(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            };
            let name = lembas_paths::prompt_name(&path, &self.ws.root, self.cfg.user_home.as_deref());
            put_back.map_err(|e| EngineError::Undo(format!("{name} could not be put back: {e}")))?;
            files.push(name);
        }
        // The engine's state as the turn began — but ids are never reused, and what the person
        // set (mode, effort, approvals, models named) and the tool list stand as they are.
        let mut state: State =
            serde_json::from_value(checkpoint.state).map_err(|e| EngineError::Corrupt(e.to_string()))?;
        state.ids = self.state.ids.clone();
        state.mode = self.state.mode;
        state.effort = self.state.effort.clone();
        state.always = self.state.always.clone();
        state.named = self.state.named.clone();
        state.mcp_listed = self.state.mcp_listed.clone();
        state.mcp_instructions = self.state.mcp_instructions.clone();
        state.mode_before_plan = self.state.mode_before_plan;
        self.state = state;
        // Its words leave the search with it.
        let forget: Vec<String> = self.history[checkpoint.history_len..].iter().map(Entry::words).collect();
        self.history.truncate(checkpoint.history_len);
        self.turn_seq = None;
        self.cfg.store.take_back(&self.id, checkpoint.seq, &self.state_value(), &forget, now_ms())?;
        self.judge = self.make_judge();
        let undone = Undone { prompt, files, ran_commands };
        self.emit(Event::Undone {
            prompt: undone.prompt.clone(),
            files: undone.files.clone(),
            ran_commands: undone.ran_commands,
        });
        self.report_context();
        Ok(undone)
    }
}
