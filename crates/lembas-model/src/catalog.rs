//! A server's models and what is known of each: `GET /v1/models`, completed where it is silent
//! about the context window by llama.cpp's `/props` (directly, or through llama-swap's
//! `/upstream/<model>/props`) and Ollama's `/api/show` — never guessed (`quirks.json`
//! `no-context-length`).

use std::time::Duration;

use lembas_models::ModelInfo;
use serde_json::{Value, json};

/// What a server said about its models.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    /// The models to talk to.
    pub models: Vec<ModelInfo>,
    /// The embedding models the server lists (an entry of `kind: "embedding"`), by id.
    pub embedders: Vec<String>,
    /// The server answered llama.cpp's `/props`: it can stream prompt progress.
    pub llama_cpp: bool,
}

/// Why the models could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered {status}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Status { url: String, status: u16, message: String },
    #[error("{url} does not list models: {reason}")]
    NotAModelServer { url: String, reason: String },
}

/// A plain HTTP client for lembas' own short requests (discovery, logins, model lists): one for
/// the process, handed out as a handle to it. Each client made loads the system's certificate
/// roots again and opens its own connections; a login asks a server two or three times.
pub fn http() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .user_agent(concat!("lembas/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(30))
                .build()
                .expect("a plain HTTP client builds")
        })
        .clone()
}

fn with_key(req: reqwest::RequestBuilder, key: Option<&str>) -> reqwest::RequestBuilder {
    match key {
        Some(k) => req.bearer_auth(k),
        None => req,
    }
}

/// One model entry of `/v1/models`, with the metadata fields lembas reads wherever a server
/// puts them.
pub fn model_from_entry(entry: &Value) -> Option<ModelInfo> {
    let id = entry.get("id").or_else(|| entry.get("model")).and_then(Value::as_str)?.to_owned();
    // LLeMbas and others send metadata with the spec's names; read those as they are.
    let mut model: ModelInfo = serde_json::from_value(entry.clone()).unwrap_or_default();
    model.id = id;
    if model.name.is_none() {
        model.name = entry.get("display_name").and_then(Value::as_str).map(str::to_owned);
    }
    if model.context.is_none() {
        model.context = ["context_length", "context_window", "max_model_len", "max_context_length"]
            .iter()
            .find_map(|k| entry.get(*k).and_then(Value::as_u64));
    }
    Some(model)
}

/// What a `/v1/models` entry is for, by its `kind` (or `type`): unsaid, a model to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Chat,
    Embedding,
    /// Speech, images, anything else: not lembas' to use.
    Other,
}

fn entry_kind(entry: &Value) -> Kind {
    let said = entry.get("kind").or_else(|| entry.get("type")).and_then(Value::as_str);
    match said.map(str::to_ascii_lowercase).as_deref() {
        None | Some("chat" | "llm" | "vlm" | "text" | "completion" | "model") => Kind::Chat,
        Some("embedding" | "embeddings" | "embed") => Kind::Embedding,
        Some(_) => Kind::Other,
    }
}

/// The server's root: the base without its `/v1`.
pub fn server_root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Lists the models at `base_url` (ending in `/v1`).
pub async fn list_models(base_url: &str, key: Option<&str>) -> Result<Catalog, CatalogError> {
    let client = http();
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let response = with_key(client.get(&url), key)
        .send()
        .await
        .map_err(|e| CatalogError::Unreachable { url: url.clone(), reason: crate::client::root_cause(&e) })?;
    let status = response.status().as_u16();
    if status != 200 {
        let code = response.status();
        let body = crate::client::read_capped(response, crate::client::MAX_ERROR_BODY)
            .await
            .map(|(t, _)| t)
            .unwrap_or_default();
        let message = if body.trim().is_empty() { String::new() } else { crate::client::body_message(&body, code) };
        return Err(CatalogError::Status { url, status, message });
    }
    let body: Value =
        response.json().await.map_err(|e| CatalogError::NotAModelServer { url: url.clone(), reason: e.to_string() })?;
    let entries = body.get("data").or_else(|| body.get("models")).and_then(Value::as_array).ok_or_else(|| {
        CatalogError::NotAModelServer { url: url.clone(), reason: "no \"data\" list in the answer".to_owned() }
    })?;
    let mut catalog = Catalog { models: Vec::new(), embedders: Vec::new(), llama_cpp: false };
    for entry in entries {
        match entry_kind(entry) {
            Kind::Chat => catalog.models.extend(model_from_entry(entry)),
            Kind::Embedding => catalog.embedders.extend(model_from_entry(entry).map(|m| m.id)),
            Kind::Other => {}
        }
    }

    let root = server_root(base_url);
    let server_props = props_of(&client, &format!("{root}/props"), key).await;
    catalog.llama_cpp = server_props.is_some();
    if let Some(props) = &server_props {
        for model in catalog.models.iter_mut() {
            apply_props(model, props);
        }
    }
    // How its tokenizer counts: what the first request's size is judged by against the window.
    if server_props.is_some()
        && let Some(per_token) = bytes_per_token(&client, root, key).await
    {
        for model in catalog.models.iter_mut() {
            model.bytes_per_token.get_or_insert(per_token);
        }
    }
    let props = server_props.as_ref().and_then(context_of);
    for model in catalog.models.iter_mut().filter(|m| m.context.is_none()) {
        model.context = match props {
            Some(n) => Some(n),
            None => match context_from_props(&client, &format!("{root}/upstream/{}/props", model.id), key).await {
                Some(n) => Some(n),
                None => context_from_ollama(&client, root, &model.id, key).await,
            },
        };
    }
    Ok(catalog)
}

/// Text like what a session's first request carries — instructions in prose, tool schemas in
/// JSON, paths and commands — for a server's tokenizer to count.
const SAMPLE: &str = r#"You are a coding agent working in the person's project. Read files before you change them, keep changes small, and run the project's tests with `cargo test` or `npm test` before you finish. Paths are relative to the project root, such as src/main.rs or crates/lembas-core/src/turn.rs.
{"name": "edit", "description": "Replace one exact piece of a file with new text.", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "The file, relative to the project root."}, "old_string": {"type": "string"}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean", "default": false}}, "required": ["path", "old_string", "new_string"]}}
{"name": "bash", "description": "Run a command in the project with bash; its output comes back.", "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer", "minimum": 1, "maximum": 600}, "background": {"type": "boolean"}}, "required": ["command"]}}"#;

/// How many bytes one token of the server's model holds, by its `/tokenize` count of [`SAMPLE`].
async fn bytes_per_token(client: &reqwest::Client, root: &str, key: Option<&str>) -> Option<f64> {
    let response =
        with_key(client.post(format!("{root}/tokenize")), key).json(&json!({ "content": SAMPLE })).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let counted: Value = response.json().await.ok()?;
    let tokens = counted["tokens"].as_array()?.len();
    (tokens > 0).then(|| SAMPLE.len() as f64 / tokens as f64)
}

async fn props_of(client: &reqwest::Client, url: &str, key: Option<&str>) -> Option<Value> {
    let response = with_key(client.get(url), key).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn context_of(props: &Value) -> Option<u64> {
    props["default_generation_settings"]["n_ctx"].as_u64().or_else(|| props["n_ctx"].as_u64())
}

async fn context_from_props(client: &reqwest::Client, url: &str, key: Option<&str>) -> Option<u64> {
    props_of(client, url, key).await.as_ref().and_then(context_of)
}

/// What llama.cpp's `/props` says of the model it serves, where the model list said nothing:
/// `total_slots` is how many requests it serves at once (`capacity.parallel`), its
/// `modalities` whether it sees, and its chat template whether it has the thinking switch.
pub fn apply_props(model: &mut ModelInfo, props: &Value) {
    // llama-server hands `chat_template_kwargs` to the Jinja template as they are, so the
    // switch (`enable_thinking: false`) exists exactly when the template reads that variable
    // (Qwen3, Nemotron and the like); a template that never names it ignores the kwarg.
    if model.thinking_switch.is_none()
        && props["chat_template"].as_str().is_some_and(|template| template.contains("enable_thinking"))
    {
        model.thinking_switch = Some(true);
    }
    if let Some(slots) = props["total_slots"].as_u64().filter(|n| *n > 0) {
        let capacity = model.capacity.get_or_insert_with(Default::default);
        if capacity.parallel.is_none() && capacity.single_session.is_none() {
            capacity.parallel = Some(slots as u32);
        }
    }
    if model.vision.is_none()
        && let Some(vision) = props["modalities"]["vision"].as_bool()
    {
        model.vision = Some(vision);
    }
}

/// The window Ollama's own default gives a model on its OpenAI route (its documentation: 4096
/// tokens unless `OLLAMA_CONTEXT_LENGTH` or the model's `num_ctx` says otherwise).
pub const OLLAMA_DEFAULT_CONTEXT: u64 = 4096;

/// The window Ollama really serves `model` with on its OpenAI route — which cuts a longer prompt
/// silently from the front: the loaded model's (`/api/ps` `context_length`), else the `num_ctx`
/// its Modelfile sets (`/api/show` `parameters`), else Ollama's default. Never the trained
/// maximum (`model_info.<arch>.context_length`), which only bounds the others. `None` where the
/// server is not Ollama.
async fn context_from_ollama(client: &reqwest::Client, root: &str, model: &str, key: Option<&str>) -> Option<u64> {
    let response =
        with_key(client.post(format!("{root}/api/show")), key).json(&json!({ "model": model })).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let show: Value = response.json().await.ok()?;
    let trained = show["model_info"]
        .as_object()
        .and_then(|info| info.iter().find(|(k, _)| k.ends_with(".context_length")))
        .and_then(|(_, v)| v.as_u64());
    let set = show["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|line| match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["num_ctx", n] => n.parse::<u64>().ok(),
            _ => None,
        })
    });
    let loaded = loaded_context(client, root, model, key).await;
    let window = loaded.or(set).unwrap_or(OLLAMA_DEFAULT_CONTEXT);
    Some(trained.map_or(window, |t| window.min(t)))
}

/// The window a model Ollama has loaded runs with (`/api/ps`), if it is loaded.
async fn loaded_context(client: &reqwest::Client, root: &str, model: &str, key: Option<&str>) -> Option<u64> {
    let response = with_key(client.get(format!("{root}/api/ps")), key).send().await.ok()?;
    let ps: Value = response.json().await.ok()?;
    ps["models"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == model || m["model"] == model)
        .and_then(|m| m["context_length"].as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_spec_fields_and_common_context_names() {
        let m = model_from_entry(&json!({"id": "qwen", "context": 32768, "efforts": ["low"], "thinking_switch": true}))
            .unwrap();
        assert_eq!((m.context, m.thinking_switch), (Some(32768), Some(true)));
        let v = model_from_entry(&json!({"id": "x", "object": "model", "max_model_len": 8192})).unwrap();
        assert_eq!(v.context, Some(8192));
        assert!(model_from_entry(&json!({"object": "model"})).is_none());
    }

    #[test]
    fn an_entry_is_a_model_to_talk_to_an_embedder_or_neither_by_its_kind() {
        assert_eq!(entry_kind(&json!({"id": "a", "object": "model"})), Kind::Chat);
        assert_eq!(entry_kind(&json!({"id": "a", "type": "vlm"})), Kind::Chat);
        assert_eq!(entry_kind(&json!({"id": "e", "kind": "embedding"})), Kind::Embedding);
        assert_eq!(entry_kind(&json!({"id": "e", "type": "embeddings"})), Kind::Embedding);
        assert_eq!(entry_kind(&json!({"id": "v", "kind": "voice"})), Kind::Other);
    }

    #[test]
    fn props_give_slots_vision_and_the_thinking_switch_only_where_the_list_was_silent() {
        let template =
            "{%- if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>{% endif %}";
        let props = json!({"total_slots": 4, "modalities": {"vision": true}, "chat_template": template});
        let mut silent = model_from_entry(&json!({"id": "qwen3"})).unwrap();
        apply_props(&mut silent, &props);
        assert_eq!(silent.capacity.as_ref().and_then(|c| c.parallel), Some(4));
        assert_eq!((silent.vision, silent.thinking_switch), (Some(true), Some(true)));

        let mut said = model_from_entry(&json!({"id": "q", "thinking_switch": false, "vision": false})).unwrap();
        apply_props(&mut said, &props);
        assert_eq!((said.vision, said.thinking_switch), (Some(false), Some(false)), "the list's own word stands");

        let mut plain = model_from_entry(&json!({"id": "smol"})).unwrap();
        apply_props(&mut plain, &json!({"chat_template": "{{ messages }}", "modalities": {"vision": false}}));
        assert_eq!(plain.thinking_switch, None, "a template that never reads the switch has none");
    }

    #[test]
    fn root_drops_v1() {
        assert_eq!(server_root("http://h:1/v1/"), "http://h:1");
        assert_eq!(server_root("http://h:1/api"), "http://h:1/api");
    }
}
