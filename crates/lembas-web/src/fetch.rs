//! One fetch: the request, redirects on the same site, the body read up to the limit, and what
//! came back turned into text ([`crate::convert`]).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use reqwest::redirect::{Attempt, Policy};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::convert::Converted;
use crate::{Limits, Reader, guard};

/// What a fetch brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The content, as text.
    Page {
        /// Where it was fetched from, after the redirects followed.
        url: String,
        content_type: String,
        /// The bytes read (up to the limit).
        bytes: usize,
        /// The body was longer than the limit and was cut there.
        cut: bool,
        converted: Converted,
    },
    /// The site sent the fetch somewhere it may not follow on its own (another site, or a URL
    /// the rules would not fetch without asking): not followed, so the new URL is judged by the
    /// permission rules as a fetch of its own. `why` says why it was not followed.
    Redirected { from: String, to: String, status: u16, why: String },
}

/// Why a fetch brought nothing back.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Refused(String),
    #[error("{url} did not answer within {secs} seconds.")]
    TimedOut { url: String, secs: u64 },
    #[error("Could not reach {url}: {reason}.")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered {status}.{body}")]
    Status { url: String, status: String, body: String },
    #[error("More than {0} redirects.")]
    TooManyRedirects(usize),
    #[error("{url} is {content_type} ({bytes} bytes), not text: nothing to read.")]
    Binary { url: String, content_type: String, bytes: usize },
    #[error("Could not read {url}: {reason}.")]
    Unreadable { url: String, reason: String },
    #[error("The fetch was interrupted.")]
    Cancelled,
}

/// How a fetch goes: its limits, whether its name may resolve into the person's own network (a
/// rule names this URL or host and allows it), who reads what it brings back, and who judges a
/// redirect before it is followed.
#[derive(Debug, Clone, Copy)]
pub struct Fetch<'a> {
    pub limits: Limits,
    pub private_ok: bool,
    pub reader: &'a Reader,
    /// The permission rules' word on each redirect (`Judge::redirect`); without one, a redirect
    /// is followed on the same site (scheme, host and port) only.
    pub redirects: Option<&'a RedirectJudge>,
}

/// Judges a redirect from the first URL to the second before it is followed: `Err` says why it
/// is not. Every redirect is a new fetch: the rules judge it as they judged the first.
#[derive(Clone)]
pub struct RedirectJudge(pub Arc<JudgeRedirect>);

/// The judge's own signature: the URL that redirected, where to; `Err` says why not.
pub type JudgeRedirect = dyn Fn(&str, &str) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for RedirectJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedirectJudge")
    }
}

/// Why the last redirect was not followed, from the policy (which can only stop) to the reading
/// of the answer (which says so).
type NotFollowed = Arc<Mutex<Option<String>>>;

/// Fetches `url` as `how` says.
pub async fn fetch(url: &str, how: Fetch<'_>, cancel: &CancellationToken) -> Result<Fetched, FetchError> {
    let Fetch { limits, private_ok, reader, redirects } = how;
    let target = lembas_permissions::network::parse(url).map_err(FetchError::Refused)?;
    if !private_ok && let Some(reason) = target.private() {
        return Err(FetchError::Refused(reason));
    }
    let url = target.url;
    let not_followed = NotFollowed::default();
    let client = client(limits, private_ok, redirects.cloned(), not_followed.clone())
        .map_err(|e| FetchError::Unreachable { url: url.to_string(), reason: e.to_string() })?;
    let work = async {
        let response = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, ACCEPT)
            .send()
            .await
            .map_err(|e| failed(&url, limits, e))?;
        let why = not_followed.lock().ok().and_then(|mut w| w.take());
        read(response, &url, limits, reader, why).await
    };
    tokio::select! {
        done = work => done,
        () = cancel.cancelled() => Err(FetchError::Cancelled),
    }
}

/// What a fetch prefers: a page as Markdown where the site has it, then HTML, text, JSON, PDF.
const ACCEPT: &str =
    "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, application/pdf;q=0.7, */*;q=0.1";

fn client(
    limits: Limits,
    private_ok: bool,
    judge: Option<RedirectJudge>,
    not_followed: NotFollowed,
) -> reqwest::Result<reqwest::Client> {
    let max = limits.max_redirects;
    reqwest::Client::builder()
        .user_agent(crate::user_agent())
        .timeout(limits.timeout)
        .connect_timeout(limits.timeout.min(std::time::Duration::from_secs(10)))
        .dns_resolver(Arc::new(guard::Guarded { private_ok }))
        .redirect(Policy::custom(move |attempt| follow(attempt, max, judge.as_ref(), &not_followed)))
        .build()
}

/// A redirect is a new fetch: followed only where the judge (or, without one, the same site —
/// scheme, host and port) allows it; else the fetch stops there and says where it was sent, and
/// why it did not follow.
fn follow(
    attempt: Attempt<'_>,
    max: usize,
    judge: Option<&RedirectJudge>,
    not_followed: &NotFollowed,
) -> reqwest::redirect::Action {
    if attempt.previous().len() > max {
        return attempt.error(FetchError::TooManyRedirects(max));
    }
    let Some(from) = attempt.previous().last() else { return attempt.stop() };
    let to = attempt.url();
    let verdict = match judge {
        Some(judge) => (judge.0)(from.as_str(), to.as_str()),
        None => same_site(from, to),
    };
    match verdict {
        Ok(()) => attempt.follow(),
        Err(why) => {
            if let Ok(mut slot) = not_followed.lock() {
                *slot = Some(why);
            }
            attempt.stop()
        }
    }
}

/// The same site: the same scheme, host and port.
fn same_site(from: &Url, to: &Url) -> Result<(), String> {
    let site = |u: &Url| (u.scheme().to_owned(), u.host_str().map(str::to_ascii_lowercase), u.port_or_known_default());
    if site(from) == site(to) { Ok(()) } else { Err("it leads to another site".to_owned()) }
}

fn failed(url: &Url, limits: Limits, e: reqwest::Error) -> FetchError {
    if e.is_timeout() {
        return FetchError::TimedOut { url: url.to_string(), secs: limits.timeout.as_secs() };
    }
    if e.is_redirect() {
        return FetchError::TooManyRedirects(limits.max_redirects);
    }
    // A name refused for where it leads, else the innermost reason (a refused connection, a
    // certificate).
    if let Some(private) = crate::causes(&e).find_map(|c| c.downcast_ref::<guard::PrivateName>()) {
        return FetchError::Refused(format!("Refused: {private}. {}", lembas_permissions::network::UNLESS_ALLOWED));
    }
    FetchError::Unreachable { url: url.to_string(), reason: crate::innermost(&e) }
}

/// Reads the answer: a redirect elsewhere said, an error status with the start of what it said,
/// else the body up to the limit, turned into text.
async fn read(
    response: reqwest::Response,
    asked: &Url,
    limits: Limits,
    reader: &Reader,
    not_followed: Option<String>,
) -> Result<Fetched, FetchError> {
    let status = response.status();
    let url = response.url().clone();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| url.join(l).ok());
        return match to {
            Some(to) => Ok(Fetched::Redirected {
                from: url.to_string(),
                to: to.to_string(),
                status: status.as_u16(),
                why: not_followed.unwrap_or_else(|| "it leads to another site".to_owned()),
            }),
            None => Err(FetchError::Status { url: url.to_string(), status: status.to_string(), body: String::new() }),
        };
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (body, cut) = body(response, limits).await.map_err(|e| failed(asked, limits, e))?;
    let bytes = body.len();
    let converted = match reader.read(&content_type, body, cut).await {
        Ok(converted) => converted,
        Err(crate::convert::NotText::Binary) => {
            return Err(FetchError::Binary { url: url.to_string(), content_type, bytes });
        }
        Err(crate::convert::NotText::Unreadable(reason)) => {
            return Err(FetchError::Unreadable { url: url.to_string(), reason });
        }
    };
    if !status.is_success() {
        let said: String = converted.text.chars().take(ERROR_BODY_CHARS).collect();
        let body = if said.trim().is_empty() { String::new() } else { format!("\n\n{}", said.trim()) };
        return Err(FetchError::Status { url: url.to_string(), status: status.to_string(), body });
    }
    Ok(Fetched::Page { url: url.to_string(), content_type, bytes, cut, converted })
}

/// How much of an error page the model is shown: enough for an API's reason.
const ERROR_BODY_CHARS: usize = 2000;

/// The body, read up to `limits.max_bytes`; `true` when there was more.
async fn body(response: reqwest::Response, limits: Limits) -> reqwest::Result<(Vec<u8>, bool)> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let room = limits.max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

impl Fetched {
    /// What the model reads of it.
    pub fn to_text(&self) -> String {
        match self {
            Fetched::Redirected { from, to, status, why } => format!(
                "{from} redirected ({status}) to {to}\nNot followed: {why}. To read it, fetch that URL (it is judged as a fetch of its own)."
            ),
            Fetched::Page { url, content_type, bytes, cut, converted } => {
                let mut head = String::new();
                if let Some(title) = &converted.title {
                    head.push_str(&format!("# {title}\n"));
                }
                let kind = if content_type.is_empty() { "no content type" } else { content_type.as_str() };
                let read = if *cut { format!("the first {}, the rest not read", size(*bytes)) } else { size(*bytes) };
                head.push_str(&format!("Source: {url} ({kind}, {read})"));
                format!("{head}\n\n{}", converted.text)
            }
        }
    }
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1024 * 1024 => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
        b if b >= 1024 => format!("{} KB", b / 1024),
        b => format!("{b} bytes"),
    }
}
