//! The engine's events as ACP session updates: one mapping, so every editor sees a session the
//! way the terminal does.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use lembas_core::{Event, Status};

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(t.to_owned()))
}

/// What kind of tool call a client draws, from the tool's name.
pub fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read" | "view_image" | "recall" | "list" => ToolKind::Read,
        "write" | "edit" | "multiedit" | "apply_patch" => ToolKind::Edit,
        "glob" | "grep" => ToolKind::Search,
        "bash" | "job_stop" | "job_send" => ToolKind::Execute,
        "plan_write" | "plan_update" | "plan_submit" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The session updates an engine event becomes (none for events a client does not draw).
pub fn updates(event: &Event) -> Vec<SessionUpdate> {
    match event {
        Event::Text { delta } => vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(text(delta)))],
        Event::Reasoning { delta } => vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(text(delta)))],
        Event::ToolStart { call_id, tool, title, args } => {
            let title = if title.is_empty() { tool.clone() } else { format!("{tool} {title}") };
            vec![SessionUpdate::ToolCall(
                ToolCall::new(call_id.clone(), title)
                    .kind(kind_of(tool))
                    .status(ToolCallStatus::InProgress)
                    .raw_input(args.clone()),
            )]
        }
        Event::ToolEnd { call_id, text: result, is_error, .. } => {
            let status = if *is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
            let fields = ToolCallUpdateFields::new().status(status).content(vec![ToolCallContent::from(text(result))]);
            vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.clone(), fields))]
        }
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
            vec![SessionUpdate::Plan(Plan::new(entries))]
        }
        Event::Mode { mode } => vec![SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.clone()))],
        _ => Vec::new(),
    }
}
