//! Hooks: commands the person configures to run at points of a session, to hold it to their own
//! rules — format after every edit, refuse a command, add context to a prompt, ask the agent to
//! go on. Configured in `config.toml` (`[[hooks.PreToolUse]]` with `matcher`, `command`,
//! `timeout`) and, in a trusted project, in Claude Code's `.claude/settings.json` and
//! `.claude/settings.local.json` (`{"hooks": {"PreToolUse": [{"matcher": …, "hooks": [{"type":
//! "command", "command": …, "timeout": …}]}]}}`), so hooks written for Claude Code run unchanged:
//! the same JSON on their standard input, the same meaning of their exit codes and output.
//!
//! This crate reads the configuration and runs a hook; what its answer does to a session is the
//! engine's.

mod run;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use run::{HookRun, run};

/// How long a hook may run when its configuration does not say (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The points of a session a hook runs at, by Claude Code's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before a tool call runs: may allow it, refuse it with a reason the model reads, or ask.
    PreToolUse,
    /// After a tool call ran: may add a message for the model.
    PostToolUse,
    /// When the person sends a prompt: may add context, or block it.
    UserPromptSubmit,
    /// When the agent would end its turn: may ask it to go on, with a reason.
    Stop,
    /// When a session starts (its first turn in this process): may add context.
    SessionStart,
    /// When lembas would notify the person (a card waits for them): runs beside it.
    Notification,
}

impl HookEvent {
    pub const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::Notification,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Notification => "Notification",
        }
    }

    fn named(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// A hook as `config.toml` writes one (`[[hooks.PreToolUse]]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// Which tools it runs for (a tool hook): a regular expression matched against the tool's
    /// lembas name and its Claude Code name (`bash` / `Bash`); none, empty or `*`: every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// Run with `sh -c` in the project's folder.
    pub command: String,
    /// Seconds it may run before it is stopped (default 60).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// One hook, ready to run.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: HookEvent,
    matcher: Option<regex::Regex>,
    /// The matcher as written, for what the person is told.
    matcher_text: Option<String>,
    pub command: String,
    pub timeout: Duration,
    /// Where it was configured, for what the person is told of it.
    pub source: String,
}

impl Hook {
    /// When it runs, in words: "before every Bash, Write call", "on every prompt".
    pub fn when(&self) -> String {
        let tools = self.matcher_text.as_deref().map_or("every tool".to_owned(), |m| format!("every {m}"));
        match self.event {
            HookEvent::PreToolUse => format!("before {tools} call"),
            HookEvent::PostToolUse => format!("after {tools} call"),
            HookEvent::UserPromptSubmit => "on every prompt".to_owned(),
            HookEvent::Stop => "when a turn ends".to_owned(),
            HookEvent::SessionStart => "when a session starts".to_owned(),
            HookEvent::Notification => "on every notification".to_owned(),
        }
    }

    /// Whether it runs for a call of `tool` (a hook of no tool event runs always).
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.matcher, tool) {
            (Some(matcher), Some(tool)) => {
                matcher.is_match(tool) || claude_name(tool).is_some_and(|name| matcher.is_match(name))
            }
            _ => true,
        }
    }
}

/// Every hook a session runs.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

impl Hooks {
    /// The hooks of `config.toml`'s `[hooks]` table: an event's name → its hooks. An unknown
    /// event or a matcher that is not a regular expression is an error, naming it.
    pub fn from_config(
        table: &std::collections::BTreeMap<String, Vec<HookEntry>>,
        source: &str,
    ) -> Result<Hooks, String> {
        let mut hooks = Vec::new();
        for (event, entries) in table {
            let event = HookEvent::named(event).ok_or_else(|| unknown_event(event, source))?;
            for entry in entries {
                hooks.push(hook(event, entry.matcher.as_deref(), &entry.command, entry.timeout, source)?);
            }
        }
        Ok(Hooks { hooks })
    }

    /// The hooks of a Claude Code settings file (its `hooks` key; none when it has none). Events
    /// lembas does not run (`Notification`, `PreCompact`, …) are left out, and said in the answer's
    /// second part.
    pub fn from_claude_settings(text: &str, source: &str) -> Result<(Hooks, Vec<String>), String> {
        let settings: Value = serde_json::from_str(text).map_err(|e| format!("{source} is not JSON: {e}"))?;
        let (mut hooks, mut left) = (Vec::new(), Vec::new());
        let Some(table) = settings.get("hooks").and_then(Value::as_object) else { return Ok((Hooks { hooks }, left)) };
        for (event, groups) in table {
            let Some(event) = HookEvent::named(event) else {
                left.push(event.clone());
                continue;
            };
            for group in groups.as_array().into_iter().flatten() {
                let matcher = group.get("matcher").and_then(Value::as_str);
                for entry in group.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                    if entry.get("type").and_then(Value::as_str).is_some_and(|t| t != "command") {
                        continue;
                    }
                    let Some(command) = entry.get("command").and_then(Value::as_str) else { continue };
                    let timeout = entry.get("timeout").and_then(Value::as_u64);
                    hooks.push(hook(event, matcher, command, timeout, source)?);
                }
            }
        }
        Ok((Hooks { hooks }, left))
    }

    /// These hooks, then `other`'s.
    pub fn and(mut self, other: Hooks) -> Hooks {
        self.hooks.extend(other.hooks);
        self
    }

    /// The hooks that run at `event` (for a call of `tool`), in the order configured.
    pub fn at(&self, event: HookEvent, tool: Option<&str>) -> impl Iterator<Item = &Hook> {
        self.hooks.iter().filter(move |h| h.event == event && h.matches(tool))
    }

    /// Whether any hook runs at `event` (for a call of `tool`): none, and nothing is prepared.
    pub fn any(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.at(event, tool).next().is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Every hook, in the order configured.
    pub fn iter(&self) -> impl Iterator<Item = &Hook> {
        self.hooks.iter()
    }
}

fn hook(
    event: HookEvent,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<u64>,
    source: &str,
) -> Result<Hook, String> {
    let matcher_written = matcher.unwrap_or_default();
    let matcher = match matcher.map(str::trim).filter(|m| !m.is_empty() && *m != "*") {
        // Matched whole, as Claude Code matches a tool's name.
        Some(pattern) => Some(regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
            format!("{source}: the {} matcher {pattern:?} is not a regular expression: {e}", event.name())
        })?),
        None => None,
    };
    Ok(Hook {
        event,
        matcher_text: matcher.as_ref().map(|_| matcher_text(matcher_written)),
        matcher,
        command: command.to_owned(),
        timeout: timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs),
        source: source.to_owned(),
    })
}

fn matcher_text(written: &str) -> String {
    written.trim().replace('|', ", ")
}

fn unknown_event(event: &str, source: &str) -> String {
    let names: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
    format!("{source}: there is no hook event {event}; the events are {}", names.join(", "))
}

/// A lembas tool's name as Claude Code calls the same tool, for matchers written for it.
pub fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "multiedit" => "MultiEdit",
        "apply_patch" => "Edit",
        "grep" => "Grep",
        "glob" => "Glob",
        "list" => "LS",
        "web_fetch" => "WebFetch",
        "web_search" => "WebSearch",
        "task" => "Task",
        "plan_write" => "TodoWrite",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_settings_read_with_their_matchers_and_the_events_left_out_named() {
        let text = r#"{"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]}],
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
            "PreCompact": [{"hooks": [{"type": "command", "command": "save.sh"}]}]
        }, "permissions": {}}"#;
        let (hooks, left) = Hooks::from_claude_settings(text, ".claude/settings.json").unwrap();
        assert_eq!(left, ["PreCompact"]);
        let pre: Vec<&Hook> = hooks.at(HookEvent::PreToolUse, Some("bash")).collect();
        assert_eq!((pre.len(), pre[0].timeout), (1, Duration::from_secs(5)));
        assert_eq!(hooks.at(HookEvent::PreToolUse, Some("read")).count(), 0);
        // Matched whole, by either name: `edit` and `write` and `apply_patch`, not `multiedit`.
        assert_eq!(hooks.at(HookEvent::PostToolUse, Some("write")).count(), 1);
        assert_eq!(hooks.at(HookEvent::PostToolUse, Some("apply_patch")).count(), 1);
        assert_eq!(hooks.at(HookEvent::PostToolUse, Some("multiedit")).count(), 0);
        assert_eq!(hooks.at(HookEvent::PostToolUse, Some("edit")).next().unwrap().timeout, DEFAULT_TIMEOUT);
        assert!(Hooks::from_claude_settings("{}", "x").unwrap().0.is_empty());
    }

    #[test]
    fn config_hooks_read_and_a_bad_event_or_matcher_is_named() {
        let mut table = std::collections::BTreeMap::new();
        table.insert("Stop".to_owned(), vec![HookEntry { command: "more.sh".into(), ..Default::default() }]);
        let hooks = Hooks::from_config(&table, "config.toml").unwrap();
        assert_eq!(hooks.at(HookEvent::Stop, None).count(), 1);
        table.insert("Later".to_owned(), vec![]);
        assert!(Hooks::from_config(&table, "config.toml").unwrap_err().contains("no hook event Later"));
        let bad = r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}"#;
        assert!(Hooks::from_claude_settings(bad, "s.json").unwrap_err().contains("not a regular expression"));
    }
}
