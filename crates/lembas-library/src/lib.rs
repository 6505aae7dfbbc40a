//! The library lembas keeps on this machine for the person and the agent: [`notes`] — Markdown
//! files, a project's own and the person's across projects, made, changed and searched by the
//! agent's tools (`note_view`, `note_manage`, `notes_search`), by `lembas notes` and by `/notes`.

pub mod ledger;
pub mod notes;
pub mod project;
pub mod tools;

pub use notes::{Change, NoteHit, NoteInfo, Notes, Scope};
