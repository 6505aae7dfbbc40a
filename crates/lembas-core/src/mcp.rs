//! The session's side of MCP: a connected server's tools join the list (at start, or once when
//! it connects later — one re-read), its instructions go into the prompt or a note, and its
//! calls are judged like any other (`read` when the tool says it only reads, else `execute`).

use lembas_model::ToolSchema;
use lembas_spec::{RiskClass, ToolDef};

use crate::Event;
use crate::session::Session;

impl Session {
    /// Adds the tools of servers that have connected since the session last looked; answers
    /// whether any did. A server already listed (before a resume, say) is not added again.
    pub(crate) fn adopt_mcp_servers(&mut self) -> bool {
        let Some(hub) = self.cfg.mcp.clone() else { return false };
        let generation = hub.generation();
        if generation == self.mcp_seen {
            return false;
        }
        self.mcp_seen = generation;
        let offers_tools = self.cfg.model.tools != Some(false);
        // An explore subagent gets only the tools that say they only read.
        let reads_only = self.role.subagent().is_some_and(|s| s.read_only);
        let mut added = false;
        for server in hub.ready() {
            if self.state.mcp_listed.contains(&server.name) {
                continue;
            }
            let mut count = 0;
            if offers_tools {
                for tool in &server.tools {
                    if self.tools.iter().any(|t| t.name == tool.exposed) || (reads_only && !tool.read_only) {
                        continue;
                    }
                    std::sync::Arc::make_mut(&mut self.tools).push(ToolSchema {
                        name: tool.exposed.clone(),
                        description: tool.description.clone(),
                        parameters: tool.parameters.clone(),
                    });
                    count += 1;
                }
            }
            if let Some(text) = &server.instructions {
                self.state.mcp_instructions.insert(server.name.clone(), text.clone());
            }
            self.state.mcp_listed.push(server.name.clone());
            self.emit(Event::Notice {
                message: format!(
                    "MCP server {} connected: {count} tool{}",
                    server.name,
                    if count == 1 { "" } else { "s" }
                ),
            });
            added = true;
        }
        for status in hub.statuses() {
            if let lembas_mcp::ServerState::Failed { reason } = status.state
                && self.mcp_failures_told.insert(status.name.clone())
            {
                self.emit(Event::Notice { message: format!("MCP server {} is not connected: {reason}", status.name) });
            }
        }
        added
    }

    /// Before a request: a server that connected since joins the list now, and the stored
    /// prefix says so (its instructions wait for the next note). Before the session's first
    /// request, the servers get up to `mcp_wait_ms` from when they started connecting, and
    /// those in time go into the prompt itself — nothing has been read yet, so that costs
    /// nothing.
    pub(crate) async fn take_late_mcp_servers(&mut self) -> Result<(), crate::EngineError> {
        let Some(hub) = self.cfg.mcp.clone() else { return Ok(()) };
        let first = self.history.is_empty();
        if first {
            let wait = std::time::Duration::from_millis(lembas_spec::loop_spec().context.mcp_wait_ms);
            hub.settle_since_start(wait).await;
        }
        if self.adopt_mcp_servers() {
            if first {
                self.remake_prompt(None);
            }
            self.save_prefix()?;
        }
        Ok(())
    }

    /// The definition an MCP tool in the list is judged and run by.
    pub(crate) fn mcp_tool_def(&self, name: &str) -> Option<ToolDef> {
        let schema = self.tools.iter().find(|t| t.name == name && lembas_mcp::is_mcp_name(name))?;
        let read_only = self.cfg.mcp.as_ref().and_then(|hub| hub.tool(name)).is_some_and(|t| t.read_only);
        Some(ToolDef {
            name: schema.name.clone(),
            scope: "cli".into(),
            sessions: "agent".into(),
            risk: if read_only { RiskClass::Read } else { RiskClass::Execute },
            exclusive: false,
            block: "tool".into(),
            requires: Vec::new(),
            unavailable: None,
            aliases: Default::default(),
            confirm: None,
            offered: None,
            description: String::new(),
            parameters: serde_json::Value::Null,
        })
    }

    /// Says where the session's MCP servers stand, as an [`Event::McpServers`].
    pub fn report_mcp(&self) {
        let servers = self.cfg.mcp.as_ref().map(|hub| hub.statuses()).unwrap_or_default();
        self.emit(Event::McpServers { servers });
    }
}

/// Starts connecting a session's MCP servers in the background (`None` when none is
/// configured). The session's first request waits for them up to `mcp_wait_ms` (`loop.json`)
/// from now, so the ones that answer in time are in the first tool list; the rest join when
/// they connect.
pub fn connect_mcp(
    entries: Vec<lembas_mcp::ServerEntry>,
    root: &std::path::Path,
) -> Option<std::sync::Arc<lembas_mcp::McpHub>> {
    (!entries.is_empty()).then(|| lembas_mcp::McpHub::start(entries, root))
}
