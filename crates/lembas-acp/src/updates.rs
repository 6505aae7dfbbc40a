//! The engine's events as ACP session updates: one mapping, so every editor sees a session the
//! way the terminal does.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use lembas_protocol::{Event, Status};

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t.to_owned()))
}

/// What kind of tool call a client draws: the kind the tool's definition gives it, in ACP's
/// words (a subagent's task is thinking, to an editor).
pub fn kind_of(tool: &str) -> ToolKind {
    use lembas_protocol::tools::ToolKind as Kind;
    match lembas_protocol::tools::kind(tool) {
        Kind::Read => ToolKind::Read,
        Kind::Edit => ToolKind::Edit,
        Kind::Search => ToolKind::Search,
        Kind::Execute => ToolKind::Execute,
        Kind::Think | Kind::Agent => ToolKind::Think,
        Kind::Fetch => ToolKind::Fetch,
        Kind::Other => ToolKind::Other,
    }
}

/// The session updates an engine event becomes (none for events a client does not draw).
pub fn updates(event: &Event) -> Vec<SessionUpdate> {
    match event {
        Event::Text { delta } => vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(text(delta)))],
        Event::Reasoning { delta } => vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(text(delta)))],
        Event::ToolStart { call_id, tool, title, args, paths } => {
            let title = if title.is_empty() { tool.clone() } else { format!("{tool} {title}") };
            let locations = paths.iter().map(ToolCallLocation::new).collect();
            vec![SessionUpdate::ToolCall(
                ToolCall::new(call_id.clone(), title)
                    .kind(kind_of(tool))
                    .status(ToolCallStatus::InProgress)
                    .raw_input(args.clone())
                    .locations(locations),
            )]
        }
        Event::ToolEnd { call_id, text: result, is_error, diffs, .. } => {
            let status = if *is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
            let mut content = vec![ToolCallContent::from(text(result))];
            // A change is drawn as a diff (a deleted file as an empty new text).
            content.extend(diffs.iter().map(|d| {
                ToolCallContent::from(Diff::new(&d.path, d.new.clone().unwrap_or_default()).old_text(d.old.clone()))
            }));
            let fields = ToolCallUpdateFields::new().status(status).content(content);
            vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.clone(), fields))]
        }
        // What a subagent does now shows in its task's call, replacing what it did before.
        Event::Subagent { call_id, event, .. } => match event.as_ref() {
            Event::ToolStart { tool, title, .. } => {
                let now = if title.is_empty() { format!("→ {tool}") } else { format!("→ {tool} {title}") };
                let fields = ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text(&now))]);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.clone(), fields))]
            }
            _ => Vec::new(),
        },
        Event::Plan { plan } => {
            let entries = plan
                .phases
                .iter()
                .flat_map(|p| p.tasks.iter())
                .map(|t| {
                    let status = match t.status {
                        Status::Todo | Status::Dropped => PlanEntryStatus::Pending,
                        Status::Doing => PlanEntryStatus::InProgress,
                        Status::Done => PlanEntryStatus::Completed,
                    };
                    PlanEntry::new(format!("{} {}", t.id, t.text), PlanEntryPriority::Medium, status)
                })
                .collect();
            // The structure beside the entries, for a client that draws the whole plan
            // (capability `plan_state`); an editor reads the entries.
            let mut meta = serde_json::Map::new();
            meta.insert("lembas".into(), serde_json::json!({ "plan": plan }));
            vec![SessionUpdate::Plan(Plan::new(entries).meta(meta))]
        }
        Event::Mode { mode } => vec![SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str()))],
        // An editor has no other place for them: a failed turn's error and what lembas says once
        // (a root reached through a link, an MCP server that failed) are agent words of their own.
        Event::Error { message } | Event::Notice { message } => {
            vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(text(&format!("\n\n(lembas: {message})\n"))))]
        }
        // Not drawn by an editor: a LLeMbas client reads them as `_lembas/event` (`events.rs`),
        // the rest are the session's own bookkeeping or answered elsewhere (cards, `session/new`).
        // Listed, not matched with `_`, so a new event is placed here on purpose.
        Event::Session { .. }
        | Event::Prompt { .. }
        | Event::Step { .. }
        | Event::ToolDenied { .. }
        | Event::Usage { .. }
        | Event::Team { .. }
        | Event::Room { .. }
        | Event::SubagentsStopped { .. }
        | Event::Jobs { .. }
        | Event::Job { .. }
        | Event::JobNote { .. }
        | Event::JobSaid { .. }
        | Event::FilesFound { .. }
        | Event::Context { .. }
        | Event::Phase { .. }
        | Event::Compacted { .. }
        | Event::Model { .. }
        | Event::Agents { .. }
        | Event::Title { .. }
        | Event::Personality { .. }
        | Event::Levels { .. }
        | Event::AgentFiles { .. }
        | Event::Notes { .. }
        | Event::McpServers { .. }
        | Event::Steered { .. }
        | Event::SteerReturned { .. }
        | Event::Undone { .. }
        | Event::SnapshotStore { .. }
        | Event::Turns { .. }
        | Event::Forked { .. }
        | Event::Ask { .. }
        | Event::Answered { .. }
        | Event::Closed
        | Event::Done { .. } => Vec::new(),
    }
}

/// A stored conversation replayed for a client that loads the session: the person's words as
/// user message chunks, the rest as during a turn.
pub fn replay(events: &[Event]) -> Vec<SessionUpdate> {
    events
        .iter()
        .flat_map(|e| match e {
            Event::Prompt { text: words, .. } => vec![SessionUpdate::UserMessageChunk(ContentChunk::new(text(words)))],
            other => updates(other),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::FileDiff;

    #[test]
    fn events_map_to_the_updates_a_client_draws() {
        assert!(matches!(&updates(&Event::Text { delta: "hi".into() })[0], SessionUpdate::AgentMessageChunk(_)));
        assert!(matches!(&updates(&Event::Reasoning { delta: "hm".into() })[0], SessionUpdate::AgentThoughtChunk(_)));
        let start = Event::ToolStart {
            call_id: "c1".into(),
            tool: "edit".into(),
            title: "a.rs".into(),
            args: serde_json::json!({}),
            paths: vec!["/p/a.rs".into()],
        };
        let SessionUpdate::ToolCall(call) = &updates(&start)[0] else { panic!() };
        assert_eq!(call.kind, ToolKind::Edit);
        assert_eq!(call.title, "edit a.rs");
        assert_eq!(call.locations[0].path, std::path::PathBuf::from("/p/a.rs"));
        let end = Event::ToolEnd {
            call_id: "c1".into(),
            tool: "edit".into(),
            result_id: Some("#0001".into()),
            text: "[#0001 a.rs sha 1]".into(),
            is_error: false,
            outcome: Default::default(),
            diffs: vec![FileDiff { path: "/p/a.rs".into(), old: Some("a".into()), new: Some("b".into()) }],
        };
        let SessionUpdate::ToolCallUpdate(update) = &updates(&end)[0] else { panic!() };
        assert_eq!(update.fields.status, Some(ToolCallStatus::Completed));
        assert!(
            matches!(&update.fields.content.as_ref().unwrap()[1], ToolCallContent::Diff(d) if d.old_text.as_deref() == Some("a"))
        );
        assert!(updates(&Event::Step { n: 1 }).is_empty());
        let SessionUpdate::AgentMessageChunk(said) = &updates(&Event::Error { message: "model not loaded".into() })[0]
        else {
            panic!()
        };
        assert!(matches!(&said.content, ContentBlock::Text(t) if t.text.contains("lembas: model not loaded")));
        assert!(updates(&Event::Prompt { text: "x".into(), machine: false }).is_empty(), "a live prompt is not echoed");
        assert!(matches!(
            &replay(&[Event::Prompt { text: "x".into(), machine: false }])[0],
            SessionUpdate::UserMessageChunk(_)
        ));
    }
}
