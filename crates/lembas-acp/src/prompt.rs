//! A `session/prompt`'s content blocks as the host's prompt: the words, and what goes with them.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use lembas_protocol::Attachment;

/// The words of a prompt (its text blocks), and its pictures, files and embedded texts as
/// attachments. A link to something other than a local file stays in the words as `@URI`.
pub(crate) fn prompt_parts(blocks: &[ContentBlock]) -> (String, Vec<Attachment>) {
    let mut words = Vec::new();
    let mut attachments = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => words.push(t.text.clone()),
            ContentBlock::Image(image) => attachments.push(Attachment::Image {
                mime: image.mime_type.clone(),
                data: image.data.clone(),
                name: image.uri.as_deref().map(short_name),
            }),
            ContentBlock::ResourceLink(link) => match local_file(&link.uri) {
                Some(path) => attachments.push(Attachment::File { path }),
                None => words.push(format!("@{}", link.uri)),
            },
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(text) => {
                    attachments.push(Attachment::Text { name: short_name(&text.uri), text: text.text.clone() })
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    match blob.mime_type.as_deref().filter(|m| m.starts_with("image/")) {
                        Some(mime) => attachments.push(Attachment::Image {
                            mime: mime.to_owned(),
                            data: blob.blob.clone(),
                            name: Some(short_name(&blob.uri)),
                        }),
                        // Bytes a model cannot read: where they are from, to look at with tools.
                        None => match local_file(&blob.uri) {
                            Some(path) => words.push(format!("@{path}")),
                            None => words.push(format!("@{}", blob.uri)),
                        },
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    (words.join("\n\n"), attachments)
}

/// The path of a `file://` URI.
fn local_file(uri: &str) -> Option<String> {
    let url = url::Url::parse(uri).ok().filter(|u| u.scheme() == "file")?;
    url.to_file_path().ok().map(|p| p.to_string_lossy().into_owned())
}

/// A resource's name as the person would say it: a local file's path, or the URI.
fn short_name(uri: &str) -> String {
    local_file(uri).unwrap_or_else(|| uri.to_owned())
}

/// The `turnId` a LLeMbas client gave its prompt (`_meta.lembas.turnId`, capability `turns`).
pub fn turn_id(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<String> {
    let id = meta?.get("lembas")?.get("turnId")?.as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// Whether a LLeMbas client marked its prompt `machine` (`_meta.lembas.machine`): the harness's
/// words, not the person's.
pub fn machine(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
    meta.and_then(|m| m.get("lembas")).and_then(|l| l.get("machine")).and_then(serde_json::Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    #[test]
    fn blocks_become_words_and_attachments() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("why does this fail?")),
            ContentBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///work/app/src/lib%20x.rs")),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/docs")),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new("fn main() {}", "file:///work/app/src/main.rs"),
            ))),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::BlobResourceContents(
                BlobResourceContents::new("AAAA", "file:///work/app/data.bin"),
            ))),
        ];
        let (words, attachments) = prompt_parts(&blocks);
        assert_eq!(words, "why does this fail?\n\n@https://example.com/docs\n\n@/work/app/data.bin");
        assert_eq!(
            attachments,
            vec![
                Attachment::File { path: "/work/app/src/lib x.rs".into() },
                Attachment::Image { mime: "image/png".into(), data: "AAAA".into(), name: None },
                Attachment::Text { name: "/work/app/src/main.rs".into(), text: "fn main() {}".into() },
            ]
        );
    }
}
