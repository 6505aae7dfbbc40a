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
    let team = slot.team.as_ref();
    let id = params["id"].as_str().unwrap_or_default();
    let no_subagent = || invalid(&format!("this session has no subagent {id}"));
    match method {
        "_lembas/team" => {
            let since = params["since"].as_u64().unwrap_or(0);
            Ok(json!({
                "tree": team.and_then(|t| t.tree()),
                "room": team.map(|t| t.room(since)).unwrap_or_default(),
            }))
        }
        "_lembas/team/findings" => {
            let findings = team.and_then(|t| t.findings(id)).ok_or_else(no_subagent)?;
            Ok(json!(findings))
        }
        "_lembas/team/transcript" => {
            let (stored, state) = team.and_then(|t| t.transcript_of(id)).ok_or_else(no_subagent)?;
            let events = server.host.transcript(&stored).map_err(|e| invalid(&e.to_string()))?;
            Ok(json!({ "id": id, "state": state, "turns": turns_of(events) }))
        }
        "_lembas/team/stop" => {
            let stopped = team.ok_or_else(no_subagent)?.stop(id).map_err(|e| invalid(&e))?;
            Ok(json!({ "stopped": stopped }))
        }
        _ => Err(agent_client_protocol::Error::method_not_found()),
    }
}

/// A stored conversation as turns: each begins with the words that started it (`prompt`: the
/// brief, a message that woke the subagent) and holds what happened after, as lembas' events in
/// order. `_lembas/session/history`'s own `turns` shape is not in our copy of the spec; this is
/// ours, and what comes before any prompt (nothing, in a session lembas made) is a turn with a
/// `null` prompt.
pub(crate) fn turns_of(events: Vec<lembas_protocol::Event>) -> Vec<Value> {
    let mut turns: Vec<Value> = Vec::new();
    for event in events {
        match event {
            lembas_protocol::Event::Prompt { text, .. } => turns.push(json!({ "prompt": text, "events": [] })),
            other => {
                if turns.is_empty() {
                    turns.push(json!({ "prompt": null, "events": [] }));
                }
                let last = turns.last_mut().expect("a turn");
                last["events"].as_array_mut().expect("events").push(json!(other));
            }
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::Event;

    #[test]
    fn a_transcript_is_split_into_turns_at_each_prompt() {
        let events = vec![
            Event::Prompt { text: "List the project.".into(), machine: false },
            Event::Text { delta: "One file.".into() },
            Event::Prompt { text: "[Team message from lead to scout:]\nAnd its size?".into(), machine: false },
            Event::Text { delta: "Small.".into() },
        ];
        let turns = turns_of(events);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0]["prompt"], "List the project.");
        assert_eq!(turns[0]["events"].as_array().unwrap().len(), 1);
        assert!(turns[1]["prompt"].as_str().unwrap().ends_with("And its size?"));
        assert_eq!(turns_of(vec![Event::Text { delta: "x".into() }])[0]["prompt"], Value::Null);
    }
}
