//! `_lembas/team`, `_lembas/team/transcript`, `_lembas/team/findings`, `_lembas/team/stop`
//! (`acp.md`, capability `tree`): what a client of lembas' protocol reads of a session's team,
//! and the person's stop.

use lembas_protocol::team::{TeamAgent, TeamTree};
use lembas_protocol::{Command, Event};
use serde_json::{Value, json};

use crate::{Server, invalid};

/// The answer to one of the team's methods, or the error it gets (`-32602` for an id the
/// session does not have; method not found for another `_lembas/` method). Each is read through
/// the host's commands, as every front end reads the team.
pub(crate) async fn answer(
    server: &Server,
    method: &str,
    params: &Value,
) -> Result<Value, agent_client_protocol::Error> {
    const METHODS: [&str; 4] =
        ["_lembas/team", "_lembas/team/findings", "_lembas/team/transcript", "_lembas/team/stop"];
    if !METHODS.contains(&method) {
        return Err(agent_client_protocol::Error::method_not_found());
    }
    let session = params["sessionId"].as_str().unwrap_or_default();
    let slot = server.slot(session).ok_or_else(|| invalid("no such session"))?;
    let id = params["id"].as_str().unwrap_or_default();
    let no_subagent = || invalid(&format!("this session has no subagent {id}"));
    let read = |e: String| invalid(&e);
    match method {
        "_lembas/team" => {
            let since = params["since"].as_u64().unwrap_or(0);
            let (tree, room) = slot.reads.team(&slot.handle, since).await.map_err(read)?;
            Ok(json!({ "tree": tree, "room": room }))
        }
        "_lembas/team/findings" => {
            let (tree, _) = slot.reads.team(&slot.handle, u64::MAX).await.map_err(read)?;
            let agent = subagent(tree.as_ref(), id).ok_or_else(no_subagent)?;
            Ok(json!(agent.numbered_findings()))
        }
        "_lembas/team/transcript" => {
            let (tree, _) = slot.reads.team(&slot.handle, u64::MAX).await.map_err(read)?;
            let agent = subagent(tree.as_ref(), id).ok_or_else(no_subagent)?;
            let stored = agent.session.as_deref().ok_or_else(no_subagent)?;
            let events = server.host.transcript(stored).map_err(|e| invalid(&e.to_string()))?;
            Ok(json!({ "id": id, "state": agent.state, "turns": turns_of(events) }))
        }
        "_lembas/team/stop" => {
            let said = slot.reads.ask(&slot.handle, Command::StopSubagent { name: id.to_owned() }).await;
            match said.map_err(read)?.pop() {
                Some(Event::SubagentsStopped { ids }) => Ok(json!({ "stopped": ids })),
                Some(Event::Error { message }) => Err(invalid(&message)),
                _ => Err(no_subagent()),
            }
        }
        _ => Err(agent_client_protocol::Error::method_not_found()),
    }
}

/// A subagent of the tree (one that ended too) by its id; never the main agent.
fn subagent<'a>(tree: Option<&'a TeamTree>, id: &str) -> Option<&'a TeamAgent> {
    let tree = tree?;
    tree.agents.iter().chain(&tree.ended).find(|a| a.id == id && a.parent.is_some())
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
