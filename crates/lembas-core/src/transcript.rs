//! A stored session read back: its history as sent (a crash mid-step repaired), and its
//! conversation as the events that draw it — the same events a live turn says, so every front
//! end draws a resumed session as it ran.

use std::collections::HashSet;

use lembas_model::Message;
use lembas_store::Store;

use crate::session::history::{Entry, without_note};
use crate::{EngineError, Event};

/// A history as events: the person's words without their notes, replies, reasoning, tool calls
/// and their results.
pub(crate) fn transcript_of(history: &[Entry]) -> Vec<Event> {
    let mut events = Vec::new();
    // Each result is drawn under its call's tool.
    let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for entry in history {
        match &entry.message {
            Message::User { content, .. } if entry.turn && !entry.summary => {
                events.push(Event::Prompt { text: without_note(content).to_owned(), machine: false });
            }
            // Where a compaction's summary took over from what came before it.
            Message::User { content, .. } if entry.summary => {
                events.push(Event::Compacted { summary: content.clone(), table: String::new() });
            }
            Message::Assistant { content, reasoning, tool_calls } => {
                if let Some(r) = reasoning.as_ref().filter(|r| !r.is_empty()) {
                    events.push(Event::Reasoning { delta: r.clone() });
                }
                if !content.is_empty() {
                    events.push(Event::Text { delta: content.clone() });
                }
                for call in tool_calls {
                    let args: serde_json::Value =
                        serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
                    names.insert(call.id.clone(), call.name.clone());
                    events.push(Event::ToolStart {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        title: (crate::handlers::handler(&call.name).title)(&args),
                        args,
                        paths: Vec::new(),
                    });
                }
            }
            Message::Tool { tool_call_id, content } => {
                let tool = names.get(tool_call_id).cloned().unwrap_or_default();
                events.push(Event::ToolEnd {
                    call_id: tool_call_id.clone(),
                    outcome: crate::handlers::describe::outcome(crate::handlers::handler(&tool), content, entry.failed),
                    tool,
                    result_id: None,
                    text: content.clone(),
                    is_error: entry.failed,
                    diffs: Vec::new(),
                });
            }
            _ => {}
        }
    }
    events
}

/// A stored session's conversation as events, read-only: how the person reads a subagent's
/// transcript, while it works and after it ended.
pub fn stored_transcript(store: &Store, id: &str) -> Result<Vec<Event>, EngineError> {
    // The whole conversation, what a compaction took out of the history included; where the
    // summary took over, it says so.
    let said = store
        .said(id)?
        .into_iter()
        .map(|m| serde_json::from_str::<Entry>(&m.json))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| EngineError::Corrupt(e.to_string()))?;
    Ok(transcript_of(&said))
}

/// A stored session's history, as sent.
pub(crate) fn stored_history(store: &Store, id: &str) -> Result<Vec<Entry>, EngineError> {
    Ok(store.live_messages_as::<Entry>(id)?)
}

/// A history cut by a crash mid-step: an assistant message whose calls lack results gets them,
/// saying the step was interrupted, so the history is one a server accepts.
pub(crate) fn repair(mut history: Vec<Entry>) -> Vec<Entry> {
    let Some(last_assistant) = history.iter().rposition(|e| matches!(e.message, Message::Assistant { .. })) else {
        return history;
    };
    let Message::Assistant { tool_calls, .. } = &history[last_assistant].message else { return history };
    let answered: HashSet<String> = history[last_assistant..]
        .iter()
        .filter_map(|e| match &e.message {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let missing: Vec<Entry> = tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id))
        .map(|c| {
            let content = "(not run: the session was interrupted)".to_owned();
            Entry { failed: true, ..Entry::of(Message::Tool { tool_call_id: c.id.clone(), content }) }
        })
        .collect();
    history.extend(missing);
    history
}
