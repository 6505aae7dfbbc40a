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
    let limit = super::limit(args, DEFAULT_PASSAGES);
    // A subagent searches past its parent's session too, not only its own.
    let asking = session.role.subagent().map_or(session.id.as_str(), |of| of.parent.as_str());
    let project = session.ws.root.display().to_string();
    if !session.cfg.store.has_sessions_in(&project, asking).unwrap_or(true) {
        return super::unavailable("session_search");
    }
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

/// `tasks`: the project's task list, changed as this session (its agent, its id, today).
pub(super) fn tasks(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    on_project(session, args, lembas_library::project::tasks_tool)
}

/// `decisions`: the project's decision log.
pub(super) fn decisions(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    on_project(session, args, lembas_library::project::decisions_tool)
}

/// One of the project's library tools, run as this session: its agent, its id, today.
fn on_project(
    session: &Session,
    args: &Value,
    tool: fn(&lembas_library::project::Project, lembas_library::project::Stamp, &Value) -> ToolOutput,
) -> ToolOutput {
    let (project, by, today) = project_stamp(session);
    tool(&project, lembas_library::project::Stamp { by: &by, session: Some(&session.id), today: &today }, args)
}

impl Session {
    /// `/kb WORDS`: a search of the knowledge bases, answered when the model has read the words.
    fn search_knowledge(&self, words: String) {
        let events = self.events.clone();
        let knowledge = self.cfg.knowledge.clone();
        tokio::spawn(async move {
            let said = match knowledge {
                None => NotesSaid::Failed { reason: "No knowledge bases are set up here.".into() },
                Some(knowledge) => {
                    match knowledge.search(&words, &[], crate::handlers::knowledge::DEFAULT_PASSAGES as usize).await {
                        Ok(found) => NotesSaid::Text { text: crate::handlers::knowledge::said(&words, &found) },
                        Err(e) => NotesSaid::Failed { reason: e.to_string() },
                    }
                }
            };
            let _ = events.send(crate::Event::Notes { said });
        });
    }
}

/// The project's tasks or decisions as a front end shows them.
fn said(answer: Result<String, String>) -> NotesSaid {
    match answer {
        Ok(text) => NotesSaid::Text { text },
        Err(reason) => NotesSaid::Failed { reason },
    }
}

/// `settings`: the model's own request to move the session to another model or effort level,
/// once the person allowed it (its rule asks); queued as the person's own change would be, so it
/// takes effect at the next step (a model move remakes the prompt: `context.md`).
pub(super) fn settings(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    let word = |key: &str| args.get(key).and_then(Value::as_str).map(str::trim).filter(|w| !w.is_empty());
    let (model, effort) = (word("model"), word("effort"));
    if model.is_none() && effort.is_none() {
        return ToolOutput::Error("Name a `model` or an `effort` to move to.".to_owned());
    }
    let target = match model {
        Some(name) => match session.cfg.model_named(name) {
            Ok(info) => info,
            Err(e) => return ToolOutput::Error(e),
        },
        None => session.cfg.model.clone(),
    };
    if let Some(refused) = effort.and_then(|level| session.level_refused(&target, level)) {
        return ToolOutput::Error(refused);
    }
    let mut said = Vec::new();
    let mut changes = session.changes.lock().expect("changes");
    if target.id != session.cfg.model.id {
        said.push(format!("the model {}", target.display_name()));
        changes.push(lembas_protocol::Submission {
            id: lembas_protocol::SubmissionId::fresh("tool"),
            command: lembas_protocol::Command::SetModel { model: target.id.clone() },
        });
    }
    if let Some(level) = effort {
        said.push(format!("effort {level}"));
        changes.push(lembas_protocol::Submission {
            id: lembas_protocol::SubmissionId::fresh("tool"),
            command: lembas_protocol::Command::SetEffort { level: Some(level.to_owned()) },
        });
    }
    if said.is_empty() {
        return ToolOutput::Text(format!("The session already runs on {}.", target.display_name()));
    }
    ToolOutput::Text(format!("From the next step: {}.", said.join(", ")))
}

/// The project, who is changing it (`main`, or the subagent's name) and today's date.
fn project_stamp(session: &Session) -> (lembas_library::project::Project, String, String) {
    let by = session.role.subagent().map_or_else(|| "main".to_owned(), |of| of.label.clone());
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    (lembas_library::project::Project::new(&session.ws.root), by, today)
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
            NotesAsk::Tasks { tasks } => {
                let (project, _, today) = project_stamp(self);
                let stamp = lembas_library::project::Stamp { by: "person", session: Some(&self.id), today: &today };
                said(lembas_library::project::person_asks(&project, &tasks, stamp))
            }
            NotesAsk::Knowledge { search: Some(words) } => return self.search_knowledge(words),
            NotesAsk::Memory { change } => return self.report_memory(change),
            NotesAsk::Knowledge { search: None } => said(self.cfg.knowledge.as_ref().map_or_else(
                || Ok("No knowledge bases are set up here.".to_owned()),
                |k| k.list().map(|bases| crate::handlers::knowledge::listing(&bases)).map_err(|e| e.to_string()),
            )),
            NotesAsk::Decisions { id } => {
                let decisions = lembas_library::project::Project::new(&self.ws.root).decisions();
                said(decisions.read().and_then(|log| match id {
                    Some(id) => log.find(&id).map(|e| lembas_library::project::entry_text('D', e)),
                    None => Ok(lembas_library::project::decision_list(&log)),
                }))
            }
        };
        self.emit(crate::Event::Notes { said });
    }
}
