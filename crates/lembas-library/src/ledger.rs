//! A Markdown file of numbered entries that people read, edit and commit, and lembas keeps: the
//! project's tasks (`T1`, `T2`, …) and decisions (`D1`, …). Each entry is a `## T3 · Title`
//! heading, then its fields as `- key: value` lines, then free text. What lembas does not
//! recognise — a preamble, an entry written by hand without fields — is kept as it was.

use std::path::{Path, PathBuf};

/// One entry: its number, title, fields in order, and the text under them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    pub number: u32,
    pub title: String,
    pub fields: Vec<(String, String)>,
    pub body: String,
}

impl Entry {
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    /// Sets `key` (kept in its place, or added last); an empty value takes it out.
    pub fn set(&mut self, key: &str, value: &str) {
        let value = value.trim();
        match self.fields.iter().position(|(k, _)| k == key) {
            Some(at) if value.is_empty() => {
                self.fields.remove(at);
            }
            Some(at) => self.fields[at].1 = value.to_owned(),
            None if value.is_empty() => {}
            None => self.fields.push((key.to_owned(), value.to_owned())),
        }
    }
}

/// A whole file: what comes before the first entry, and the entries in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ledger {
    /// The letter before each entry's number (`T`, `D`).
    pub letter: char,
    pub preamble: String,
    pub entries: Vec<Entry>,
}

impl Ledger {
    /// Reads `text`; a heading that is not `## <letter><number> · Title` stays in the text of the
    /// entry (or preamble) above it.
    pub fn parse(letter: char, text: &str) -> Ledger {
        let mut ledger = Ledger { letter, ..Ledger::default() };
        let mut current: Option<Entry> = None;
        let mut in_fields = false;
        for line in text.lines() {
            if let Some(entry) = heading(letter, line) {
                ledger.entries.extend(current.take());
                current = Some(entry);
                in_fields = true;
                continue;
            }
            let Some(entry) = current.as_mut() else {
                ledger.preamble.push_str(line);
                ledger.preamble.push('\n');
                continue;
            };
            if in_fields && let Some((key, value)) = field(line) {
                entry.fields.push((key, value));
                continue;
            }
            // The fields end at the first line that is not one; a blank line before the text
            // is the file's layout, not the text's.
            if line.trim().is_empty() && entry.body.is_empty() {
                in_fields = false;
                continue;
            }
            in_fields = false;
            entry.body.push_str(line);
            entry.body.push('\n');
        }
        ledger.entries.extend(current);
        for entry in &mut ledger.entries {
            entry.body = entry.body.trim_end().to_owned();
        }
        ledger
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let mut blocks = Vec::new();
        if !self.preamble.trim().is_empty() {
            blocks.push(self.preamble.trim_end().to_owned());
        }
        for entry in &self.entries {
            let mut block = format!("## {}{} · {}", self.letter, entry.number, entry.title.trim());
            for (key, value) in &entry.fields {
                block.push_str(&format!("\n- {key}: {value}"));
            }
            if !entry.body.is_empty() {
                block.push_str("\n\n");
                block.push_str(entry.body.trim_end());
            }
            blocks.push(block);
        }
        let mut out = blocks.join("\n\n");
        out.push('\n');
        out
    }

    /// The next entry's number.
    pub fn next_number(&self) -> u32 {
        self.entries.iter().map(|e| e.number).max().unwrap_or(0) + 1
    }

    /// The entry `id` names (`T3`, `t3` or `3`).
    pub fn find_mut(&mut self, id: &str) -> Result<&mut Entry, String> {
        let number = number_of(self.letter, id)?;
        let letter = self.letter;
        self.entries.iter_mut().find(|e| e.number == number).ok_or_else(|| format!("There is no {letter}{number}."))
    }

    pub fn find(&self, id: &str) -> Result<&Entry, String> {
        let number = number_of(self.letter, id)?;
        self.entries.iter().find(|e| e.number == number).ok_or_else(|| format!("There is no {}{number}.", self.letter))
    }
}

/// The number in `T3`, `t3` or `3`.
pub fn number_of(letter: char, id: &str) -> Result<u32, String> {
    let id = id.trim();
    let digits = id.strip_prefix(letter).or_else(|| id.strip_prefix(letter.to_ascii_lowercase())).unwrap_or(id);
    digits.parse().map_err(|_| format!("{id:?} is not an id like {letter}3."))
}

fn heading(letter: char, line: &str) -> Option<Entry> {
    let rest = line.strip_prefix("## ")?.trim();
    let rest = rest.strip_prefix(letter)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let number = digits.parse().ok()?;
    let title = rest[digits.len()..]
        .trim_start()
        .strip_prefix('·')
        .or_else(|| rest[digits.len()..].trim_start().strip_prefix('-'))?;
    Some(Entry { number, title: title.trim().to_owned(), ..Entry::default() })
}

fn field(line: &str) -> Option<(String, String)> {
    let (key, value) = line.strip_prefix("- ")?.split_once(':')?;
    let key = key.trim();
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .then(|| (key.to_owned(), value.trim().to_owned()))
}

/// The file a ledger is kept in, read and changed under a lock on its folder, so two sessions
/// (or a session and `lembas tasks`) never write over each other's change; written whole
/// through a file beside it, so a killed process leaves the old file or the new one.
#[derive(Debug, Clone)]
pub struct LedgerFile {
    pub path: PathBuf,
    pub letter: char,
    /// What a new file begins with.
    pub heading: &'static str,
}

impl LedgerFile {
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    /// The ledger as it is (empty when there is no file yet). A link is refused: the file is
    /// read and replaced where it is, never where a link in the project points.
    pub fn read(&self) -> Result<Ledger, String> {
        self.refuse_links()?;
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(Ledger::parse(self.letter, &text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Ledger { letter: self.letter, preamble: self.heading.to_owned(), entries: Vec::new() })
            }
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    /// Neither the file nor its folder may be a link: what the project holds stays in it.
    fn refuse_links(&self) -> Result<(), String> {
        let folder = self.path.parent().unwrap_or(Path::new("."));
        for place in [self.path.as_path(), folder] {
            if std::fs::symlink_metadata(place).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!(
                    "{} is a link: lembas keeps it only as a plain file in the project.",
                    place.display()
                ));
            }
        }
        Ok(())
    }

    /// Reads, lets `change` change it, and writes it back; what `change` answers.
    pub fn change<T>(&self, change: impl FnOnce(&mut Ledger) -> Result<T, String>) -> Result<T, String> {
        let folder = self.path.parent().unwrap_or(Path::new("."));
        let shown = |e: std::io::Error| format!("{}: {e}", folder.display());
        // Checked before the folder is made or locked: a link is never followed.
        self.refuse_links()?;
        std::fs::create_dir_all(folder).map_err(shown)?;
        let lock = std::fs::File::open(folder).map_err(shown)?;
        lock.lock().map_err(shown)?;
        let mut ledger = self.read()?;
        let answer = change(&mut ledger)?;
        // Never through a link planted under the name a temporary file would take.
        lembas_sys::write_whole_synced(&self.path, ledger.render().as_bytes(), None)
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# Tasks\n\nKept by lembas; edit freely.\n\n## T1 · Fix the login redirect\n- state: open\n- owner: main\n\nThe redirect loses the `next` parameter.\n\n## Notes by hand\n\nnot an entry\n\n## T3 · Tidy\n- state: done\n";

    #[test]
    fn a_file_reads_and_writes_back_as_it_was() {
        let ledger = Ledger::parse('T', FILE);
        assert_eq!(ledger.entries.len(), 2);
        let first = &ledger.entries[0];
        assert_eq!(
            (first.number, first.title.as_str(), first.field("state")),
            (1, "Fix the login redirect", Some("open"))
        );
        assert!(
            first.body.starts_with("The redirect loses") && first.body.ends_with("not an entry"),
            "{:?}",
            first.body
        );
        assert_eq!(ledger.next_number(), 4);
        assert_eq!(ledger.render(), FILE);
        assert_eq!(Ledger::parse('T', &ledger.render()), ledger);
    }

    #[test]
    fn entries_are_named_with_or_without_their_letter() {
        let mut ledger = Ledger::parse('T', FILE);
        assert_eq!(ledger.find("t3").unwrap().title, "Tidy");
        assert_eq!(ledger.find("1").unwrap().number, 1);
        assert_eq!(ledger.find("T2").unwrap_err(), "There is no T2.");
        assert!(ledger.find("D1").unwrap_err().contains("not an id like T3"));
        let entry = ledger.find_mut("T1").unwrap();
        entry.set("state", "doing");
        entry.set("owner", "");
        entry.set("sessions", "s1");
        assert_eq!(entry.fields, [("state".to_owned(), "doing".to_owned()), ("sessions".to_owned(), "s1".to_owned())]);
    }

    #[test]
    fn a_change_is_written_whole_under_the_folders_lock() {
        let dir = tempfile::tempdir().unwrap();
        let file = LedgerFile { path: dir.path().join(".lembas/tasks.md"), letter: 'T', heading: "# Tasks\n" };
        assert!(!file.exists());
        let number = file
            .change(|l| {
                let number = l.next_number();
                l.entries.push(Entry { number, title: "First".into(), ..Entry::default() });
                Ok(number)
            })
            .unwrap();
        assert_eq!(number, 1);
        assert_eq!(std::fs::read_to_string(&file.path).unwrap(), "# Tasks\n\n## T1 · First\n");
        let refused: Result<(), String> = file.change(|_| Err("no".into()));
        assert_eq!(refused, Err("no".into()));
        let left: Vec<_> =
            std::fs::read_dir(dir.path().join(".lembas")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, ["tasks.md"], "nothing is left beside it");
    }
}
