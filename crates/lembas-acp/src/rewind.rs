//! `_lembas/session/rewind` (capability `rewind`): the conversation goes back to before a turn,
//! and the files stay as the turns left them — the answer names them, so the client can say so.
//! lembas' own additions, under `_meta.lembas`: `files: true` puts the files back too (as the
//! terminal's `/rewind` does), `fork: true` leaves this session as it is and answers a new one
//! made as it was before the turn.
//!
//! Params: `{ sessionId, turnId? | turn?, _meta?: { lembas?: { files?, fork? } } }` — the turn by
//! the `turnId` its prompt carried, or by its number (1: the first the person started since the
//! last compaction, as `/rewind` lists them).
//! Result: `{ sessionId, turn, prompt, later, files }` — `later`: how many turns after it went
//! with it; `files`: `{ left }`, what the turns changed, left on disk, or with `files: true`
//! `{ put_back, removed, kept }`; with `fork: true` also `forkedFrom`, `sessionId` being the new
//! session's.

use lembas_protocol::{Command, Event, TurnPoint};
use serde_json::{Value, json};

use crate::{Server, invalid};

pub(crate) async fn answer(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let slot = crate::methods::open_session(server, params)?;
    if slot.busy.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(invalid("the session is working: rewind it once the turn ends"));
    }
    let ours = &params["_meta"]["lembas"];
    let (files, fork) = (ours["files"].as_bool().unwrap_or(false), ours["fork"].as_bool().unwrap_or(false));
    let turns = match slot.reads.ask(&slot.handle, Command::ReportTurns).await.map_err(|e| invalid(&e))?.pop() {
        Some(Event::Turns { turns }) => turns,
        Some(Event::Error { message }) => return Err(invalid(&message)),
        _ => return Err(invalid("the session did not say its turns")),
    };
    let to = chosen(&turns, params)?;
    // What the turns from there on changed: left on disk unless the client asked otherwise.
    let mut left: Vec<String> = turns.iter().skip(to as usize - 1).flat_map(|t| t.files.clone()).collect();
    left.sort();
    left.dedup();
    let command = if fork { Command::Fork { to, files } } else { Command::Rewind { to, files, conversation: true } };
    let said = slot.reads.ask(&slot.handle, command).await.map_err(|e| invalid(&e))?;
    let files_said = |back: &lembas_protocol::FilesBack| if files { json!(back) } else { json!({ "left": left }) };
    let id = crate::session_id(params)?;
    match said.last() {
        Some(Event::Undone { prompt, later, files: back }) => {
            Ok(json!({ "sessionId": id, "turn": to, "prompt": prompt, "later": later, "files": files_said(back) }))
        }
        Some(Event::Forked { id: fork, prompt, files: back }) => Ok(json!({
            "sessionId": fork, "forkedFrom": id, "turn": to, "prompt": prompt,
            "later": turns.len() as u32 - to, "files": files_said(back),
        })),
        Some(Event::Error { message }) => Err(invalid(message)),
        _ => Err(invalid("the session did not go back")),
    }
}

/// The turn the params name: by `turnId`, else by number.
fn chosen(turns: &[TurnPoint], params: &Value) -> Result<u32, agent_client_protocol::Error> {
    if let Some(id) = params.get("turnId").and_then(Value::as_str) {
        return turns
            .iter()
            .find(|t| t.submission.as_deref() == Some(id))
            .map(|t| t.number)
            .ok_or_else(|| invalid(&format!("no turn {id} can be gone back to in this session")));
    }
    match params.get("turn").and_then(Value::as_u64) {
        Some(n) if n >= 1 && n as usize <= turns.len() => Ok(n as u32),
        Some(n) => Err(invalid(&format!("there is no turn {n}: this session has {} to go back to", turns.len()))),
        None => Err(invalid("turnId or turn is required")),
    }
}
