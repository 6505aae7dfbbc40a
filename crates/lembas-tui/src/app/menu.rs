//! The completion menu: shown in the live area as soon as a `/command` or an `@path` is being
//! typed, its choices matched by fuzzy subsequence (`@main` finds `src/main.rs`; nucleo, helix's
//! matcher) — ↑↓ choose, Tab or Enter take, Esc closes. Nothing of it goes to the scrollback.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

use crate::app::commands::{self, COMMANDS};
use crate::app::{Action, App};

/// Rows the menu shows at once.
pub const MENU_ROWS: usize = 8;

/// What a menu offers for the word being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    /// `/` or `@`; `None` for the words after a command.
    pub sigil: Option<char>,
    /// The word after the sigil, as typed.
    pub typed: String,
    pub items: Vec<MenuItem>,
    pub selected: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuItem {
    pub label: String,
    pub detail: String,
    /// A command that takes words after it (Enter then completes it rather than running it).
    pub takes_words: bool,
}

impl Menu {
    /// The rows to show — a window of [`MENU_ROWS`] around the choice — and which is chosen.
    pub fn visible(&self) -> (&[MenuItem], usize) {
        let first = self.selected.saturating_sub(MENU_ROWS - 1);
        let last = (first + MENU_ROWS).min(self.items.len());
        (&self.items[first..last], self.selected - first)
    }
}

impl App {
    /// The word before the cursor that the menu completes: its sigil (none for a command's
    /// word) and what follows it.
    fn completing(&self) -> Option<(Option<char>, String)> {
        let before = self.input.before_cursor();
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &before[start..];
        let one_line = !self.input.text().contains('\n');
        if one_line && let Some((_, word)) = self.command_word() {
            return Some((None, word));
        }
        match word.chars().next() {
            Some('/') if start == 0 && one_line => Some((Some('/'), word[1..].to_owned())),
            Some('@') => Some((Some('@'), word[1..].to_owned())),
            _ => None,
        }
    }

    /// Opens, narrows or closes the menu for what is typed now.
    pub(crate) fn refresh_menu(&mut self) {
        let Some((sigil, typed)) = self.completing() else {
            self.menu = None;
            self.menu_closed = None;
            return;
        };
        let word = self.input.before_cursor().to_owned();
        if self.menu_closed.as_deref() == Some(word.as_str()) {
            return;
        }
        self.menu_closed = None;
        let items = match sigil {
            Some('/') => self.command_choices(&typed),
            Some(_) => self.file_choices(&typed),
            None => self.word_choices(&typed),
        };
        let selected = self.menu.as_ref().filter(|m| m.sigil == sigil).map_or(0, |m| m.selected);
        self.menu = (!items.is_empty()).then(|| Menu { sigil, typed, selected: selected.min(items.len() - 1), items });
    }

    fn command_choices(&self, typed: &str) -> Vec<MenuItem> {
        let all: Vec<MenuItem> = COMMANDS
            .iter()
            .map(|c| MenuItem {
                label: c.name.to_owned(),
                detail: if c.takes.is_empty() { c.does.to_owned() } else { format!("{} · {}", c.takes, c.does) },
                takes_words: c.takes_words(),
            })
            .chain(self.customs.iter().map(|c| MenuItem {
                label: c.name.clone(),
                detail: c.description.clone(),
                takes_words: true,
            }))
            .collect();
        ranked(all, typed)
    }

    /// The first word after a command that takes one of a known set, as typed so far
    /// (`/mode ed`): the command and the word.
    fn command_word(&self) -> Option<(&'static commands::SlashCommand, String)> {
        let before = self.input.before_cursor();
        let (name, word) = before.strip_prefix('/')?.split_once(' ')?;
        let command = commands::command(name).filter(|c| c.offers_words())?;
        (!word.contains(char::is_whitespace)).then(|| (command, word.to_owned()))
    }

    /// What the command being typed takes, those that match what is typed of it first.
    fn word_choices(&self, typed: &str) -> Vec<MenuItem> {
        let all = self.command_word().and_then(|(c, _)| c.choices(self)).unwrap_or_default();
        ranked(all, typed)
    }

    fn file_choices(&self, typed: &str) -> Vec<MenuItem> {
        fuzzy(typed, self.files.iter().map(String::as_str), true)
            .into_iter()
            .take(200)
            .map(|(path, _)| MenuItem { label: path.to_owned(), detail: String::new(), takes_words: false })
            .collect()
    }

    /// A key while the menu is open: `Some` with what it does when the menu took it.
    pub(crate) fn menu_key(&mut self, key: KeyEvent) -> Option<Option<Action>> {
        let menu = self.menu.as_mut()?;
        let plain_enter =
            key.code == KeyCode::Enter && !key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up => menu.selected = menu.selected.checked_sub(1).unwrap_or(menu.items.len() - 1),
            KeyCode::Down => menu.selected = (menu.selected + 1) % menu.items.len(),
            KeyCode::Esc => {
                self.menu_closed = Some(self.input.before_cursor().to_owned());
                self.menu = None;
            }
            KeyCode::Tab => self.take_choice(),
            KeyCode::Enter if plain_enter => {
                let item = menu.items[menu.selected].clone();
                let (sigil, typed) = (menu.sigil, menu.typed.clone());
                // A command, or a command's word, chosen whole runs at once; a file, or what
                // takes words of the person's own, is put in and waits for the rest.
                if sigil != Some('@') && !item.takes_words {
                    if typed != item.label {
                        self.take_choice();
                    }
                    self.menu = None;
                    return Some(self.submit());
                }
                self.take_choice();
            }
            _ => return None,
        }
        Some(None)
    }

    /// Puts the chosen item in place of the word being typed.
    fn take_choice(&mut self) {
        let Some(menu) = self.menu.take() else { return };
        let item = &menu.items[menu.selected];
        self.input.delete_back(menu.typed.chars().count() + usize::from(menu.sigil.is_some()));
        if let Some(sigil) = menu.sigil {
            self.input.push(sigil);
        }
        self.input.push_str(&item.label);
        self.input.push(' ');
        self.menu_closed = None;
    }
}

/// `all` for what is typed: those starting so first, then the rest that hold it as a subsequence.
fn ranked(all: Vec<MenuItem>, typed: &str) -> Vec<MenuItem> {
    let labels: Vec<&str> = all.iter().map(|i| i.label.as_str()).collect();
    let mut order: Vec<usize> = (0..all.len()).filter(|i| labels[*i].starts_with(typed)).collect();
    for (label, _) in fuzzy(typed, labels.iter().copied(), false) {
        let at = labels.iter().position(|l| *l == label).expect("a listed label");
        if !order.contains(&at) {
            order.push(at);
        }
    }
    order.into_iter().map(|i| all[i].clone()).collect()
}

/// The `items` that hold `typed` as a subsequence, best first (all, in order, for nothing
/// typed); `paths` scores path boundaries as such.
fn fuzzy<'a>(typed: &str, items: impl Iterator<Item = &'a str>, paths: bool) -> Vec<(&'a str, u32)> {
    let mut config = Config::DEFAULT;
    if paths {
        config.set_match_paths();
    }
    let mut matcher = Matcher::new(config);
    Pattern::parse(typed, CaseMatching::Smart, Normalization::Smart).match_list(items, &mut matcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_found_by_a_subsequence_of_it() {
        let files = ["README.md", "src/main.rs", "src/lib.rs", "docs/maintaining.md"];
        let found: Vec<&str> = fuzzy("main", files.iter().copied(), true).into_iter().map(|(f, _)| f).collect();
        assert_eq!(found.first(), Some(&"src/main.rs"), "{found:?}");
        assert!(found.contains(&"docs/maintaining.md") && !found.contains(&"README.md"));
        assert_eq!(fuzzy("", files.iter().copied(), true).len(), 4, "nothing typed: every file, in order");
    }
}
