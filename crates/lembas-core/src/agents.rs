//! Which agent a `task` or `team_add` call starts: the built-in `general` and `explore`, or a
//! custom agent from an agent file (`lembas_tools::agents`), found as the session started. The
//! calls' `agent` enum lists the custom ones too, fixed for the session (its tool block does not
//! change under it).

use lembas_model::ToolSchema;
use lembas_permissions::Mode;
use lembas_tools::AgentFile;
use serde_json::Value;

/// The agent a call named.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Chosen<'a> {
    General,
    Explore,
    Custom(&'a AgentFile),
}

impl<'a> Chosen<'a> {
    /// The agent `name` names among the built-in ones and `files` (empty: `general`).
    pub(crate) fn named(name: &str, files: &'a [AgentFile]) -> Result<Chosen<'a>, String> {
        match name.trim() {
            "" | "general" => Ok(Chosen::General),
            "explore" => Ok(Chosen::Explore),
            other => files.iter().find(|a| a.name == other.to_lowercase()).map(Chosen::Custom).ok_or_else(|| {
                let mut names =
                    vec!["general (does the work)".to_owned(), "explore (reads and searches only)".to_owned()];
                names.extend(files.iter().map(|a| a.name.clone()));
                format!("There is no agent called {other}. The agents: {}.", names.join(", "))
            }),
        }
    }

    /// Only reading and searching tools.
    pub(crate) fn explores(&self) -> bool {
        matches!(self, Chosen::Explore)
    }

    /// A custom agent's name.
    pub(crate) fn custom_name(&self) -> Option<String> {
        match self {
            Chosen::Custom(agent) => Some(agent.name.clone()),
            _ => None,
        }
    }

    /// The mode it runs in under a parent in `parent`: never looser than it.
    pub(crate) fn mode(&self, parent: Mode) -> Mode {
        match self {
            Chosen::Custom(AgentFile { mode: Some(mode), .. }) => {
                Mode::parse(mode).map_or(parent, |m| m.at_most(parent))
            }
            _ => parent,
        }
    }

    /// Its own instructions, after lembas' words for a subagent.
    pub(crate) fn instructions(&self) -> String {
        match self {
            Chosen::Custom(agent) if !agent.instructions.is_empty() => {
                format!("\n\nYou are the \"{}\" agent. Its instructions:\n\n{}", agent.name, agent.instructions)
            }
            _ => String::new(),
        }
    }

    /// The tools it may use, by name, when it names them.
    pub(crate) fn tools(&self) -> Option<Vec<String>> {
        match self {
            Chosen::Custom(agent) => agent.tools.clone(),
            _ => None,
        }
    }
}

/// The tool block with the custom agents in it: every tool whose `agent` parameter is the enum
/// of the built-in agents lists them too, and its description names each briefly.
pub(crate) fn offer(tools: &mut [ToolSchema], files: &[AgentFile]) {
    if files.is_empty() {
        return;
    }
    for tool in tools.iter_mut() {
        let Some(agent) = tool.parameters.pointer_mut("/properties/agent") else { continue };
        let Some(Value::Array(names)) = agent.get_mut("enum") else { continue };
        if !names.iter().any(|n| n == "explore") {
            continue;
        }
        names.extend(files.iter().map(|a| Value::String(a.name.clone())));
        let briefly: Vec<String> =
            files.iter().map(|a| format!("{}: {}", a.name, first_sentence(&a.description))).collect();
        if let Some(Value::String(said)) = agent.get_mut("description") {
            said.push_str(&format!("; the project's own agents — {}", briefly.join("; ")));
        }
    }
}

/// A description's first sentence, at most 100 characters.
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let end = line.find(". ").map_or(line.len(), |at| at + 1);
    let sentence = &line[..end];
    match sentence.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &sentence[..cut]),
        None => sentence.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reviewer() -> AgentFile {
        AgentFile {
            name: "reviewer".into(),
            description: "Reviews a change. Use it after edits.".into(),
            tools: Some(vec!["read".into(), "grep".into()]),
            mode: Some("manual".into()),
            instructions: "Say what is wrong.".into(),
            file: Default::default(),
        }
    }

    #[test]
    fn the_agent_enum_lists_the_custom_agents_with_a_word_on_each() {
        let mut tools = vec![ToolSchema {
            name: "x".into(),
            description: String::new(),
            parameters: serde_json::json!({"properties": {"agent": {"type": "string", "enum": ["general", "explore"], "description": "general does the work"}}}),
        }];
        offer(&mut tools, &[reviewer()]);
        let agent = &tools[0].parameters["properties"]["agent"];
        assert_eq!(agent["enum"], serde_json::json!(["general", "explore", "reviewer"]));
        assert!(agent["description"].as_str().unwrap().ends_with("reviewer: Reviews a change."), "{agent}");
    }

    #[test]
    fn a_custom_agent_is_named_runs_no_looser_than_its_parent_and_an_unknown_one_is_refused() {
        let files = [reviewer()];
        let chosen = Chosen::named("Reviewer", &files).unwrap();
        assert_eq!((chosen.mode(Mode::Auto), chosen.mode(Mode::Plan)), (Mode::Manual, Mode::Plan));
        assert_eq!(chosen.tools().unwrap(), ["read", "grep"]);
        assert!(chosen.instructions().contains("Say what is wrong."));
        assert!(Chosen::named("", &files).is_ok_and(|c| matches!(c, Chosen::General)));
        let refused = Chosen::named("nobody", &files).unwrap_err();
        assert!(refused.ends_with("explore (reads and searches only), reviewer."), "{refused}");
    }
}
