//! `lembas notes`: the notes the agent and the person keep — this project's own and the
//! person's — listed, shown, searched, edited in `$EDITOR` and deleted.

use lembas_library::tools::{found, listing};
use lembas_library::{Change, Notes, Scope};

use crate::cli::{NotesAction, exit};
use crate::{Failure, setup};

/// The notes of the current directory's project, and the person's.
fn here() -> Result<Notes, Failure> {
    let home = setup::home()?;
    let cwd = std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
    let root = setup::real_root(&setup::project_root(&cwd));
    Ok(setup::notes(&home, Some(&root)))
}

fn scope(personal: bool) -> Option<Scope> {
    personal.then_some(Scope::Personal)
}

pub fn notes(action: Option<NotesAction>, json: bool) -> Result<u8, Failure> {
    let notes = here()?;
    let failed = |e: String| Failure::new(exit::FAILED, e);
    match action.unwrap_or(NotesAction::List { personal: false }) {
        NotesAction::List { personal } => {
            let list = notes.list(scope(personal));
            if json {
                out!("{}", serde_json::to_string(&list)?);
            } else {
                out!("{}", listing(&list));
            }
        }
        NotesAction::Show { name, personal } => {
            let (note, text) = notes.read(&name, scope(personal)).map_err(failed)?;
            if json {
                out!("{}", serde_json::json!({ "note": note, "text": text }));
            } else {
                print!("{text}");
            }
        }
        NotesAction::Search { words, personal } => {
            let query = words.join(" ");
            let hits = notes.search(&query, scope(personal), 20);
            if json {
                out!("{}", serde_json::to_string(&hits)?);
            } else {
                out!("{}", found(&query, &hits));
            }
        }
        NotesAction::Edit { name, personal } => edit(&notes, &name, scope(personal).unwrap_or(Scope::Project))?,
        NotesAction::Delete { name, personal } => {
            let done =
                notes.change(&name, scope(personal).unwrap_or(Scope::Project), Change::Delete).map_err(failed)?;
            out!("{done}");
        }
    }
    Ok(exit::OK)
}

/// Opens the note in the person's editor (`$VISUAL`, `$EDITOR`, else `vi`), made first when it
/// is new; saved as a note once the editor ends.
fn edit(notes: &Notes, name: &str, scope: Scope) -> Result<(), Failure> {
    let failed = |e: String| Failure::new(exit::FAILED, e);
    let existing = notes.read(name, Some(scope)).map(|(_, text)| text).ok();
    // Made exclusively under a name nobody can guess: a link planted in the temporary folder
    // is never written through. Removed when it drops.
    let draft = draft_file(name).map_err(|e| failed(format!("a draft could not be made: {e}")))?;
    std::fs::write(draft.path(), existing.as_deref().unwrap_or("")).map_err(|e| failed(e.to_string()))?;
    let editor = std::env::var("VISUAL").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    // The editor may be a command with options (`code --wait`): run through the shell.
    let status = lembas_sys::child_env::scrub_std(&mut std::process::Command::new("sh"))
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("lembas-notes")
        .arg(draft.path())
        .status()
        .map_err(|e| failed(format!("could not start {editor}: {e}")))?;
    let text = std::fs::read_to_string(draft.path()).map_err(|e| failed(e.to_string()));
    drop(draft);
    if !status.success() {
        return Err(failed(format!("{editor} ended with {status}: the note was left as it was")));
    }
    let text = text?;
    if existing.as_deref() == Some(text.as_str()) {
        out!("The note did not change.");
        return Ok(());
    }
    let done = notes.change(name, scope, Change::Write(&text)).map_err(failed)?;
    out!("{done}");
    Ok(())
}

/// Where a note is edited: a new file named after it in the temporary folder, so the editor
/// shows Markdown.
fn draft_file(name: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    tempfile::Builder::new().prefix(&format!("lembas-note-{safe}-")).suffix(".md").tempfile()
}
