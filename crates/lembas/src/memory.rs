//! `lembas memory`: what the person's LLeMbas server remembers for them — the memory every
//! session starts with — listed, added to, changed and forgotten, as `/memory` does.

use lembas_protocol::notes::{MemoryChange, NotesSaid};

use crate::cli::{MemoryAction, exit};
use crate::{Failure, setup};

pub async fn memory(action: Option<MemoryAction>, json: bool) -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let Some(instance) = start.memory.clone() else {
        return Err(Failure::new(
            exit::USAGE,
            "no memory here: it is kept by a LLeMbas server, and this login is to a plain model server, its token lacks the memory scope, or config.toml keeps the library local",
        ));
    };
    let change = match action.unwrap_or(MemoryAction::List) {
        MemoryAction::List => None,
        MemoryAction::Add { text } => Some(MemoryChange::Add { text: text.join(" ") }),
        MemoryAction::Change { entry, text } => Some(MemoryChange::Change { entry, text: text.join(" ") }),
        MemoryAction::Forget { entry } => Some(MemoryChange::Forget { entry }),
    };
    match lembas_core::memory_said(instance, change).await {
        NotesSaid::Text { text } if json => out!("{}", serde_json::json!({ "said": text })),
        NotesSaid::Text { text } => out!("{text}"),
        NotesSaid::Failed { reason } => return Err(Failure::new(exit::FAILED, reason)),
        _ => {}
    }
    Ok(exit::OK)
}
