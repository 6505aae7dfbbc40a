//! The `context` area: a session's steps, each answered with the text it inserts.

use std::collections::HashMap;
use std::path::Path;

use lembas_context::{FileChange, Ledger, ResultId, change_result, recall};
use lembas_spec::{Cap, loop_spec};
use serde_json::{Value, json};

use super::{number, text, unknown_op};

/// The project root the cases' relative paths are read against: what identifies a file is its
/// resolved path, whatever spelling the call used.
const ROOT: &str = "/project";

fn cap_for(case: &Value) -> Result<Cap, String> {
    let mut cap = loop_spec().context.cap;
    if let Some(limits) = case.get("limits") {
        let get = |key: &str, default: usize| -> Result<usize, String> {
            Ok(number(limits, key)?.map_or(default, |n| n as usize))
        };
        cap = Cap {
            max_lines: get("max_lines", cap.max_lines)?,
            max_chars: get("max_chars", cap.max_chars)?,
            head_lines: get("head_lines", cap.head_lines)?,
            head_chars: get("head_chars", cap.head_chars)?,
            tail_lines: get("tail_lines", cap.tail_lines)?,
            tail_chars: get("tail_chars", cap.tail_chars)?,
        };
    }
    Ok(cap)
}

fn id(step: &Value) -> Result<ResultId, String> {
    text(step, "id")?.parse().map_err(|()| format!("{:?} is not a result id", step["id"]))
}

pub(crate) fn run(case: &Value) -> Result<Value, String> {
    let mut ledger = Ledger::with_cap(cap_for(case)?);
    let mut stored: HashMap<ResultId, String> = HashMap::new();
    let mut answers = Vec::new();
    for step in case["steps"].as_array().ok_or("no \"steps\"")? {
        let answer = match text(step, "op")? {
            "read" => {
                let id = id(step)?;
                let call_path = text(step, "path")?;
                let file = lembas_paths::resolve(Path::new(ROOT), call_path);
                let offset = number(step, "offset")?.map(|n| n as usize);
                let limit = number(step, "limit")?.map(|n| n as usize);
                match ledger.read(id, call_path, &file, text(step, "content")?, offset, limit) {
                    Ok(inserted) => {
                        stored.insert(id, inserted.stored);
                        inserted.text
                    }
                    Err(e) => format!("[{id}]\n{e}"),
                }
            }
            "output" => {
                let id = id(step)?;
                let inserted = ledger.output(id, text(step, "tool")?, &step["args"], text(step, "text")?);
                stored.insert(id, inserted.stored);
                inserted.text
            }
            op @ ("write" | "edit") => {
                let id = id(step)?;
                let path = text(step, "path")?.to_owned();
                let after = text(step, "after")?.to_owned();
                let change = match step.get("before").and_then(Value::as_str) {
                    None if op == "write" => FileChange::Created { path, after },
                    None => return Err("an edit needs \"before\"".into()),
                    Some(before) => FileChange::Changed { path, before: before.to_owned(), after },
                };
                let inserted = change_result(id, &change);
                stored.insert(id, inserted.stored);
                inserted.text
            }
            "recall" => {
                let id = id(step)?;
                let target = text(step, "target")?;
                let found = target.parse::<ResultId>().ok().and_then(|t| stored.get(&t)).map(String::as_str);
                let offset = number(step, "offset")?.map(|n| n as usize);
                let limit = number(step, "limit")?.map(|n| n as usize);
                let out = recall(id, target, found, offset, limit);
                stored.insert(id, out.clone());
                out
            }
            "reply" => {
                ledger.request_without_earlier_results();
                String::new()
            }
            "compact" => ledger.compact(),
            op => return Err(unknown_op(op)),
        };
        answers.push(answer);
    }
    Ok(json!(answers))
}
