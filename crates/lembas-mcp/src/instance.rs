//! A LLeMbas instance's own MCP server (`acp.md` *The HTTP API*, *Memory*): the device reaches the
//! person's memory there — the `memory` tool and the resource `lembas://memory` — with the
//! login's token. One connection per process, made when first needed and made again when the
//! instance dropped it; a call made for a session a link client opened carries
//! `_meta.lembas.scope`.

use std::future::Future;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, MetaObject, ReadResourceRequestParams, RequestMetaObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::hub::LembasClient;
use crate::output::{CallOutput, call_output};

/// How long the instance may take to answer one call or read.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The instance's MCP endpoint, reached with the login's token.
pub struct InstanceMcp {
    url: String,
    token: String,
    connection: tokio::sync::Mutex<Option<RunningService<RoleClient, LembasClient>>>,
}

impl std::fmt::Debug for InstanceMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceMcp").field("url", &self.url).finish_non_exhaustive()
    }
}

/// `params._meta` for a call: `lembas.scope` when it is made for a session a link client opened.
fn meta(scope: Option<&str>) -> Option<RequestMetaObject> {
    let scope = scope?;
    let Value::Object(map) = json!({ "lembas": { "scope": scope } }) else { return None };
    Some(RequestMetaObject(MetaObject(map)))
}

impl InstanceMcp {
    /// The instance at `server` (its root, as the login names it).
    pub fn new(server: &str, token: &str) -> InstanceMcp {
        InstanceMcp {
            url: format!("{}/mcp", server.trim_end_matches('/')),
            token: token.to_owned(),
            connection: tokio::sync::Mutex::default(),
        }
    }

    /// The connection's peer: the one held, or a new one when there is none or it closed.
    async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut held = self.connection.lock().await;
        if let Some(service) = held.as_ref()
            && !service.peer().is_transport_closed()
        {
            return Ok(service.peer().clone());
        }
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str()).auth_header(self.token.clone());
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = tokio::time::timeout(ANSWER_TIMEOUT, LembasClient.serve(transport))
            .await
            .map_err(|_| format!("{} did not answer within {} s", self.url, ANSWER_TIMEOUT.as_secs()))?
            .map_err(|e| format!("{} did not start an MCP session: {e}", self.url))?;
        let peer = service.peer().clone();
        *held = Some(service);
        Ok(peer)
    }

    /// Calls the instance's tool `name`. Every failure is an answer the model reads.
    pub async fn call(&self, name: &str, args: Value, scope: Option<&str>, cancel: &CancellationToken) -> CallOutput {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => return CallOutput::failed("The arguments must be a JSON object."),
        };
        let mut params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        params.meta = meta(scope);
        let call = async { answered(self.peer().await?.call_tool(params)).await };
        tokio::select! {
            answer = call => match answer {
                Ok(result) => call_output(&serde_json::to_value(&result).unwrap_or(Value::Null)),
                Err(why) => CallOutput::failed(format!("The LLeMbas server's {name} failed: {why}.")),
            },
            _ = cancel.cancelled() => CallOutput::failed("Interrupted: the turn was stopped before the server answered."),
        }
    }

    /// The text of the resource `uri` (its text contents joined; none: empty).
    pub async fn read(&self, uri: &str, scope: Option<&str>) -> Result<String, String> {
        let mut params = ReadResourceRequestParams::new(uri);
        params.meta = meta(scope);
        let result = answered(self.peer().await?.read_resource(params)).await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let texts: Vec<&str> = value
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        Ok(texts.join("\n"))
    }
}

/// What the instance answered to one request, within [`ANSWER_TIMEOUT`]; its error or silence in
/// words.
async fn answered<T>(asked: impl Future<Output = Result<T, rmcp::ServiceError>>) -> Result<T, String> {
    match tokio::time::timeout(ANSWER_TIMEOUT, asked).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("the server answered with an error: {e}")),
        Err(_) => Err(format!("the server did not answer within {} s", ANSWER_TIMEOUT.as_secs())),
    }
}
