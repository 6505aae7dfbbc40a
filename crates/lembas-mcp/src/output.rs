//! A `tools/call` result as the text the model reads.
//!
//! Read from the wire form (JSON) rather than the SDK's types, so what lembas shows follows
//! the protocol's fields, whatever the SDK version calls them.

use serde_json::Value;

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallOutput {
    pub text: String,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
    /// Its images as `data:` URLs, for a model that sees (the text names each one).
    pub images: Vec<String>,
}

impl CallOutput {
    /// A failed call, in a sentence for the model.
    pub fn failed(text: impl Into<String>) -> CallOutput {
        CallOutput { text: text.into(), is_error: true, images: Vec::new() }
    }
}

/// The largest image passed on to a model (as its base64 text).
const MAX_IMAGE_BASE64: usize = 14 * 1024 * 1024;

/// One content block as text: text as it is; images, audio and binary resources as a line
/// naming what they are (the model is told they exist, not sent base64 it cannot read).
fn block_text(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let size = |data: &str| data.len() / 4 * 3;
    match kind {
        "text" => str_of(block, "text"),
        "image" | "audio" => {
            let data = str_of(block, "data");
            format!("[{kind} {}, about {} bytes]", str_of(block, "mimeType"), size(&data))
        }
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = str_of(&resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!(
                    "[resource {uri}: {}, about {} bytes, not shown]",
                    str_of(&resource, "mimeType"),
                    size(&str_of(&resource, "blob"))
                ),
            }
        }
        "resource_link" => {
            let name = str_of(block, "name");
            format!("[link {} {name}]", str_of(block, "uri")).trim_end().replace("  ", " ")
        }
        _ => serde_json::to_string(block).unwrap_or_default(),
    }
}

/// A `CallToolResult` (as JSON) as text: the content blocks one after another; with no content,
/// the structured content as JSON.
pub fn call_output(result: &Value) -> CallOutput {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let content = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let blocks: Vec<String> = content.iter().map(block_text).filter(|t| !t.is_empty()).collect();
    let images = content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| {
            let data = b.get("data").and_then(Value::as_str)?;
            let mime = b.get("mimeType").and_then(Value::as_str).filter(|m| m.starts_with("image/"))?;
            (data.len() <= MAX_IMAGE_BASE64).then(|| format!("data:{mime};base64,{data}"))
        })
        .collect();
    let text = if !blocks.is_empty() {
        blocks.join("\n")
    } else if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        serde_json::to_string_pretty(structured).unwrap_or_default()
    } else if is_error {
        "The tool failed and said nothing more.".to_owned()
    } else {
        "(The tool answered with no content.)".to_owned()
    };
    CallOutput { text, is_error, images }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_and_errors_kept() {
        let out = call_output(&json!({"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}));
        assert_eq!(out, CallOutput { text: "a\nb".into(), ..Default::default() });
        let failed = call_output(&json!({"content":[{"type":"text","text":"no such ticket"}],"isError":true}));
        assert!(failed.is_error && failed.text == "no such ticket");
        assert!(call_output(&json!({"content":[],"isError":true})).text.contains("failed"));
    }

    #[test]
    fn other_blocks_are_named_not_dumped() {
        let out = call_output(&json!({"content":[
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"resource","resource":{"uri":"file:///a.txt","text":"hello"}},
            {"type":"resource","resource":{"uri":"file:///b.bin","blob":"AAAAAAAA","mimeType":"application/zip"}},
            {"type":"resource_link","uri":"file:///c","name":"c"}
        ]}));
        assert_eq!(
            out.text,
            "[image image/png, about 3 bytes]\n[resource file:///a.txt]\nhello\n[resource file:///b.bin: application/zip, about 6 bytes, not shown]\n[link file:///c c]"
        );
    }

    #[test]
    fn images_are_kept_for_a_model_that_sees() {
        let out = call_output(
            &json!({"content":[{"type":"image","data":"iVBORw0K","mimeType":"image/png"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}),
        );
        assert_eq!(out.images, vec!["data:image/png;base64,iVBORw0K".to_owned()]);
    }

    #[test]
    fn structured_content_stands_in_for_missing_content() {
        let out = call_output(&json!({"content":[],"structuredContent":{"result":42}}));
        assert_eq!(out.text, "{\n  \"result\": 42\n}");
        assert!(call_output(&json!({})).text.contains("no content"));
    }
}
