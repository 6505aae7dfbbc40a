//! Notes: Markdown files the agent and the person keep, one folder for a project's own notes and
//! one for the person's, across projects — both in lembas' data folder, where no tool but the
//! notes' own reaches. A note's name is its file's (`setup-steps` is `setup-steps.md`); its title
//! is its first heading, else its first line.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

pub use lembas_protocol::notes::{NoteHit, NoteInfo, Scope};

/// The largest note: a note is for what is worth keeping, not a copy of a file.
pub const MAX_NOTE_BYTES: usize = 256 * 1024;

/// Where notes are kept: the project's folder (none outside a project) and the person's (an
/// empty path: none — a session made without lembas' folders keeps no notes).
#[derive(Debug, Clone, Default)]
pub struct Notes {
    pub project: Option<PathBuf>,
    pub personal: PathBuf,
}

/// A change to notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'a> {
    /// A new note; refused when one of that name exists.
    Create(&'a str),
    /// The whole note, made or replaced.
    Write(&'a str),
    /// Text added at the end (a note made when there is none).
    Append(&'a str),
    /// `old`, which must appear once, replaced by `new`.
    Edit {
        old: &'a str,
        new: &'a str,
    },
    Delete,
}

/// A name as it is looked up: without case, `_` and spaces read as `-`, without `.md`.
pub fn note_name(name: &str) -> Result<String, String> {
    let key = name.trim().trim_end_matches(".md").to_lowercase().replace(['_', ' '], "-");
    if lembas_tools::valid_name(&key) {
        Ok(key)
    } else {
        Err(format!(
            "{name:?} is not a note name: lowercase letters, digits and -, starting with a letter or digit, at most 64."
        ))
    }
}

impl Notes {
    /// The folders to look in for `scope`, or both (the project's first).
    fn folders(&self, scope: Option<Scope>) -> Vec<(Scope, &Path)> {
        let project = self.project.as_deref().map(|p| (Scope::Project, p));
        let personal = Some((Scope::Personal, self.personal.as_path())).filter(|(_, p)| !p.as_os_str().is_empty());
        match scope {
            Some(Scope::Project) => project.into_iter().collect(),
            Some(Scope::Personal) => personal.into_iter().collect(),
            None => project.into_iter().chain(personal).collect(),
        }
    }

    fn folder(&self, scope: Scope) -> Result<&Path, String> {
        match scope {
            Scope::Project => {
                self.project.as_deref().ok_or_else(|| "There is no project here to keep notes for.".into())
            }
            Scope::Personal if self.personal.as_os_str().is_empty() => Err("No notes are kept here.".into()),
            Scope::Personal => Ok(&self.personal),
        }
    }

    /// The files of the notes of `scope` (or both): each note's scope, name and path.
    fn files(&self, scope: Option<Scope>) -> impl Iterator<Item = (Scope, String, PathBuf)> + '_ {
        self.folders(scope).into_iter().flat_map(|(scope, dir)| {
            let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
            entries.filter_map(move |e| {
                let name = e.file_name().to_str()?.strip_suffix(".md")?.to_owned();
                lembas_tools::valid_name(&name).then(|| (scope, name, e.path()))
            })
        })
    }

    /// Whether there is any note at all, told by the names alone (nothing is read).
    pub fn any(&self) -> bool {
        self.files(None).next().is_some()
    }

    /// Every note of `scope` (or both) with its text, each file read once, the most recently
    /// changed first.
    fn all(&self, scope: Option<Scope>) -> Vec<(NoteInfo, String)> {
        let mut notes: Vec<(NoteInfo, String)> =
            self.files(scope).filter_map(|(scope, name, path)| note_at(&path, name, scope)).collect();
        notes.sort_by(|(a, _), (b, _)| b.changed_ms.cmp(&a.changed_ms).then_with(|| a.name.cmp(&b.name)));
        notes
    }

    /// Every note of `scope` (or both), the most recently changed first.
    pub fn list(&self, scope: Option<Scope>) -> Vec<NoteInfo> {
        self.all(scope).into_iter().map(|(note, _)| note).collect()
    }

    /// The note `name` (the project's before the person's when no scope is given), and its text.
    pub fn read(&self, name: &str, scope: Option<Scope>) -> Result<(NoteInfo, String), String> {
        let name = note_name(name)?;
        for (scope, dir) in self.folders(scope) {
            if let Some(found) = note_at(&dir.join(format!("{name}.md")), name.clone(), scope) {
                return Ok(found);
            }
        }
        Err(format!("No note {name}. {}", self.names_said(scope)))
    }

    /// What notes there are, in a sentence for an error.
    fn names_said(&self, scope: Option<Scope>) -> String {
        let names: Vec<String> = self.list(scope).into_iter().map(|n| n.name).take(20).collect();
        if names.is_empty() { "There are no notes yet.".into() } else { format!("Notes: {}.", names.join(", ")) }
    }

    /// Makes `change` to the note `name` in `scope`; what was done, in a sentence.
    pub fn change(&self, name: &str, scope: Scope, change: Change<'_>) -> Result<String, String> {
        let name = note_name(name)?;
        let dir = self.folder(scope)?;
        let path = dir.join(format!("{name}.md"));
        let existing = std::fs::read_to_string(&path).ok();
        let label = format!("{} note {name}", scope.as_str());
        let (text, done) = match (change, existing) {
            (Change::Delete, Some(_)) => {
                std::fs::remove_file(&path).map_err(|e| format!("Could not delete {label}: {e}"))?;
                return Ok(format!("Deleted the {label}."));
            }
            (Change::Create(_), Some(_)) => {
                return Err(format!("The {label} already exists: read it, then write, append or edit it."));
            }
            (Change::Delete | Change::Edit { .. }, None) => {
                return Err(format!("No {label}. {}", self.names_said(Some(scope))));
            }
            (Change::Create(text) | Change::Write(text), None) => (text.to_owned(), "Created"),
            (Change::Write(text), Some(_)) => (text.to_owned(), "Wrote"),
            (Change::Append(text), None) => (text.to_owned(), "Created"),
            (Change::Append(text), Some(old)) => {
                let sep = if old.is_empty() || old.ends_with("\n\n") {
                    ""
                } else if old.ends_with('\n') {
                    "\n"
                } else {
                    "\n\n"
                };
                (format!("{old}{sep}{text}"), "Appended to")
            }
            (Change::Edit { old, new }, Some(text)) => match text.matches(old).count() {
                _ if old.is_empty() => return Err("`old` is empty: say the text to replace.".into()),
                1 => (text.replacen(old, new, 1), "Edited"),
                0 => return Err(format!("`old` is not in the {label}: read it and copy the text exactly.")),
                n => {
                    return Err(format!(
                        "`old` appears {n} times in the {label}: give more of it, so it appears once."
                    ));
                }
            },
        };
        if text.len() > MAX_NOTE_BYTES {
            return Err(format!(
                "The {label} would be {} KB; a note holds at most {} KB. Keep what matters, or split it.",
                text.len() / 1024,
                MAX_NOTE_BYTES / 1024
            ));
        }
        let text = if text.ends_with('\n') || text.is_empty() { text } else { format!("{text}\n") };
        write_whole(&path, &text).map_err(|e| format!("Could not write the {label}: {e}"))?;
        Ok(format!("{done} the {label} ({} lines).", text.lines().count()))
    }

    /// The passages of notes of `scope` (or both) that hold the most of `query`'s words, best
    /// first, at most `limit`.
    pub fn search(&self, query: &str, scope: Option<Scope>, limit: usize) -> Vec<NoteHit> {
        let words: Vec<String> =
            query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase).collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut scored: Vec<(usize, NoteHit)> = Vec::new();
        for (note, text) in self.all(scope) {
            for (from, lines) in passages(&text) {
                let lower = lines.join("\n").to_lowercase();
                let found = words.iter().filter(|w| lower.contains(w.as_str())).count();
                if found == 0 {
                    continue;
                }
                let title_bonus = usize::from(words.iter().any(|w| note.title.to_lowercase().contains(w.as_str())));
                let hit = NoteHit {
                    name: note.name.clone(),
                    scope: note.scope,
                    from,
                    to: from + lines.len() - 1,
                    text: lines.join("\n"),
                };
                scored.push((found * 2 + title_bonus, hit));
            }
        }
        // Stable: among equals, the more recently changed note first (the list's order).
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        scored.into_iter().take(limit).map(|(_, hit)| hit).collect()
    }
}

/// A note's passages: its paragraphs (lines between blank ones), a long one cut every
/// [`PASSAGE_LINES`]; each with its first line's number.
fn passages(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            out.extend(current.take());
            continue;
        }
        let (_, lines) = current.get_or_insert_with(|| (i + 1, Vec::new()));
        lines.push(line);
        if lines.len() == PASSAGE_LINES {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

/// The longest passage a search returns.
const PASSAGE_LINES: usize = 12;

/// The note in the file at `path`, and its text, read once; `None` when it cannot be read.
fn note_at(path: &Path, name: String, scope: Scope) -> Option<(NoteInfo, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let changed_ms = std::fs::metadata(path).ok()?.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_millis() as u64;
    let title = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches('#').trim().chars().take(80).collect())
        .unwrap_or_default();
    Some((NoteInfo { name, scope, title, bytes: text.len() as u64, changed_ms }, text))
}

/// Writes `text` to `path` whole or not at all: beside it first, then moved over it.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    lembas_sys::write_whole(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes() -> (tempfile::TempDir, Notes) {
        let dir = tempfile::tempdir().unwrap();
        let notes = Notes { project: Some(dir.path().join("project")), personal: dir.path().join("personal") };
        (dir, notes)
    }

    #[test]
    fn notes_are_made_changed_read_and_deleted_in_their_scope() {
        let (_dir, notes) = notes();
        assert_eq!(
            notes.change("Setup Steps", Scope::Project, Change::Create("# Setup\nRun make.")).unwrap(),
            "Created the project note setup-steps (2 lines)."
        );
        assert!(
            notes.change("setup-steps", Scope::Project, Change::Create("x")).unwrap_err().contains("already exists")
        );
        notes.change("setup-steps", Scope::Project, Change::Append("Then make test.")).unwrap();
        notes.change("setup-steps", Scope::Project, Change::Edit { old: "make.", new: "make all." }).unwrap();
        let (note, text) = notes.read("setup_steps.md", None).unwrap();
        assert_eq!(text, "# Setup\nRun make all.\n\nThen make test.\n");
        assert_eq!((note.title.as_str(), note.scope), ("Setup", Scope::Project));
        notes.change("style", Scope::Personal, Change::Write("Short sentences.")).unwrap();
        assert_eq!(notes.list(None).len(), 2);
        assert!(notes.any() && !Notes::default().any());
        assert_eq!(notes.list(Some(Scope::Personal))[0].name, "style");
        assert!(notes.read("style", Some(Scope::Project)).unwrap_err().starts_with("No note style."));
        let edit = notes.change("style", Scope::Personal, Change::Edit { old: "nothing", new: "x" });
        assert!(edit.unwrap_err().contains("is not in the personal note style"));
        notes.change("style", Scope::Personal, Change::Delete).unwrap();
        assert!(notes.read("style", None).is_err());
        assert!(note_name("../etc/passwd").is_err() && note_name("").is_err());
        let huge = "x".repeat(MAX_NOTE_BYTES + 1);
        assert!(notes.change("big", Scope::Project, Change::Write(&huge)).unwrap_err().contains("at most 256 KB"));
        assert!(Notes { project: None, ..notes.clone() }.change("a", Scope::Project, Change::Write("x")).is_err());
        assert!(
            Notes::default().change("a", Scope::Personal, Change::Write("x")).is_err(),
            "no folder: nothing written"
        );
    }

    #[test]
    fn a_search_finds_the_passages_with_the_most_of_its_words() {
        let (_dir, notes) = notes();
        let release =
            "# Releasing\n\nBump the version in Cargo.toml.\n\nTag it and push the tag; CI builds the archives.\n";
        notes.change("release", Scope::Project, Change::Write(release)).unwrap();
        notes.change("tea", Scope::Personal, Change::Write("Green tea, no sugar.\n")).unwrap();
        let hits = notes.search("how do I push a release tag?", None, 5);
        assert_eq!((hits[0].name.as_str(), hits[0].from, hits[0].to), ("release", 5, 5));
        assert_eq!(hits[0].text, "Tag it and push the tag; CI builds the archives.");
        assert!(notes.search("sugar", Some(Scope::Project), 5).is_empty());
        assert_eq!(notes.search("sugar", None, 5)[0].scope, Scope::Personal);
        assert!(notes.search("?", None, 5).is_empty());
    }
}
