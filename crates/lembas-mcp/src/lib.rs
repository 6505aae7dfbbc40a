//! lembas as an MCP client (the official `rmcp` SDK): the servers a session is configured with
//! are connected side by side; their tools join the session's list as `mcp__<server>__<tool>`;
//! their instructions go into the prompt, or — for a server that connects late — into a note
//! (`context.md` §10 rule 4).

mod hub;
mod instance;
mod names;
mod output;

pub use hub::{CONNECT_TIMEOUT, McpHub, McpTool, ReadyServer, ServerEntry, ServerState, ServerStatus};
pub use instance::InstanceMcp;
pub use names::{MAX_NAME, exposed_name, is_mcp_name};
pub use output::{CallOutput, call_output};
