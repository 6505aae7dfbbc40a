//! Access levels: none, read-only, stage, commit.

use serde::{Deserialize, Serialize};

/// What a session may do at a path, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    None,
    Ro,
    Stage,
    Commit,
}

impl Level {
    pub fn parse(word: &str) -> Option<Level> {
        match word {
            "none" => Some(Level::None),
            "ro" => Some(Level::Ro),
            "stage" => Some(Level::Stage),
            "commit" => Some(Level::Commit),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Ro => "ro",
            Level::Stage => "stage",
            Level::Commit => "commit",
        }
    }
}
