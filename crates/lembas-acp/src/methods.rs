//! lembas' own methods on a session (`acp.md` `_lembas/*`): change its model, effort or team size
//! between prompts (`configure`), add words to the running turn (`steer`), compact it, delete it;
//! and the folders a remote session may open (`directories`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::v1::schema::SessionConfigOptionValue;
use lembas_protocol::{Command, Event};
use serde_json::{Value, json};

use crate::{Server, Slot, invalid, options};

/// How long a compaction may take before the client is told it did not finish.
const COMPACTING: Duration = Duration::from_secs(600);

/// The session open here that `params` names.
pub(crate) fn open_session(server: &Server, params: &Value) -> Result<Slot, agent_client_protocol::Error> {
    server.slot(crate::session_id(params)?).ok_or_else(|| invalid("no such session open here"))
}

/// `_lembas/configure { sessionId, model?, effort?, agents? }` → `{ model, effort }`: checked
/// before anything changes (a model the login does not serve is refused and the session keeps
/// its own); the session's `model` event follows a change.
pub(crate) fn configure(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let slot = open_session(server, params)?;
    let mut choice = slot.choice.lock().expect("choice").clone();
    let value = |v: &str| SessionConfigOptionValue::ValueId { value: v.to_owned().into() };
    let mut commands = Vec::new();
    if let Some(model) = params.get("model").and_then(Value::as_str) {
        let command = options::command(&choice, "model", &value(model)).map_err(|e| invalid(&e))?;
        choice.changed(model, None);
        commands.push(command);
    }
    if let Some(effort) = params.get("effort").and_then(Value::as_str) {
        // A level the model does not offer is read as its start level, as in `session/new`.
        let level = Some(effort.to_owned()).filter(|l| choice.model.levels().contains(l));
        let model = choice.model.id.clone();
        choice.changed(&model, level.as_deref());
        commands.push(Command::SetEffort { level });
    }
    let mut meta = serde_json::Map::new();
    if let Some(agents) = params.get("agents").filter(|a| !a.is_null()) {
        meta.insert("lembas".into(), json!({ "agents": agents }));
    }
    if let Some((min, max)) = options::sent_agents(Some(&meta)).map_err(|e| invalid(&e))? {
        choice.agents = (min, max);
        commands.push(Command::SetAgents { min, max });
    }
    *slot.choice.lock().expect("choice") = choice.clone();
    for command in commands {
        slot.handle.send(command);
    }
    let effort = choice.effort.clone().unwrap_or_else(|| choice.model.start_level());
    Ok(json!({ "model": choice.model.id, "effort": effort }))
}

/// `_lembas/steer { sessionId, text, id? }`: words for the running turn, taken in at its next step
/// (a turn of their own when none runs); the `steered` event that takes them in names `id`.
pub(crate) fn steer(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let slot = open_session(server, params)?;
    let text = params["text"].as_str().filter(|t| !t.trim().is_empty()).ok_or_else(|| invalid("text is required"))?;
    let running = slot.busy.load(std::sync::atomic::Ordering::SeqCst);
    if let Some(id) = params["id"].as_str() {
        slot.follow.lock().expect("follow").steered(text, id);
    }
    slot.handle.send(Command::Steer { text: text.to_owned() });
    Ok(json!({ "steered": true, "running": running }))
}

/// `_lembas/session/compact { sessionId }` → `{ summary }`; refused while the session works.
pub(crate) async fn compact(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let slot = open_session(server, params)?;
    if slot.busy.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(invalid("the session is working: compact it once the turn ends"));
    }
    let said = slot.reads.ask_within(&slot.handle, Command::Compact, COMPACTING).await.map_err(|e| invalid(&e))?;
    match said.last() {
        Some(Event::Compacted { summary, .. }) => Ok(json!({ "summary": summary })),
        Some(Event::Error { message }) => Err(invalid(message)),
        _ => Err(invalid("the session did not compact")),
    }
}

/// `_lembas/session/delete { sessionId }`: the session stops if it works and leaves the store
/// with everything kept with it.
pub(crate) async fn delete(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let id = crate::session_id(params)?;
    let open = server.sessions.lock().expect("sessions").remove(id);
    if let Some(slot) = open {
        slot.handle.send(Command::Cancel);
        let _ = tokio::time::timeout(Duration::from_secs(10), slot.handle.close()).await;
    }
    if server.host.held_elsewhere(id) {
        return Err(invalid("a terminal has the session open: it is deleted there, or once it closes"));
    }
    server.host.delete(id).map_err(|e| invalid(&e.to_string()))?;
    Ok(json!({ "deleted": true }))
}

/// `_lembas/directories { path? }`: the folders a remote session may open — the roots, or the
/// folders in `path` (inside a root, on its real path) — each with whether it is a project (a git
/// work tree) and whether the person trusted it.
pub(crate) fn directories(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let (Some(remote), Some(limits)) = (server.remote.as_ref(), server.limits()) else {
        return Err(invalid("no remote work here"));
    };
    let roots: Vec<PathBuf> = if limits.enabled { limits.roots.clone() } else { Vec::new() };
    let folder = |path: &Path| {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        json!({
            "name": path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string()),
            "path": path,
            "project": real.join(".git").exists(),
            "trusted": (remote.trusted)(&real),
        })
    };
    let Some(path) = params.get("path").and_then(Value::as_str) else {
        let listed: Vec<Value> = roots.iter().map(|r| folder(r)).collect();
        return Ok(json!({ "roots": roots, "path": null, "directories": listed }));
    };
    let inside = limits.admit(Path::new(path), &|_| true).map_err(|why| crate::refused(&why, "folder"))?;
    let mut listed: Vec<PathBuf> = std::fs::read_dir(&inside)
        .map_err(|e| invalid(&format!("{path}: {e}")))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.is_dir() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .collect();
    listed.sort();
    Ok(json!({ "roots": roots, "path": inside, "directories": listed.iter().map(|p| folder(p)).collect::<Vec<_>>() }))
}

/// `_lembas/files/search { sessionId, query?, limit? }` → `{ root, files }`: the files under the
/// session's working folder (`root`, which `@path` mentions resolve against) whose paths hold
/// `query` as a subsequence, best first — at most `limit` (20 unless asked, 200 at most).
pub(crate) async fn files_search(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let slot = open_session(server, params)?;
    let query = params.get("query").and_then(Value::as_str).unwrap_or_default().to_owned();
    let limit = params.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
    let said = slot.reads.ask(&slot.handle, Command::FindFiles { query, limit }).await.map_err(|e| invalid(&e))?;
    match said.into_iter().last() {
        Some(Event::FilesFound { root, files }) => Ok(json!({ "root": root, "files": files })),
        Some(Event::Error { message }) => Err(invalid(&message)),
        _ => Err(invalid("the session did not answer")),
    }
}

/// `_lembas/session/history { sessionId }` → `{ sessionId, turns }`: the stored conversation as
/// turns (each the words that started it and what was said in it, in order), for a client that
/// imports a turn it missed — open here, held by a terminal, or closed.
pub(crate) fn history(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let id = crate::session_id(params)?;
    if server.host.session(id).map_err(|e| invalid(&e.to_string()))?.is_none() {
        return Err(invalid("no such session"));
    }
    let events = server.host.transcript(id).map_err(|e| invalid(&e.to_string()))?;
    Ok(json!({ "sessionId": id, "turns": crate::team::turns_of(events) }))
}
