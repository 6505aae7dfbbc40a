//! `initialize` (`acp.md`): what the client is and does — its files, whether it speaks lembas'
//! protocol and shows files — and what lembas offers it: the capabilities this build has, and on
//! the link the device's limits.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, Implementation, InitializeRequest, InitializeResponse, McpCapabilities, PromptCapabilities,
};

use crate::Server;

/// What this build implements, by `acp.md`'s capability names.
const CAPABILITIES: [&str; 16] = [
    "agents",
    "progress",
    "tree",
    "turns",
    "scheduled",
    "directories",
    "configure",
    "show",
    "rewind",
    "library",
    "context",
    "sessions",
    "jobs",
    "plan_state",
    "commands",
    "files",
];

/// `initialize`: what the client does with files, whether it speaks lembas' protocol, and what
/// lembas offers.
pub(crate) fn initialize(
    server: &Server,
    request: InitializeRequest,
    responder: agent_client_protocol::v1::Responder<InitializeResponse>,
) -> Result<(), agent_client_protocol::Error> {
    let fs = &request.client_capabilities.fs;
    *server.client_fs.lock().expect("client fs") = (fs.read_text_file, fs.write_text_file);
    // A LLeMbas client says so in `clientCapabilities._meta.lembas` (`acp.md`); the top-level
    // `_meta.lembas` that editors' adapters sent before is read the same.
    let speaks_lembas = [request.client_capabilities.meta.as_ref(), request.meta.as_ref()]
        .into_iter()
        .flatten()
        .any(|m| m.get("lembas").is_some_and(|l| !l.is_null() && *l != serde_json::Value::Bool(false)));
    server.lembas_client.store(speaks_lembas, std::sync::atomic::Ordering::Relaxed);
    // Which of lembas' protocols: `{ protocol: N }`, else 1 (`lembas: true`), else none.
    let said = [request.client_capabilities.meta.as_ref(), request.meta.as_ref()]
        .into_iter()
        .flatten()
        .find_map(|m| m.get("lembas").and_then(|l| l.get("protocol")).and_then(serde_json::Value::as_u64));
    server.peer.set_protocol(match said {
        Some(n) => u8::try_from(n).unwrap_or(u8::MAX),
        None => u8::from(speaks_lembas),
    });
    let shows = request.client_capabilities.meta.as_ref().and_then(|m| m.get("lembas")).and_then(|l| l.get("show"));
    server.client_shows.store(shows == Some(&serde_json::Value::Bool(true)), std::sync::atomic::Ordering::Relaxed);
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true));
    let version =
        if request.protocol_version > ProtocolVersion::V1 { ProtocolVersion::V1 } else { request.protocol_version };
    // For a LLeMbas client (a plain editor ignores it): the link protocol, the capabilities this
    // build has — listed whatever the settings say (`acp.md`) — and on the link the device's
    // limits and its name for the instance; `limits` is null on `serve --stdio`.
    let limits = server.limits().map(|l| l.said());
    let connection = server.remote.as_ref().and_then(|r| r.connection.clone());
    let mut meta = serde_json::Map::new();
    meta.insert(
        "lembas".into(),
        serde_json::json!({
            "protocol": 3,
            "harness_spec": lembas_protocol::HARNESS_SPEC,
            "capabilities": CAPABILITIES,
            "limits": limits,
            "connection": connection,
        }),
    );
    responder.respond(
        InitializeResponse::new(version)
            .agent_capabilities(capabilities)
            // The name the spec gives the device side (`acp.md` `initialize`); the version is this build's.
            .agent_info(Implementation::new("LLeMbas CLI", env!("CARGO_PKG_VERSION")))
            .meta(meta),
    )
}
