//! The input box: a multi-line editor (ratatui-textarea) with the keys people's fingers know
//! from their shell — Ctrl-A/E to the line's ends, Ctrl-K/U/W to cut, Ctrl-Y to put back,
//! Alt/Ctrl-arrows by words — and large pastes kept whole behind a short marker.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, DataCursor, TextArea, WrapMode};

/// A paste of more lines than this is shown as a marker (and sent whole).
const PASTE_LINES: usize = 10;
/// A paste longer than this is shown as a marker too, however few its lines.
const PASTE_CHARS: usize = 1_500;

/// The prompt being written.
#[derive(Debug, Clone)]
pub struct Editor {
    area: TextArea<'static>,
    /// Large pastes, by the marker that stands for each in the text.
    pastes: Vec<(String, String)>,
}

impl Default for Editor {
    fn default() -> Editor {
        let mut area = TextArea::default();
        area.set_wrap_mode(WrapMode::WordOrGlyph);
        // The line the cursor is on is not underlined: a prompt is not a code editor.
        area.set_cursor_line_style(Style::default());
        area.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        Editor { area, pastes: Vec::new() }
    }
}

impl PartialEq<&str> for Editor {
    fn eq(&self, other: &&str) -> bool {
        self.text() == *other
    }
}

/// What a key did in the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The editor took the key (the text or the cursor may have changed).
    Taken,
    /// Up on the first row or Down on the last: the history's turn.
    HistoryBack,
    HistoryForward,
    /// Not an editing key.
    Ignored,
}

impl Editor {
    /// The text as shown (a large paste as its marker).
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// The text to send: each paste's marker replaced by what was pasted.
    pub fn expanded(&self) -> String {
        let mut text = self.text();
        for (marker, pasted) in &self.pastes {
            text = text.replacen(marker, pasted, 1);
        }
        text
    }

    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// Empties the editor and gives back what it held, pastes expanded.
    pub fn take(&mut self) -> String {
        let text = self.expanded();
        self.set("");
        text
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        let mut area = TextArea::new(text.split('\n').map(str::to_owned).collect());
        area.set_wrap_mode(WrapMode::WordOrGlyph);
        area.set_cursor_line_style(self.area.cursor_line_style());
        area.set_cursor_style(self.area.cursor_style());
        area.set_yank_text(self.area.yank_text());
        area.move_cursor(CursorMove::Bottom);
        area.move_cursor(CursorMove::End);
        self.area = area;
        self.pastes.clear();
    }

    pub fn clear(&mut self) {
        self.set("");
    }

    pub fn push(&mut self, c: char) {
        self.area.insert_char(c);
    }

    pub fn push_str(&mut self, text: &str) {
        self.area.insert_str(text);
    }

    /// The text before the cursor on its line.
    pub fn before_cursor(&self) -> String {
        let DataCursor(row, col) = self.area.cursor();
        self.area.lines().get(row).map(|l| l.chars().take(col).collect()).unwrap_or_default()
    }

    /// Deletes `count` characters before the cursor.
    pub fn delete_back(&mut self, count: usize) {
        for _ in 0..count {
            self.area.delete_char();
        }
    }

    /// Pasted text: a large paste is kept whole and shown as `[pasted N lines]`.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines > PASTE_LINES || text.chars().count() > PASTE_CHARS {
            let n = self.pastes.len() + 1;
            let marker =
                if n == 1 { format!("[pasted {lines} lines]") } else { format!("[pasted {lines} lines #{n}]") };
            self.area.insert_str(&marker);
            self.pastes.push((marker, text));
        } else {
            self.area.insert_str(&text);
        }
    }

    /// An editing key.
    pub fn key(&mut self, key: KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let DataCursor(row, _) = self.area.cursor();
        let last_row = self.area.lines().len().saturating_sub(1);
        match key.code {
            KeyCode::Up if !ctrl && !alt && row == 0 => return Edit::HistoryBack,
            KeyCode::Down if !ctrl && !alt && row == last_row => return Edit::HistoryForward,
            // Words, with Alt as well as Ctrl (what macOS terminals send for Option-arrows).
            KeyCode::Left if alt => {
                self.area.move_cursor(CursorMove::WordBack);
                return Edit::Taken;
            }
            KeyCode::Right if alt => {
                self.area.move_cursor(CursorMove::WordForward);
                return Edit::Taken;
            }
            // The shell's Ctrl-W: cut back to the blank before the word, whatever the word is
            // made of (`prompt[UP]` goes whole, as in readline).
            KeyCode::Char('w') if ctrl => {
                let before: Vec<char> = self.before_cursor().chars().collect();
                let blanks = before.iter().rev().take_while(|c| c.is_whitespace()).count();
                let word = before.iter().rev().skip(blanks).take_while(|c| !c.is_whitespace()).count();
                let cut: String = before[before.len() - blanks - word..].iter().collect();
                self.delete_back(blanks + word);
                if !cut.is_empty() {
                    self.area.set_yank_text(cut);
                }
                return Edit::Taken;
            }
            // The shell's Ctrl-U: cut to the line's start (the text area would undo).
            KeyCode::Char('u') if ctrl => {
                self.area.delete_line_by_head();
                return Edit::Taken;
            }
            // Undo where editors put it.
            KeyCode::Char('z' | '_') if ctrl => {
                self.area.undo();
                return Edit::Taken;
            }
            // A new line: Shift- or Alt-Enter, or Ctrl-J (what a terminal sends for them when
            // it cannot tell them apart).
            KeyCode::Enter if key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) => {
                self.area.insert_newline();
                return Edit::Taken;
            }
            KeyCode::Char('j') if ctrl => {
                self.area.insert_newline();
                return Edit::Taken;
            }
            KeyCode::Tab | KeyCode::Enter | KeyCode::Esc | KeyCode::BackTab => return Edit::Ignored,
            // Keys the text area would take for something a prompt has no use for: selection
            // and the clipboard it keeps apart from the terminal's (Ctrl-C quits, Ctrl-V pastes
            // through the terminal, Ctrl-X and Ctrl-R are free).
            KeyCode::Char('c' | 'v' | 'x' | 'r' | 'o' | 'g' | 'l' | 't') if ctrl => return Edit::Ignored,
            _ => {}
        }
        let before = (self.text(), self.area.cursor());
        let took = self.area.input(key);
        if took || before != (self.text(), self.area.cursor()) { Edit::Taken } else { Edit::Ignored }
    }

    /// Screen rows the text takes at `width` columns (at least one).
    pub fn rows(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .area
            .lines()
            .iter()
            // One column more than the text: the cursor can sit after a line's last character.
            .map(|line| crate::rows::wrap_spans(vec![ratatui::text::Span::raw(format!("{line} "))], width).len())
            .sum();
        u16::try_from(rows.max(1)).unwrap_or(u16::MAX)
    }

    /// The widget to draw.
    pub fn widget(&self) -> &TextArea<'static> {
        &self.area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(editor: &mut Editor, code: KeyCode, modifiers: KeyModifiers) -> Edit {
        editor.key(KeyEvent::new(code, modifiers))
    }

    fn typed(editor: &mut Editor, text: &str) {
        for c in text.chars() {
            press(editor, KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    #[test]
    fn the_shell_keys_move_and_cut() {
        let ctrl = KeyModifiers::CONTROL;
        let mut e = Editor::default();
        typed(&mut e, "hello world");
        press(&mut e, KeyCode::Char('a'), ctrl);
        typed(&mut e, "X");
        press(&mut e, KeyCode::Char('e'), ctrl);
        typed(&mut e, "Y");
        assert_eq!(e.text(), "Xhello worldY");
        press(&mut e, KeyCode::Char('w'), ctrl);
        assert_eq!(e.text(), "Xhello ");
        typed(&mut e, "prompt[UP]");
        press(&mut e, KeyCode::Char('w'), ctrl);
        assert_eq!(e.text(), "Xhello ", "a word is what lies between blanks");
        press(&mut e, KeyCode::Left, KeyModifiers::NONE);
        press(&mut e, KeyCode::Left, KeyModifiers::NONE);
        press(&mut e, KeyCode::Char('k'), ctrl);
        assert_eq!(e.text(), "Xhell");
        press(&mut e, KeyCode::Home, KeyModifiers::NONE);
        press(&mut e, KeyCode::Char('y'), ctrl);
        assert_eq!(e.text(), "o Xhell", "Ctrl-Y puts back what was cut");
        press(&mut e, KeyCode::End, KeyModifiers::NONE);
        press(&mut e, KeyCode::Char('u'), ctrl);
        assert_eq!(e.text(), "");
    }

    #[test]
    fn words_are_jumped_with_alt_or_ctrl_arrows() {
        let mut e = Editor::default();
        typed(&mut e, "one two three");
        press(&mut e, KeyCode::Left, KeyModifiers::CONTROL);
        press(&mut e, KeyCode::Left, KeyModifiers::ALT);
        typed(&mut e, "_");
        assert_eq!(e.text(), "one _two three");
    }

    #[test]
    fn up_and_down_leave_for_the_history_only_at_the_edges() {
        let mut e = Editor::default();
        typed(&mut e, "a");
        press(&mut e, KeyCode::Enter, KeyModifiers::SHIFT);
        typed(&mut e, "b");
        assert_eq!(e.text(), "a\nb");
        assert_eq!(press(&mut e, KeyCode::Down, KeyModifiers::NONE), Edit::HistoryForward);
        assert_eq!(press(&mut e, KeyCode::Up, KeyModifiers::NONE), Edit::Taken);
        assert_eq!(press(&mut e, KeyCode::Up, KeyModifiers::NONE), Edit::HistoryBack);
    }

    #[test]
    fn a_large_paste_is_a_marker_and_is_sent_whole() {
        let mut e = Editor::default();
        typed(&mut e, "look: ");
        let big: String = (1..=120).map(|i| format!("line {i}\n")).collect();
        e.paste(&big);
        assert_eq!(e.text(), "look: [pasted 120 lines]");
        let sent = e.take();
        assert!(sent.starts_with("look: line 1\nline 2") && sent.ends_with("line 120\n"), "{sent}");
        assert!(e.is_empty());
        e.paste("two\nlines");
        assert_eq!(e.text(), "two\nlines");
    }

    #[test]
    fn the_box_grows_with_wrapped_rows() {
        let mut e = Editor::default();
        assert_eq!(e.rows(20), 1);
        e.set("a fairly long prompt that wraps\nand a second line");
        assert_eq!(e.rows(20), 3);
    }
}
