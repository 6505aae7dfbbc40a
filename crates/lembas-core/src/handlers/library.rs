//! The library's handlers that need the session: `session_search`, which reads the store the
//! session is kept in. (The notes' own tools run on their folders: `lembas_library::tools`.)

use lembas_tools::ToolOutput;
use serde_json::Value;

use lembas_protocol::notes::{NotesAsk, NotesSaid};

use crate::session::Session;

/// How many passages a search gives when the call does not say.
const DEFAULT_PASSAGES: u64 = 5;

/// `session_search`: passages of this project's earlier sessions, best first.
pub(super) fn session_search(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    let Some(query) = args.get("query").and_then(Value::as_str).map(str::trim).filter(|q| !q.is_empty()) else {
        return ToolOutput::Error("`query` is required: the words to look for.".to_owned());
    };
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(DEFAULT_PASSAGES).clamp(1, 20) as usize;
    // A subagent searches past its parent's session too, not only its own.
    let asking = session.subagent.as_ref().map_or(session.id.as_str(), |of| of.parent.as_str());
    let project = session.ws.root.display().to_string();
    let passages = match session.cfg.store.passages(&project, query, asking, limit) {
        Ok(passages) => passages,
        Err(e) => return ToolOutput::Error(format!("The sessions could not be searched: {e}")),
    };
    if passages.is_empty() {
        return ToolOutput::Text(format!("No earlier session in this project holds {query:?}."));
    }
    let said: Vec<String> = passages
        .iter()
        .map(|p| {
            let date = chrono::DateTime::from_timestamp_millis(p.at_ms)
                .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string());
            format!("\"{}\" · {date} · session {}:\n{}", p.title, p.session, p.text.trim())
        })
        .collect();
    ToolOutput::Text(said.join("\n\n"))
}

impl Session {
    /// The notes as a front end asked for them (`/notes`): listed, one shown, or searched.
    pub(crate) fn report_notes(&self, ask: NotesAsk) {
        let notes = &self.cfg.notes;
        let said = match ask {
            NotesAsk::List => NotesSaid::Listed { notes: notes.list(None) },
            NotesAsk::Show { name } => match notes.read(&name, None) {
                Ok((note, text)) => NotesSaid::Shown { note, text },
                Err(reason) => NotesSaid::Failed { reason },
            },
            NotesAsk::Search { words } => NotesSaid::Found { hits: notes.search(&words, None, 20), query: words },
        };
        self.emit(crate::Event::Notes { said });
    }
}
