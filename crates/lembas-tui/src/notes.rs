//! `/notes`: the notes the agent and the person keep, as the terminal shows them — the list, one
//! note, or what a search found — and what the command line asks.

use lembas_protocol::notes::{NoteInfo, NotesAsk, NotesSaid};

/// What `/notes [NAME | search WORDS]` asks.
pub(crate) fn ask(arg: &str) -> NotesAsk {
    let arg = arg.trim();
    match arg.split_once(char::is_whitespace) {
        Some(("search" | "find", words)) => NotesAsk::Search { words: words.trim().to_owned() },
        _ if arg.is_empty() => NotesAsk::List,
        _ => NotesAsk::Show { name: arg.to_owned() },
    }
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
}
