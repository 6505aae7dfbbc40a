//! What a person attaches to a prompt: files read as the `read` tool reads them (under the same
//! rules, recorded in the ledger so a later read of the same lines is a stub), text a client
//! holds, and pictures for a model that sees.

use lembas_context::ResultId;
use lembas_permissions::Decision;
use lembas_protocol::Attachment;
use lembas_store::NewResult;
use lembas_tools::ToolOutput;
use serde_json::json;

use crate::Event;
use crate::session::Session;

/// A prompt's attachments made ready for its message.
#[derive(Debug, Default)]
pub(crate) struct Attached {
    /// What follows the person's words: each file or text with its result bracket, and a line
    /// for whatever could not be attached.
    pub text: String,
    /// Pictures, as data URLs.
    pub images: Vec<String>,
    /// The results to store in full (for `recall`).
    pub results: Vec<NewResult>,
}

impl Session {
    pub(crate) fn attach(&mut self, attachments: &[Attachment]) -> Attached {
        let mut attached = Attached::default();
        let mut left_out = Vec::new();
        for attachment in attachments {
            match attachment {
                Attachment::Image { mime, data, name } => {
                    let name = name.clone().unwrap_or_else(|| "an image".to_owned());
                    if self.cfg.model.vision == Some(true) {
                        attached.images.push(format!("data:{mime};base64,{data}"));
                    } else {
                        left_out.push(format!("(Image {name} not sent: this model does not take images.)"));
                        self.emit(Event::Notice {
                            message: format!("{name} was not sent: {} does not take images.", self.cfg.model.id),
                        });
                    }
                }
                Attachment::File { path } => match self.attach_file(path) {
                    Ok((id, text, stored)) => {
                        // The person sees what went with their words, as a read they did.
                        let name = lembas_paths::prompt_name(
                            &self.ws.resolve(path),
                            &self.ws.root,
                            self.cfg.user_home.as_deref(),
                        );
                        self.emit(Event::Notice { message: format!("Attached {name}.") });
                        attached.text.push_str(&format!("\n\n{text}"));
                        attached.results.push(NewResult { id: id.0, tool: "read".into(), text: stored });
                    }
                    Err(why) => {
                        left_out.push(format!("({path} not attached: {why})"));
                        self.emit(Event::Notice { message: format!("{path} was not attached: {why}") });
                    }
                },
                Attachment::Text { name, text } => {
                    let id = self.state.ids.next_id();
                    let inserted = self.state.ledger.output(id, "read", &json!({ "path": name }), text);
                    attached.text.push_str(&format!("\n\nAttached: {name}\n{}", inserted.text));
                    attached.results.push(NewResult { id: id.0, tool: "read".into(), text: inserted.stored });
                }
            }
        }
        if !left_out.is_empty() {
            attached.text.push_str("\n\n");
            attached.text.push_str(&left_out.join("\n"));
        }
        if !attached.images.is_empty() {
            let n = attached.images.len();
            attached.text.push_str(if n == 1 {
                "\n\n(The attached image follows.)"
            } else {
                "\n\n(The attached images follow.)"
            });
        }
        attached
    }

    /// Reads `path` as a `read` call would, if the session's rules let the model read it: the
    /// person attaching a file answers an ask, never a refusal.
    fn attach_file(&mut self, path: &str) -> Result<(ResultId, String, String), String> {
        let args = json!({ "path": path });
        let read = lembas_spec::tool("read").expect("the spec has read");
        if let Decision::Refuse(reason) = self.judge_call(read, &args).verdict.decision {
            return Err(reason);
        }
        match lembas_tools::handlers::READ.run(&self.ws, &args) {
            ToolOutput::Read { call_path, file, content, offset, limit } => {
                let id = self.state.ids.next_id();
                let inserted = self
                    .state
                    .ledger
                    .read(id, &call_path, &file, &content, offset, limit)
                    .map_err(|e| format!("{e}"))?;
                Ok((id, inserted.text, inserted.stored))
            }
            ToolOutput::Error(e) | ToolOutput::Text(e) => Err(e),
            _ => Err("it is not a file read can show".into()),
        }
    }
}
