//! `show` (`tools/show.json`, `acp.md` `_lembas/show`): a file of the project put in the
//! person's viewer beside the conversation, for a client that shows files. The device sends the
//! text itself, since the client cannot reach this disk — so only a file inside the project, on
//! its real path, outside lembas' own folders and the credentials' places, text, at most 1 MB.

use std::path::Path;

use futures::FutureExt;
use futures::future::BoxFuture;
use lembas_protocol::Showing;
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::session::Session;

/// The most the viewer is sent.
const MAX_BYTES: u64 = 1 << 20;

/// `kind` and `language` of a file, by its name.
fn kind_of(path: &Path) -> (&'static str, Option<&'static str>) {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let code = match ext.as_str() {
        "md" | "markdown" => return ("markdown", None),
        "html" | "htm" => return ("html", None),
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "jsx" => "javascript",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "sh" | "bash" | "zsh" => "bash",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "css" => "css",
        "scss" => "scss",
        "sql" => "sql",
        "lua" => "lua",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "zig" => "zig",
        _ => return ("text", None),
    };
    ("code", Some(code))
}

pub(crate) fn show<'a>(session: &'a mut Session, call_id: &'a str, args: &'a Value) -> BoxFuture<'a, ToolOutput> {
    session.show(call_id, args).boxed()
}

impl Session {
    async fn show(&mut self, call_id: &str, args: &Value) -> ToolOutput {
        let unavailable = || {
            let def = lembas_spec::tool("show").expect("spec/tools/show.json");
            ToolOutput::Error(def.unavailable.clone().unwrap_or_default())
        };
        if !self.cfg.display {
            return unavailable();
        }
        let Some(asked) = args.get("path").and_then(Value::as_str).filter(|p| !p.trim().is_empty()) else {
            return ToolOutput::Error("`path` is required.".into());
        };
        let showing = match self.showing(call_id, asked, args.get("line").and_then(Value::as_u64)) {
            Ok(showing) => showing,
            Err(why) => return ToolOutput::Error(why),
        };
        let path = showing.path.clone();
        match self.cfg.approver.show(showing).await {
            Ok(()) => ToolOutput::Text(format!("Shown to the person: {path}")),
            Err(why) => ToolOutput::Error(format!("{path} was not shown: {why}.")),
        }
    }

    /// The file `asked` as the viewer is sent it, or why it cannot be.
    fn showing(&self, call_id: &str, asked: &str, line: Option<u64>) -> Result<Showing, String> {
        let path = self.ws.resolve(asked);
        let real = std::fs::canonicalize(&path).map_err(|_| format!("{asked} does not exist."))?;
        let credentials = self.cfg.credential_places();
        // The workspace's root is its real path already (`Workspace::new`).
        if !real.starts_with(&self.ws.root) || self.cfg.own_folders().chain(&credentials).any(|p| real.starts_with(p)) {
            return Err(format!("{asked} is outside the project: only the project's files can be shown."));
        }
        let size = std::fs::metadata(&real).map_err(|e| format!("{asked}: {e}"))?.len();
        if !real.is_file() {
            return Err(format!("{asked} is not a file."));
        }
        if size > MAX_BYTES {
            return Err(format!(
                "{asked} is {size} bytes, more than the viewer takes (1 MB): give the person its path."
            ));
        }
        let text = String::from_utf8(std::fs::read(&real).map_err(|e| format!("{asked}: {e}"))?)
            .map_err(|_| format!("{asked} is not text: give the person its path."))?;
        let (kind, language) = kind_of(&real);
        let shown = real.strip_prefix(&self.ws.started).unwrap_or(&real).display().to_string();
        Ok(Showing {
            call_id: call_id.to_owned(),
            path: shown,
            kind: kind.to_owned(),
            language: language.map(str::to_owned),
            line,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_kind_comes_from_its_name() {
        assert_eq!(kind_of(Path::new("README.md")), ("markdown", None));
        assert_eq!(kind_of(Path::new("site/index.HTML")), ("html", None));
        assert_eq!(kind_of(Path::new("src/main.rs")), ("code", Some("rust")));
        assert_eq!(kind_of(Path::new("notes.txt")), ("text", None));
        assert_eq!(kind_of(Path::new("Makefile")), ("text", None));
    }
}
