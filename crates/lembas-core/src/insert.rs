//! A call's output made the result the model reads: through the context ledger (ids, brackets,
//! caps, stubs for what it has already seen), a change as its diff, `recall` from the store, and
//! the instruction files near a file it read.

use std::path::PathBuf;

use lembas_context::{ResultId, change_result, patch_result, recall};
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::session::Session;

impl Session {
    /// A tool's output as the model sees it, and what is stored.
    pub(crate) fn insert(&mut self, id: ResultId, name: &str, args: &Value, output: ToolOutput) -> (String, String) {
        let ledger = &mut self.state.ledger;
        match output {
            ToolOutput::Read { call_path, file, content, offset, limit } => {
                match ledger.read(id, &call_path, &file, &content, offset, limit) {
                    Ok(inserted) => (inserted.text, inserted.stored),
                    Err(e) => {
                        let message = format!("{} ({})", e, file.display());
                        let inserted = ledger.output(id, name, args, &message);
                        (inserted.text, inserted.stored)
                    }
                }
            }
            ToolOutput::Changes(changes) => {
                let inserted = if changes.len() == 1 && !crate::handlers::handler(name).said_as_patch {
                    change_result(id, &changes[0])
                } else {
                    patch_result(id, &changes)
                };
                (inserted.text, inserted.stored)
            }
            ToolOutput::Image { .. } | ToolOutput::TextAndImages { .. } => {
                unreachable!("images are turned into text before insertion")
            }
            ToolOutput::Text(text) | ToolOutput::Error(text) => {
                let inserted = ledger.output(id, name, args, &text);
                (inserted.text, inserted.stored)
            }
        }
    }

    /// Instruction files below the start directory that reach the model the first time
    /// something under their directory is read ("nearby instructions"), as a block to add to
    /// that read's result; each is handed over once per session.
    pub(crate) fn nearby_instructions(&mut self, file: &std::path::Path) -> Option<String> {
        let below = file.parent()?.strip_prefix(&self.ws.started).ok()?;
        let mut dir = self.ws.started.clone();
        let mut blocks = Vec::new();
        for part in below.components() {
            dir.push(part);
            let readable = |p: &str| {
                let path = std::path::Path::new(p);
                path.is_file() && self.ws.contains(path)
            };
            let Some(found) = lembas_fsview::instructions::in_directory(&dir.to_string_lossy(), &readable) else {
                continue;
            };
            let found = PathBuf::from(found);
            if !self.nearby_seen.insert(found.clone()) {
                continue;
            }
            if let Ok(body) = std::fs::read_to_string(&found)
                && !body.trim().is_empty()
            {
                let name = lembas_paths::prompt_name(&found, &self.ws.root, self.cfg.user_home.as_deref());
                blocks.push(format!("\n\n<instructions path=\"{name}\">\n{}\n</instructions>", body.trim_end()));
            }
        }
        (!blocks.is_empty()).then(|| blocks.concat())
    }

    pub(crate) fn file_diff(&self, change: &lembas_context::FileChange) -> crate::FileDiff {
        use lembas_context::FileChange;
        let (path, old, new) = match change {
            FileChange::Created { path, after } => (path, None, Some(after.clone())),
            FileChange::Changed { path, before, after } => (path, Some(before.clone()), Some(after.clone())),
            FileChange::Deleted { path } => (path, None, None),
        };
        crate::FileDiff { path: self.ws.resolve(path).display().to_string(), old, new }
    }

    /// `recall`: a stored result of this session, shown again.
    pub(crate) fn recall_text(&self, id: ResultId, args: &Value) -> String {
        let target = args.get("id").and_then(Value::as_str).unwrap_or_default();
        let number = |key: &str| args.get(key).and_then(Value::as_u64).map(|n| n as usize);
        let stored = target.parse::<ResultId>().ok().and_then(|t| self.cfg.store.result(&self.id, t.0).ok().flatten());
        recall(id, target, stored.as_deref(), number("offset"), number("limit"))
    }
}
