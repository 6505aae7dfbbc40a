//! What the spec's tool definitions tell a front end about a call: how to draw it (`block`),
//! whether it changes files, what it risks. One registry (`spec/tools/*.json`), so no front end
//! keeps its own list of tool names.

pub use lembas_spec::{RiskClass, ToolDef};

/// A tool's definition, by its name or a former one; `None` for a tool the spec does not define
/// (an MCP server's).
pub fn tool(name: &str) -> Option<&'static ToolDef> {
    lembas_spec::tool(name)
}

/// How a client draws a call of `name`: `shell`, `edit`, `read`, `search`, `web`, `task`, `plan`
/// or `tool` (also for a tool the spec does not define).
pub fn block(name: &str) -> &'static str {
    tool(name).map_or("tool", |t| t.block.as_str())
}

/// What kind of work a call does, for a client that draws calls by kind (ACP's tool kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Edit,
    Search,
    /// Runs something: a command, or a tool whose risk is execution.
    Execute,
    /// Thinks aloud: the plan.
    Think,
    /// Hands work to a subagent.
    Agent,
    /// Reaches the web: a fetch, a search.
    Fetch,
    Other,
}

/// The kind of a call of `name`, from its definition: its `block`, and for a plain tool block
/// one that runs something is an execution.
pub fn kind(name: &str) -> ToolKind {
    let Some(def) = tool(name) else { return ToolKind::Other };
    match def.block.as_str() {
        "read" => ToolKind::Read,
        "edit" => ToolKind::Edit,
        "search" => ToolKind::Search,
        "shell" => ToolKind::Execute,
        "plan" => ToolKind::Think,
        "task" => ToolKind::Agent,
        "web" => ToolKind::Fetch,
        _ if def.risk == RiskClass::Execute => ToolKind::Execute,
        _ => ToolKind::Other,
    }
}

/// Whether calls of `name` change files (drawn as a diff; what an undo puts back).
pub fn changes_files(name: &str) -> bool {
    tool(name).is_some_and(ToolDef::changes_files)
}
