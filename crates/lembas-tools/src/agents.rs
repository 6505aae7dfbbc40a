//! Custom agents: Markdown files whose frontmatter names an agent — `name`, `description`, the
//! `tools` it may use, a `mode` — and whose body is its instructions, for `task` and `team_add`
//! to start beside the built-in `general` and `explore`. Found in places searched in order (a
//! trusted project's `.agent/agents/`, then — read as Claude Code writes them — its
//! `.claude/agents/`, then the person's own agents folder); a name found earlier hides the same
//! name later, and a built-in name cannot be taken. A file's `model:` is not read: only the
//! person names models (`subagents.md` §2).

use std::path::{Path, PathBuf};

/// The names an agent file may not take: the built-in agents'.
const BUILT_IN: [&str; 2] = ["general", "explore"];

/// The most of an agent file that is read.
const MAX_AGENT_BYTES: u64 = 64 * 1024;

/// An agent a file describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFile {
    pub name: String,
    pub description: String,
    /// The tools it may use, by lembas' names (`None`: those of a `general` agent).
    pub tools: Option<Vec<String>>,
    /// The mode it asks for (`manual`, `edit`, `auto`, `plan`); never looser than its parent's.
    pub mode: Option<String>,
    /// Its instructions: the file's body.
    pub instructions: String,
    pub file: PathBuf,
}

/// Every agent file in `places`, the first of each name only, in the order found (each place's
/// files by name). A file that does not read as an agent is skipped and named in `skipped`.
pub fn discover(places: &[PathBuf]) -> (Vec<AgentFile>, Vec<(PathBuf, &'static str)>) {
    let (mut found, mut skipped): (Vec<AgentFile>, Vec<_>) = (Vec::new(), Vec::new());
    for place in places {
        let Ok(entries) = std::fs::read_dir(place) else { continue };
        let mut files: Vec<PathBuf> =
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
        files.sort();
        for file in files {
            match read(&file) {
                Ok(agent) if !found.iter().any(|a| a.name == agent.name) => found.push(agent),
                Ok(_) => {}
                Err(why) => skipped.push((file, why)),
            }
        }
    }
    (found, skipped)
}

fn read(file: &Path) -> Result<AgentFile, &'static str> {
    let size = std::fs::metadata(file).map_err(|_| "it cannot be read")?.len();
    if size > MAX_AGENT_BYTES {
        return Err("it is larger than 64 KiB");
    }
    let text = std::fs::read_to_string(file).map_err(|_| "it cannot be read as UTF-8 text")?;
    let mut agent = parse(&text)?;
    agent.file = file.to_path_buf();
    Ok(agent)
}

/// An agent file's frontmatter and body.
pub fn parse(text: &str) -> Result<AgentFile, &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let rest = text.strip_prefix("---\n").ok_or("it does not start with a frontmatter block (---)")?;
    let end = rest.find("\n---").ok_or("its frontmatter is not closed with ---")?;
    let (front, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map_or("", |(_, b)| b).trim();
    let field = |key: &str| field(front, key);
    let name = field("name").and_then(|v| v.into_iter().next()).ok_or("its frontmatter has no name")?;
    let name = name.trim().to_lowercase();
    // The rule a skill's name follows.
    if !crate::skills::valid_name(&name) {
        return Err("its name is not lowercase letters, digits and -, at most 64");
    }
    if BUILT_IN.contains(&name.as_str()) {
        return Err("its name is a built-in agent's");
    }
    let description = field("description")
        .map(|v| v.join(", "))
        .filter(|d| !d.is_empty())
        .ok_or("its frontmatter has no description")?;
    let tools = field("tools").map(|names| {
        let mut tools: Vec<String> = names.iter().filter_map(|n| lembas_name(n)).map(str::to_owned).collect();
        tools.dedup();
        tools
    });
    let mode = field("mode").and_then(|v| v.into_iter().next()).map(|m| m.to_lowercase());
    if mode.as_deref().is_some_and(|m| !["manual", "edit", "auto", "plan"].contains(&m)) {
        return Err("its mode is not manual, edit, auto or plan");
    }
    Ok(AgentFile { name, description, tools, mode, instructions: body.to_owned(), file: PathBuf::new() })
}

/// A frontmatter field's values: `key: a, b`, `key: [a, b]`, or a list of `- a` lines under
/// `key:`. `None` when the key is not there.
fn field(front: &str, key: &str) -> Option<Vec<String>> {
    let mut lines = front.lines();
    while let Some(line) = lines.next() {
        let Some((k, value)) = line.split_once(':') else { continue };
        if k.trim() != key || line.starts_with([' ', '\t']) {
            continue;
        }
        let value = value.trim();
        let unquote = |v: &str| v.trim().trim_matches(['"', '\'']).to_owned();
        if value.is_empty() {
            let items = lines
                .by_ref()
                .map_while(|l| l.trim_start().strip_prefix("- ").map(unquote))
                .filter(|v| !v.is_empty())
                .collect();
            return Some(items);
        }
        // A description is one value, commas and all.
        if key == "description" {
            return Some(vec![unquote(value)]);
        }
        let inner = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')).unwrap_or(value);
        return Some(inner.split(',').map(unquote).filter(|v| !v.is_empty()).collect());
    }
    None
}

/// A tool named in an agent file, as lembas names it: its own names as they are, Claude Code's
/// mapped (`Read` → `read`, `LS` → `list`); one lembas has no counterpart for is left out.
fn lembas_name(name: &str) -> Option<&'static str> {
    let known = [
        ("read", "read"),
        ("write", "write"),
        ("edit", "edit"),
        ("multiedit", "multiedit"),
        ("apply_patch", "apply_patch"),
        ("bash", "bash"),
        ("grep", "grep"),
        ("glob", "glob"),
        ("ls", "list"),
        ("list", "list"),
        ("webfetch", "web_fetch"),
        ("web_fetch", "web_fetch"),
        ("websearch", "web_search"),
        ("web_search", "web_search"),
        ("recall", "recall"),
        ("view_image", "view_image"),
        ("skills_list", "skills_list"),
        ("skill_view", "skill_view"),
    ];
    let wanted = name.trim().to_lowercase();
    known.iter().find(|(said, _)| *said == wanted).map(|(_, ours)| *ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_agent_reads_with_its_tools_mapped_and_its_model_left_out() {
        let text = "---\nname: code-reviewer\ndescription: Reviews code, for style and bugs.\ntools: Read, Grep, Glob, LS, NotebookEdit\nmodel: opus\n---\nYou review code.\n\nBe brief.\n";
        let agent = parse(text).unwrap();
        assert_eq!(agent.name, "code-reviewer");
        assert_eq!(agent.description, "Reviews code, for style and bugs.");
        assert_eq!(agent.tools.as_deref(), Some(&["read".to_owned(), "grep".into(), "glob".into(), "list".into()][..]));
        assert_eq!(agent.instructions, "You review code.\n\nBe brief.");
        assert_eq!(agent.mode, None);
    }

    #[test]
    fn lists_modes_and_refusals() {
        let listed =
            parse("---\nname: Fixer\ndescription: fixes\ntools:\n  - bash\n  - edit\nmode: Edit\n---\nFix it.")
                .unwrap();
        assert_eq!((listed.name.as_str(), listed.mode.as_deref()), ("fixer", Some("edit")));
        assert_eq!(listed.tools.unwrap(), ["bash", "edit"]);
        assert_eq!(
            parse("---\nname: x\ndescription: d\ntools: [read, grep]\n---\n").unwrap().tools.unwrap(),
            ["read", "grep"]
        );
        assert!(parse("---\nname: explore\ndescription: d\n---\n").unwrap_err().contains("built-in"));
        assert!(parse("---\nname: a b\ndescription: d\n---\n").is_err());
        assert!(parse("---\nname: a\n---\n").unwrap_err().contains("description"));
        assert!(parse("no frontmatter").is_err());
        assert!(parse("---\nname: a\ndescription: d\nmode: yolo\n---\n").unwrap_err().contains("mode"));
    }

    #[test]
    fn an_earlier_place_hides_the_same_name_later_and_a_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(first.join("r.md"), "---\nname: reviewer\ndescription: the project's\n---\nA").unwrap();
        std::fs::write(second.join("r.md"), "---\nname: reviewer\ndescription: the person's\n---\nB").unwrap();
        std::fs::write(second.join("t.md"), "---\nname: tester\ndescription: tests\n---\nC").unwrap();
        std::fs::write(second.join("bad.md"), "just words").unwrap();
        std::fs::write(second.join("notes.txt"), "not an agent").unwrap();
        let (found, skipped) = discover(&[first, second.clone(), dir.path().join("missing")]);
        let names: Vec<(&str, &str)> = found.iter().map(|a| (a.name.as_str(), a.description.as_str())).collect();
        assert_eq!(names, [("reviewer", "the project's"), ("tester", "tests")]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].0, second.join("bad.md"));
    }
}
