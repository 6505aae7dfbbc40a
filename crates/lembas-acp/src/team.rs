//! `_lembas/team`, `_lembas/team/transcript`, `_lembas/team/findings`, `_lembas/team/stop`
//! (`acp.md`, capability `tree`): what a client of lembas' protocol reads of a session's team,
//! and the person's stop.

use serde_json::{Value, json};

use crate::{Server, invalid};

/// The answer to one of the team's methods, or the error it gets (`-32602` for an id the
/// session does not have; method not found for another `_lembas/` method).
pub(crate) fn answer(server: &Server, method: &str, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    const METHODS: [&str; 4] =
        ["_lembas/team", "_lembas/team/findings", "_lembas/team/transcript", "_lembas/team/stop"];
    if !METHODS.contains(&method) {
        return Err(agent_client_protocol::Error::method_not_found());
    }
    let session = params["sessionId"].as_str().unwrap_or_default();
    let slot = server.slot(session).ok_or_else(|| invalid("no such session"))?;
    let team = slot.handle.team();
    let id = params["id"].as_str().unwrap_or_default();
    let no_subagent = || invalid(&format!("this session has no subagent {id}"));
    match method {
        "_lembas/team" => {
            let since = params["since"].as_u64().unwrap_or(0);
            Ok(json!({
                "tree": team.and_then(|t| t.tree()),
                "room": team.map_or_else(|| json!([]), |t| t.room(since)),
            }))
        }
        "_lembas/team/findings" => team.and_then(|t| t.findings(id)).ok_or_else(no_subagent),
        "_lembas/team/transcript" => {
            let (stored, state) = team.and_then(|t| t.transcript_of(id)).ok_or_else(no_subagent)?;
            let events = server.host.transcript(&stored).map_err(|e| invalid(&e.to_string()))?;
            Ok(json!({ "id": id, "state": state, "events": events }))
        }
        "_lembas/team/stop" => {
            let stopped = team.ok_or_else(no_subagent)?.stop(id).map_err(|e| invalid(&e))?;
            Ok(json!({ "stopped": stopped }))
        }
        _ => Err(agent_client_protocol::Error::method_not_found()),
    }
}
