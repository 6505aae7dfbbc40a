//! The system prompt, made once per session (`context.md` §10), and the session note that
//! carries what changes after it.

use std::path::Path;

use lembas_permissions::Mode;
use lembas_spec::render;
use lembas_tools::Workspace;

/// A prompt text from `spec/prompts/`, trimmed of its final newline and of the comment a
/// spec text opens with (what it is for, never said to the model).
pub(crate) fn text(path: &str) -> &'static str {
    let file =
        lembas_spec::file(&format!("prompts/{path}")).unwrap_or_else(|| panic!("spec/prompts/{path} is embedded"));
    let body = match file.strip_prefix("<!--").and_then(|rest| rest.split_once("-->")) {
        Some((_, after)) => after.trim_start_matches('\n'),
        None => file,
    };
    body.trim_end_matches('\n')
}

/// The compaction's ask in the same-conversation form: no transcript, no earlier summary — the
/// model has both.
pub(crate) fn compaction_ask() -> &'static str {
    static ASK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ASK.get_or_init(|| {
        render(text("tasks/compact.md"), &[("transcript", ""), ("previous_summary", "")]).trim_end().to_owned()
    })
}

/// An instruction file the model is given, under the name the prompt uses for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub name: String,
    pub text: String,
    /// The file it was read from.
    pub path: std::path::PathBuf,
}

/// The instruction files a session starts with: the global `AGENTS.md`, then the project's
/// chain from the root down to where the session started (each a real file inside the
/// project), then the configured extra files.
pub fn instructions(ws: &Workspace, global: Option<&Path>, extra: &[String], home: Option<&Path>) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut push = |path: &Path| {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.trim().is_empty()
        {
            out.push(Instruction {
                name: lembas_paths::prompt_name(path, &ws.root, home),
                text: text.trim_end().to_owned(),
                path: path.to_path_buf(),
            });
        }
    };
    if let Some(global) = global.filter(|g| g.is_file()) {
        push(global);
    }
    let readable = |p: &str| {
        let path = Path::new(p);
        path.is_file() && ws.contains(path)
    };
    for file in lembas_fsview::instructions::chain(&ws.root.to_string_lossy(), &ws.started.to_string_lossy(), readable)
    {
        push(Path::new(&file));
    }
    for file in extra {
        push(&ws.resolve(file));
    }
    out
}

/// What the system prompt is made of.
#[derive(Debug, Clone)]
pub struct PromptParts<'a> {
    pub ws: &'a Workspace,
    pub mode: Mode,
    /// Nobody is there to answer approvals.
    pub unattended: bool,
    pub instructions: &'a [Instruction],
    /// The connected MCP servers' instructions, by server.
    pub mcp: &'a std::collections::BTreeMap<String, String>,
    /// A subagent's standing (`blocks/subagent.md`, rendered): said at the end, in place of the
    /// mode's text.
    pub subagent: Option<&'a str>,
    /// The skills found when the prompt was made.
    pub skills: &'a [lembas_tools::Skill],
    /// The team is offered: the main agent is told how to lead (`blocks/team_lead.md`).
    pub team: bool,
    /// How the agent speaks, when the person chose a personality.
    pub personality: Option<&'a str>,
    /// The person's memory, as their LLeMbas instance renders it (`lembas://memory`).
    pub memory: Option<&'a str>,
    /// What the session has of the library, in words (`the notes`, `the memory` …): said where a
    /// tool reads it; with the bases a conversation is limited to, when it is.
    pub library: Option<Library<'a>>,
}

/// What the library block says.
#[derive(Debug, Clone)]
pub struct Library<'a> {
    pub parts: Vec<&'static str>,
    pub knowledge_scope: Option<&'a [String]>,
}

/// A section of the prompt: block `path` rendered with `vars`, after a blank line.
fn section(path: &str, vars: &[(&str, &str)]) -> String {
    format!("\n\n{}", render(text(path), vars).trim())
}

/// `blocks/library.md`: the parts named in a sentence, then the knowledge scope's sentence.
fn library_section(library: &Library) -> String {
    let mut parts_said = match library.parts.as_slice() {
        [] => return String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    if let Some(first) = parts_said.get(0..1) {
        parts_said.replace_range(0..1, &first.to_uppercase());
    }
    let scope = library.knowledge_scope.map_or(String::new(), |bases| {
        format!(
            "\nKnowledge searches here cover only: {}. Finding nothing there means nothing is there, not that the library is empty.",
            bases.join(", ")
        )
    });
    section("blocks/library.md", &[("parts", &parts_said), ("knowledge_scope", &scope)])
}

pub fn system_prompt(parts: &PromptParts) -> String {
    let mut environment = lembas_paths::environment_lines(&parts.ws.root, &parts.ws.started);
    environment.push(format!("Platform: {}", std::env::consts::OS));
    let mode = match parts.subagent {
        Some(_) => String::new(),
        None => {
            let mut mode = format!("# Permission mode\n{}\n", text(&format!("modes/{}.md", parts.mode)));
            if parts.unattended {
                mode.push_str(text("modes/unattended.md"));
                mode.push('\n');
            }
            mode.push('\n');
            mode
        }
    };
    let mut subagent = parts.subagent.map(|block| format!("\n\n{block}")).unwrap_or_default();
    if parts.team {
        subagent.push_str(&format!("\n\n{}", text("blocks/team_lead.md")));
    }
    let skills = if parts.skills.is_empty() {
        String::new()
    } else {
        section("blocks/skills.md", &[("skills", &lembas_tools::skills_index(parts.skills))])
    };
    let instructions = if parts.instructions.is_empty() {
        String::new()
    } else {
        let files: Vec<String> = parts.instructions.iter().map(|i| format!("\n## {}\n{}", i.name, i.text)).collect();
        section("blocks/instructions.md", &[("files", &files.join("\n"))])
    };
    let mcp = if parts.mcp.is_empty() {
        String::new()
    } else {
        let servers: Vec<String> =
            parts.mcp.iter().map(|(name, text)| format!("<server name=\"{name}\">\n{text}\n</server>")).collect();
        section("blocks/mcp.md", &[("servers", &servers.join("\n"))])
    };
    // Its own section after how to work, apart from the bullets above it.
    let personality =
        parts.personality.map(|p| section("blocks/personality.md", &[("personality", p)])).unwrap_or_default();
    let memory = parts.memory.map(|m| section("blocks/memory.md", &[("memory", m)])).unwrap_or_default();
    let library = parts.library.as_ref().map(library_section).unwrap_or_default();
    render(
        text("system.md"),
        &[
            ("library", &library),
            ("memory", &memory),
            ("personality", &personality),
            ("environment", &environment.join("\n")),
            ("mode", &mode),
            ("context", text("blocks/context.md")),
            ("instructions", &instructions),
            ("skills", &skills),
            ("mcp", &mcp),
            ("subagent", &subagent),
        ],
    )
}

/// A session's title from its first prompt: the first line, at most 60 characters, cut at a
/// word.
pub fn title_from(prompt: &str) -> String {
    let line =
        prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= 60 {
        return if line.is_empty() { "New session".to_owned() } else { line };
    }
    let cut: String = line.chars().take(60).collect();
    let at_word = cut.rfind(' ').filter(|&i| i > 20).map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", at_word.trim_end_matches([',', '.', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_short_and_cut_at_a_word() {
        assert_eq!(title_from("  fix the parser\nmore"), "fix the parser");
        let long = title_from(&"word ".repeat(30));
        assert!(long.ends_with('…') && long.chars().count() <= 61);
        assert_eq!(title_from(""), "New session");
    }

    #[test]
    fn the_system_prompt_names_no_absolute_path_and_no_date() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("shop");
        std::fs::create_dir_all(root.join("web")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "Use tabs.\n").unwrap();
        let (ws, _) = Workspace::new(&root, &root.join("web"));
        let found = instructions(&ws, None, &[], None);
        let prompt = system_prompt(&PromptParts {
            personality: None,
            memory: None,
            library: None,
            ws: &ws,
            mode: Mode::Edit,
            unattended: true,
            instructions: &found,
            mcp: &Default::default(),
            subagent: None,
            skills: &[],
            team: false,
        });
        assert!(prompt.contains(
            "Project: shop (paths are relative to its root)\nStarted in: web (relative to the project root)"
        ));
        assert!(prompt.contains("## AGENTS.md\nUse tabs."));
        assert!(prompt.contains("Nobody is watching"));
        assert!(!prompt.contains(&dir.path().display().to_string()));
        assert!(!prompt.contains("2026"));
    }
}
