//! Pickers: a list to choose from with the arrows, narrowed by typing — models, effort levels,
//! modes, stored sessions, the turns to rewind to.

use crossterm::event::{KeyCode, KeyEvent};
use lembas_protocol::{Command, Mode, StoredSession, TurnPoint};

use crate::app::{Action, App, Card};

/// What choosing an item does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    Model(String),
    Effort(String),
    Mode(Mode),
    Session(String),
    /// A turn to go back to before: its number and words; how is asked next.
    Turn(u32, String),
    /// How to go back: the host's `Rewind` or `Fork`.
    GoBack(Command),
}

/// One choice: what it is called, a word about it, and what choosing it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub detail: String,
    pub pick: Pick,
}

/// A list being chosen from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub title: String,
    pub items: Vec<Item>,
    /// What was typed: only items whose label or detail hold every word of it are listed.
    pub filter: String,
    /// The chosen one's place among those listed.
    pub selected: usize,
}

impl Picker {
    pub fn new(title: &str, items: Vec<Item>, current: Option<&str>) -> Picker {
        let selected = current.and_then(|c| items.iter().position(|i| i.label == c)).unwrap_or(0);
        Picker { title: title.to_owned(), items, filter: String::new(), selected }
    }

    /// The items the filter leaves, in their order.
    pub fn listed(&self) -> Vec<&Item> {
        let words: Vec<String> = self.filter.split_whitespace().map(str::to_lowercase).collect();
        self.items
            .iter()
            .filter(|item| {
                let text = format!("{} {}", item.label, item.detail).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .collect()
    }
}

/// How long ago, in a word or two.
pub fn age(then_ms: i64, now_ms: i64) -> String {
    let minutes = (now_ms - then_ms).max(0) / 60_000;
    match minutes {
        0 => "just now".into(),
        1..60 => format!("{minutes} min ago"),
        60..1440 => format!("{} h ago", minutes / 60),
        1440..2880 => "yesterday".into(),
        _ => format!("{} days ago", minutes / 1440),
    }
}

/// Stored sessions as items: title, then how long ago and where.
pub fn session_items(sessions: &[(StoredSession, Option<String>)], now_ms: i64) -> Vec<Item> {
    sessions
        .iter()
        .map(|(s, snippet)| {
            let place = std::path::Path::new(&s.project)
                .file_name()
                .map_or(s.project.clone(), |n| n.to_string_lossy().into_owned());
            let plural = if s.messages == 1 { "" } else { "s" };
            let mut detail = format!("{} · {place} · {} message{plural}", age(s.updated_at, now_ms), s.messages);
            if let Some(snippet) = snippet {
                detail.push_str(&format!(" · {}", snippet.replace('\n', " ")));
            }
            Item { label: s.title.clone(), detail, pick: Pick::Session(s.id.clone()) }
        })
        .collect()
}

/// The turns one can go back to as items: the words, then when and the files it changed.
pub fn turn_items(turns: &[TurnPoint], now_ms: i64) -> Vec<Item> {
    turns
        .iter()
        .map(|turn| {
            let when = turn.at_ms.map(|at| age(at, now_ms));
            let files = match turn.files.as_slice() {
                [] => "no file changed".to_owned(),
                [one] => one.clone(),
                [first, second] => format!("{first}, {second}"),
                [first, second, rest @ ..] => format!("{first}, {second} and {} more", rest.len()),
            };
            let detail = when.map_or(files.clone(), |when| format!("{when} · {files}"));
            Item {
                label: format!("{}. {}", turn.number, turn.words),
                detail,
                pick: Pick::Turn(turn.number, turn.words.clone()),
            }
        })
        .collect()
}

/// How to go back to before turn `to`: the choices, the usual one first.
fn going_back_items(to: u32) -> Vec<Item> {
    let item = |label: &str, detail: &str, pick| Item { label: label.into(), detail: detail.into(), pick };
    vec![
        item(
            "Files and conversation",
            "both as they were before it",
            Pick::GoBack(Command::Rewind { to, files: true, conversation: true }),
        ),
        item(
            "Conversation only",
            "the files stay as they are",
            Pick::GoBack(Command::Rewind { to, files: false, conversation: true }),
        ),
        item(
            "Files only",
            "the conversation stays as it is",
            Pick::GoBack(Command::Rewind { to, files: true, conversation: false }),
        ),
        item(
            "Fork, files put back",
            "a new session from before it; this one is kept",
            Pick::GoBack(Command::Fork { to, files: true }),
        ),
        item(
            "Fork, files as they are",
            "a new session from before it; this one is kept",
            Pick::GoBack(Command::Fork { to, files: false }),
        ),
    ]
}

impl App {
    /// The turns one can go back to, to choose from (the latest chosen first).
    pub(crate) fn choose_turn(&mut self, turns: &[TurnPoint]) {
        if turns.is_empty() {
            self.finished.push(crate::app::Block::Notice("No turn of this session can be gone back to.".into()));
            return;
        }
        let items = turn_items(turns, crate::now_ms());
        let latest = items.last().map(|item| item.label.clone());
        self.open_picker(Picker::new("Rewind to before", items, latest.as_deref()));
    }

    /// Opens a picker (over the input; a waiting ask shows after it).
    pub fn open_picker(&mut self, picker: Picker) {
        if picker.items.is_empty() {
            self.finished.push(crate::app::Block::Notice(format!("{}: there is nothing to choose.", picker.title)));
            return;
        }
        self.card = Some(Card::Pick(picker));
    }

    /// A key while a picker is open.
    pub(crate) fn picker_key(&mut self, key: KeyEvent) -> Option<Action> {
        let Some(Card::Pick(picker)) = self.card.as_mut() else { return None };
        let count = picker.listed().len();
        match key.code {
            KeyCode::Esc => {
                self.card = None;
                self.next_card();
                None
            }
            KeyCode::Up => {
                picker.selected = picker.selected.checked_sub(1).unwrap_or(count.saturating_sub(1));
                None
            }
            KeyCode::Down | KeyCode::Tab => {
                picker.selected = if picker.selected + 1 >= count { 0 } else { picker.selected + 1 };
                None
            }
            KeyCode::Backspace => {
                picker.filter.pop();
                picker.selected = 0;
                None
            }
            KeyCode::Char(c) => {
                picker.filter.push(c);
                picker.selected = 0;
                None
            }
            KeyCode::Enter => {
                let pick = picker.listed().get(picker.selected).map(|item| item.pick.clone())?;
                self.card = None;
                let action = self.picked(pick);
                self.next_card();
                action
            }
            _ => None,
        }
    }

    /// What choosing does: the same as the command typed with its argument.
    fn picked(&mut self, pick: Pick) -> Option<Action> {
        match pick {
            Pick::Model(id) => {
                let chosen = self.choose_model(&id);
                self.confirm(chosen)
            }
            Pick::Effort(level) => {
                self.effort = Some(level.clone());
                self.confirm(Some(Action::SetEffort(Some(level))))
            }
            Pick::Mode(mode) => {
                let switched = self.switch_mode(mode);
                self.confirm(switched)
            }
            Pick::Session(id) => Some(Action::Open(Some(id))),
            Pick::Turn(to, words) => {
                self.open_picker(Picker::new(&format!("Before {to}. {words}"), going_back_items(to), None));
                None
            }
            Pick::GoBack(command) => Some(Action::GoBack(command)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(label: &str, detail: &str) -> Item {
        Item { label: label.into(), detail: detail.into(), pick: Pick::Effort(label.into()) }
    }

    #[test]
    fn typing_narrows_the_list_by_every_word() {
        let mut picker =
            Picker::new("x", vec![item("fix the parser", "2 h ago · api"), item("add tests", "api")], None);
        assert_eq!(picker.listed().len(), 2);
        picker.filter = "API parser".into();
        let listed: Vec<&str> = picker.listed().iter().map(|i| i.label.as_str()).collect();
        assert_eq!(listed, ["fix the parser"]);
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(age(0, 30_000), "just now");
        assert_eq!(age(0, 5 * 60_000), "5 min ago");
        assert_eq!(age(0, 3 * 3_600_000), "3 h ago");
        assert_eq!(age(0, 49 * 3_600_000), "2 days ago");
    }
}
