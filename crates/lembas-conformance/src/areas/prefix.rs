//! The `prefix` area (`context.md` §10): one session's requests — which system prompt each
//! sends, which tools it offers, and the note on a user message.

use std::collections::BTreeMap;

use lembas_context::note::{Facts, Told};
use lembas_spec::render;
use serde_json::{Value, json};

use super::{text, unknown_op};

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default()
}

/// Sets the fields a step (or the start) names.
fn apply(facts: &mut Facts, fields: &Value) {
    let text = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_owned);
    if let Some(v) = text("date") {
        facts.date = Some(v);
    }
    if let Some(v) = text("mode") {
        facts.mode = Some(v);
    }
    if let Some(v) = text("plan") {
        facts.plan = Some(v);
    }
    if let Some(v) = text("memory") {
        facts.memory = Some(v);
    }
    if let Some(v) = text("personality") {
        facts.personality = Some(v);
    }
    if let Some(v) = fields.get("files") {
        facts.files = map(v);
    }
    if let Some(v) = fields.get("mcp") {
        facts.mcp = map(v);
    }
}

/// The compaction's ask: `tasks/compact.md` with no transcript and no earlier summary.
fn compaction_ask() -> String {
    let template = lembas_spec::file("prompts/tasks/compact.md").expect("spec/prompts/tasks/compact.md");
    render(template, &[("transcript", ""), ("previous_summary", "")]).trim_end().to_owned()
}

pub(crate) fn run(case: &Value) -> Result<Value, String> {
    let start = case.get("start").ok_or("no \"start\"")?;
    let mut now = Facts::default();
    apply(&mut now, start);
    let could = strings(start.get("could"));
    let mut met = start.get("met").map_or_else(|| could.clone(), |m| strings(Some(m)));
    // The prompt is made from what stands at the start, without a clock in it.
    let mut told = Told::knows(Facts { date: None, ..now.clone() });
    let mut system = 1;

    // The tools offered for the whole session: those whose requirements it could ever meet.
    let mut offered = Vec::new();
    for name in strings(case.get("tools")) {
        let def = lembas_spec::tool(&name).ok_or_else(|| format!("no tool {name:?} in spec/tools"))?;
        if def.requires.iter().all(|r| could.contains(r)) {
            offered.push(name);
        }
    }
    let request = |system: u32, note: Option<String>| json!({ "system": system, "tools": offered, "note": note });

    let mut answers = Vec::new();
    for step in case["steps"].as_array().ok_or("no \"steps\"")? {
        let answer = match text(step, "op")? {
            "user" => request(system, told.note(&now)),
            "tool" | "wrapup" => request(system, None),
            "set" => {
                apply(&mut now, step);
                if let Some(m) = step.get("met") {
                    met = strings(Some(m));
                }
                if step.get("by").and_then(Value::as_str) == Some("model") {
                    // The model's own tool already told it: what it changed counts as told.
                    apply(&mut told.facts, step);
                }
                Value::Null
            }
            "call" => {
                let name = text(step, "tool")?;
                let def = lembas_spec::tool(name).ok_or_else(|| format!("no tool {name:?} in spec/tools"))?;
                let in_plan = now.mode.as_deref() == Some("plan");
                let unmet = def.requires.iter().any(|r| if r == "plan" { !in_plan } else { !met.contains(r) });
                if unmet { json!(def.unavailable) } else { Value::Null }
            }
            "compact" => {
                let answer = json!({ "system": system, "tools": offered, "ask": compaction_ask() });
                system += 1;
                told = Told::knows(Facts { date: None, ..now.clone() });
                answer
            }
            "model" => {
                system += 1;
                let date = told.facts.date.clone();
                told = Told::knows(Facts { date, ..now.clone() });
                Value::Null
            }
            op => return Err(unknown_op(op)),
        };
        answers.push(answer);
    }
    Ok(Value::Array(answers))
}
