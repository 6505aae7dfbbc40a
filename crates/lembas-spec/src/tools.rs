//! Tool definitions (`spec/tools/*.json`): what a model is sent, and what the harness needs to
//! know about each tool (risk class, how its calls are drawn, requirements).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// What a tool does to the world, which is what permission modes decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskClass {
    Read,
    Write,
    Execute,
    Interact,
}

/// One tool, as `spec/tools/<name>.json` defines it.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolDef {
    pub name: String,
    /// `shared`, `cli` or `llembas`.
    pub scope: String,
    /// `agent`, `chat` or `both`.
    pub sessions: String,
    pub risk: RiskClass,
    /// Runs alone in its step (it waits on the person).
    pub exclusive: bool,
    /// How a client draws a call: `shell`, `edit`, `read`, `search`, `task`, `plan`, `tool`, …
    pub block: String,
    #[serde(default)]
    pub requires: Vec<String>,
    /// What a call answers while a requirement is not met, word for word.
    pub unavailable: Option<String>,
    /// Former names per project (`cli`, `llembas`).
    #[serde(default)]
    pub aliases: BTreeMap<String, Vec<String>>,
    /// `always`: asked in every mode and never remembered.
    pub confirm: Option<String>,
    /// `main` or `subagent` when only one of them is given the tool.
    pub offered: Option<String>,
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
}

impl ToolDef {
    /// Whether the device's agent sessions offer this tool at all.
    pub fn on_device(&self) -> bool {
        matches!(self.scope.as_str(), "cli" | "shared") && matches!(self.sessions.as_str(), "agent" | "both")
    }

    /// Whether a call of it hands work to a subagent (`block: task`).
    pub fn starts_a_subagent(&self) -> bool {
        self.block == "task"
    }

    /// Whether its calls change files (`block: edit`): what an undo puts back, what a client
    /// draws as a diff.
    pub fn changes_files(&self) -> bool {
        self.block == "edit"
    }

    /// Whether it reaches the web (`block: web`): it changes nothing in the project.
    pub fn reaches_the_web(&self) -> bool {
        self.block == "web"
    }

    /// Whether a subagent may be given it: never what waits on the person (`exclusive`), what
    /// makes the session's plan (`block: plan`), or what is the main agent's only
    /// (`offered: main`).
    pub fn for_subagents(&self) -> bool {
        !(self.exclusive || self.block == "plan" || self.offered.as_deref() == Some("main"))
    }

    /// Whether it only reads (`risk: read`): all an `explore` subagent is given.
    pub fn only_reads(&self) -> bool {
        self.risk == RiskClass::Read
    }

    /// Whether `name` is this tool's name or one of its CLI aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.get("cli").is_some_and(|a| a.iter().any(|n| n == name))
    }
}

/// Every tool definition, sorted by name.
pub fn tools() -> &'static [ToolDef] {
    static TOOLS: OnceLock<Vec<ToolDef>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        crate::files_under("tools/")
            .map(|(path, text)| {
                serde_json::from_str(text).unwrap_or_else(|e| panic!("spec/{path} is not a tool definition: {e}"))
            })
            .collect()
    })
}

/// A tool by its name or one of its CLI aliases (`todo` finds `plan_write`).
pub fn tool(name: &str) -> Option<&'static ToolDef> {
    tools().iter().find(|t| t.answers_to(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_is_well_formed() {
        for t in tools() {
            assert!(t.on_device(), "{} is not a device tool", t.name);
            assert_eq!(t.parameters["type"], "object", "{}", t.name);
            assert!(!t.description.is_empty(), "{}", t.name);
            assert_eq!(
                t.requires.is_empty(),
                t.unavailable.is_none(),
                "{}: requires and unavailable go together",
                t.name
            );
            for req in t.parameters.get("required").and_then(Value::as_array).into_iter().flatten() {
                let key = req.as_str().unwrap();
                assert!(t.parameters["properties"].get(key).is_some(), "{}: required {key} is not a property", t.name);
            }
        }
    }

    #[test]
    fn what_the_definitions_say_of_each_tool() {
        let changes: Vec<&str> = tools().iter().filter(|t| t.changes_files()).map(|t| t.name.as_str()).collect();
        assert_eq!(changes, ["apply_patch", "edit", "multiedit", "write"]);
        let main_only: Vec<&str> = tools().iter().filter(|t| !t.for_subagents()).map(|t| t.name.as_str()).collect();
        assert_eq!(
            main_only,
            [
                "ask_user",
                "plan_submit",
                "plan_update",
                "plan_write",
                "task",
                "team_add",
                "team_assign",
                "team_decide",
                "team_replace",
                "team_stop"
            ]
        );
        assert!(tool("grep").unwrap().only_reads() && !tool("bash").unwrap().only_reads());
    }

    #[test]
    fn aliases_find_the_tool() {
        assert_eq!(tool("todo").unwrap().name, "plan_write");
        assert_eq!(tool("plan_exit").unwrap().name, "plan_submit");
        assert_eq!(tool("subagent_run").unwrap().name, "task");
        assert!(tool("nope").is_none());
    }

    #[test]
    fn file_name_is_tool_name() {
        for (path, text) in crate::files_under("tools/") {
            let def: ToolDef = serde_json::from_str(text).unwrap();
            assert_eq!(path, format!("tools/{}.json", def.name));
        }
    }
}
