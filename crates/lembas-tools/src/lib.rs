//! The device's tools, working for real on the disk (`spec/tools/`).
//!
//! Every file tool resolves a path **once** ([`Workspace::resolve`]): relative against the
//! project root, `.`/`..` by their text, absolute as given. That resolved path is the one opened,
//! checked, recorded and reported; a result's bracket alone names the path as the call gave it.
//! Containment is judged on the real path ([`Workspace::real_path`]), so a symlink out of the
//! project is outside it.
//!
//! A tool answers a [`ToolOutput`]; the engine turns it into the text the model sees (ids,
//! brackets, stubs, caps) through `lembas-context`. A tool's error is its result, never the end of
//! the prompt.

pub mod agents;
mod bash;
mod edit;
mod files;
pub mod handlers;
mod jobs;
mod patch;
pub mod process;
pub mod reaper;
pub mod sandbox;
mod search;
mod skills;
mod watch;
mod workspace;

use std::path::PathBuf;

use lembas_context::FileChange;
use serde_json::Value;

pub use agents::AgentFile;
pub use bash::{BashOutcome, run_bash, run_bash_in};
pub use files::private_folders;
pub use jobs::{AgentAbout, AgentLog, JOB_LOG_KEEP, JobEnded, JobState, Jobs, elapsed_text};
pub use sandbox::{Hidden as SandboxHidden, Reach as SandboxReach, Sandbox, SandboxPlaces};
pub use skills::{
    Skill, SkillPlaces, discover as discover_skills, index as skills_index, skill_manage, skill_view, skills_list,
    valid_name, written_note as skill_written_note,
};
pub use watch::{WatchEnd, watch};
pub use workspace::{EditorFiles, FileTimes, Workspace};

/// What a tool call produced, before the engine gives it an id and a bracket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutput {
    /// A file's content to show as a read window.
    Read { call_path: String, file: PathBuf, content: String, offset: Option<usize>, limit: Option<usize> },
    /// Files changed (one for write/edit, several for a patch).
    Changes(Vec<FileChange>),
    /// An image for a model that sees (`view_image`).
    Image { call_path: String, file: PathBuf, mime: String, data: Vec<u8> },
    /// Any other answer.
    Text(String),
    /// An answer with images (`data:` URLs) a model that sees is sent after the results (an
    /// MCP tool's screenshot, say); the text names each one.
    TextAndImages { text: String, images: Vec<String> },
    /// The call failed; the text says why, in a sentence.
    Error(String),
}

impl ToolOutput {
    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutput::Error(_))
    }
}

/// The largest image `view_image` sends.
pub const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// A tool call's arguments, read leniently: a missing or mistyped field is an error the model
/// can correct, never a crash.
pub(crate) struct Args<'a>(pub &'a Value);

impl<'a> Args<'a> {
    pub fn str(&self, key: &str) -> Result<&'a str, String> {
        match self.0.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!("`{key}` must be a string.")),
            None => Err(format!("`{key}` is required.")),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("`{key}` must be a string.")),
        }
    }

    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .map(|n| Some(n as usize))
                .ok_or_else(|| format!("`{key}` must be a whole number.")),
        }
    }

    pub fn bool(&self, key: &str) -> Result<bool, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(_) => Err(format!("`{key}` must be true or false.")),
        }
    }
}

/// Runs one of the file and search tools by name. `bash` is separate ([`run_bash`]): it is
/// async and has a timeout and a process group.
pub fn run_file_tool(ws: &Workspace, name: &str, args: &Value) -> ToolOutput {
    match handlers::file_tool(name) {
        Some(tool) => tool.run(ws, args),
        None => ToolOutput::Error(format!("There is no tool called {name}.")),
    }
}

/// The project's files (what `glob` would see, `private` folders left out), relative to `root`,
/// sorted — for completing `@path` mentions. At most `max`.
pub fn project_files(root: &std::path::Path, private: &std::sync::Arc<[PathBuf]>, max: usize) -> Vec<String> {
    let mut files: Vec<String> = files::files_under(root, private, &|_| true)
        .into_iter()
        .filter_map(|(p, _)| p.strip_prefix(root).ok().map(|r| r.to_string_lossy().into_owned()))
        .collect();
    files.sort();
    files.truncate(max);
    files
}

/// The project's files under `root` that hold `query` as a subsequence (`main` finds
/// `src/main.rs`), best first, at most `limit`; for nothing asked, the first `limit` in order.
/// Walked afresh each time, so a file made a moment ago is found.
pub fn find_files(
    root: &std::path::Path,
    private: &std::sync::Arc<[PathBuf]>,
    query: &str,
    limit: usize,
) -> Vec<String> {
    use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
    let files = project_files(root, private, 50_000);
    let query = query.trim();
    if query.is_empty() {
        return files.into_iter().take(limit).collect();
    }
    let mut config = nucleo_matcher::Config::DEFAULT;
    config.set_match_paths();
    let mut matcher = nucleo_matcher::Matcher::new(config);
    let found = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart).match_list(&files, &mut matcher);
    found.into_iter().take(limit).map(|(file, _)| file.clone()).collect()
}
