//! A `session/prompt`'s content blocks as the host's prompt: the words, and what goes with them.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use lembas_protocol::{Attachment, Command, DoneReason, Submission, SubmissionId};
use tokio::sync::oneshot;

use crate::{Server, commands, invalid, options, scheduled};

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

/// `session/prompt`: a lembas command typed as a prompt runs and is answered by the event that
/// ends it; words go to the session as a turn under the client's `turnId` (or an id of ours),
/// answered with the stop reason when that turn ends.
pub(crate) fn request(
    server: &Server,
    request: PromptRequest,
    responder: agent_client_protocol::v1::Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), agent_client_protocol::Error> {
    let Some(slot) = server.slot(&request.session_id.0) else {
        return responder.respond_with_error(invalid("no such session"));
    };
    let (mut text, attachments) = prompt_parts(&request.prompt);
    // `/plan TASK`: the task, run in plan mode.
    if let Some(task) = commands::plan_task(&text).map(str::to_owned) {
        slot.handle.send(Command::SetMode { mode: lembas_protocol::Mode::Plan });
        text = task;
    }
    if let Some((command, awaited)) = commands::parse(&text) {
        // One of lembas' commands: done when its event says so, and said as the
        // agent's words.
        let (done, said) = oneshot::channel();
        let submission = SubmissionId::fresh("acp");
        slot.commands.lock().expect("commands").insert(submission.clone(), (awaited, done));
        slot.handle.submit(Submission { id: submission, command });
        let id = request.session_id.clone();
        return cx.clone().spawn(async move {
            let said = said.await.unwrap_or_default();
            if !said.is_empty() {
                let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(said)));
                cx.send_notification(SessionNotification::new(id, SessionUpdate::AgentMessageChunk(chunk)))?;
            }
            responder.respond(PromptResponse::new(StopReason::EndTurn))
        });
    }
    // The chat's Subagents setting comes with every prompt (capability `agents`): a
    // change reaches the main agent as the size note on this message.
    match options::sent_agents(request.meta.as_ref()) {
        Err(e) => return responder.respond_with_error(invalid(&e)),
        Ok(Some((min, max))) => {
            let mut choice = slot.choice.lock().expect("choice");
            if choice.agents != (min, max) {
                choice.agents = (min, max);
                slot.handle.send(Command::SetAgents { min, max });
            }
        }
        Ok(None) => {}
    }
    // The chat's personality comes with its prompts too (capability `context`): a change is
    // the personality note on this message.
    if let Some(text) = options::sent_personality(request.meta.as_ref()) {
        let mut last = slot.personality.lock().expect("personality");
        if last.as_ref() != Some(&text) {
            *last = Some(text.clone());
            slot.handle.send(Command::SetPersonality { text });
        }
    }
    // And its instructions (`system_prompt`, the personalization's `instructions`): a change is
    // noted on this message, as a changed instruction file is.
    {
        let mut had = slot.instructions.lock().expect("instructions");
        if let Some(given) = options::instructions_after(request.meta.as_ref(), &had) {
            *had = given.clone();
            slot.handle.send(Command::SetInstructions { given });
        }
    }
    // A scheduled run is judged again at every prompt; its mode is the schedule's, never wider.
    let run = match scheduled::sent(request.meta.as_ref()).map(|run| scheduled::admit(run, server.limits().as_ref())) {
        Some(Err(refusal)) => return responder.respond_with_error(refusal),
        Some(Ok(admitted)) => {
            slot.handle.send(Command::SetMode { mode: admitted.mode });
            let run_id = admitted.run.run_id.clone();
            *slot.scheduled.lock().expect("scheduled") = Some(admitted);
            Some(run_id)
        }
        None => None,
    };
    // The client's `turnId` (capability `turns`) is the submission's id: sent again
    // after a dropped link, it is answered by the same turn.
    let turn = turn_id(request.meta.as_ref());
    let submission = turn.clone().map_or_else(|| SubmissionId::fresh("acp"), SubmissionId);
    let (ended, end) = oneshot::channel();
    slot.prompts.lock().expect("prompts").entry(submission.clone()).or_default().push(ended);
    if let Some(turn) = &turn {
        slot.turns.lock().expect("turns").waiting(turn);
    }
    // A prompt the client marks `machine` is the harness's words, not the person's.
    let machine = machine(request.meta.as_ref());
    slot.handle.submit(Submission { id: submission, command: Command::Prompt { text, attachments, machine } });
    // Answered when its turn ends, outside the dispatch loop, so a cancel reaches it.
    cx.spawn(async move {
        let end =
            end.await.unwrap_or(scheduled::TurnEnd { reason: DoneReason::Cancelled, text: String::new(), error: None });
        let stop = match end.reason {
            DoneReason::Answered | DoneReason::Failed => StopReason::EndTurn,
            DoneReason::Limit => StopReason::MaxTurnRequests,
            DoneReason::Cancelled => StopReason::Cancelled,
        };
        let mut answer = PromptResponse::new(stop);
        if turn.is_some() || run.is_some() {
            // The turn it answers, and for a scheduled run how the run went.
            let mut said = serde_json::Map::new();
            if let Some(turn) = &turn {
                said.insert("turnId".into(), turn.clone().into());
            }
            if let Some(run_id) = &run {
                said.insert("scheduled".into(), scheduled::outcome(run_id, &end));
            }
            let mut meta = serde_json::Map::new();
            meta.insert("lembas".into(), said.into());
            answer = answer.meta(meta);
        }
        responder.respond(answer)
    })
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
