//! `/settings`: a form of the settings a person changes most — mode, model, effort,
//! notifications, personality, when compaction starts, how many agents the team may have — kept in
//! `config.toml` (its comments and other keys left as they were) and applied to the session at
//! once.

use crossterm::event::{KeyCode, KeyEvent};
use lembas_protocol::{Mode, ModelInfo};

use crate::app::{Action, App, Card};

/// One setting changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Mode(Mode),
    Model(String),
    /// `None`: the model's own start level.
    Effort(Option<String>),
    Notify(bool),
    /// How the agent speaks, by the personality's name.
    Personality(String),
    CompactAt(f64),
    /// The team's size: Min and Max, the main agent included.
    Agents(u32, u32),
}

/// The Subagents row (`subagents.md` §4): one range from 1 to the cap with two handles, Min and
/// Max, each moved on its own — Min never past Max.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub min: u32,
    pub max: u32,
    pub cap: u32,
    /// The handle the arrows move: 0 Min, 1 Max.
    pub handle: usize,
    pub was: (u32, u32),
}

impl Range {
    fn step(&mut self, by: i64) {
        let moved = |v: u32, lo: u32, hi: u32| (i64::from(v) + by).clamp(i64::from(lo), i64::from(hi)) as u32;
        if self.handle == 0 {
            self.min = moved(self.min, 1, self.max);
        } else {
            self.max = moved(self.max, self.min, self.cap);
        }
    }
}

/// A row of the form: its choices, the one chosen, and the one it had when the form opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: &'static str,
    pub choices: Vec<String>,
    pub chosen: usize,
    pub was: usize,
}

/// The form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub rows: Vec<Row>,
    /// The Subagents range, the last row.
    pub agents: Range,
    /// The row the arrows change (`rows.len()`: the Subagents row).
    pub at: usize,
}

const MODES: [Mode; 4] = [Mode::Manual, Mode::Edit, Mode::Auto, Mode::Plan];
const MODEL_DEFAULT: &str = "the model's own";

fn row(name: &'static str, choices: Vec<String>, current: &str) -> Row {
    let chosen = choices.iter().position(|c| c == current).unwrap_or(0);
    Row { name, choices, chosen, was: chosen }
}

/// The Effort row's choices: the model's own start level, then `levels`.
fn effort_choices(levels: Vec<String>) -> Vec<String> {
    std::iter::once(MODEL_DEFAULT.to_owned()).chain(levels).collect()
}

/// The levels another model offers (its server has not narrowed them yet).
fn levels(models: &[ModelInfo], model: &str) -> Vec<String> {
    let offered = models.iter().find(|m| m.is_named(model)).map(ModelInfo::levels);
    effort_choices(offered.unwrap_or_default())
}

impl Form {
    /// The form as the app stands now.
    pub fn of(app: &App) -> Form {
        let model_id = app.model_in_use().map_or(app.model.clone(), |m| m.id.clone());
        let mut models: Vec<String> = app.models.iter().map(|m| m.id.clone()).collect();
        if models.is_empty() {
            models.push(model_id.clone());
        }
        let shares: Vec<String> = (10..=19).map(|n| format!("{}%", n * 5)).collect();
        Form {
            rows: vec![
                row(
                    "Mode",
                    MODES.iter().map(Mode::to_string).collect(),
                    &app.mode.map(|m| m.to_string()).unwrap_or_default(),
                ),
                row("Model", models, &model_id),
                // The model in use: the levels its server takes, as `/effort` offers them.
                row("Effort", effort_choices(app.effort_levels()), app.effort.as_deref().unwrap_or(MODEL_DEFAULT)),
                row("Notifications", vec!["on".into(), "off".into()], if app.notify { "on" } else { "off" }),
                row(
                    "Personality",
                    lembas_protocol::PERSONALITIES.iter().map(|p| (*p).to_owned()).collect(),
                    if app.personality.is_empty() { "default" } else { &app.personality },
                ),
                row("Compaction at", shares, &format!("{}%", (app.compact_at * 20.0).round() as u32 * 5)),
            ],
            agents: Range {
                min: app.agents.0,
                max: app.agents.1,
                cap: lembas_protocol::agents::cap(),
                handle: 0,
                was: app.agents,
            },
            at: 0,
        }
    }

    /// What was changed.
    pub fn changes(&self) -> Vec<Change> {
        let agents = &self.agents;
        let range = ((agents.min, agents.max) != agents.was).then_some(Change::Agents(agents.min, agents.max));
        self.rows
            .iter()
            .filter(|r| r.chosen != r.was)
            .filter_map(|r| {
                let value = r.choices.get(r.chosen)?.clone();
                Some(match r.name {
                    "Mode" => Change::Mode(Mode::parse(&value)?),
                    "Model" => Change::Model(value),
                    "Effort" => Change::Effort((value != MODEL_DEFAULT).then_some(value)),
                    "Notifications" => Change::Notify(value == "on"),
                    "Personality" => Change::Personality(value),
                    _ => Change::CompactAt(value.trim_end_matches('%').parse::<f64>().ok()? / 100.0),
                })
            })
            .chain(range)
            .collect()
    }

    /// How many rows the form has, the Subagents row included.
    pub fn row_count(&self) -> usize {
        self.rows.len() + 1
    }

    /// Whether the Subagents row is the one the arrows change.
    pub fn on_agents(&self) -> bool {
        self.at == self.rows.len()
    }

    fn step(&mut self, by: isize, models: &[ModelInfo]) {
        if self.on_agents() {
            return self.agents.step(by as i64);
        }
        let Some(row) = self.rows.get_mut(self.at) else { return };
        let count = row.choices.len() as isize;
        if count == 0 {
            return;
        }
        row.chosen = (row.chosen as isize + by).rem_euclid(count) as usize;
        // Another model has its own levels.
        if row.name == "Model" {
            let model = row.choices[row.chosen].clone();
            if let Some(effort) = self.rows.iter_mut().find(|r| r.name == "Effort") {
                effort.choices = levels(models, &model);
                effort.chosen = 0;
                effort.was = usize::MAX;
            }
        }
    }
}

impl App {
    /// Opens the settings form.
    pub fn open_settings(&mut self) {
        self.card = Some(Card::Settings(Form::of(self)));
    }

    /// A key while the settings form is open.
    pub(crate) fn settings_key(&mut self, key: KeyEvent) -> Option<Action> {
        let models = self.models.clone();
        let Some(Card::Settings(form)) = self.card.as_mut() else { return None };
        match key.code {
            KeyCode::Up => form.at = form.at.checked_sub(1).unwrap_or(form.row_count() - 1),
            // On the Subagents row Tab goes from Min to Max first.
            KeyCode::Tab if form.on_agents() && form.agents.handle == 0 => form.agents.handle = 1,
            KeyCode::BackTab if form.on_agents() && form.agents.handle == 1 => form.agents.handle = 0,
            KeyCode::Down | KeyCode::Tab => {
                form.at = (form.at + 1) % form.row_count();
                form.agents.handle = 0;
            }
            KeyCode::Left => form.step(-1, &models),
            KeyCode::Right | KeyCode::Char(' ') => form.step(1, &models),
            KeyCode::Esc => {
                self.card = None;
                self.next_card();
            }
            KeyCode::Enter => {
                let changes = form.changes();
                self.card = None;
                self.next_card();
                return (!changes.is_empty()).then_some(Action::Settings(changes));
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effort_row_offers_what_effort_offers() {
        let mut app = App::new("m", Mode::Manual, None, 1000);
        app.models = vec![ModelInfo {
            id: "m".into(),
            efforts: Some(vec!["low".into(), "medium".into(), "high".into()]),
            ..Default::default()
        }];
        // The server took only some of them: the form offers those, as /effort does.
        app.levels = Some(vec!["low".into(), "high".into()]);
        let form = Form::of(&app);
        let effort = form.rows.iter().find(|r| r.name == "Effort").unwrap();
        assert_eq!(effort.choices, [MODEL_DEFAULT, "low", "high"]);
    }

    #[test]
    fn only_what_was_changed_is_kept() {
        let mut app = App::new("m", Mode::Manual, None, 1000);
        app.models = vec![
            ModelInfo { id: "m".into(), ..Default::default() },
            ModelInfo { id: "n".into(), ..Default::default() },
        ];
        let mut form = Form::of(&app);
        assert!(form.changes().is_empty());
        form.step(1, &app.models);
        form.at = 1;
        form.step(1, &app.models);
        form.at = 4;
        form.step(1, &app.models);
        form.at = 5;
        form.step(-1, &app.models);
        assert_eq!(
            form.changes(),
            [
                Change::Mode(Mode::Edit),
                Change::Model("n".into()),
                Change::Effort(None),
                Change::Personality("concise".into()),
                Change::CompactAt(0.8)
            ]
        );
    }

    #[test]
    fn the_subagents_range_moves_each_handle_and_min_never_passes_max() {
        let mut app = App::new("m", Mode::Manual, None, 1000);
        app.agents = (2, 3);
        let mut form = Form::of(&app);
        form.at = form.rows.len();
        form.step(5, &[]);
        assert_eq!((form.agents.min, form.agents.max), (3, 3), "Min stops at Max");
        form.agents.handle = 1;
        form.step(-5, &[]);
        assert_eq!(form.agents.max, 3, "Max stops at Min");
        form.step(100, &[]);
        assert_eq!(form.agents.max, lembas_protocol::agents::cap(), "and at the cap");
        form.agents.handle = 0;
        form.step(-100, &[]);
        assert_eq!(form.changes(), [Change::Agents(1, lembas_protocol::agents::cap())]);
    }
}
