//! The web tools' handlers: a fetch, with what the session's rules say of its URL, and a search
//! through the configured provider; both beside the step's other calls.

use futures::FutureExt;
use futures::future::BoxFuture;
use lembas_tools::ToolOutput;
use serde_json::Value;

use super::runs::{Call, CallTools};

/// What a web call runs with.
#[derive(Debug, Clone, Default)]
pub(crate) struct WebCall {
    pub setup: crate::config::WebSetup,
    /// A rule names this call's URL or host and allows it (or had it asked, and the person
    /// said yes), so its name may resolve into the person's own network.
    pub private_ok: bool,
    /// The session's rules on a redirect, judged as a fetch of its own before it is followed.
    pub redirects: Option<lembas_web::RedirectJudge>,
}

/// How many results a search gives when the call does not say.
const DEFAULT_RESULTS: u64 = 8;

pub(super) fn web_fetch<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let Some(url) = call.args.get("url").and_then(Value::as_str).filter(|u| !u.trim().is_empty()) else {
            return ToolOutput::Error("`url` is required: the full http:// or https:// URL.".to_owned());
        };
        let web = &tools.web;
        let how = lembas_web::Fetch {
            limits: web.setup.limits,
            private_ok: web.private_ok,
            reader: &web.setup.reader,
            redirects: web.redirects.as_ref(),
        };
        match lembas_web::fetch(url, how, &call.cancel).await {
            Ok(fetched) => ToolOutput::Text(fetched.to_text()),
            Err(e) => ToolOutput::Error(e.to_string()),
        }
    }
    .boxed()
}

pub(super) fn web_search<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let Some(provider) = &tools.web.setup.search else {
            let unavailable = lembas_spec::tool("web_search").and_then(|d| d.unavailable.clone());
            return ToolOutput::Error(unavailable.unwrap_or_default());
        };
        let Some(query) = call.args.get("query").and_then(Value::as_str).map(str::trim).filter(|q| !q.is_empty())
        else {
            return ToolOutput::Error("`query` is required: what to search for.".to_owned());
        };
        let limit = super::limit(&call.args, DEFAULT_RESULTS);
        match lembas_web::search(provider, query, limit, &call.cancel).await {
            Ok(hits) => ToolOutput::Text(lembas_web::search::said(query, &hits)),
            Err(e) => ToolOutput::Error(e.to_string()),
        }
    }
    .boxed()
}
