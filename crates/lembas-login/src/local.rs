//! `lembas login` with no URL: the model servers people run on their own machine, each looked
//! for where it listens unless told otherwise — so a new person's first command works.

use std::time::Duration;

use serde_json::Value;

/// The servers looked for, by name and where they listen by default.
pub const LOCAL_SERVERS: &[(&str, &str)] = &[
    ("llama-server", "http://127.0.0.1:8080"),
    ("Ollama", "http://127.0.0.1:11434"),
    ("LM Studio", "http://127.0.0.1:1234"),
    ("vLLM", "http://127.0.0.1:8000"),
];

/// A server found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub url: String,
    pub models: usize,
}

/// The servers among `candidates` (name, root URL) that answer a model list within `wait`, in
/// the order given. They are asked all at once, so the whole look takes `wait` at most.
pub async fn find_local(candidates: &[(String, String)], wait: Duration) -> Vec<Found> {
    let Ok(client) = reqwest::Client::builder().timeout(wait).connect_timeout(wait).build() else { return Vec::new() };
    // Each asked on a task of its own, so they wait side by side.
    let asks: Vec<_> = candidates
        .iter()
        .cloned()
        .map(|(name, url)| {
            let client = client.clone();
            tokio::spawn(async move {
                let listing = format!("{}/v1/models", url.trim_end_matches('/'));
                let body: Value = client.get(listing).send().await.ok()?.error_for_status().ok()?.json().await.ok()?;
                let models = body.get("data").or_else(|| body.get("models")).and_then(Value::as_array)?.len();
                Some(Found { name, url, models })
            })
        })
        .collect();
    let mut found = Vec::new();
    for ask in asks {
        found.extend(ask.await.ok().flatten());
    }
    found
}

/// The candidates: `LEMBAS_LOCAL_SERVERS` (`name=url,name=url`) when set, else [`LOCAL_SERVERS`].
pub fn local_candidates(setting: Option<&str>) -> Vec<(String, String)> {
    match setting.filter(|s| !s.trim().is_empty()) {
        Some(listed) => listed
            .split(',')
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, url)| (name.trim().to_owned(), url.trim().to_owned()))
            .collect(),
        None => LOCAL_SERVERS.iter().map(|(n, u)| (n.to_string(), u.to_string())).collect(),
    }
}
