//! `lembas memory`: what the person's LLeMbas server remembers for them — the memory every
//! session starts with — listed, added to, changed and forgotten, as `/memory` does.

use lembas_protocol::notes::{MemoryChange, NotesSaid};

use crate::cli::{MemoryAction, exit};
use crate::{Failure, setup};

pub async fn memory(action: Option<MemoryAction>, json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let config = setup::config(&home)?;
    let Some(instance) = setup::memory(&config, &setup::login(&home)?) else {
        return Err(Failure::new(exit::USAGE, format!("no memory here: {}", lembas_core::NO_MEMORY_WHY)));
    };
    let change = match action.unwrap_or(MemoryAction::List) {
        MemoryAction::List => None,
        MemoryAction::Add { text } => Some(MemoryChange::Add { text: text.join(" ") }),
        MemoryAction::Change { entry, text } => Some(MemoryChange::Change { entry, text: text.join(" ") }),
        MemoryAction::Forget { entry } => Some(MemoryChange::Forget { entry }),
    };
    match lembas_core::memory_said(instance, change).await {
        NotesSaid::Text { text } => crate::project::say(&text, json),
        NotesSaid::Failed { reason } => Err(Failure::new(exit::FAILED, reason)),
        // A memory answer is a text or a failure; nothing else is said.
        _ => Ok(exit::OK),
    }
}
