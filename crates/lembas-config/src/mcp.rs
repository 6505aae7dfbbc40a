//! The MCP servers a session connects: `[mcp_servers.<name>]` in `config.toml`, and a trusted
//! project's `.mcp.json` (`{"mcpServers": {"<name>": {…}}}`, the shape other agents read too).
//!
//! A server is a command lembas starts and talks to over its stdin and stdout, or the URL of a
//! streamable HTTP endpoint. `${VAR}` in a value is taken from the environment, so a token can
//! stay out of the file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::StoreError;

/// One MCP server, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServer {
    /// `stdio` or `http`; left out, a `url` means http and a `command` stdio.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The program to start (stdio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for the program, on top of lembas' own environment.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where the program runs; relative to the project root. Default: the project root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint (http).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every request (http), e.g. `Authorization`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// `false` keeps the entry but does not connect it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The longest one tool call may take, in seconds (default 300).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

/// How lembas reaches a server, once its entry is checked and its variables filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<String> },
    Http { url: String, headers: BTreeMap<String, String> },
}

/// A server ready to connect: its name, how to reach it, and its call timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerPlan {
    pub name: String,
    pub transport: McpTransport,
    pub timeout_secs: u64,
}

/// The call timeout when an entry sets none: long enough for a slow search or build.
pub const DEFAULT_MCP_TIMEOUT_SECS: u64 = 300;

/// Fills `${VAR}` from `lookup`; an unset variable becomes empty (and is reported).
pub fn expand_vars(text: &str, lookup: &dyn Fn(&str) -> Option<String>, missing: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match lookup(name) {
                    Some(value) => out.push_str(&value),
                    None => missing.push(name.to_owned()),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

impl McpServer {
    /// Whether the entry asks to be connected.
    pub fn enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// The entry checked: exactly one way to reach the server, variables filled in.
    pub fn plan(&self, name: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<McpServerPlan, String> {
        let mut missing = Vec::new();
        let mut fill = |s: &str| expand_vars(s, lookup, &mut missing);
        let kind = self.kind.as_deref().unwrap_or(if self.url.is_some() { "http" } else { "stdio" });
        let transport = match (kind, &self.command, &self.url) {
            ("stdio", Some(command), None) if !command.trim().is_empty() => McpTransport::Stdio {
                command: fill(command),
                args: self.args.iter().map(|a| fill(a)).collect(),
                env: self.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
                cwd: self.cwd.as_deref().map(&mut fill),
            },
            ("http" | "streamable-http" | "streamableHttp", None, Some(url)) if !url.trim().is_empty() => {
                McpTransport::Http {
                    url: fill(url),
                    headers: self.headers.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
                }
            }
            ("stdio" | "http" | "streamable-http" | "streamableHttp", Some(_), Some(_)) => {
                return Err(format!("MCP server {name}: give either `command` or `url`, not both"));
            }
            ("stdio", _, _) => return Err(format!("MCP server {name}: a stdio server needs a `command`")),
            ("http" | "streamable-http" | "streamableHttp", _, _) => {
                return Err(format!("MCP server {name}: an http server needs a `url`"));
            }
            (other, _, _) => {
                return Err(format!("MCP server {name}: type {other} is not one lembas speaks (stdio or http)"));
            }
        };
        if let Some(var) = missing.first() {
            return Err(format!("MCP server {name}: the environment variable {var} is not set"));
        }
        Ok(McpServerPlan {
            name: name.to_owned(),
            transport,
            timeout_secs: self.timeout.unwrap_or(DEFAULT_MCP_TIMEOUT_SECS).max(1),
        })
    }
}

/// A project's `.mcp.json`, if it has one: its servers by name.
pub fn project_mcp_servers(root: &Path) -> Result<BTreeMap<String, McpServer>, StoreError> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers", default)]
        servers: BTreeMap<String, McpServer>,
    }
    let path = root.join(".mcp.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str::<File>(&text)
            .map(|f| f.servers)
            .map_err(|e| StoreError::Invalid { path: path.display().to_string(), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(StoreError::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn a_command_is_stdio_and_a_url_is_http() {
        let stdio = McpServer { command: Some("srv".into()), args: vec!["--x".into()], ..Default::default() };
        let plan = stdio.plan("a", &env).unwrap();
        assert!(matches!(plan.transport, McpTransport::Stdio { ref command, .. } if command == "srv"));
        assert_eq!(plan.timeout_secs, DEFAULT_MCP_TIMEOUT_SECS);
        let http = McpServer {
            url: Some("http://h/mcp".into()),
            headers: [("Authorization".to_owned(), "Bearer ${TOKEN}".to_owned())].into(),
            ..Default::default()
        };
        match http.plan("b", &env).unwrap().transport {
            McpTransport::Http { url, headers } => {
                assert_eq!(url, "http://h/mcp");
                assert_eq!(headers["Authorization"], "Bearer s3cret");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let both = McpServer { command: Some("a".into()), url: Some("http://b".into()), ..Default::default() };
        assert!(both.plan("x", &env).unwrap_err().contains("not both"));
        assert!(McpServer::default().plan("x", &env).unwrap_err().contains("needs a `command`"));
        let odd = McpServer { kind: Some("sse".into()), url: Some("http://b".into()), ..Default::default() };
        assert!(odd.plan("x", &env).unwrap_err().contains("type sse"));
        let unset = McpServer { command: Some("${NOPE}/bin".into()), ..Default::default() };
        assert!(unset.plan("x", &env).unwrap_err().contains("NOPE is not set"));
    }

    #[test]
    fn variables_are_filled_and_an_unclosed_one_kept() {
        let mut missing = Vec::new();
        assert_eq!(expand_vars("a ${TOKEN} b ${X", &env, &mut missing), "a s3cret b ${X");
        assert!(missing.is_empty());
    }

    #[test]
    fn reads_a_projects_mcp_json() {
        let dir = tempfile::tempdir().unwrap();
        assert!(project_mcp_servers(dir.path()).unwrap().is_empty());
        std::fs::write(
            dir.path().join(".mcp.json"),
            r#"{"mcpServers":{"fs":{"command":"mcp-fs","args":["."]},"web":{"type":"http","url":"http://x/mcp"}}}"#,
        )
        .unwrap();
        let servers = project_mcp_servers(dir.path()).unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers["fs"].args, vec!["."]);
        std::fs::write(dir.path().join(".mcp.json"), "{").unwrap();
        assert!(project_mcp_servers(dir.path()).is_err());
    }
}
