//! The four permission modes, ordered from loosest to strictest (`permission/modes.json`).

use std::fmt;

use crate::modes;
use serde::{Deserialize, Serialize};

/// A session's permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Auto,
    Edit,
    Manual,
    Plan,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Auto, Mode::Edit, Mode::Manual, Mode::Plan];

    /// A mode by name, former names included (`unrestricted` is `auto`).
    pub fn parse(word: &str) -> Option<Mode> {
        let word = word.trim().to_ascii_lowercase();
        let name = modes().aliases.get(&word).cloned().unwrap_or(word);
        Mode::ALL.into_iter().find(|m| m.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Edit => "edit",
            Mode::Manual => "manual",
            Mode::Plan => "plan",
        }
    }

    /// Position in `modes.json`'s order: 0 is the loosest.
    fn rank(self) -> usize {
        modes().order.iter().position(|n| n == self.as_str()).expect("modes.json orders every mode")
    }

    /// Whether this mode is looser than `other` (switching to it is always asked).
    pub fn is_looser_than(self, other: Mode) -> bool {
        self.rank() < other.rank()
    }

    /// The stricter of the two: a mode lowered to a maximum.
    pub fn at_most(self, max: Mode) -> Mode {
        if self.is_looser_than(max) { max } else { self }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_aliases() {
        assert_eq!(Mode::parse("Manual"), Some(Mode::Manual));
        assert_eq!(Mode::parse("unrestricted"), Some(Mode::Auto));
        assert_eq!(Mode::parse("yolo"), None);
    }

    #[test]
    fn order_runs_from_auto_to_plan() {
        assert!(Mode::Auto.is_looser_than(Mode::Edit));
        assert!(Mode::Manual.is_looser_than(Mode::Plan));
        assert!(!Mode::Plan.is_looser_than(Mode::Plan));
        assert_eq!(Mode::Auto.at_most(Mode::Manual), Mode::Manual);
        assert_eq!(Mode::Plan.at_most(Mode::Auto), Mode::Plan);
    }

    #[test]
    fn serializes_as_its_name() {
        assert_eq!(serde_json::to_string(&Mode::Edit).unwrap(), "\"edit\"");
    }
}
