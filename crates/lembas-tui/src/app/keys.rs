//! What a key does: to a card when one waits, else to the input box.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::{Approval, Mode, PlanVerdict};

use crate::app::{Action, App, Card, MODES};
use crate::editor::Edit;

/// Words being written for a card: the reason for a refusal, a corrected command, feedback on
/// a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    /// Deny, with these words for the model.
    DenyWords,
    /// Run this command instead (bash), once.
    EditCommand,
    /// Keep planning, with these words.
    PlanFeedback,
}

impl App {
    /// What a key does.
    pub fn key(&mut self, key: KeyEvent) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.interrupt();
        }
        self.quit_armed = false;
        self.hint = None;
        if self.viewing.is_some() {
            self.transcript_key(key);
            return None;
        }
        if ctrl && key.code == KeyCode::Char('o') {
            self.expand();
            return None;
        }
        if self.card.is_some() {
            return self.card_key(key);
        }
        if let Some(taken) = self.menu_key(key) {
            return taken;
        }
        match key.code {
            KeyCode::Enter if !key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) => self.submit(),
            KeyCode::Tab => {
                // A menu Esc closed opens again; one with a single choice takes it at once.
                self.menu_closed = None;
                self.refresh_menu();
                if self.menu.as_ref().is_some_and(|m| m.items.len() == 1) {
                    self.menu_key(key);
                }
                None
            }
            KeyCode::Esc if self.busy || self.shell_running => Some(Action::Cancel),
            KeyCode::BackTab => {
                let at = self.mode.and_then(|m| MODES.iter().position(|x| *x == m)).unwrap_or(0);
                self.switch_mode(MODES[(at + 1) % MODES.len()])
            }
            // Ctrl-D on an empty prompt leaves, as in a shell.
            KeyCode::Char('d') if ctrl && self.input.is_empty() => self.leave("Ctrl-D again"),
            _ => {
                match self.input.key(key) {
                    Edit::HistoryBack => self.history_back(),
                    Edit::HistoryForward => self.history_forward(),
                    Edit::Taken | Edit::Ignored => {}
                }
                self.refresh_menu();
                None
            }
        }
    }

    /// Ctrl-C: clears what is being written first; then stops a running turn and arms quitting;
    /// a second press quits.
    fn interrupt(&mut self) -> Option<Action> {
        if self.writing.is_some() {
            self.writing = None;
            let held = self.held.take().unwrap_or_default();
            self.input.set(&held);
            return None;
        }
        if !self.input.is_empty() && self.card.is_none() {
            self.input.clear();
            self.history_at = None;
            return None;
        }
        if self.quit_armed {
            return Some(Action::Quit);
        }
        self.quit_armed = true;
        self.hint = Some(match self.quit_warning() {
            Some(running) => format!("{running} Press Ctrl-C again to stop them and quit."),
            None => "Press Ctrl-C again to quit.".to_owned(),
        });
        (self.busy || self.shell_running).then_some(Action::Cancel)
    }

    /// What quitting would stop, when anything runs in the background.
    pub fn quit_warning(&self) -> Option<String> {
        let mut running = Vec::new();
        match self.jobs {
            0 => {}
            1 => running.push("1 background job".to_owned()),
            n => running.push(format!("{n} background jobs")),
        }
        match self.background_subagents {
            0 => {}
            1 => running.push("1 background subagent".to_owned()),
            n => running.push(format!("{n} background subagents")),
        }
        (!running.is_empty()).then(|| format!("{} still running.", running.join(" and ")))
    }

    fn history_back(&mut self) {
        if self.history.is_empty() {
            return;
        }
        if self.history_at.is_none() {
            self.draft = Some(self.input.expanded());
        }
        let at = self.history_at.map_or(self.history.len() - 1, |a| a.saturating_sub(1));
        self.history_at = Some(at);
        self.input.set(&self.history[at].clone());
    }

    fn history_forward(&mut self) {
        match self.history_at {
            Some(at) if at + 1 < self.history.len() => {
                self.history_at = Some(at + 1);
                self.input.set(&self.history[at + 1].clone());
            }
            Some(_) => {
                self.history_at = None;
                let draft = self.draft.take().unwrap_or_default();
                self.input.set(&draft);
            }
            None => {}
        }
    }

    /// A key while a card waits: the card's letters answer it; words being written for it go to
    /// the input box until Enter sends them or Esc goes back to the card.
    fn card_key(&mut self, key: KeyEvent) -> Option<Action> {
        match self.card {
            Some(Card::Pick(_)) => return self.picker_key(key),
            Some(Card::Settings(_)) => return self.settings_key(key),
            _ => {}
        }
        let card = self.card.clone()?;
        if let Some(writing) = self.writing {
            return self.writing_key(&card, writing, key);
        }
        let answer = match (card, key.code) {
            (Card::Approval(_), KeyCode::Char('y') | KeyCode::Enter) => Some(Action::Answer(Approval::Once)),
            (Card::Approval(request), KeyCode::Char('a')) if !request.once_only => {
                Some(Action::Answer(Approval::Always))
            }
            (Card::Approval(_), KeyCode::Char('n')) => Some(Action::Answer(Approval::Deny { feedback: None })),
            // As in the other agents: Esc stops the turn and gives the input box back; `n` is
            // the way to decline and let the model go on.
            (Card::Approval(_), KeyCode::Esc) => Some(Action::StopAtCard),
            (Card::Approval(_), KeyCode::Char('d')) => return self.write_for_card(Writing::DenyWords, ""),
            (Card::Approval(request), KeyCode::Char('e')) if request.runs_command => {
                let command = request.preview.clone().unwrap_or(request.title.clone());
                return self.write_for_card(Writing::EditCommand, &command);
            }
            (Card::LooserMode(mode), KeyCode::Char('y') | KeyCode::Enter) => self.confirm(Some(Action::SetMode(mode))),
            (Card::Overwrite(_), KeyCode::Char('y')) => Some(Action::OverwriteKept),
            (Card::LooserMode(_) | Card::Overwrite(_), KeyCode::Char('n') | KeyCode::Esc) => {
                self.card = None;
                self.next_card();
                return None;
            }
            (Card::Plan(_), KeyCode::Char('y') | KeyCode::Enter) => {
                Some(Action::Plan(PlanVerdict::Approved { mode: None }))
            }
            (Card::Plan(_), KeyCode::Char(c @ ('1' | '2' | '3'))) => {
                let mode = [Mode::Manual, Mode::Edit, Mode::Auto][usize::from(c as u8 - b'1')];
                Some(Action::Plan(PlanVerdict::Approved { mode: Some(mode) }))
            }
            (Card::Plan(_), KeyCode::Char('n')) => return self.write_for_card(Writing::PlanFeedback, ""),
            (Card::Plan(_), KeyCode::Esc) => Some(Action::Plan(PlanVerdict::Declined { feedback: None })),
            (Card::Question(q), KeyCode::Char(c)) if c.is_ascii_digit() && self.input.is_empty() => {
                match c.to_digit(10).and_then(|n| q.options.get((n as usize).wrapping_sub(1))) {
                    Some(option) => Some(Action::Reply(option.clone())),
                    None => {
                        self.input.push(c);
                        return None;
                    }
                }
            }
            (Card::Question(q), KeyCode::Up | KeyCode::Down) if !q.options.is_empty() && self.input.is_empty() => {
                let n = q.options.len();
                self.choice = if key.code == KeyCode::Up { (self.choice + n - 1) % n } else { (self.choice + 1) % n };
                return None;
            }
            (Card::Question(q), KeyCode::Enter)
                if !key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) && self.input.is_empty() =>
            {
                // Nothing written: the marked option.
                q.options.get(self.choice).cloned().map(Action::Reply)
            }
            (Card::Question(_), KeyCode::Enter)
                if !key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT)
                    && !self.input.text().trim().is_empty() =>
            {
                Some(Action::Reply(self.input.take()))
            }
            // Esc takes back words being written first; then, as on an approval, it stops the
            // turn, the question unanswered.
            (Card::Question(_), KeyCode::Esc) if !self.input.is_empty() => {
                self.input.take();
                return None;
            }
            (Card::Question(_), KeyCode::Esc) => Some(Action::StopAtQuestion),
            (Card::Question(_), _) => {
                self.input.key(key);
                return None;
            }
            // Other keys wait: a card is answered before anything else.
            _ => None,
        };
        if answer.is_some() {
            self.card = None;
        }
        if matches!(answer, Some(Action::SetMode(_) | Action::OverwriteKept)) {
            self.next_card();
        }
        answer
    }

    /// A key while words are written for a card (why it is declined, the command corrected,
    /// what should change in the plan): Enter sends them as the card's answer, Esc goes back to
    /// the card.
    fn writing_key(&mut self, card: &Card, writing: Writing, key: KeyEvent) -> Option<Action> {
        match key.code {
            KeyCode::Esc => {
                self.writing = None;
                let held = self.held.take().unwrap_or_default();
                self.input.set(&held);
                None
            }
            KeyCode::Enter if !key.modifiers.intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) => {
                let words = self.input.take().trim().to_owned();
                let answer = match writing {
                    Writing::DenyWords => {
                        Action::Answer(Approval::Deny { feedback: (!words.is_empty()).then_some(words) })
                    }
                    Writing::EditCommand if words.is_empty() => return None,
                    Writing::EditCommand => {
                        // The block shows the command that runs, not the one asked about.
                        if let Card::Approval(request) = card {
                            self.retitle(&request.call_id, &words);
                        }
                        Action::Answer(Approval::Edited { command: words })
                    }
                    Writing::PlanFeedback => {
                        Action::Plan(PlanVerdict::Declined { feedback: (!words.is_empty()).then_some(words) })
                    }
                };
                self.writing = None;
                self.card = None;
                if let Some(held) = self.held.take() {
                    self.input.set(&held);
                }
                Some(answer)
            }
            _ => {
                self.input.key(key);
                None
            }
        }
    }

    /// Words to write for the card, in the input box (what was being written before is held,
    /// and comes back when the card is answered).
    fn write_for_card(&mut self, writing: Writing, start: &str) -> Option<Action> {
        if !self.input.is_empty() {
            self.held = Some(self.input.expanded());
        }
        self.input.set(start);
        self.writing = Some(writing);
        None
    }

    /// Text pasted at once (bracketed paste): kept whole in the input.
    pub fn paste(&mut self, text: &str) {
        self.input.paste(text);
    }
}
