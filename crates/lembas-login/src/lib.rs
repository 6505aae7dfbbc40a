//! Logging in (`acp.md` *Versions and discovery*, *The HTTP API*).
//!
//! - [`login_url`]: `lembas login URL`. A server whose discovery lists LLeMbas protocol 3 is
//!   signed in to by code ([`login_device`]); any other server with `/v1/models` is logged in to
//!   as a plain OpenAI-compatible model server, with an API key when it needs one.
//! - [`login_token`]: `lembas login --token-stdin --server URL`, a token another program holds,
//!   proven on `/api/v1/instance` before anything is written.
//!
//! Each returns the [`Login`] to store; storing it replaces any other.

mod local;
mod schedules;
mod usage;

use std::time::Duration;

use lembas_config::{Login, LoginKind};
use lembas_model::catalog::{self, Catalog};
use serde_json::{Value, json};

pub use local::{Found, LOCAL_SERVERS, find_local, local_candidates};
pub use schedules::{APPROVAL_WAIT_MINUTES, schedules};
pub use usage::{MonthUsage, Personalization, month_usage, personalization, put_personality};

/// Why a login failed, in a sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    #[error("cannot reach {0}")]
    Unreachable(String),
    #[error("{0}")]
    Refused(String),
}

fn spec_link() -> Value {
    serde_json::from_str(lembas_spec::file("link.json").expect("spec/link.json is embedded"))
        .expect("spec/link.json parses")
}

use lembas_model::catalog::http;

/// The server's root and its OpenAI-compatible base from what the person typed.
pub fn normalize(url: &str) -> (String, String) {
    let mut url = url.trim().trim_end_matches('/').to_owned();
    if !url.contains("://") {
        url = format!("http://{url}");
    }
    match url.strip_suffix("/v1") {
        Some(root) => (root.to_owned(), url.clone()),
        None => (url.clone(), format!("{url}/v1")),
    }
}

/// What a server's discovery says, if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    pub version: String,
    pub protocols: Vec<u64>,
    /// Where the device link is, when the server says (it overrides the usual place).
    pub link: Option<String>,
}

async fn discover(client: &reqwest::Client, root: &str) -> Result<Option<Discovery>, LoginError> {
    let link = spec_link();
    let url = format!("{root}{}", link["discovery"].as_str().unwrap_or_default());
    let response = client.get(&url).send().await.map_err(|_| LoginError::Unreachable(root.to_owned()))?;
    if !response.status().is_success() {
        return Ok(None);
    }
    let Ok(body) = response.json::<Value>().await else { return Ok(None) };
    let protocols: Vec<u64> = match body.get("protocols").and_then(Value::as_array) {
        Some(list) => list.iter().filter_map(Value::as_u64).collect(),
        None => body.get("protocol").and_then(Value::as_u64).into_iter().collect(),
    };
    let version = body.get("version").and_then(Value::as_str).unwrap_or("1.x").to_owned();
    let link = body.get("link").and_then(Value::as_str).map(str::to_owned);
    Ok(Some(Discovery { version, protocols, link }))
}

/// The refusal for a server that does not speak our protocol, word for word.
fn protocol_refusal(root: &str, discovery: &Discovery) -> Option<LoginError> {
    let link = spec_link();
    let ours = link["protocol"].as_u64().unwrap_or(3);
    if discovery.protocols.contains(&ours) {
        return None;
    }
    let protocols: Vec<String> = discovery.protocols.iter().map(u64::to_string).collect();
    let text = lembas_spec::render(
        link["refused"].as_str().unwrap_or_default(),
        &[("server", root), ("version", &discovery.version), ("protocols", &protocols.join(" and "))],
    );
    Some(LoginError::Refused(text))
}

/// The protocol check made before every dial of the link (`acp.md`): the server's discovery,
/// which must list this CLI's protocol; what it says otherwise is the sentence to show.
pub async fn check_link(root: &str) -> Result<Discovery, LoginError> {
    let discovery = discover(&http(), root).await?.ok_or_else(|| {
        LoginError::Refused(format!("{root} is not a LLeMbas server (it has no discovery): update the server"))
    })?;
    match protocol_refusal(root, &discovery) {
        Some(refusal) => Err(refusal),
        None => Ok(discovery),
    }
}

/// `lembas login URL`: a LLeMbas server signs in by code (the callback shows the code); any
/// other OpenAI-compatible server is logged in to with `key`, if it needs one.
pub async fn login_url(
    url: &str,
    key: Option<String>,
    on_code: &mut (dyn FnMut(&DeviceCode) + Send),
) -> Result<Login, LoginError> {
    let (root, base) = normalize(url);
    let client = http();
    if let Some(discovery) = discover(&client, &root).await? {
        if let Some(refusal) = protocol_refusal(&root, &discovery) {
            return Err(refusal);
        }
        return login_device(&root, on_code).await;
    }
    let catalog = catalog::list_models(&base, key.as_deref()).await.map_err(|e| match e {
        catalog::CatalogError::Unreachable { .. } => LoginError::Unreachable(root.clone()),
        // A key was given and refused: say so, in the server's words — not that one is wanted.
        catalog::CatalogError::Status { status: 401 | 403, message, .. } if key.is_some() => {
            let said = if message.is_empty() { String::new() } else { format!(" (it said: {message})") };
            LoginError::Refused(format!("{root} refused the API key{said}: check the key, then log in again"))
        }
        catalog::CatalogError::Status { status: 401 | 403, .. } => LoginError::Refused(format!(
            "{root} wants an API key: pass it on standard input with --key-stdin, or set LEMBAS_API_KEY"
        )),
        other => LoginError::Refused(format!("{root} is not an OpenAI-compatible model server: {other}")),
    })?;
    if catalog.models.is_empty() {
        return Err(LoginError::Refused(format!("{root} lists no models")));
    }
    Ok(plain_login(root, base, key, catalog))
}

fn plain_login(root: String, base: String, key: Option<String>, catalog: Catalog) -> Login {
    Login {
        kind: LoginKind::OpenAi,
        server: root,
        base_url: base,
        secret: key,
        connection: None,
        version: None,
        scope: None,
        default_model: None,
        models: catalog.models,
        llama_cpp: catalog.llama_cpp,
        embedders: catalog.embedders,
    }
}

/// `lembas login --token-stdin --server URL`: proves `token` on the instance, then logs in.
pub async fn login_token(server: &str, token: &str) -> Result<Login, LoginError> {
    let (root, base) = normalize(server);
    let client = http();
    let link = spec_link();
    let discovery = discover(&client, &root).await?.ok_or_else(|| {
        LoginError::Refused(format!("{root} is not a LLeMbas server (it has no discovery): update the server"))
    })?;
    if let Some(refusal) = protocol_refusal(&root, &discovery) {
        return Err(refusal);
    }
    let url = format!("{root}{}", link["instance"].as_str().unwrap_or_default());
    let response =
        client.get(&url).bearer_auth(token).send().await.map_err(|_| LoginError::Unreachable(root.clone()))?;
    let older = || LoginError::Refused(format!("{root} is an older LLeMbas server: update it to 2.0"));
    match response.status().as_u16() {
        200 => {}
        401 => return Err(LoginError::Refused(format!("{root} does not accept this token"))),
        404 => return Err(older()),
        status => return Err(LoginError::Refused(format!("{root} answered {status} to the token check"))),
    }
    let instance: Value = response.json().await.map_err(|_| older())?;
    let scope = instance.get("scope").and_then(Value::as_str).ok_or_else(older)?.to_owned();
    let needed = link["scope_needed"].as_str().unwrap_or("link");
    if !scope.split_whitespace().any(|s| s == needed) {
        return Err(LoginError::Refused(format!(
            "this token may not link a device (its scope is \"{scope}\", without {needed}): make a device login instead"
        )));
    }
    let catalog = catalog::list_models(&base, Some(token)).await.map_err(|e| LoginError::Refused(e.to_string()))?;
    let text = |k: &str| instance.get(k).and_then(Value::as_str).map(str::to_owned);
    Ok(Login {
        kind: LoginKind::Llembas,
        server: root,
        base_url: base,
        secret: Some(token.to_owned()),
        connection: text("connection"),
        version: text("version").or(Some(discovery.version)),
        scope: Some(scope),
        default_model: text("default_model"),
        models: catalog.models,
        llama_cpp: false,
        embedders: catalog.embedders,
    })
}

/// What the person is shown to sign in by code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCode {
    pub user_code: String,
    pub verification_uri: String,
    pub verification_uri_complete: Option<String>,
}

/// Sign-in by code, shaped as OAuth's device authorization grant: ask for a code, show it,
/// poll until the person approves it on the server, then prove the token like [`login_token`].
/// Endpoints: `POST /api/v1/device/code` and `POST /api/v1/device/token` (lembas' design; see
/// docs/spec-decisions.md).
pub async fn login_device(root: &str, on_code: &mut (dyn FnMut(&DeviceCode) + Send)) -> Result<Login, LoginError> {
    let client = http();
    let response = client
        .post(format!("{root}/api/v1/device/code"))
        .json(&json!({ "client": "lembas", "scope": "models memory link" }))
        .send()
        .await
        .map_err(|_| LoginError::Unreachable(root.to_owned()))?;
    if !response.status().is_success() {
        return Err(LoginError::Refused(format!(
            "{root} offers no sign-in by code: use a token (lembas login --token-stdin --server {root})"
        )));
    }
    let code: Value = response.json().await.map_err(|e| LoginError::Refused(format!("{root}: {e}")))?;
    let device_code = code["device_code"].as_str().unwrap_or_default().to_owned();
    on_code(&DeviceCode {
        user_code: code["user_code"].as_str().unwrap_or_default().to_owned(),
        verification_uri: code["verification_uri"].as_str().unwrap_or_default().to_owned(),
        verification_uri_complete: code["verification_uri_complete"].as_str().map(str::to_owned),
    });
    let mut interval = Duration::from_secs(code["interval"].as_u64().unwrap_or(5));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(code["expires_in"].as_u64().unwrap_or(600));
    loop {
        if tokio::time::Instant::now() >= deadline {
            return Err(LoginError::Refused("the sign-in code expired: run lembas login again".into()));
        }
        tokio::time::sleep(interval).await;
        let response = client
            .post(format!("{root}/api/v1/device/token"))
            .json(&json!({ "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": device_code }))
            .send()
            .await
            .map_err(|_| LoginError::Unreachable(root.to_owned()))?;
        let ok = response.status().is_success();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if ok {
            let token =
                body["access_token"].as_str().ok_or_else(|| LoginError::Refused(format!("{root} sent no token")))?;
            return login_token(root, token).await;
        }
        match body["error"].as_str() {
            Some("authorization_pending") => {}
            Some("slow_down") => interval += Duration::from_secs(5),
            Some("access_denied") => return Err(LoginError::Refused("the sign-in was declined on the server".into())),
            Some("expired_token") => {
                return Err(LoginError::Refused("the sign-in code expired: run lembas login again".into()));
            }
            other => {
                return Err(LoginError::Refused(format!(
                    "{root} refused the sign-in: {}",
                    other.unwrap_or("unknown error")
                )));
            }
        }
    }
}

/// The `--json` line for a login that worked (`acp.md`: the device login's `done` line).
pub fn done_line(login: &Login, previous: Option<&Login>) -> Value {
    let changes: Vec<String> = match previous {
        Some(p) if p.server != login.server => vec![format!("replaced the login to {}", p.server)],
        Some(_) => vec!["renewed the login".to_owned()],
        None => Vec::new(),
    };
    json!({
        "event": "done",
        "fresh": previous.is_none(),
        "connection": login.connection,
        "base_url": login.base_url,
        "version": login.version,
        "models": login.models.iter().map(|m| &m.id).collect::<Vec<_>>(),
        "changes": changes,
    })
}

/// The `--json` line for a login that failed.
pub fn error_line(error: &LoginError) -> Value {
    json!({ "event": "error", "message": error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized() {
        assert_eq!(normalize("http://h:8080/"), ("http://h:8080".into(), "http://h:8080/v1".into()));
        assert_eq!(normalize("h:8080/v1"), ("http://h:8080".into(), "http://h:8080/v1".into()));
    }

    #[test]
    fn an_old_server_is_refused_word_for_word() {
        let d = Discovery { version: "1.9.0".into(), protocols: vec![1, 2], link: None };
        assert_eq!(
            protocol_refusal("https://old", &d).unwrap().to_string(),
            "https://old runs LLeMbas 1.9.0, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3) — update the server, or use LLeMbas CLI 1.x with it"
        );
        assert!(protocol_refusal("x", &Discovery { version: "2".into(), protocols: vec![3], link: None }).is_none());
    }
}
