//! The embedding model, over OpenAI's `POST /v1/embeddings`: texts in, unit vectors out. A piece
//! the model refuses (too long for it) is told apart from a model that is down, so the indexer
//! can cut the one in two and say the other.

use serde_json::{Value, json};

/// Where embeddings come from: an OpenAI-compatible base (`…/v1`), the model, and a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embedder {
    pub url: String,
    pub model: String,
    pub key: Option<String>,
}

/// Why texts got no vectors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The model would not take one of them (too long, say): its words.
    #[error("the embedding model refused it: {0}")]
    Refused(String),
    /// The model could not be reached or answered something else.
    #[error("the embedding model at {url} did not answer: {why}")]
    Down { url: String, why: String },
}

/// How many texts go in one request.
pub const BATCH: usize = 32;

impl Embedder {
    /// The vectors of `texts`, in order, each scaled to length one.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.url.trim_end_matches('/'));
        let down = |why: String| EmbedError::Down { url: self.url.clone(), why };
        let request = with_key(http().post(&url), self.key.as_deref());
        let response = request
            .json(&json!({ "model": self.model, "input": texts }))
            .send()
            .await
            .map_err(|e| down(e.to_string()))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status.as_u16() == 400 || status.as_u16() == 413 {
            let said = body["error"]["message"].as_str().or(body["error"].as_str()).unwrap_or("no reason given");
            return Err(EmbedError::Refused(said.to_owned()));
        }
        if !status.is_success() {
            return Err(down(format!("HTTP {status}")));
        }
        let mut data: Vec<&Value> = body["data"].as_array().map(|d| d.iter().collect()).unwrap_or_default();
        data.sort_by_key(|d| d["index"].as_u64().unwrap_or(0));
        let vectors: Vec<Vec<f32>> = data
            .iter()
            .map(|d| d["embedding"].as_array().map(|v| v.iter().filter_map(Value::as_f64).map(|x| x as f32).collect()))
            .collect::<Option<_>>()
            .ok_or_else(|| down("its answer has no embeddings".into()))?;
        if vectors.len() != texts.len() || vectors.iter().any(Vec::is_empty) {
            return Err(down(format!("it answered {} vectors for {} texts", vectors.len(), texts.len())));
        }
        Ok(vectors.into_iter().map(unit).collect())
    }
}

/// `request` with the server's key, when it needs one.
pub(crate) fn with_key(request: reqwest::RequestBuilder, key: Option<&str>) -> reqwest::RequestBuilder {
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

pub(crate) fn http() -> &'static reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder().timeout(std::time::Duration::from_secs(120)).build().expect("an HTTP client")
    })
}

/// `v` scaled to length one (a zero vector stays).
pub fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// A vector as stored: little-endian `f32`s.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `a` against a vector as stored, read in place (no copy of it made).
pub fn dot_blob(a: &[f32], stored: &[u8]) -> f32 {
    a.iter().zip(stored.chunks_exact(4)).map(|(x, b)| x * f32::from_le_bytes([b[0], b[1], b[2], b[3]])).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_vector_is_compared_as_it_was_kept() {
        let kept = to_blob(&unit(vec![3.0, 4.0]));
        assert!((dot_blob(&[0.6, 0.8], &kept) - 1.0).abs() < 1e-6);
        assert_eq!(dot_blob(&[1.0, 0.0], &to_blob(&[0.0, 2.0])), 0.0);
    }
}
