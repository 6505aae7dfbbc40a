//! `lembas mcp`: the MCP servers a session here would connect, tried for real.

use std::time::Duration;

use lembas_core::ServerState;

use crate::cli::exit;
use crate::{Failure, setup};

/// How long `lembas mcp list` waits for slow servers (a first `npx` download, say).
const LIST_WAIT: Duration = Duration::from_secs(30);

pub async fn list(json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let config = setup::config(&home)?;
    let cwd = std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
    let root = setup::real_root(&setup::project_root(&cwd));
    // A trust file that cannot be read leaves the project untrusted here (listing still works).
    let standing = setup::standing(&home, &root).unwrap_or(lembas_config::Standing::Untrusted);
    for note in setup::start_notes(&root, standing) {
        eprintln!("lembas: {note}");
    }
    let Some(hub) = lembas_core::connect_mcp(setup::mcp_entries(&config, &root, standing), &root) else {
        if json {
            out!("[]");
        } else {
            out!(
                "No MCP servers are configured here: add them under [mcp_servers.NAME] in {}, or in the project's .mcp.json (read once you trust the project: lembas trust).",
                home.config_file().display()
            );
        }
        return Ok(exit::OK);
    };
    hub.settle(LIST_WAIT).await;
    let statuses = hub.statuses();
    let ready = hub.ready();
    let tools_of = |name: &str| ready.iter().find(|s| s.name == name).map(|s| s.tools.clone()).unwrap_or_default();
    if json {
        let servers: Vec<serde_json::Value> = statuses
            .iter()
            .map(|status| {
                let mut value = serde_json::to_value(status).unwrap_or_default();
                value["tools"] = serde_json::to_value(tools_of(&status.name)).unwrap_or_default();
                value
            })
            .collect();
        out!("{}", serde_json::to_string_pretty(&servers).unwrap_or_default());
    } else {
        for status in &statuses {
            match &status.state {
                ServerState::Ready { tools } => out!("{}: connected, {}", status.name, crate::count(*tools, "tool")),
                ServerState::Connecting => {
                    out!("{}: still connecting after {} s", status.name, LIST_WAIT.as_secs())
                }
                ServerState::Failed { reason } => out!("{}: not connected: {reason}", status.name),
            }
            for tool in tools_of(&status.name) {
                let first = tool.description.lines().next().unwrap_or("");
                let kind = if tool.read_only { "reads" } else { "acts" };
                out!("  {} ({kind}) — {first}", tool.exposed);
            }
        }
    }
    hub.shutdown().await;
    let all_connected = statuses.iter().all(|s| matches!(s.state, ServerState::Ready { .. }));
    Ok(if all_connected { exit::OK } else { exit::FAILED })
}
