//! `/notes`: the notes the agent and the person keep, as the terminal shows them — the list, one
//! note, or what a search found — and what the command line asks.

use lembas_protocol::notes::{MemoryChange, NoteInfo, NotesAsk, NotesSaid, TasksAsk};

/// What `/notes [NAME | search WORDS]` asks.
pub(crate) fn ask(arg: &str) -> NotesAsk {
    let arg = arg.trim();
    match arg.split_once(char::is_whitespace) {
        Some(("search" | "find", words)) => NotesAsk::Search { words: words.trim().to_owned() },
        _ if arg.is_empty() => NotesAsk::List,
        _ => NotesAsk::Show { name: arg.to_owned() },
    }
}

/// What `/tasks [all | add TITLE | start | done | drop | open ID | ID]` asks.
pub(crate) fn tasks_ask(arg: &str) -> Result<NotesAsk, String> {
    let arg = arg.trim();
    let (verb, rest) = arg.split_once(char::is_whitespace).map_or((arg, ""), |(v, r)| (v, r.trim()));
    let state = match verb {
        "start" => Some("doing"),
        "done" => Some("done"),
        "drop" => Some("dropped"),
        "reopen" => Some("open"),
        _ => None,
    };
    let tasks = match (verb, state) {
        ("", _) => TasksAsk::List { all: false },
        ("all", _) => TasksAsk::List { all: true },
        ("add", _) if rest.is_empty() => return Err("/tasks add TITLE: the task, in a few words.".into()),
        ("add", _) => TasksAsk::Add { title: rest.to_owned() },
        (_, Some(_)) if rest.is_empty() => return Err(format!("/tasks {verb} ID: which task (T3).")),
        (_, Some(state)) => TasksAsk::Set { id: rest.to_owned(), state: state.to_owned() },
        (id, None) => TasksAsk::Show { id: id.to_owned() },
    };
    Ok(NotesAsk::Tasks { tasks })
}

/// What `/memory [add TEXT | change N TEXT | forget N]` asks.
pub(crate) fn memory_ask(arg: &str) -> Result<NotesAsk, String> {
    let arg = arg.trim();
    let (verb, rest) = arg.split_once(char::is_whitespace).map_or((arg, ""), |(v, r)| (v, r.trim()));
    let number = |words: &str| words.split_whitespace().next().and_then(|n| n.parse::<usize>().ok());
    let change = match verb {
        "" => None,
        "add" if !rest.is_empty() => Some(MemoryChange::Add { text: rest.to_owned() }),
        "forget" | "remove" => match number(rest) {
            Some(entry) => Some(MemoryChange::Forget { entry }),
            None => return Err("/memory forget N: the entry's number, as /memory lists them.".into()),
        },
        "change" => {
            let text = rest.split_once(char::is_whitespace).map(|(_, t)| t.trim()).unwrap_or("");
            match number(rest) {
                Some(entry) if !text.is_empty() => Some(MemoryChange::Change { entry, text: text.to_owned() }),
                _ => return Err("/memory change N TEXT: the entry's number, then what it should say.".into()),
            }
        }
        _ => return Err("/memory, or /memory add TEXT, change N TEXT, forget N.".into()),
    };
    Ok(NotesAsk::Memory { change })
}

/// The answer, as a notice.
pub(crate) fn said(said: &NotesSaid) -> String {
    match said {
        NotesSaid::Listed { notes } if notes.is_empty() => {
            "No notes yet. The agent keeps them with note_manage; you, with `lembas notes edit NAME`.".into()
        }
        NotesSaid::Listed { notes } => {
            let mut lines = vec!["Notes (/notes NAME shows one, /notes search WORDS finds):".to_owned()];
            lines.extend(notes.iter().map(line));
            lines.join("\n")
        }
        NotesSaid::Shown { note, text } => format!("{}\n\n{}", line(note).trim_start_matches("- "), text.trim_end()),
        NotesSaid::Found { query, hits } if hits.is_empty() => format!("No note holds {query:?}."),
        NotesSaid::Found { hits, .. } => {
            let found: Vec<String> = hits
                .iter()
                .map(|h| format!("{} ({}), lines {}-{}:\n{}", h.name, h.scope.as_str(), h.from, h.to, h.text))
                .collect();
            found.join("\n\n")
        }
        NotesSaid::Text { text } => text.trim_end().to_owned(),
        NotesSaid::Failed { reason } => reason.clone(),
    }
}

fn line(note: &NoteInfo) -> String {
    format!("- {} · {} · {}", note.name, note.title, note.scope.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_asks_for_the_list_a_note_or_a_search() {
        assert_eq!(ask(""), NotesAsk::List);
        assert_eq!(ask(" build "), NotesAsk::Show { name: "build".into() });
        assert_eq!(ask("search deploy key"), NotesAsk::Search { words: "deploy key".into() });
    }

    #[test]
    fn the_tasks_command_line_lists_adds_moves_and_shows() {
        let tasks = |arg: &str| match tasks_ask(arg) {
            Ok(NotesAsk::Tasks { tasks }) => Ok(tasks),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(tasks(""), Ok(TasksAsk::List { all: false }));
        assert_eq!(tasks("all"), Ok(TasksAsk::List { all: true }));
        assert_eq!(tasks("add fix the build"), Ok(TasksAsk::Add { title: "fix the build".into() }));
        assert_eq!(tasks("done T2"), Ok(TasksAsk::Set { id: "T2".into(), state: "done".into() }));
        assert_eq!(tasks("start 3"), Ok(TasksAsk::Set { id: "3".into(), state: "doing".into() }));
        assert_eq!(tasks("T4"), Ok(TasksAsk::Show { id: "T4".into() }));
        assert!(tasks("drop").unwrap_err().contains("which task"));
    }
}
