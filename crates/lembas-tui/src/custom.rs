//! Custom slash commands: Markdown files whose text becomes the prompt — the person's own
//! (`commands/` in the configuration folder) and a trusted project's (`.agent/commands/`, and
//! `.claude/commands/`, which people already have). A file's name is its command (`review.md`
//! is `/review`; in a subfolder, `git/commit.md` is `/git:commit`); a frontmatter
//! `description` says what it does in `/help`; `$ARGUMENTS` stands for what follows the
//! command, and `$1` … `$9` for its words one by one.

use std::path::Path;

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Custom {
    pub name: String,
    pub description: String,
    /// The prompt, with its placeholders.
    pub body: String,
    /// Where it comes from, for `/help` ("project" or "yours").
    pub origin: &'static str,
}

/// A command file's text read: its frontmatter's description (else its first line) and its
/// body.
pub fn parse(name: &str, text: &str, origin: &'static str) -> Custom {
    let text = text.replace("\r\n", "\n");
    let (front, body) = match text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---")) {
        Some((front, body)) => (front.to_owned(), body.trim_start_matches('-').trim_start_matches('\n').to_owned()),
        None => (String::new(), text.clone()),
    };
    let described = front
        .lines()
        .find_map(|l| l.strip_prefix("description:").map(|d| d.trim().trim_matches(['"', '\'']).to_owned()));
    let description = described.unwrap_or_else(|| {
        let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim_start_matches('#').trim();
        first.chars().take(60).collect()
    });
    Custom { name: name.to_owned(), description, body: body.trim().to_owned(), origin }
}

/// The prompt a command makes with what followed it.
pub fn expand(custom: &Custom, arguments: &str) -> String {
    let words: Vec<&str> = arguments.split_whitespace().collect();
    let mut prompt = custom.body.replace("$ARGUMENTS", arguments.trim());
    // $9 first, so $1 does not eat the start of $10-style text.
    for n in (1..=9).rev() {
        prompt = prompt.replace(&format!("${n}"), words.get(n - 1).copied().unwrap_or(""));
    }
    // Words given to a command that has no place for them still go with it.
    if !custom.body.contains("$ARGUMENTS") && !custom.body.contains("$1") && !arguments.trim().is_empty() {
        prompt.push_str("\n\n");
        prompt.push_str(arguments.trim());
    }
    prompt
}

/// The commands in `folder` (Markdown files, one level of subfolders as `dir:name`), sorted.
pub fn load_folder(folder: &Path, origin: &'static str) -> Vec<Custom> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            let Some(dir) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
            for inner in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                if let Some(custom) = load_file(&inner.path(), Some(&dir), origin) {
                    found.push(custom);
                }
            }
        } else if let Some(custom) = load_file(&path, None, origin) {
            found.push(custom);
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

fn load_file(path: &Path, dir: Option<&str>, origin: &'static str) -> Option<Custom> {
    if path.extension().and_then(|e| e.to_str()) != Some("md") {
        return None;
    }
    let stem = path.file_stem()?.to_string_lossy().to_lowercase().replace(' ', "-");
    let name = match dir {
        Some(dir) => format!("{dir}:{stem}"),
        None => stem,
    };
    let text = std::fs::read_to_string(path).ok()?;
    Some(parse(&name, &text, origin))
}

/// Every custom command a session here has: the person's own, then — when the project is
/// trusted — its `.agent/commands/` and `.claude/commands/`; the first of a name wins, and a
/// name the UI has already is not taken.
pub fn load(own: &Path, project: Option<&Path>, builtin: &[&str]) -> Vec<Custom> {
    let mut all = load_folder(own, "yours");
    if let Some(root) = project {
        all.extend(load_folder(&root.join(".agent").join("commands"), "project"));
        all.extend(load_folder(&root.join(".claude").join("commands"), "project"));
    }
    let mut seen: Vec<String> = builtin.iter().map(|b| (*b).to_owned()).collect();
    all.retain(|c| {
        let new = !seen.contains(&c.name);
        seen.push(c.name.clone());
        new
    });
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_describes_and_placeholders_take_the_words() {
        let custom = parse(
            "fix-issue",
            "---\ndescription: Fix an issue by number\nargument-hint: NUMBER\n---\nFix issue #$1 ($ARGUMENTS), carefully.",
            "project",
        );
        assert_eq!(custom.description, "Fix an issue by number");
        assert_eq!(expand(&custom, "42 urgent"), "Fix issue #42 (42 urgent), carefully.");
        let plain = parse("review", "# Review the diff\n\nLook at what changed.", "yours");
        assert_eq!(plain.description, "Review the diff");
        assert_eq!(expand(&plain, "in src/"), "# Review the diff\n\nLook at what changed.\n\nin src/");
    }

    #[test]
    fn folders_are_read_with_subfolders_and_builtins_win() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own");
        std::fs::create_dir_all(own.join("git")).unwrap();
        std::fs::write(own.join("review.md"), "Review it.").unwrap();
        std::fs::write(own.join("git/commit.md"), "Commit it.").unwrap();
        std::fs::write(own.join("help.md"), "Not mine to take.").unwrap();
        std::fs::write(own.join("notes.txt"), "not a command").unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir_all(project.join(".claude/commands")).unwrap();
        std::fs::write(project.join(".claude/commands/review.md"), "The project's review.").unwrap();
        std::fs::write(project.join(".claude/commands/deploy.md"), "Deploy.").unwrap();
        let names = |list: Vec<Custom>| list.into_iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(names(load(&own, Some(&project), &["help"])), ["git:commit", "review", "deploy"]);
        assert_eq!(names(load(&own, None, &["help"])), ["git:commit", "review"], "an untrusted project's are not read");
    }
}
