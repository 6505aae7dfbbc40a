//! Areas the permission rules answer: `delegation` and `monitor`.

use std::path::{Path, PathBuf};

use lembas_permissions::delegation::{
    Grant, SubagentAnswer, check_add, request_answer, risk_class, subagent_call, tighten,
};
use lembas_permissions::{Call, Context, Decision, Judge, Mode, RuleSet, Source};
use serde_json::{Value, json};

use super::{text, unknown_op};

/// The cases' project: `/project`, nothing named on disk, only the default rules.
fn judge() -> Judge {
    Judge::with_defaults(Context { root: "/project".into(), ..Context::default() })
}

fn resolve(word: &str) -> PathBuf {
    lembas_paths::resolve(Path::new("/project"), word)
}

fn mode(case: &Value, key: &str) -> Result<Mode, String> {
    let word = text(case, key)?;
    Mode::parse(word).ok_or_else(|| format!("unknown mode {word:?}"))
}

fn strings(case: &Value, key: &str) -> Vec<String> {
    case.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn risk_of(tool: &str) -> Result<lembas_spec::RiskClass, String> {
    lembas_spec::tool(tool).map(|t| t.risk).ok_or_else(|| format!("no tool {tool:?} in spec/tools"))
}

pub(crate) fn delegation(case: &Value) -> Result<Value, String> {
    match text(case, "op")? {
        "add" => {
            let parent = mode(case, "parent_mode")?;
            let wanted = case
                .get("mode")
                .and_then(Value::as_str)
                .map(|m| Mode::parse(m).ok_or(format!("unknown mode {m:?}")))
                .transpose()?;
            Ok(match check_add(parent, wanted, &strings(case, "request")) {
                Ok(m) => json!({ "result": null, "mode": m.as_str() }),
                Err(refusal) => json!({ "result": refusal, "mode": null }),
            })
        }
        "call" => {
            let call = &case["call"];
            let tool = text(call, "tool")?;
            let risk = risk_of(tool)?;
            let paths: Vec<PathBuf> = call.get("path").and_then(Value::as_str).map(resolve).into_iter().collect();
            let line = call.get("line").and_then(Value::as_str);
            let request: Vec<_> = strings(case, "request").iter().filter_map(|k| risk_class(k)).collect();
            let grants: Vec<Grant> = case
                .get("grants")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|g| Grant {
                    tool: g["tool"].as_str().unwrap_or_default().to_owned(),
                    pattern: g["pattern"].as_str().unwrap_or_default().to_owned(),
                })
                .collect();
            let unattended = case
                .get("unattended")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .then_some("Nobody is here to approve it.");
            let answer = subagent_call(
                &judge(),
                mode(case, "main_mode")?,
                mode(case, "mode")?,
                &request,
                &grants,
                &Call { url: call.get("url").and_then(Value::as_str), ..Call::new(tool, risk, line, &paths) },
                Path::new("/project"),
                &Path::to_path_buf,
                unattended,
            );
            let own_reason = case.get("own_reason").and_then(Value::as_bool).unwrap_or(false);
            Ok(match answer {
                SubagentAnswer::Run => json!({ "answer": "run" }),
                SubagentAnswer::Person => json!({ "answer": "person" }),
                SubagentAnswer::Refused(_) if own_reason => json!({ "answer": "refused" }),
                SubagentAnswer::Refused(reason) => json!({ "answer": "refused", "text": reason }),
            })
        }
        "request" => {
            let tool = text(case, "tool")?;
            Ok(json!({ "result": request_answer(&strings(case, "request"), tool, risk_of(tool)?, 1) }))
        }
        "switch" => {
            // The spec's cases list them as `agents`; ours first said `subagents`.
            let mut tree: Vec<(String, String, Mode)> = case
                .get("agents")
                .or_else(|| case.get("subagents"))
                .and_then(Value::as_array)
                .ok_or("no \"agents\"")?
                .iter()
                .map(|s| {
                    Ok((
                        text(s, "name")?.to_owned(),
                        s.get("parent").and_then(Value::as_str).unwrap_or("lead").to_owned(),
                        mode(s, "mode")?,
                    ))
                })
                .collect::<Result<_, String>>()?;
            let _from = mode(case, "main_from")?;
            tighten(mode(case, "main_to")?, &mut tree);
            Ok(Value::Object(tree.into_iter().map(|(name, _, m)| (name, json!(m.as_str()))).collect()))
        }
        op => Err(unknown_op(op)),
    }
}

pub(crate) fn monitor(case: &Value) -> Result<Value, String> {
    match text(case, "kind")? {
        "hash" => {
            let exit = case["exit"].as_i64().ok_or("no \"exit\"")? as i32;
            Ok(json!(lembas_scheduled::monitor_hash(text(case, "output")?.as_bytes(), exit)))
        }
        "judge" => {
            let mut judge = judge();
            if let Some(rules) = case.get("rules") {
                let mut set = RuleSet::defaults();
                set.add_json(rules, Source::Global)?;
                judge.rules = set;
            }
            let line = text(case, "line")?;
            let call = Call::new("bash", lembas_spec::RiskClass::Execute, Some(line), &[]);
            Ok(match judge.evaluate(mode(case, "mode")?, &call, Path::new("/project"), &Path::to_path_buf) {
                Decision::Allow => json!("run"),
                Decision::Ask => json!({ "refused": "asks" }),
                Decision::Refuse(_) => json!({ "refused": "denied" }),
            })
        }
        kind => Err(unknown_op(kind)),
    }
}
