//! What trusting a project turns on, named from what the project actually holds: trusting it
//! lets its permission rules count, starts its MCP servers, runs its hooks, and offers its
//! commands, agents and skills — a person deciding is told each, not only "rules will count".

use std::path::Path;

/// The folders of a project whose files become commands, agents or skills once it is trusted.
const OFFERED: &[(&str, &[&str])] = &[
    ("commands", &[".agent/commands", ".claude/commands"]),
    ("agents", &[".agent/agents", ".claude/agents"]),
    ("skills", &[".agent/skills"]),
];

/// The most of one kind named before the rest is counted.
const NAMED: usize = 4;

/// What trusting the project at `root` turns on, a line each; none when it holds nothing of the
/// kind.
pub fn turns_on(root: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(hooks(root));
    if let Ok(servers) = lembas_config::project_mcp_servers(root)
        && !servers.is_empty()
    {
        let named: Vec<String> = servers
            .iter()
            .map(|(name, s)| match (&s.command, &s.url) {
                (Some(command), _) => format!(
                    "{name} (`{}`)",
                    [command.clone()].iter().chain(&s.args).cloned().collect::<Vec<_>>().join(" ")
                ),
                (None, Some(url)) => format!("{name} ({url})"),
                _ => name.clone(),
            })
            .collect();
        lines.push(format!("starts {} (.mcp.json): {}", count(named.len(), "MCP server"), listed(&named)));
    }
    if let Ok(Some(rules)) = lembas_config::project_rules(root) {
        let n = rules.as_object().map_or(0, |tools| {
            tools
                .iter()
                .filter(|(key, _)| !key.starts_with("about"))
                .map(|(_, v)| v.as_object().map_or(1, serde_json::Map::len))
                .sum()
        });
        lines.push(format!("lets its {} count (.lembas/permissions.json)", count(n, "permission rule")));
    }
    for (kind, folders) in OFFERED {
        let mut names = Vec::new();
        for folder in *folders {
            let Ok(entries) = std::fs::read_dir(root.join(folder)) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().trim_end_matches(".md").to_owned();
                if !name.starts_with('.') {
                    names.push(name);
                }
            }
        }
        names.sort();
        if !names.is_empty() {
            lines.push(format!("offers its {kind}: {}", listed(&names)));
        }
    }
    lines
}

/// The project's hooks (its Claude Code settings), in words: "runs 2 hooks: before every Bash
/// call: `sh guard.sh`; …".
fn hooks(root: &Path) -> Option<String> {
    let mut said = Vec::new();
    for name in ["settings.json", "settings.local.json"] {
        let file = root.join(".claude").join(name);
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        match lembas_hooks::Hooks::from_claude_settings(&text, &format!(".claude/{name}")) {
            Ok((hooks, _)) => said.extend(hooks.iter().map(|h| format!("{}: `{}`", h.when(), h.command))),
            Err(e) => said.push(format!("(.claude/{name} cannot be read: {e})")),
        }
    }
    (!said.is_empty()).then(|| format!("runs {}: {}", count(said.len(), "hook"), said.join("; ")))
}

fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

fn listed(names: &[String]) -> String {
    let mut shown = names.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > NAMED {
        shown.push_str(&format!(" and {} more", names.len() - NAMED));
    }
    shown
}

/// The question's words: the project, and what trusting it turns on.
pub fn question(root: &Path) -> String {
    let on = turns_on(root);
    let mut text = format!("lembas is about to work in {}.\n", root.display());
    if on.is_empty() {
        text.push_str(
            "It has no hooks, MCP servers, permission rules, commands, agents or skills of its own now; any it gets later run and count only while you trust it.\n",
        );
    } else {
        text.push_str("Trusting it:\n");
        for line in &on {
            text.push_str(&format!("  - {line}\n"));
        }
    }
    text.push_str("Trust this project? [y/n] ");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_what_the_project_holds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(question(root).contains("It has no hooks, MCP servers"));
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::create_dir_all(root.join(".lembas")).unwrap();
        let settings = serde_json::json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh guard.sh"}]}],
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "sh fmt.sh"}]}]
        }});
        std::fs::write(root.join(".claude/settings.json"), settings.to_string()).unwrap();
        std::fs::write(root.join(".claude/commands/deploy.md"), "Deploy it.").unwrap();
        std::fs::write(root.join(".mcp.json"), r#"{"mcpServers": {"db": {"command": "npx", "args": ["db-server"]}}}"#)
            .unwrap();
        std::fs::write(root.join(".lembas/permissions.json"), r#"{"bash": {"npm test *": "allow", "rm *": "deny"}}"#)
            .unwrap();
        let asked = question(root);
        assert!(
            asked.contains(
                "runs 2 hooks: before every Bash call: `sh guard.sh`; after every Write, Edit call: `sh fmt.sh`"
            ),
            "{asked}"
        );
        assert!(asked.contains("starts 1 MCP server (.mcp.json): db (`npx db-server`)"), "{asked}");
        assert!(asked.contains("lets its 2 permission rules count"), "{asked}");
        assert!(asked.contains("offers its commands: deploy"), "{asked}");
        assert!(asked.ends_with("Trust this project? [y/n] "));
    }
}
