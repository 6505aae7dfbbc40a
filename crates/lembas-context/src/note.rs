//! The session note (`context.md` §10, rule 3): what changed since the system prompt was made
//! goes as a `<session-note>` after the person's words on the next message that starts a turn,
//! one block per change in `context.note`'s order — never into earlier text.

use std::collections::BTreeMap;

use lembas_spec::{loop_spec, render};
use serde::{Deserialize, Serialize};

/// What can change during a session. A field that is `None` is not tracked (a session without
/// memory, say) and never noted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    pub date: Option<String>,
    pub mode: Option<String>,
    /// The plan as rendered.
    pub plan: Option<String>,
    pub memory: Option<String>,
    pub personality: Option<String>,
    /// Instruction files by the name the prompt gives them.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// MCP servers' instructions by server name.
    #[serde(default)]
    pub mcp: BTreeMap<String, String>,
    /// The team's size block (`team`, then `team_lead` or `team_one`, and `team_own`), where a
    /// team is offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// The subagents the person stopped (`team_stopped`), a block of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_stopped: Option<String>,
}

/// What the model has been told: what the prompt said when it was made, and the notes since.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Told {
    pub facts: Facts,
}

fn or_empty(text: &str) -> String {
    if text.is_empty() { loop_spec().context.note.empty.clone() } else { text.to_owned() }
}

fn mode_text(mode: &str) -> String {
    lembas_spec::file(&format!("prompts/modes/{mode}.md")).unwrap_or_default().trim_end().to_owned()
}

impl Told {
    /// The model knows `facts` (the prompt was made from them, or its own tool changed them).
    pub fn knows(facts: Facts) -> Told {
        Told { facts }
    }

    /// The note for the next message that starts a turn, or `None` when nothing changed since
    /// what the model was told; what it says counts as told from then on.
    pub fn note(&mut self, now: &Facts) -> Option<String> {
        let spec = &loop_spec().context.note;
        let told = &self.facts;
        let mut blocks: Vec<(&str, String)> = Vec::new();
        if let Some(date) = now.date.as_ref().filter(|d| told.date.as_ref() != Some(*d)) {
            blocks.push(("date", render(spec.text("date"), &[("date", date)])));
        }
        if let Some(mode) = now.mode.as_ref().filter(|m| told.mode.as_ref() != Some(*m)) {
            blocks.push(("mode", render(spec.text("mode"), &[("mode", mode), ("mode_text", &mode_text(mode))])));
        }
        if let Some(plan) = now.plan.as_ref().filter(|p| told.plan.as_ref() != Some(*p)) {
            blocks.push(("plan", render(spec.text("plan"), &[("plan", &or_empty(plan))])));
        }
        if let Some(memory) = now.memory.as_ref().filter(|m| told.memory.as_ref() != Some(*m)) {
            blocks.push(("memory", render(spec.text("memory"), &[("memory", &or_empty(memory))])));
        }
        let mut paths: Vec<&String> = now.files.keys().chain(told.files.keys()).collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            let (was, is) = (told.files.get(path), now.files.get(path));
            if was != is {
                let text = or_empty(is.map_or("", String::as_str));
                blocks.push(("instructions", render(spec.text("instructions"), &[("path", path), ("text", &text)])));
            }
        }
        if let Some(personality) = now.personality.as_ref().filter(|p| told.personality.as_ref() != Some(*p)) {
            blocks.push(("personality", render(spec.text("personality"), &[("personality", &or_empty(personality))])));
        }
        let servers: Vec<String> = now
            .mcp
            .iter()
            .filter(|(name, text)| told.mcp.get(*name) != Some(*text))
            .map(|(name, text)| format!("<server name=\"{name}\">\n{text}\n</server>"))
            .collect();
        if !servers.is_empty() {
            blocks.push(("mcp", render(spec.text("mcp"), &[("instructions", &servers.join("\n"))])));
        }
        if let Some(team) = now.team.as_ref().filter(|t| told.team.as_ref() != Some(*t)) {
            blocks.push(("team", team.clone()));
        }
        if let Some(stopped) = now.team_stopped.as_ref().filter(|t| told.team_stopped.as_ref() != Some(*t)) {
            blocks.push(("team_stopped", stopped.clone()));
        }
        self.facts = now.clone();
        if blocks.is_empty() {
            return None;
        }
        // Stable by key order; blocks of one key (instruction files) keep their path order.
        blocks.sort_by_key(|(key, _)| spec.order.iter().position(|k| k == key).unwrap_or(usize::MAX));
        let body: Vec<String> = blocks.into_iter().map(|(_, b)| b).collect();
        Some(format!("{}\n{}\n{}", spec.open, body.join("\n\n"), spec.close))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(date: &str, mode: &str) -> Facts {
        Facts { date: Some(date.into()), mode: Some(mode.into()), ..Facts::default() }
    }

    #[test]
    fn the_first_note_says_the_date_and_then_only_changes() {
        let mut told = Told::knows(Facts { mode: Some("edit".into()), ..Facts::default() });
        assert_eq!(
            told.note(&facts("2026-12-02", "edit")).unwrap(),
            "<session-note>\nToday is 2026-12-02.\n</session-note>"
        );
        assert_eq!(told.note(&facts("2026-12-02", "edit")), None);
        let both = told.note(&facts("2026-12-03", "plan")).unwrap();
        assert!(
            both.starts_with("<session-note>\nToday is 2026-12-03.\n\nThe permission mode is now plan:\nPermission mode: plan. You are planning, not implementing."),
            "{both}"
        );
    }

    #[test]
    fn untracked_facts_are_never_noted() {
        let mut told = Told::knows(Facts { memory: Some("a".into()), ..Facts::default() });
        assert_eq!(told.note(&Facts::default()), None);
    }
}
