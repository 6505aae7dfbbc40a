//! The team's size setting as every front end offers it (`team.md` §2): its bounds and the words
//! the spec gives it. Here, beside the protocol, so a front end reads them without the engine.

use lembas_spec::loop_spec;
use serde::{Deserialize, Serialize};

/// A custom agent a session may start (from an agent file), as `/agents` lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentFileInfo {
    pub name: String,
    pub description: String,
    /// The tools it may use (`None`: a general agent's).
    pub tools: Option<Vec<String>>,
    /// The mode it asks for, never looser than its parent's.
    pub mode: Option<String>,
    /// The file it was read from.
    pub file: String,
}

/// The most agents any team may have (`team.agents.cap`).
pub fn cap() -> u32 {
    loop_spec().team["agents"]["cap"].as_u64().expect("loop.json team.agents.cap") as u32
}

/// Checks a size setting against the bounds: refused with them, never clamped.
pub fn check(min: u32, max: u32) -> Result<(), String> {
    let cap = cap();
    if min < 1 || max < min || max > cap {
        return Err(format!(
            "The agents setting must keep 1 ≤ min ≤ max ≤ {cap} (min {min}, max {max} given); the count includes the main agent."
        ));
    }
    Ok(())
}

/// The Subagents setting's words (`subagents.setting`: `label`, `min`, `max`, `hint`, `short`).
pub fn setting_text(key: &str) -> &'static str {
    loop_spec().subagents["setting"][key].as_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_outside_the_bounds_is_refused_with_them() {
        assert!(check(1, cap()).is_ok());
        for (min, max) in [(0, 2), (3, 2), (1, cap() + 1)] {
            assert!(check(min, max).unwrap_err().contains(&format!("≤ {}", cap())), "{min} {max}");
        }
        assert!(!setting_text("label").is_empty());
    }
}
