//! This computer as a LLeMbas server's device (`acp.md` *Versions and discovery*, the link).
//!
//! The device dials the server: a WebSocket at the server's link address (see [`link_url`]),
//! with the login's token as a bearer. Each text frame is one JSON-RPC message of ACP; the server
//! is the ACP client, the device the agent — lembas' one ACP server ([`lembas_acp::serve`]), the
//! same that serves editors on stdio, here with the device's [`Limits`](lembas_acp::Limits). The
//! device says `_lembas/hello` first. Before every dial the server's discovery must list
//! protocol 3. Close code 4400 stops the link for good (one of the two needs updating); any other
//! drop is dialled again after a wait ([`backoff`]).

mod address;
mod backoff;
mod frames;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::SinkExt;
use lembas_client::Host;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};
use tokio_util::sync::CancellationToken;

pub use address::{LINK_PATH, link_url};

/// Where the link stands, as it tells of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Dialling, or waiting to dial again.
    Dialling,
    Linked,
}

/// The close code with which either side says the other speaks a protocol it does not.
pub const OUTDATED: u16 = 4400;

/// This computer as the server is told of it in `_lembas/hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub host: String,
    pub platform: String,
}

/// What a link needs: the server, the login's token, and the ACP server's remote settings.
#[derive(Clone)]
pub struct LinkPlan {
    /// The server's root (`https://…`), as logged in to.
    pub root: String,
    pub token: String,
    pub remote: lembas_acp::Remote,
    pub device: Device,
    /// A terminal's link for the session it shares (said in `_lembas/hello`), not the device's.
    pub shares: Option<String>,
}

impl std::fmt::Debug for LinkPlan {
    // The token is never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkPlan").field("root", &self.root).field("device", &self.device).finish_non_exhaustive()
    }
}

/// Why the link stopped for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkStop {
    /// The server does not speak this CLI's protocol (its discovery says so), in the spec's words.
    #[error("{0}")]
    Refused(String),
    /// The server closed the link with 4400.
    #[error(
        "{server} closed the link: {reason} — the server and this LLeMbas CLI speak different link protocols; update the older of the two"
    )]
    Outdated { server: String, reason: String },
    /// The server no longer takes the login's token.
    #[error("{0} does not accept this computer's login any more: log in again (lembas login)")]
    Unauthorized(String),
}

/// How one link ended, when it may be dialled again.
#[derive(Debug)]
enum Dropped {
    /// The person changed the limits and nothing ran: dial again at once.
    LimitsChanged,
    /// It could not be opened.
    Unreachable(String),
    /// It was open for `lasted`, then closed (with the code, when the server sent one).
    Closed { lasted: Duration, code: Option<u16>, reason: String },
}

/// `_lembas/hello`: the first message on every link.
pub fn hello(device: &Device, limits: &lembas_acp::Limits, shares: Option<&str>) -> Value {
    let mut hello = json!({
        "jsonrpc": "2.0",
        "method": "_lembas/hello",
        "params": {
            "protocol": 3,
            "version": env!("CARGO_PKG_VERSION"),
            "harness_spec": lembas_protocol::HARNESS_SPEC,
            "device": { "host": device.host, "platform": device.platform },
            "limits": limits.said(),
        }
    });
    if let Some(session) = shares {
        hello["params"]["shares"] = session.into();
    }
    hello
}

/// Keeps this computer linked to the server until `stop` is cancelled (answered `Ok`) or the link
/// must stop for good. The sessions the server opens live across links: a turn goes on while the
/// link is down, and the server follows it again on the next. When the link stops, they end (a
/// running turn cancelled, what was answered stored). `say` hears what happens, a line at a time
/// with where the link stands, for the log — never the token.
///
/// `limits` says the device's limits whenever the person changes them: once nothing runs, the
/// link is dialled again so that the server hears them (`_lembas/hello`, `initialize`).
pub async fn hold(
    plan: &LinkPlan,
    host: Arc<dyn Host>,
    say: &(dyn Fn(LinkState, &str) + Sync),
    stop: &CancellationToken,
    limits: watch::Receiver<lembas_acp::Limits>,
) -> Result<(), LinkStop> {
    let acp = lembas_acp::AcpServer::new(host, Some(plan.remote.clone()));
    let held = redial(plan, &acp, say, stop, limits).await;
    acp.finish().await;
    held
}

/// Carries the sessions a terminal shares on `acp` ([`lembas_acp::AcpServer::share`]) to the
/// server, over a link of the terminal's own, until `stop` is cancelled or the link must stop for
/// good; dropped, it is dialled again as the device's link is. The sessions stay the terminal's:
/// when the share ends they are let go, not closed.
pub async fn share(
    plan: &LinkPlan,
    acp: &lembas_acp::AcpServer,
    say: &(dyn Fn(LinkState, &str) + Sync),
    stop: &CancellationToken,
) -> Result<(), LinkStop> {
    // A share's limits never change: the server opens nothing on its link.
    let (_unchanging, limits) = watch::channel(plan.remote.limits.clone());
    let held = redial(plan, acp, say, stop, limits).await;
    acp.unshare();
    held
}

/// Dials, serves, and dials again after a drop or a change of the limits, until `stop` or a stop
/// for good.
async fn redial(
    plan: &LinkPlan,
    acp: &lembas_acp::AcpServer,
    say: &(dyn Fn(LinkState, &str) + Sync),
    stop: &CancellationToken,
    mut limits: watch::Receiver<lembas_acp::Limits>,
) -> Result<(), LinkStop> {
    let mut backoff = backoff::Backoff::new();
    loop {
        // The limits as they are now go with this dial's hello: a change made while the link
        // was down, or the one that ended the last link.
        acp.set_limits(limits.borrow_and_update().clone());
        let outcome = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            outcome = link_once(plan, acp, say, &mut limits) => outcome?,
        };
        let why = match outcome {
            Dropped::LimitsChanged => {
                say(LinkState::Dialling, "the remote settings changed: dialling again so that the server hears them");
                continue;
            }
            Dropped::Closed { code: Some(OUTDATED), reason, .. } => {
                return Err(LinkStop::Outdated { server: plan.root.clone(), reason });
            }
            Dropped::Closed { lasted, code, reason } => {
                if lasted >= backoff::STEADY {
                    backoff.reset();
                }
                match code {
                    Some(code) if reason.is_empty() => format!("the server closed the link ({code})"),
                    Some(code) => format!("the server closed the link ({code}: {reason})"),
                    None => format!(
                        "the link dropped{}",
                        if reason.is_empty() { String::new() } else { format!(": {reason}") }
                    ),
                }
            }
            Dropped::Unreachable(why) => why,
        };
        let wait = backoff.wait();
        say(LinkState::Dialling, &format!("{why}; dialling again in {:.1} s", wait.as_secs_f64()));
        tokio::select! {
            () = stop.cancelled() => return Ok(()),
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One link: the protocol check, the dial, `_lembas/hello`, then ACP until it closes.
async fn link_once(
    plan: &LinkPlan,
    acp: &lembas_acp::AcpServer,
    say: &(dyn Fn(LinkState, &str) + Sync),
    limits: &mut watch::Receiver<lembas_acp::Limits>,
) -> Result<Dropped, LinkStop> {
    let discovery = match lembas_login::check_link(&plan.root).await {
        Ok(discovery) => discovery,
        Err(lembas_login::LoginError::Unreachable(_)) => {
            return Ok(Dropped::Unreachable(format!("cannot reach {}", plan.root)));
        }
        Err(lembas_login::LoginError::Refused(why)) => return Err(LinkStop::Refused(why)),
    };
    let url = link_url(&plan.root, discovery.link.as_deref()).map_err(LinkStop::Refused)?;
    let mut request = url.as_str().into_client_request().map_err(|e| LinkStop::Refused(format!("{url}: {e}")))?;
    let bearer = format!("Bearer {}", plan.token).parse().map_err(|_| LinkStop::Unauthorized(plan.root.clone()))?;
    request.headers_mut().insert(tungstenite::http::header::AUTHORIZATION, bearer);
    let mut ws = match tokio_tungstenite::connect_async(request).await {
        Ok((ws, _)) => ws,
        Err(tungstenite::Error::Http(answer)) if matches!(answer.status().as_u16(), 401 | 403) => {
            return Err(LinkStop::Unauthorized(plan.root.clone()));
        }
        Err(e) => return Ok(Dropped::Unreachable(format!("cannot open the link at {url}: {e}"))),
    };
    let opened = Instant::now();
    let hello = hello(&plan.device, &acp.limits(), plan.shares.as_deref()).to_string();
    if let Err(e) = ws.send(Message::text(hello)).await {
        return Ok(Dropped::Closed { lasted: opened.elapsed(), code: None, reason: e.to_string() });
    }
    say(LinkState::Linked, &format!("linked to {}", plan.root));
    let ending = frames::Ending::default();
    let (outgoing, incoming) = frames::lines(ws, ending.clone(), frames::Keepalive::default());
    let transport = agent_client_protocol::Lines::new(outgoing, incoming);
    // A change of the limits ends this link once nothing runs (the connection dropped: the server
    // sees the new limits in the next link's hello).
    let changed = async {
        loop {
            if limits.changed().await.is_err() {
                return std::future::pending().await;
            }
            if *limits.borrow() == acp.limits() {
                continue;
            }
            while acp.busy() {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            return;
        }
    };
    let served = tokio::select! {
        served = acp.serve(transport) => served,
        () = changed => return Ok(Dropped::LimitsChanged),
    };
    let lasted = opened.elapsed();
    let seen = ending.closed.lock().expect("close seen").take();
    Ok(match seen {
        Some((code, reason)) => Dropped::Closed { lasted, code: Some(code), reason },
        None if ending.silent.load(std::sync::atomic::Ordering::SeqCst) => {
            Dropped::Closed { lasted, code: None, reason: "the server stopped answering".into() }
        }
        None => Dropped::Closed { lasted, code: None, reason: served.err().map(|e| e.to_string()).unwrap_or_default() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_says_the_protocol_the_device_and_its_limits() {
        let limits = lembas_acp::Limits {
            enabled: true,
            roots: vec!["/w".into()],
            max_mode: lembas_protocol::Mode::Edit,
            require_trust: true,
            scheduled: false,
        };
        let device = Device { host: "box".into(), platform: "linux".into() };
        let said = hello(&device, &limits, None);
        assert_eq!(said["method"], "_lembas/hello");
        assert_eq!(said["params"]["protocol"], 3);
        assert_eq!(said["params"]["device"], json!({"host": "box", "platform": "linux"}));
        assert_eq!(said["params"]["limits"]["roots"], json!(["/w"]));
        assert_eq!(said["params"]["harness_spec"], lembas_protocol::HARNESS_SPEC);
    }

    #[test]
    fn the_token_is_not_in_what_a_plan_shows() {
        let plan = LinkPlan {
            root: "http://h".into(),
            token: "lmb_secret".into(),
            remote: lembas_acp::Remote {
                limits: lembas_acp::Limits {
                    enabled: false,
                    roots: Vec::new(),
                    max_mode: lembas_protocol::Mode::Edit,
                    require_trust: true,
                    scheduled: false,
                },
                connection: None,
                trusted: Arc::new(|_| false),
                approval_timeout: Duration::from_secs(1),
            },
            device: Device { host: "box".into(), platform: "linux".into() },
            shares: None,
        };
        assert!(!format!("{plan:?}").contains("lmb_secret"));
    }
}
