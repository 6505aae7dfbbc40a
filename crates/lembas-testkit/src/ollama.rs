//! The fake server playing Ollama as its documentation has it: `/api/show` gives a model's
//! trained maximum (`model_info.<arch>.context_length`) and the `num_ctx` its Modelfile sets
//! (in `parameters`), `/api/ps` the window a loaded model runs with (`context_length`) — and the
//! OpenAI route serves every model at that window, whatever the trained maximum says.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::server::{FakeServer, Shared, json_response, record};

/// What the Ollama the server plays says of its model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ollama {
    /// The model's trained maximum.
    pub trained: u64,
    /// `num_ctx` in the model's Modelfile, if it sets one.
    pub num_ctx: Option<u64>,
    /// The window the model runs with now that it is loaded (`/api/ps`); `None`: not loaded.
    pub loaded: Option<u64>,
}

impl Ollama {
    /// The window the OpenAI route serves the model at: the loaded model's, else its
    /// Modelfile's `num_ctx`, else Ollama's default of 4096 — never above the trained maximum.
    pub fn serves(&self) -> u64 {
        self.loaded.or(self.num_ctx).unwrap_or(4096).min(self.trained)
    }
}

impl FakeServer {
    /// Plays Ollama: `/api/show` and `/api/ps` answer as `ollama` says.
    pub fn set_ollama(&self, ollama: Ollama) {
        *self.shared.ollama.lock().unwrap() = Some(ollama);
    }
}

pub(crate) async fn show(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/api/show", &headers, &body);
    let Some(ollama) = shared.ollama.lock().unwrap().clone() else { return StatusCode::NOT_FOUND.into_response() };
    let mut parameters = String::from("stop                           \"<|im_end|>\"");
    if let Some(n) = ollama.num_ctx {
        parameters.push_str(&format!("\nnum_ctx                        {n}"));
    }
    json_response(
        StatusCode::OK,
        json!({
            "parameters": parameters,
            "details": { "family": "qwen2", "parameter_size": "1.5B" },
            "model_info": { "general.architecture": "qwen2", "qwen2.context_length": ollama.trained },
        }),
    )
}

pub(crate) async fn ps(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/api/ps", &headers, b"");
    let Some(ollama) = shared.ollama.lock().unwrap().clone() else { return StatusCode::NOT_FOUND.into_response() };
    let models: Vec<Value> = ollama
        .loaded
        .map(|n| {
            let id =
                shared.models.lock().unwrap().get(0).and_then(|m| m["id"].as_str()).unwrap_or("fake-model").to_owned();
            vec![json!({ "name": id, "model": id, "context_length": n })]
        })
        .unwrap_or_default();
    json_response(StatusCode::OK, json!({ "models": models }))
}
