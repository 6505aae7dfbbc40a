//! Tool calls an open model wrote into its reply's text instead of the `tool_calls` field — its
//! server's template did not turn them into calls — taken back out, so the turn goes on instead
//! of ending on what looks like prose. The forms met in practice:
//!
//! - Hermes and Qwen 2.5: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`;
//! - Qwen3-Coder: `<function=NAME><parameter=P>value</parameter>…</function>`, bare or inside
//!   `<tool_call>`;
//! - a reply that is nothing but the call as JSON (`{"name": …, "arguments": …}`, or a list of
//!   them), bare or in a fenced block;
//! - Mistral's `[TOOL_CALLS]` before a JSON list of calls, or before `NAME[ARGS]{…}` (its newer
//!   templates, one marker a call), and Llama 3's `<|python_tag|>` before a JSON call;
//! - reasoning whose opening tag the template swallowed, so the text holds a stray `</think>`.
//!
//! Only a call of a tool the session offers counts, so a reply that talks about these forms is
//! left as it is. Each call is taken once, in the order written.

use serde_json::Value;

use crate::ToolCall;

/// What was recovered from a reply's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The text with the calls (and the stray reasoning) taken out.
    pub text: String,
    /// Reasoning found before a stray closing tag.
    pub reasoning: String,
    pub calls: Vec<ToolCall>,
}

/// The calls in `text`, for the tools `schema` knows (it answers a tool's `parameters` schema,
/// `None` for a tool not offered). `None` when there is nothing to recover.
pub fn recover(text: &str, schema: &dyn Fn(&str) -> Option<Value>) -> Option<Recovered> {
    let (reasoning, rest) = stray_reasoning(text);
    let mut calls = Vec::new();
    let mut left = String::new();
    let mut cursor = rest;
    // `<tool_call>…</tool_call>` and bare `<function=…>…</function>`, in the order written.
    while let Some((at, form)) = next_form(cursor) {
        let (open, close) = form.tags();
        let body_at = at + open.len();
        let Some(end) = cursor[body_at..].find(close).map(|e| body_at + e) else { break };
        let inner = &cursor[body_at..end];
        let whole = &cursor[at..end + close.len()];
        let taken = match form {
            Form::Wrapped => json_calls(inner.trim(), schema).or_else(|| xml_call(inner, schema).map(|c| vec![c])),
            Form::Function => xml_call(whole, schema).map(|c| vec![c]),
        };
        match taken {
            Some(found) => {
                left.push_str(&cursor[..at]);
                calls.extend(found);
            }
            None => left.push_str(&cursor[..end + close.len()]),
        }
        cursor = &cursor[end + close.len()..];
    }
    left.push_str(cursor);
    if calls.is_empty()
        && let Some((before, found)) = marked_calls(&left, schema)
    {
        calls = found;
        left = before;
    } else if calls.is_empty()
        && let Some(found) = json_calls(unfenced(left.trim()), schema)
    {
        calls = found;
        left.clear();
    }
    if calls.is_empty() && reasoning.is_empty() {
        return None;
    }
    for (i, call) in calls.iter_mut().enumerate() {
        call.id = format!("text_call_{}", i + 1);
    }
    Some(Recovered { text: left.trim().to_owned(), reasoning: reasoning.trim().to_owned(), calls })
}

#[derive(Debug, Clone, Copy)]
enum Form {
    Wrapped,
    Function,
}

impl Form {
    fn tags(self) -> (&'static str, &'static str) {
        match self {
            Form::Wrapped => ("<tool_call>", "</tool_call>"),
            Form::Function => ("<function=", "</function>"),
        }
    }
}

/// The next call form that starts in `text`, and where.
fn next_form(text: &str) -> Option<(usize, Form)> {
    let wrapped = text.find("<tool_call>").map(|at| (at, Form::Wrapped));
    let function = text.find("<function=").map(|at| (at, Form::Function));
    match (wrapped, function) {
        (Some(w), Some(f)) => Some(if w.0 <= f.0 { w } else { f }),
        (w, f) => w.or(f),
    }
}

/// Reasoning before a closing tag with no opening one (the template put the opening tag in the
/// prompt), and what follows it.
fn stray_reasoning(text: &str) -> (&str, &str) {
    for (open, close) in [("<think>", "</think>"), ("<thinking>", "</thinking>")] {
        if let Some(at) = text.find(close)
            && !text[..at].contains(open)
        {
            return (&text[..at], &text[at + close.len()..]);
        }
    }
    ("", text)
}

/// The special tokens that may close a call a template left in the text.
const END_TOKENS: [&str; 3] = ["<|eom_id|>", "<|eot_id|>", "</s>"];

/// Calls after a template's marker — `[TOOL_CALLS]` (Mistral) or `<|python_tag|>` (Llama 3) —
/// and the text before the first marker.
fn marked_calls(text: &str, schema: &dyn Fn(&str) -> Option<Value>) -> Option<(String, Vec<ToolCall>)> {
    let (marker, at) = ["[TOOL_CALLS]", "<|python_tag|>"].iter().find_map(|m| text.find(m).map(|at| (*m, at)))?;
    let mut rest = text[at + marker.len()..].trim();
    for end in END_TOKENS {
        rest = rest.strip_suffix(end).unwrap_or(rest).trim_end();
    }
    let calls = match json_calls(rest, schema) {
        Some(calls) => calls,
        // Mistral's newer form: `NAME[ARGS]{…}`, each call after its own marker.
        None if marker == "[TOOL_CALLS]" => rest
            .split("[TOOL_CALLS]")
            .map(|one| {
                let (name, arguments) = one.trim().split_once("[ARGS]")?;
                schema(name.trim())?;
                let arguments: Value = serde_json::from_str(arguments.trim()).ok().filter(Value::is_object)?;
                Some(ToolCall { id: String::new(), name: name.trim().to_owned(), arguments: arguments.to_string() })
            })
            .collect::<Option<Vec<_>>>()?,
        None => return None,
    };
    Some((text[..at].trim().to_owned(), calls))
}

/// A fenced block's body (```json … ```), else the text.
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    rest.strip_suffix("```").map_or(text, str::trim)
}

/// `{"name", "arguments" | "parameters"}` or a list of them, every one of an offered tool.
fn json_calls(text: &str, schema: &dyn Fn(&str) -> Option<Value>) -> Option<Vec<ToolCall>> {
    if !text.starts_with(['{', '[']) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let items = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    let calls: Option<Vec<ToolCall>> = items
        .iter()
        .map(|item| {
            let name = item.get("name")?.as_str()?;
            schema(name)?;
            let arguments = match item.get("arguments").or_else(|| item.get("parameters")) {
                Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok().filter(Value::is_object)?,
                Some(object @ Value::Object(_)) => object.clone(),
                None => Value::Object(serde_json::Map::new()),
                Some(_) => return None,
            };
            Some(ToolCall { id: String::new(), name: name.to_owned(), arguments: arguments.to_string() })
        })
        .collect();
    calls.filter(|c| !c.is_empty())
}

/// `<function=NAME><parameter=P>value</parameter>…</function>`; each value as the tool's schema
/// types it (a string as written, anything else read as JSON when it reads).
fn xml_call(text: &str, schema: &dyn Fn(&str) -> Option<Value>) -> Option<ToolCall> {
    let start = text.find("<function=")? + "<function=".len();
    let name_end = start + text[start..].find('>')?;
    let name = text[start..name_end].trim();
    let parameters = schema(name)?;
    let body_end = name_end + text[name_end..].find("</function>")?;
    let mut body = &text[name_end + 1..body_end];
    let mut arguments = serde_json::Map::new();
    while let Some(at) = body.find("<parameter=") {
        let key_at = at + "<parameter=".len();
        let key_end = key_at + body[key_at..].find('>')?;
        let key = body[key_at..key_end].trim();
        let value_end = key_end + body[key_end..].find("</parameter>")?;
        let raw = body[key_end + 1..value_end].strip_prefix('\n').unwrap_or(&body[key_end + 1..value_end]);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        let kind = parameters.get("properties").and_then(|p| p.get(key)).and_then(|p| p.get("type"));
        let value = match kind.and_then(Value::as_str) {
            Some("string") | None => Value::String(raw.to_owned()),
            Some(_) => serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_owned())),
        };
        arguments.insert(key.to_owned(), value);
        body = &body[value_end + "</parameter>".len()..];
    }
    Some(ToolCall { id: String::new(), name: name.to_owned(), arguments: Value::Object(arguments).to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The tools a session offers here: `read { path, offset: integer }` and `bash { command }`.
    fn offered(name: &str) -> Option<Value> {
        match name {
            "read" => Some(json!({"properties": {"path": {"type": "string"}, "offset": {"type": "integer"}}})),
            "bash" => Some(json!({"properties": {"command": {"type": "string"}}})),
            _ => None,
        }
    }

    fn calls(text: &str) -> Vec<(String, Value)> {
        recover(text, &offered)
            .map(|r| r.calls.into_iter().map(|c| (c.name, serde_json::from_str(&c.arguments).unwrap())).collect())
            .unwrap_or_default()
    }

    #[test]
    fn hermes_calls_in_tags_are_taken_each_once_in_order() {
        let text = "Let me look.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"src/main.rs\"}}\n</tool_call>\n<tool_call>{\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}</tool_call>";
        let got = recover(text, &offered).unwrap();
        assert_eq!(got.text, "Let me look.");
        assert_eq!(
            calls(text),
            [("read".into(), json!({"path": "src/main.rs"})), ("bash".into(), json!({"command": "ls"}))]
        );
        assert_eq!(got.calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["text_call_1", "text_call_2"]);
    }

    #[test]
    fn qwen_coder_xml_calls_are_typed_by_the_tools_schema() {
        let text = "<function=read>\n<parameter=path>\n2024/notes.md\n</parameter>\n<parameter=offset>\n40\n</parameter>\n</function>";
        assert_eq!(calls(text), [("read".into(), json!({"path": "2024/notes.md", "offset": 40}))]);
        let wrapped = format!("I will read it.\n<tool_call>\n{text}\n</tool_call>");
        assert_eq!(calls(&wrapped), calls(text), "inside <tool_call> it is taken once");
        assert_eq!(recover(&wrapped, &offered).unwrap().text, "I will read it.");
        let multiline = "<function=bash>\n<parameter=command>\ncat <<'EOF'\na\nEOF\n</parameter>\n</function>";
        assert_eq!(calls(multiline), [("bash".into(), json!({"command": "cat <<'EOF'\na\nEOF"}))]);
    }

    #[test]
    fn a_reply_that_is_only_a_call_as_json_is_a_call() {
        assert_eq!(
            calls(r#"{"name": "bash", "arguments": {"command": "ls"}}"#),
            [("bash".into(), json!({"command": "ls"}))]
        );
        assert_eq!(
            calls("```json\n{\"name\": \"bash\", \"parameters\": {\"command\": \"pwd\"}}\n```"),
            [("bash".into(), json!({"command": "pwd"}))]
        );
        assert_eq!(
            calls(r#"[{"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}}]"#)
                .len(),
            2
        );
    }

    #[test]
    fn mistral_and_llama_markers_are_read_in_each_form() {
        let list = r#"[TOOL_CALLS][{"name": "read", "arguments": {"path": "a"}}, {"name": "bash", "arguments": {"command": "ls"}}]</s>"#;
        assert_eq!(calls(list), [("read".into(), json!({"path": "a"})), ("bash".into(), json!({"command": "ls"}))]);
        let newer = r#"I will look.[TOOL_CALLS]read[ARGS]{"path": "a"}[TOOL_CALLS]bash[ARGS]{"command": "ls"}"#;
        assert_eq!(calls(newer), [("read".into(), json!({"path": "a"})), ("bash".into(), json!({"command": "ls"}))]);
        assert_eq!(recover(newer, &offered).unwrap().text, "I will look.");
        let llama = r#"<|python_tag|>{"name": "bash", "parameters": {"command": "ls"}}<|eom_id|>"#;
        assert_eq!(calls(llama), [("bash".into(), json!({"command": "ls"}))]);
        // A tool not offered is not a call.
        assert!(calls(r#"[TOOL_CALLS]rm[ARGS]{"path": "a"}"#).is_empty());
    }

    #[test]
    fn stray_reasoning_is_split_off_and_the_call_after_it_taken() {
        let got = recover("I should list the files.</think>\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>", &offered).unwrap();
        assert_eq!(got.reasoning, "I should list the files.");
        assert_eq!((got.text.as_str(), got.calls.len()), ("", 1));
        let only = recover("thinking it over</think>The answer is 4.", &offered).unwrap();
        assert_eq!(
            (only.reasoning.as_str(), only.text.as_str(), only.calls.len()),
            ("thinking it over", "The answer is 4.", 0)
        );
    }

    #[test]
    fn text_that_only_talks_about_calls_is_left_alone() {
        for text in [
            "Models write `<tool_call>{\"name\": \"x\"}</tool_call>` when their template is wrong.",
            "<function=deploy><parameter=env>prod</parameter></function>",
            r#"{"name": "Ada", "age": 36}"#,
            "Here is the plan: read, then edit.",
            "<tool_call>not json at all</tool_call>",
            "<think>a</think>b",
        ] {
            assert_eq!(recover(text, &offered), None, "{text}");
        }
    }
}
