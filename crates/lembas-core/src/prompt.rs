//! The system prompt, made once per session (`context.md` §10), and the session note that
//! carries what changes after it.

use std::path::Path;

use lembas_permissions::Mode;
use lembas_spec::{loop_spec, render};
use lembas_tools::Workspace;

/// A prompt text of ours from `spec/prompts/`, trimmed of its final newline.
pub(crate) fn text(path: &str) -> &'static str {
    lembas_spec::file(&format!("prompts/{path}"))
        .unwrap_or_else(|| panic!("spec/prompts/{path} is embedded"))
        .trim_end_matches('\n')
}

/// An instruction file the model is given, under the name the prompt uses for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub name: String,
    pub text: String,
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
}

/// The system prompt: no clock in it and no absolute path of the machine.
pub fn system_prompt(parts: &PromptParts) -> String {
    let mut environment = lembas_paths::environment_lines(&parts.ws.root, &parts.ws.started);
    environment.push(format!("Platform: {}", std::env::consts::OS));
    let mut mode = text(&format!("modes/{}.md", parts.mode)).to_owned();
    if parts.unattended {
        mode.push('\n');
        mode.push_str(text("modes/unattended.md"));
    }
    let instructions = if parts.instructions.is_empty() {
        String::new()
    } else {
        let files: Vec<String> = parts.instructions.iter().map(|i| format!("\n## {}\n{}", i.name, i.text)).collect();
        render(text("blocks/instructions.md"), &[("files", &files.join("\n"))])
    };
    render(
        text("system.md"),
        &[
            ("environment", &environment.join("\n")),
            ("mode", &mode),
            ("context", text("blocks/context.md")),
            ("instructions", &instructions),
        ],
    )
}

/// What the model has been told of what changes (stored with the session), and the note that
/// tells it what changed since.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Told {
    /// The date the model was last told.
    pub date: Option<String>,
    /// The mode the model knows (the prompt's, or the last note's).
    pub mode: Option<Mode>,
}

impl Told {
    /// The note for the next user message that starts a turn, or `None` when nothing changed;
    /// what it says counts as told.
    pub fn note(&mut self, today: &str, mode: Mode) -> Option<String> {
        let spec = &loop_spec().context.note;
        let mut blocks: Vec<(&str, String)> = Vec::new();
        if self.date.as_deref() != Some(today) {
            blocks.push(("date", render(spec.text("date"), &[("date", today)])));
            self.date = Some(today.to_owned());
        }
        if self.mode.is_some_and(|told| told != mode) {
            let mode_text = text(&format!("modes/{mode}.md"));
            blocks.push(("mode", render(spec.text("mode"), &[("mode", mode.as_str()), ("mode_text", mode_text)])));
        }
        self.mode = Some(mode);
        if blocks.is_empty() {
            return None;
        }
        blocks.sort_by_key(|(key, _)| spec.order.iter().position(|k| k == key).unwrap_or(usize::MAX));
        let body: Vec<String> = blocks.into_iter().map(|(_, b)| b).collect();
        Some(format!("{}\n{}\n{}", spec.open, body.join("\n\n"), spec.close))
    }
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
    fn the_first_note_says_the_date_and_then_only_changes() {
        let mut told = Told { date: None, mode: Some(Mode::Edit) };
        assert_eq!(
            told.note("2026-12-02", Mode::Edit).unwrap(),
            "<session-note>\nToday is 2026-12-02.\n</session-note>"
        );
        assert_eq!(told.note("2026-12-02", Mode::Edit), None);
        let both = told.note("2026-12-03", Mode::Plan).unwrap();
        assert!(
            both.starts_with("<session-note>\nToday is 2026-12-03.\n\nThe permission mode is now plan:\nPlan: "),
            "{both}"
        );
    }

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
        let prompt = system_prompt(&PromptParts { ws: &ws, mode: Mode::Edit, unattended: true, instructions: &found });
        assert!(prompt.contains(
            "Project: shop (paths are relative to its root)\nStarted in: web (relative to the project root)"
        ));
        assert!(prompt.contains("## AGENTS.md\nUse tabs."));
        assert!(prompt.contains("Nobody is watching"));
        assert!(!prompt.contains(&dir.path().display().to_string()));
        assert!(!prompt.contains("2026"));
    }
}
