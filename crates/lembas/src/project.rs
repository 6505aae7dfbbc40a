//! `lembas tasks` and `lembas decisions`: the project's task list and decision log, the files
//! the agent's `tasks` and `decisions` tools keep (`.lembas/tasks.md`, `.lembas/decisions.md`).

use lembas_library::ledger::{Entry, Ledger, LedgerFile};
use lembas_library::project::{self, Decision, Project, Stamp, TaskChange};
use serde_json::{Value, json};

use crate::cli::{DecisionsAction, TasksAction, exit};
use crate::{Failure, setup};

/// The project the current directory lies in.
fn here() -> Result<Project, Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
    Ok(Project::new(&setup::real_root(&setup::project_root(&cwd))))
}

fn failed(e: String) -> Failure {
    Failure::new(exit::FAILED, e)
}

/// Today, and the person as the one who changes it.
fn person(today: &str) -> Stamp<'_> {
    Stamp { by: "person", session: None, today }
}

/// An entry for a script: its id, title, fields and text.
fn entry_json(letter: char, entry: &Entry) -> Value {
    let fields: serde_json::Map<String, Value> =
        entry.fields.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    json!({ "id": format!("{letter}{}", entry.number), "title": entry.title, "fields": fields, "text": entry.body })
}

fn listed(ledger: &Ledger, keep: impl Fn(&Entry) -> bool) -> Value {
    Value::Array(ledger.entries.iter().filter(|e| keep(e)).map(|e| entry_json(ledger.letter, e)).collect())
}

/// One entry of a ledger, whole (or as JSON for a script).
fn show(file: &LedgerFile, id: &str, json: bool) -> Result<u8, Failure> {
    let ledger = file.read().map_err(failed)?;
    let entry = ledger.find(id).map_err(failed)?;
    if json {
        out!("{}", entry_json(file.letter, entry));
    } else {
        out!("{}", project::entry_text(file.letter, entry).trim_end());
    }
    Ok(exit::OK)
}

/// What a command did, as a line (or JSON for a script).
pub(crate) fn say(said: &str, json: bool) -> Result<u8, Failure> {
    if json {
        out!("{}", json!({ "said": said }));
    } else {
        out!("{}", said.trim_end());
    }
    Ok(exit::OK)
}

pub fn tasks(action: Option<TasksAction>, json: bool) -> Result<u8, Failure> {
    let project = here()?;
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let set = |id: &str, state: &str| {
        project.update_task(id, &TaskChange { state: Some(state), ..TaskChange::default() }, person(&today))
    };
    let said = match action.unwrap_or(TasksAction::List { all: false }) {
        TasksAction::List { all } => {
            let ledger = project.tasks().read().map_err(failed)?;
            if json {
                let open = |e: &Entry| all || matches!(e.field("state").unwrap_or("open"), "open" | "doing");
                out!("{}", listed(&ledger, open));
                return Ok(exit::OK);
            }
            project::task_list(&ledger, all.then_some("all"))
        }
        TasksAction::Show { id } => return show(&project.tasks(), &id, json),
        TasksAction::Add { title, details, owner } => {
            let title = title.join(" ");
            let owner = owner.as_deref().or(Some("person"));
            let id = project.add_task(&title, details.as_deref().unwrap_or_default(), owner, person(&today));
            format!("Added {}: {title}", id.map_err(failed)?)
        }
        TasksAction::Start { id } => set(&id, "doing").map_err(failed)?,
        TasksAction::Done { id } => set(&id, "done").map_err(failed)?,
        TasksAction::Drop { id } => set(&id, "dropped").map_err(failed)?,
        TasksAction::Reopen { id } => set(&id, "open").map_err(failed)?,
    };
    say(&said, json)
}

pub fn decisions(action: Option<DecisionsAction>, json: bool) -> Result<u8, Failure> {
    let project = here()?;
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let said = match action.unwrap_or(DecisionsAction::List) {
        DecisionsAction::List => {
            let ledger = project.decisions().read().map_err(failed)?;
            if json {
                out!("{}", listed(&ledger, |_| true));
                return Ok(exit::OK);
            }
            project::decision_list(&ledger)
        }
        DecisionsAction::Show { id } => return show(&project.decisions(), &id, json),
        DecisionsAction::Add { title, decision, why, supersedes } => {
            let title = title.join(" ");
            let decision =
                Decision { title: &title, decision: &decision, why: why.as_deref(), supersedes: supersedes.as_deref() };
            format!("Recorded {}: {title}", project.record_decision(&decision, person(&today)).map_err(failed)?)
        }
    };
    say(&said, json)
}
