//! A LLeMbas instance's `/mcp` (`acp.md` *Memory*): the MCP server the device reaches the person's
//! memory through — the `memory` tool and the resource `lembas://memory` — over streamable HTTP,
//! answered as JSON. Only for a token whose scope has `memory` (or the older `library`); records
//! are kept per data group: the one a call's `_meta.lembas.scope` names, else the account's.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::server::{Shared, bearer_ok, record};

/// The data group a call lands in when it names no scope.
pub const ACCOUNT_GROUP: &str = "account";

/// One data group's records, by target.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Records {
    /// The agent's notes on the work and its surroundings.
    pub memory: Vec<String>,
    /// What it knows of the person.
    pub user: Vec<String>,
}

impl Records {
    /// The entries as a system prompt's memory block shows them (`lembas://memory`): the agent's
    /// notes, then what is known of the person under its heading; each entry apart by a `§`
    /// line; empty when there are none.
    pub fn rendered(&self) -> String {
        let mut text = self.memory.join("\n§\n");
        if !self.user.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str("## About the person\n");
            text.push_str(&self.user.join("\n§\n"));
        }
        text
    }

    fn target(&mut self, name: &str) -> Option<&mut Vec<String>> {
        match name {
            "memory" => Some(&mut self.memory),
            "user" => Some(&mut self.user),
            _ => None,
        }
    }
}

/// The memory the instance keeps, and the MCP requests it was sent.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    pub(crate) groups: BTreeMap<String, Records>,
    pub(crate) requests: Vec<Value>,
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/mcp", post(message).get(no_stream).delete(closed))
}

/// No stream of the server's own: the client's requests are answered one by one.
async fn no_stream() -> Response {
    StatusCode::METHOD_NOT_ALLOWED.into_response()
}

async fn closed() -> Response {
    StatusCode::OK.into_response()
}

/// The token's answer: `None` where it may reach memory.
fn refused(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let Some(l) = shared.llembas.lock().unwrap().clone() else { return Some(StatusCode::NOT_FOUND.into_response()) };
    if !bearer_ok(headers, &l.token) {
        return Some((StatusCode::UNAUTHORIZED, axum::Json(json!({ "error": "token not accepted" }))).into_response());
    }
    if !l.scope.split_whitespace().any(|s| s == "memory" || s == "library") {
        return Some(
            (StatusCode::FORBIDDEN, axum::Json(json!({ "error": "the token has no memory scope" }))).into_response(),
        );
    }
    None
}

async fn message(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/mcp", &headers, &body);
    if let Some(no) = refused(&shared, &headers) {
        return no;
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    shared.memory.lock().unwrap().requests.push(request.clone());
    let Some(id) = request.get("id").cloned() else {
        // A notification: taken, nothing to answer.
        return StatusCode::ACCEPTED.into_response();
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let group = params.pointer("/_meta/lembas/scope").and_then(Value::as_str).unwrap_or(ACCOUNT_GROUP).to_owned();
    let answer = match request.get("method").and_then(Value::as_str).unwrap_or_default() {
        "initialize" => Ok(json!({
            "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": { "tools": {}, "resources": {} },
            "serverInfo": { "name": "llembas-test", "version": "2.0.0" },
        })),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({ "tools": [tool_definition()] })),
        "resources/list" => {
            Ok(json!({ "resources": [{ "uri": "lembas://memory", "name": "memory", "mimeType": "text/plain" }] }))
        }
        "resources/read" if params.get("uri").and_then(Value::as_str) == Some("lembas://memory") => {
            let text = shared.memory.lock().unwrap().groups.get(&group).map(Records::rendered).unwrap_or_default();
            Ok(json!({ "contents": [{ "uri": "lembas://memory", "mimeType": "text/plain", "text": text }] }))
        }
        "tools/call" if params.get("name").and_then(Value::as_str) == Some("memory") => {
            let args = params.get("arguments").cloned().unwrap_or(Value::Null);
            let mut memory = shared.memory.lock().unwrap();
            let said = change(memory.groups.entry(group).or_default(), &args);
            let (text, is_error) = match said {
                Ok(text) => (text, false),
                Err(text) => (text, true),
            };
            Ok(json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }))
        }
        "resources/read" => Err((-32002, "no such resource")),
        "tools/call" => Err((-32602, "no such tool")),
        _ => Err((-32601, "method not found")),
    };
    let reply = match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }),
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::HeaderName::from_static("mcp-session-id"), "test-session"),
        ],
        reply.to_string(),
    )
        .into_response()
}

/// The instance's `memory` tool, as its `tools/list` gives it.
fn tool_definition() -> Value {
    json!({
        "name": "memory",
        "description": "Remember, change or forget one entry of the person's memory.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["add", "replace", "remove"] },
                "target": { "type": "string", "enum": ["memory", "user"] },
                "content": { "type": "string" },
                "old_text": { "type": "string" }
            },
            "required": ["action"]
        }
    })
}

/// One `memory` call on a data group's records.
fn change(records: &mut Records, args: &Value) -> Result<String, String> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty());
    let target_name = text("target").unwrap_or("memory");
    let entries = records.target(target_name).ok_or_else(|| format!("no target {target_name:?}: memory or user"))?;
    let found = |entries: &[String], old: &str| -> Result<usize, String> {
        let hits: Vec<usize> = entries.iter().enumerate().filter(|(_, e)| e.contains(old)).map(|(i, _)| i).collect();
        match hits.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!("no entry in {target_name} holds {old:?}")),
            _ => Err(format!("{} entries in {target_name} hold {old:?}: quote more of the one meant", hits.len())),
        }
    };
    match text("action") {
        Some("add") => {
            let content = text("content").ok_or("`content` is required to add")?;
            if entries.iter().any(|e| e == content) {
                return Ok("Already remembered.".into());
            }
            entries.push(content.to_owned());
            Ok(format!("Remembered ({target_name}, {} entries).", entries.len()))
        }
        Some("replace") => {
            let old = text("old_text").ok_or("`old_text` is required to replace")?;
            let content = text("content").ok_or("`content` is required to replace")?;
            let at = found(entries, old)?;
            entries[at] = content.to_owned();
            Ok("Replaced.".into())
        }
        Some("remove") => {
            let old = text("old_text").ok_or("`old_text` is required to remove")?;
            let at = found(entries, old)?;
            entries.remove(at);
            Ok("Forgotten.".into())
        }
        _ => Err("`action` is add, replace or remove".into()),
    }
}
