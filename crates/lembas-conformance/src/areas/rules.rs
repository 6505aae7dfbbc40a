//! Areas that are one pure function each.

use std::path::Path;

use lembas_chunking::{Words, chunk};
use lembas_context::reasoning::{Kind, sends_reasoning};
use lembas_models::{Control, ModelInfo, request_fields};
use lembas_permissions::Mode;
use lembas_progress::Progress;
use serde_json::{Value, json};

use super::{number, text, unknown_op};

pub(crate) fn paths(case: &Value) -> Result<Value, String> {
    let root = Path::new(text(case, "root")?);
    match text(case, "op")? {
        "env" => Ok(json!(lembas_paths::environment_lines(root, Path::new(text(case, "started")?)))),
        "resolve" => Ok(json!(lembas_paths::resolve(root, text(case, "path")?).to_string_lossy())),
        op => Err(unknown_op(op)),
    }
}

pub(crate) fn progress(case: &Value) -> Result<Value, String> {
    let progress: Progress = serde_json::from_value(case["progress"].clone()).map_err(|e| format!("progress: {e}"))?;
    let now = case["now"].as_i64().ok_or("no \"now\"")?;
    Ok(json!({ "text": progress.text(now), "line": progress.line(now) }))
}

pub(crate) fn levels(case: &Value) -> Result<Value, String> {
    let mut meta = case["model"].clone();
    meta.as_object_mut().ok_or("\"model\" is not an object")?.entry("id").or_insert(json!("case-model"));
    let model: ModelInfo = serde_json::from_value(meta).map_err(|e| format!("model: {e}"))?;
    match text(case, "op")? {
        "levels" => {
            let control = match model.control() {
                Control::None => "none",
                Control::Switch => "switch",
                Control::Slider => "slider",
            };
            Ok(json!({ "levels": model.levels(), "control": control, "start": model.start_level() }))
        }
        "request" => Ok(Value::Object(request_fields(&model, text(case, "level")?))),
        op => Err(unknown_op(op)),
    }
}

pub(crate) fn silent(case: &Value) -> Result<Value, String> {
    let (silent, stripped) = lembas_scheduled::silent(text(case, "text")?);
    Ok(json!({ "silent": silent, "stripped": stripped }))
}

pub(crate) fn chunk_tokens(case: &Value) -> Result<Value, String> {
    let size = number(case, "size")?.ok_or("no \"size\"")?;
    let overlap = number(case, "overlap")?.ok_or("no \"overlap\"")?;
    match text(case, "tokenizer")? {
        "words" => Ok(json!(chunk(text(case, "text")?, size as usize, overlap as usize, &Words))),
        other => Err(format!("no stand-in tokenizer {other:?}")),
    }
}

pub(crate) fn reasoning(case: &Value) -> Result<Value, String> {
    let messages = case["messages"].as_array().ok_or("no \"messages\"")?;
    let kinds = messages
        .iter()
        .map(|m| match m["role"].as_str() {
            Some("user") => Ok(Kind::User { starts_turn: m.get("turn").and_then(Value::as_bool).unwrap_or(true) }),
            Some("assistant") => Ok(Kind::Assistant),
            Some("tool") => Ok(Kind::Tool),
            other => Err(format!("unknown role {other:?}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sends = sends_reasoning(&kinds);
    Ok(messages
        .iter()
        .zip(sends)
        .map(|(m, send)| {
            let mut out = json!({ "role": m["role"], "content": m["content"] });
            let reasoning = m.get("reasoning").and_then(Value::as_str).unwrap_or("");
            if send && !reasoning.is_empty() {
                out["reasoning_content"] = json!(reasoning);
            }
            out
        })
        .collect())
}

pub(crate) fn scheduled(case: &Value) -> Result<Value, String> {
    let accept = case["accept"].as_bool().ok_or("no \"accept\"")?;
    let max_mode = Mode::parse(text(case, "max_mode")?).ok_or("unknown max_mode")?;
    let mode = case.get("mode").and_then(Value::as_str);
    match lembas_scheduled::scheduled_turn(accept, mode, max_mode, seconds(case, "approval_wait_s")?) {
        Ok(turn) => Ok(json!({ "mode": turn.mode.as_str(), "wait_s": turn.approval_wait_seconds })),
        Err(refusal) => Ok(json!({ "refused": refusal.reason })),
    }
}

fn model_of(case: &Value, key: &str) -> Result<ModelInfo, String> {
    serde_json::from_value(case[key].clone()).map_err(|e| format!("{key}: {e}"))
}

/// lembas' own cases for `subagents.md` §2–§4: names, the model a subagent runs on, and when
/// subagents are offered.
pub(crate) fn subagent_model(case: &Value) -> Result<Value, String> {
    let models = |key: &str| -> Result<Vec<ModelInfo>, String> {
        serde_json::from_value(case[key].clone()).map_err(|e| format!("{key}: {e}"))
    };
    match text(case, "op")? {
        "named" => Ok(json!({ "named": lembas_models::names(text(case, "text")?, text(case, "name")?) })),
        "model" => {
            let named: Vec<String> =
                serde_json::from_value(case["named"].clone()).map_err(|e| format!("named: {e}"))?;
            let asked = case.get("asked").and_then(Value::as_str);
            Ok(match lembas_models::subagent_model(&model_of(case, "session")?, asked, &models("usable")?, &named) {
                Ok(model) => json!({ "result": null, "model": model.id }),
                Err(refusal) => json!({ "result": refusal, "model": null }),
            })
        }
        "offered" => {
            Ok(json!({ "offered": lembas_models::subagent_offered(&model_of(case, "session")?, &models("usable")?) }))
        }
        op => Err(unknown_op(op)),
    }
}

/// A case's optional number of seconds, whole or not (a fraction is the code's to cut).
fn seconds(case: &Value, key: &str) -> Result<Option<f64>, String> {
    match case.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| format!("{key:?} is not a number")),
    }
}
