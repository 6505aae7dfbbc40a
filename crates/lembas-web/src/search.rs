//! A web search through the provider the person configured: a SearXNG instance's JSON API, or
//! Brave's or Tavily's search API with a key taken from the environment. The provider is the
//! person's choice, so its address is not judged as a fetch's is (a SearXNG on this computer is
//! the usual case).

use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use url::Url;

/// Which search API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `GET <url>/search?q=…&format=json` (the instance must have the JSON format switched on).
    Searxng,
    /// `GET <url>?q=…&count=…` with `X-Subscription-Token`.
    Brave,
    /// `POST <url>` with a JSON body and a bearer token.
    Tavily,
}

/// A configured search provider.
#[derive(Debug, Clone)]
pub struct SearchProvider {
    pub api: Api,
    pub url: Url,
    key: Option<String>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("The search provider did not answer within {0} seconds.")]
    TimedOut(u64),
    #[error("Could not reach the search provider: {0}.")]
    Unreachable(String),
    #[error("The search provider answered {status}.{body}")]
    Status { status: String, body: String },
    #[error("The search provider's answer could not be read: {0}.")]
    Unreadable(String),
    #[error("The search was interrupted.")]
    Cancelled,
}

const TIMEOUT: Duration = Duration::from_secs(20);

impl SearchProvider {
    /// The provider `name` (`searxng`, `brave`, `tavily`) at `url` (required for SearXNG; the
    /// API's own address otherwise), its key read from the environment variable `key_env`
    /// (default `BRAVE_API_KEY`, `TAVILY_API_KEY`). `Err` says what is missing.
    pub fn new(name: &str, url: Option<&str>, key_env: Option<&str>) -> Result<SearchProvider, String> {
        let (api, default_url, default_env) = match name {
            "searxng" => (Api::Searxng, None, None),
            "brave" => (Api::Brave, Some("https://api.search.brave.com/res/v1/web/search"), Some("BRAVE_API_KEY")),
            "tavily" => (Api::Tavily, Some("https://api.tavily.com/search"), Some("TAVILY_API_KEY")),
            other => return Err(format!("web search provider {other:?} is not one of searxng, brave, tavily")),
        };
        let url = url.or(default_url).ok_or_else(|| format!("web search provider {name} needs a `url`"))?;
        let url = Url::parse(url).map_err(|e| format!("web search url {url:?}: {e}"))?;
        let key = match key_env.or(default_env) {
            Some(var) => Some({
                lembas_sys::child_env::keep_secret(var);
                std::env::var(var)
                    .ok()
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| format!("web search provider {name} needs its key in ${var}"))?
            }),
            None => None,
        };
        Ok(SearchProvider { api, url, key })
    }
}

/// Searches for `query`, the best `limit` results first.
pub async fn search(
    provider: &SearchProvider,
    query: &str,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Vec<SearchHit>, SearchError> {
    let client = reqwest::Client::builder()
        .user_agent(crate::user_agent())
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| SearchError::Unreachable(e.to_string()))?;
    let request = match provider.api {
        Api::Searxng => {
            let mut url = provider.url.clone();
            if !url.path().ends_with("/search") {
                let path = format!("{}/search", url.path().trim_end_matches('/'));
                url.set_path(&path);
            }
            url.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
            client.get(url)
        }
        Api::Brave => {
            let mut url = provider.url.clone();
            url.query_pairs_mut().append_pair("q", query).append_pair("count", &limit.min(20).to_string());
            client
                .get(url)
                .header("X-Subscription-Token", provider.key.clone().unwrap_or_default())
                .header(reqwest::header::ACCEPT, "application/json")
        }
        Api::Tavily => client
            .post(provider.url.clone())
            .bearer_auth(provider.key.clone().unwrap_or_default())
            .json(&json!({ "query": query, "max_results": limit.min(20) })),
    };
    let work = async {
        let response = request.send().await.map_err(failed)?;
        let status = response.status();
        let text = response.text().await.map_err(failed)?;
        if !status.is_success() {
            let said: String = text.chars().take(500).collect();
            let body = if said.trim().is_empty() { String::new() } else { format!("\n\n{}", said.trim()) };
            return Err(SearchError::Status { status: status.to_string(), body });
        }
        let answer: Value = serde_json::from_str(&text).map_err(|e| SearchError::Unreadable(e.to_string()))?;
        Ok(hits(provider.api, &answer, limit))
    };
    tokio::select! {
        done = work => done,
        () = cancel.cancelled() => Err(SearchError::Cancelled),
    }
}

fn failed(e: reqwest::Error) -> SearchError {
    if e.is_timeout() {
        return SearchError::TimedOut(TIMEOUT.as_secs());
    }
    SearchError::Unreachable(crate::innermost(&e))
}

/// The results in an answer of `api`: their list, and in each its title, address and snippet.
fn hits(api: Api, answer: &Value, limit: usize) -> Vec<SearchHit> {
    let (list, snippet) = match api {
        Api::Searxng => (&answer["results"], "content"),
        Api::Brave => (&answer["web"]["results"], "description"),
        Api::Tavily => (&answer["results"], "content"),
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().trim().to_owned();
    list.as_array()
        .into_iter()
        .flatten()
        .map(|hit| SearchHit { title: text(hit, "title"), url: text(hit, "url"), snippet: plain(&text(hit, snippet)) })
        .filter(|hit| !hit.url.is_empty())
        .take(limit)
        .collect()
}

/// A snippet without the emphasis tags some providers put around the words searched for.
fn plain(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    let mut rest = snippet;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        match rest[start..].find('>') {
            Some(end) if rest[start + 1..start + end].chars().all(|c| c.is_ascii_alphanumeric() || c == '/') => {
                rest = &rest[start + end + 1..];
            }
            _ => {
                out.push('<');
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The results as the model reads them: numbered, each its title, address and snippet.
pub fn said(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("No results for {query:?}.");
    }
    let mut out = format!("Results for {query:?}:\n");
    for (n, hit) in hits.iter().enumerate() {
        let title = if hit.title.is_empty() { hit.url.as_str() } else { hit.title.as_str() };
        out.push_str(&format!("\n{}. {title}\n   {}\n", n + 1, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_s_results_are_read_and_cut_to_the_limit() {
        let searx = json!({"results": [
            {"title": "Serde", "url": "https://serde.rs/", "content": "A <b>framework</b> for serializing"},
            {"title": "No address", "content": "x"},
            {"title": "Docs", "url": "https://docs.rs/serde", "content": ""}
        ]});
        let hits = hits(Api::Searxng, &searx, 10);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].snippet, "A framework for serializing");
        let brave =
            json!({"web": {"results": [{"title": "A", "url": "https://a.example/", "description": "a &lt; b"}]}});
        assert_eq!(super::hits(Api::Brave, &brave, 10)[0].snippet, "a &lt; b");
        let tavily = json!({"results": [{"title": "T1", "url": "https://1/"}, {"title": "T2", "url": "https://2/"}]});
        assert_eq!(super::hits(Api::Tavily, &tavily, 1).len(), 1);
        assert_eq!(plain("x < y and <em>z</em>"), "x < y and z");
    }

    #[test]
    fn a_provider_says_what_it_is_missing() {
        assert!(SearchProvider::new("searxng", None, None).unwrap_err().contains("needs a `url`"));
        assert!(SearchProvider::new("google", None, None).unwrap_err().contains("not one of"));
        let missing = SearchProvider::new("brave", None, Some("LEMBAS_TEST_NO_SUCH_KEY")).unwrap_err();
        assert!(missing.contains("$LEMBAS_TEST_NO_SUCH_KEY"), "{missing}");
        let searx = SearchProvider::new("searxng", Some("http://127.0.0.1:8888"), None).unwrap();
        assert_eq!(searx.api, Api::Searxng);
    }

    #[test]
    fn results_are_said_numbered() {
        let hits = vec![SearchHit { title: "Serde".into(), url: "https://serde.rs/".into(), snippet: "fast".into() }];
        assert_eq!(said("serde", &hits), "Results for \"serde\":\n\n1. Serde\n   https://serde.rs/\n   fast");
        assert_eq!(said("zzz", &[]), "No results for \"zzz\".");
    }
}
