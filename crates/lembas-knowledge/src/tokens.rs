//! Counting by the embedder's own tokenizer (`filesystem.md` *Indexing, by tokens*): where the
//! embedder's server has llama.cpp's `/tokenize`, a file's tokens are its tokens there (with their
//! pieces, laid back on the text), and the context its `/props` states caps a piece, room left for
//! the model's own markers. Elsewhere `ceil(bytes / 2)` stands in ([`lembas_chunking::ByteEstimate`]).

use serde_json::{Value, json};

use crate::embed::Embedder;

/// Tokens a piece leaves for the embedder's own markers (480 under 512).
const MARKER_ROOM: usize = 32;
/// A piece is never made smaller than this for a model with a small context.
const SMALLEST_PIECE: usize = 128;

/// The embedder's tokenizer, reached on its server.
#[derive(Debug, Clone)]
pub(crate) struct ModelTokens {
    root: String,
    key: Option<String>,
    /// The most tokens a piece may hold for this model.
    pub size: usize,
}

/// A text's tokens as the model counts them: where each lies in the text, or — where its pieces
/// could not be laid back on the text (a tokenizer that changes case or spelling) — how many bytes
/// one holds on average in it.
pub(crate) enum Counted {
    Spans(Vec<(usize, usize)>),
    BytesPerToken(f64),
}

impl lembas_chunking::Tokenizer for Counted {
    fn tokens(&self, chars: &[char]) -> Vec<(usize, usize)> {
        match self {
            Counted::Spans(spans) => spans.clone(),
            Counted::BytesPerToken(per) => lembas_chunking::BytesPerToken(*per).tokens(chars),
        }
    }
}

/// Where each of `pieces` lies in `chars`, in order: a piece is matched after any whitespace the
/// text has there, ignoring case, without a WordPiece `##` or a SentencePiece `▁`. `None` when one
/// does not match.
fn lay_back(chars: &[char], pieces: &[&str]) -> Option<Vec<(usize, usize)>> {
    let mut spans = Vec::with_capacity(pieces.len());
    let mut at = 0;
    for piece in pieces {
        let piece = piece.strip_prefix("##").unwrap_or(piece).replace('▁', " ");
        let wanted: Vec<char> = piece.trim_start().chars().collect();
        if wanted.is_empty() {
            continue;
        }
        while at < chars.len() && chars[at].is_whitespace() {
            at += 1;
        }
        let end = at + wanted.len();
        let same = end <= chars.len()
            && chars[at..end].iter().zip(&wanted).all(|(a, b)| a == b || a.to_lowercase().eq(b.to_lowercase()));
        if !same {
            return None;
        }
        spans.push((at, end));
        at = end;
    }
    Some(spans)
}

impl Embedder {
    /// The embedder's tokenizer, when its server has `/tokenize`; asked once per index run.
    pub(crate) async fn tokenizer(&self) -> Option<ModelTokens> {
        let root = server_root(&self.url);
        let tokens = ModelTokens { root, key: self.key.clone(), size: crate::indexer::PIECE_TOKENS };
        tokens.tokenize("a probe").await?;
        let context = tokens.context().await;
        let size = context.map_or(tokens.size, |n| n.saturating_sub(MARKER_ROOM).clamp(SMALLEST_PIECE, tokens.size));
        Some(ModelTokens { size, ..tokens })
    }
}

/// The server's root: the embedder's base without its `/v1`.
fn server_root(url: &str) -> String {
    let base = url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_owned()
}

impl ModelTokens {
    /// A request to the embedder's server at `path`, with its key.
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = crate::embed::http().request(method, format!("{}{path}", self.root));
        crate::embed::with_key(request, self.key.as_deref())
    }

    /// The tokens' pieces as the server gives them (`None`: no `/tokenize`, or an answer without
    /// them).
    async fn tokenize(&self, text: &str) -> Option<Vec<Value>> {
        let body = json!({ "content": text, "add_special": false, "with_pieces": true });
        let response = self.request(reqwest::Method::POST, "/tokenize").json(&body).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let answer: Value = response.json().await.ok()?;
        answer.get("tokens")?.as_array().cloned()
    }

    /// The context the server states for a request (llama.cpp's `/props`).
    async fn context(&self) -> Option<usize> {
        let props: Value = self.request(reqwest::Method::GET, "/props").send().await.ok()?.json().await.ok()?;
        let n = props.pointer("/default_generation_settings/n_ctx").or_else(|| props.get("n_ctx"))?;
        n.as_u64().map(|n| n as usize).filter(|&n| n > 0)
    }

    /// `text`'s tokens as the model counts them; `None` when the server did not answer.
    pub(crate) async fn count(&self, text: &str) -> Option<Counted> {
        let tokens = self.tokenize(text).await?;
        let pieces: Option<Vec<&str>> = tokens.iter().map(|t| t.get("piece").and_then(Value::as_str)).collect();
        let chars: Vec<char> = text.chars().collect();
        if let Some(spans) = pieces.and_then(|p| lay_back(&chars, &p)) {
            return Some(Counted::Spans(spans));
        }
        let per = text.len() as f64 / tokens.len().max(1) as f64;
        Some(Counted::BytesPerToken(per.max(0.5)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_chunking::Tokenizer as _;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    #[test]
    fn pieces_are_laid_back_on_the_text_past_spaces_case_and_markers() {
        let text = chars("Hello  wonderful\nworld");
        let spans = lay_back(&text, &["hello", "won", "##der", "##ful", "▁world"]).unwrap();
        assert_eq!(spans, [(0, 5), (7, 10), (10, 13), (13, 16), (17, 22)]);
        assert_eq!(lay_back(&text, &["Hello", "there"]), None, "a piece that is not there");
    }

    #[test]
    fn a_measured_ratio_cuts_runs_into_tokens_of_that_many_bytes() {
        let text = chars("abcdef gh");
        assert_eq!(Counted::BytesPerToken(3.0).tokens(&text), [(0, 3), (3, 6), (7, 9)]);
    }
}
