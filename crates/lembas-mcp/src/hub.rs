//! The servers of one session (or one front end): connected side by side in the background,
//! their tools read once, their calls made with a timeout and the turn's cancellation.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_config::{McpServerPlan, McpTransport};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::names::exposed_name;
use crate::output::{CallOutput, call_output};

/// How long a server may take to start, answer `initialize` and list its tools.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many of a stdio server's last stderr lines are kept, to say why it failed.
const STDERR_LINES: usize = 20;

/// One tool of a connected server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpTool {
    pub server: String,
    /// The server's own name for it.
    pub name: String,
    /// The session's name for it (`mcp__<server>__<tool>`).
    pub exposed: String,
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
    /// It says it only reads (`readOnlyHint`): judged as a read, else as an execute.
    pub read_only: bool,
}

/// A connected server: what the prompt and the tool list take from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadyServer {
    pub name: String,
    pub instructions: Option<String>,
    pub tools: Vec<McpTool>,
}

pub use lembas_protocol::{ServerState, ServerStatus};

/// A configured server: its name, and how to reach it — or why its entry cannot be used (it is
/// listed as failed with that reason, so the person sees it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    pub name: String,
    pub plan: Result<McpServerPlan, String>,
}

impl ServerEntry {
    /// An MCP server entry an ACP client passes (`session/new`'s `mcpServers`), read from its
    /// wire form: stdio (`command`, `args`, `env` as name/value pairs) or `http` (`url`, `headers`).
    pub fn from_client(value: &serde_json::Value) -> ServerEntry {
        let name = value.get("name").and_then(|n| n.as_str()).unwrap_or("client").to_owned();
        let pairs = |key: &str| -> std::collections::BTreeMap<String, String> {
            value
                .get(key)
                .and_then(|v| v.as_array())
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| {
                            Some((i.get("name")?.as_str()?.to_owned(), i.get("value")?.as_str()?.to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let transport = match (value.get("type").and_then(|t| t.as_str()), text("command"), text("url")) {
            (None | Some("stdio"), Some(command), _) => Ok(lembas_config::McpTransport::Stdio {
                command,
                args: value
                    .get("args")
                    .and_then(|a| a.as_array())
                    .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default(),
                env: pairs("env"),
                cwd: None,
            }),
            (Some("http"), _, Some(url)) => Ok(lembas_config::McpTransport::Http { url, headers: pairs("headers") }),
            (kind, _, _) => Err(format!(
                "MCP server {name}: the {} transport is not one lembas speaks (stdio or http)",
                kind.unwrap_or("given")
            )),
        };
        ServerEntry {
            plan: transport.map(|transport| lembas_config::McpServerPlan {
                name: name.clone(),
                transport,
                timeout_secs: lembas_config::DEFAULT_MCP_TIMEOUT_SECS,
            }),
            name,
        }
    }
}

/// lembas as an MCP client: its name, and the newest protocol version that still starts with
/// `initialize` (every server tried here answers it; `peers.md`).
#[derive(Debug, Clone)]
pub(crate) struct LembasClient;

impl ClientHandler for LembasClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("lembas", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

struct Connection {
    peer: Peer<RoleClient>,
    /// Taken out to close the connection.
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, LembasClient>>>,
    info: ReadyServer,
    stderr: Arc<Mutex<VecDeque<String>>>,
    timeout: Duration,
}

enum Slot {
    Connecting,
    Ready(Arc<Connection>),
    Failed(String),
}

/// A session's MCP servers.
pub struct McpHub {
    names: Vec<String>,
    slots: Mutex<Vec<Slot>>,
    /// Bumped whenever a server connects or fails.
    changed: watch::Sender<u64>,
    started: tokio::time::Instant,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub").field("servers", &self.names).finish_non_exhaustive()
    }
}

fn with_tail(reason: String, tail: &str) -> String {
    if tail.trim().is_empty() { reason } else { format!("{reason}; its last words on stderr:\n{tail}") }
}

async fn connect(plan: &McpServerPlan, root: &Path) -> Result<Connection, String> {
    let stderr: Arc<Mutex<VecDeque<String>>> = Arc::default();
    let service = match &plan.transport {
        McpTransport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            // lembas' secrets (its own variables, an API key among them, and the keys it reads)
            // reach a server only when its entry names them.
            for name in lembas_sys::child_env::secrets_present() {
                cmd.env_remove(name);
            }
            cmd.args(args).envs(env).current_dir(cwd.as_deref().map_or(root.to_path_buf(), |c| root.join(c)));
            let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
            // Its own process group: a Ctrl-C in the terminal is not meant for it, and ending it
            // ends what it started (`npx` and the server under it).
            wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
            let (transport, err) = TokioChildProcess::builder(wrapped)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            if let Some(err) = err {
                let lines = stderr.clone();
                tokio::spawn(async move {
                    let mut reader = tokio::io::BufReader::new(err).lines();
                    while let Ok(Some(line)) = reader.next_line().await {
                        let mut kept = lines.lock().expect("stderr lines");
                        if kept.len() == STDERR_LINES {
                            kept.pop_front();
                        }
                        kept.push_back(line);
                    }
                });
            }
            LembasClient
                .serve(transport)
                .await
                .map_err(|e| with_tail(format!("it did not start an MCP session: {e}"), &stderr_text(&stderr)))?
        }
        McpTransport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header {name}: {e}"))?;
                let value = reqwest::header::HeaderValue::from_str(value).map_err(|e| format!("header {name}: {e}"))?;
                custom.insert(name, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(config);
            LembasClient.serve(transport).await.map_err(|e| format!("{url} did not start an MCP session: {e}"))?
        }
    };
    let peer = service.peer().clone();
    let instructions = peer
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    let listed = peer
        .list_all_tools()
        .await
        .map_err(|e| with_tail(format!("it did not list its tools: {e}"), &stderr_text(&stderr)))?;
    let tools = listed
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .map(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let title = tool.get("title").and_then(Value::as_str);
            let description = tool
                .get("description")
                .and_then(Value::as_str)
                .or(title)
                .map_or_else(|| format!("The {name} tool of the {} MCP server.", plan.name), str::to_owned);
            let read_only = tool.pointer("/annotations/readOnlyHint").and_then(Value::as_bool) == Some(true);
            McpTool {
                server: plan.name.clone(),
                exposed: exposed_name(&plan.name, &name),
                name,
                description,
                parameters: parameters_of(&tool),
                read_only,
            }
        })
        .collect();
    Ok(Connection {
        peer,
        service: tokio::sync::Mutex::new(Some(service)),
        info: ReadyServer { name: plan.name.clone(), instructions, tools },
        stderr,
        timeout: Duration::from_secs(plan.timeout_secs),
    })
}

/// A tool's argument schema as a chat API takes it: an object schema, without the `$schema`
/// marker some servers add (several OpenAI-compatible servers refuse a schema that has it).
fn parameters_of(tool: &Value) -> Value {
    let mut schema = tool.get("inputSchema").cloned().filter(Value::is_object).unwrap_or_else(|| serde_json::json!({}));
    let object = schema.as_object_mut().expect("an object");
    object.remove("$schema");
    object.entry("type").or_insert_with(|| Value::String("object".into()));
    if object.get("type").and_then(Value::as_str) == Some("object") {
        object.entry("properties").or_insert_with(|| serde_json::json!({}));
    }
    schema
}

fn stderr_text(lines: &Mutex<VecDeque<String>>) -> String {
    lines.lock().expect("stderr lines").iter().cloned().collect::<Vec<_>>().join("\n")
}

impl McpHub {
    /// Starts connecting every server in the background (on the current tokio runtime);
    /// stdio servers run in `root`, or their `cwd` below it.
    pub fn start(entries: Vec<ServerEntry>, root: &Path) -> Arc<McpHub> {
        let hub = Arc::new(McpHub {
            names: entries.iter().map(|e| e.name.clone()).collect(),
            slots: Mutex::new(
                entries
                    .iter()
                    .map(|e| match &e.plan {
                        Ok(_) => Slot::Connecting,
                        Err(reason) => Slot::Failed(reason.clone()),
                    })
                    .collect(),
            ),
            changed: watch::channel(0).0,
            started: tokio::time::Instant::now(),
        });
        for (index, entry) in entries.into_iter().enumerate() {
            let Ok(plan) = entry.plan else { continue };
            let hub = Arc::downgrade(&hub);
            let root: PathBuf = root.to_path_buf();
            tokio::spawn(async move {
                let slot = match tokio::time::timeout(CONNECT_TIMEOUT, connect(&plan, &root)).await {
                    Ok(Ok(connection)) => Slot::Ready(Arc::new(connection)),
                    Ok(Err(reason)) => Slot::Failed(reason),
                    Err(_) => Slot::Failed(format!("it did not answer within {} s", CONNECT_TIMEOUT.as_secs())),
                };
                if let Some(hub) = hub.upgrade() {
                    hub.slots.lock().expect("mcp slots")[index] = slot;
                    hub.changed.send_modify(|n| *n += 1);
                }
            });
        }
        hub
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// A number that changes whenever a server connects or fails.
    pub fn generation(&self) -> u64 {
        *self.changed.borrow()
    }

    fn connecting(&self) -> bool {
        self.slots.lock().expect("mcp slots").iter().any(|s| matches!(s, Slot::Connecting))
    }

    /// Waits until every server has connected or failed, or `wait` has passed.
    pub async fn settle(&self, wait: Duration) {
        self.settle_until(tokio::time::Instant::now() + wait).await;
    }

    /// Like [`settle`](Self::settle), but `wait` counts from when the hub started connecting.
    pub async fn settle_since_start(&self, wait: Duration) {
        self.settle_until(self.started + wait).await;
    }

    async fn settle_until(&self, deadline: tokio::time::Instant) {
        let mut changes = self.changed.subscribe();
        while self.connecting() {
            if tokio::time::timeout_at(deadline, changes.changed()).await.is_err() {
                return;
            }
        }
    }

    /// The connected servers, in the order they were configured.
    pub fn ready(&self) -> Vec<ReadyServer> {
        self.slots
            .lock()
            .expect("mcp slots")
            .iter()
            .filter_map(|slot| match slot {
                Slot::Ready(c) => Some(c.info.clone()),
                _ => None,
            })
            .collect()
    }

    /// A connected server's tool by its session name.
    pub fn tool(&self, exposed: &str) -> Option<McpTool> {
        self.slots.lock().expect("mcp slots").iter().find_map(|slot| match slot {
            Slot::Ready(c) => c.info.tools.iter().find(|t| t.exposed == exposed).cloned(),
            _ => None,
        })
    }

    /// Every configured server and where it stands.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let slots = self.slots.lock().expect("mcp slots");
        self.names
            .iter()
            .zip(slots.iter())
            .map(|(name, slot)| ServerStatus {
                name: name.clone(),
                state: match slot {
                    Slot::Connecting => ServerState::Connecting,
                    Slot::Ready(c) => ServerState::Ready { tools: c.info.tools.len() },
                    Slot::Failed(reason) => ServerState::Failed { reason: reason.clone() },
                },
            })
            .collect()
    }

    /// Calls the tool the session knows as `exposed`. Every failure — a server gone, a
    /// timeout, the turn interrupted — is an answer the model reads, never a panic.
    pub async fn call(&self, exposed: &str, args: Value, cancel: &CancellationToken) -> CallOutput {
        let found = {
            let slots = self.slots.lock().expect("mcp slots");
            let mut found = None;
            for (index, slot) in slots.iter().enumerate() {
                let server = &self.names[index];
                let owns = |prefix: &str| exposed.starts_with(prefix);
                match slot {
                    Slot::Ready(c) => {
                        if let Some(tool) = c.info.tools.iter().find(|t| t.exposed == exposed) {
                            found = Some(Ok((index, c.clone(), tool.name.clone())));
                            break;
                        }
                    }
                    Slot::Failed(reason) if owns(&exposed_name(server, "")) => {
                        found = Some(Err(format!("The MCP server {server} is not connected: {reason}")));
                    }
                    Slot::Connecting if owns(&exposed_name(server, "")) => {
                        found = Some(Err(format!("The MCP server {server} is still starting; try again shortly.")));
                    }
                    _ => {}
                }
            }
            found
        };
        let (index, connection, tool) = match found {
            Some(Ok(found)) => found,
            Some(Err(text)) => return CallOutput::failed(text),
            None => {
                return CallOutput::failed(format!("No connected MCP server offers {exposed} now."));
            }
        };
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => return CallOutput::failed("The arguments must be a JSON object."),
        };
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let call = tokio::time::timeout(connection.timeout, connection.peer.call_tool(params));
        let answer = tokio::select! {
            answer = call => answer,
            _ = cancel.cancelled() => {
                return CallOutput::failed("Interrupted: the turn was stopped before the tool answered.");
            }
        };
        match answer {
            Ok(Ok(result)) => call_output(&serde_json::to_value(&result).unwrap_or(Value::Null)),
            Ok(Err(e)) => {
                let server = &self.names[index];
                if connection.peer.is_transport_closed() {
                    let reason = with_tail("it stopped".to_owned(), &stderr_text(&connection.stderr));
                    self.slots.lock().expect("mcp slots")[index] = Slot::Failed(reason.clone());
                    self.changed.send_modify(|n| *n += 1);
                    return CallOutput::failed(format!("The MCP server {server} is not connected: {reason}"));
                }
                CallOutput::failed(format!("The MCP server {server} answered with an error: {e}"))
            }
            Err(_) => CallOutput::failed(format!("The tool did not answer within {} s.", connection.timeout.as_secs())),
        }
    }

    /// Ends every connection: stdio servers are asked to stop (stdin closed), then signalled.
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> = self
            .slots
            .lock()
            .expect("mcp slots")
            .iter()
            .filter_map(|s| match s {
                Slot::Ready(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        let closing = connections.iter().map(|c| async move {
            if let Some(mut service) = c.service.lock().await.take() {
                let _ = service.close_with_timeout(Duration::from_secs(3)).await;
            }
        });
        futures::future::join_all(closing).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_are_objects_without_a_schema_marker() {
        let tool = json!({"inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"a": {"type": "number"}}}});
        assert_eq!(parameters_of(&tool), json!({"type": "object", "properties": {"a": {"type": "number"}}}));
        assert_eq!(parameters_of(&json!({})), json!({"type": "object", "properties": {}}));
    }
}
