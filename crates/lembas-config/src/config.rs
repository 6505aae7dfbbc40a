//! `config.toml`: the person's settings.

use serde::{Deserialize, Serialize};

use crate::{Home, StoreError};

/// Compaction starts when a request's input reaches this share of the model's window.
pub const DEFAULT_COMPACT_AT: f64 = 0.85;

/// The settings lembas reads at start. Every field may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The model to use when a command names none.
    pub model: Option<String>,
    /// The effort level to start with.
    pub effort: Option<String>,
    /// The permission mode to start in.
    pub mode: Option<String>,
    /// The context window of models whose server does not say one (a statement, used as one;
    /// without it such a window is unknown).
    pub context_window: Option<u64>,
    /// The share of the window at which compaction starts (0.5–0.95).
    pub compact_at: Option<f64>,
    /// The step backstop per prompt.
    pub steps: Option<u32>,
    /// A prompt's token budget (input and output over its requests).
    pub budget_tokens: Option<u64>,
    /// A prompt's time budget in seconds.
    pub budget_seconds: Option<u64>,
    /// How long, in seconds, to keep retrying a model server that is down or busy before the
    /// turn fails (default 60).
    pub retry_seconds: Option<u64>,
    /// Desktop notifications from the terminal UI.
    pub notify: Option<bool>,
    /// How the agent speaks: `default`, `concise`, `friendly`, `teacher`, or `custom` (the text
    /// in `personality_custom`). On a LLeMbas login with personalization on, the account's.
    pub personality: Option<String>,
    /// The person's own personality text, for `personality = "custom"`.
    pub personality_custom: Option<String>,
    /// Whose library the sessions use (`acp.md` *The HTTP API*): unset or `lembas`, the
    /// account's memory on a LLeMbas login whose token may reach it; `local`, none of the
    /// server's (notes, knowledge bases and skills are this machine's either way).
    pub library: Option<String>,
    /// Subagents (`task` and the team); `false` switches them off, and the model is not offered
    /// them.
    pub subagents: Option<bool>,
    /// How many agents a session's team may have, the main agent included: `{ min = 1, max = 4 }`.
    pub agents: Option<AgentsSetting>,
    /// Folders of skills searched after the project's and the person's own, in order.
    pub skill_dirs: Vec<String>,
    /// Instruction files read after the project's chain.
    pub instructions: Vec<String>,
    /// Permission rules, in the shape of `permission/defaults.json`: a tool → allow, ask or
    /// deny, or a table of patterns (`[permissions.bash] "git push *" = "ask"`).
    pub permissions: Option<serde_json::Value>,
    /// MCP servers every session connects (`[mcp_servers.<name>]`).
    pub mcp_servers: std::collections::BTreeMap<String, crate::McpServer>,
    /// The OS sandbox commands run in (`[sandbox]`).
    pub sandbox: SandboxSettings,
    /// What a LLeMbas server may do on this computer over the link (`[remote]`).
    pub remote: crate::RemoteSettings,
    /// Where `lembas update` looks for releases (`[update]`).
    pub update: UpdateSettings,
    /// The person's hooks: `[[hooks.PreToolUse]]` with `matcher`, `command`, `timeout`
    /// (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `SessionStart`).
    pub hooks: std::collections::BTreeMap<String, Vec<lembas_hooks::HookEntry>>,
    /// The web tools: a fetch's limits, and the search provider (`[web]`, `[web.search]`).
    pub web: WebSettings,
    /// The knowledge bases' embedding model (`[knowledge]`).
    pub knowledge: KnowledgeSettings,
}

/// `[knowledge]`: the embedding model the knowledge bases are indexed and searched with —
/// `model`, on the login's server unless `url` names another OpenAI-compatible one (`…/v1`),
/// whose key is in the environment variable `key_env`. No model: search by words only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KnowledgeSettings {
    pub model: Option<String>,
    pub url: Option<String>,
    pub key_env: Option<String>,
}

/// `[web]`: how long a fetch may take and how much it reads; `[web.search]`: the provider
/// `web_search` goes through (none: the tool is not offered).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebSettings {
    /// Seconds a fetch may take, redirects and body included (default 30).
    pub timeout: Option<u64>,
    /// The most of a body a fetch reads, in bytes (default 10 MiB).
    pub max_bytes: Option<usize>,
    pub search: Option<WebSearchSettings>,
}

/// `[web.search]`: `provider = "searxng"` with the instance's `url`, or `"brave"` / `"tavily"`
/// with the key in the environment variable `key_env` (default `BRAVE_API_KEY`,
/// `TAVILY_API_KEY`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebSearchSettings {
    pub provider: String,
    pub url: Option<String>,
    pub key_env: Option<String>,
}

/// `[update]`: the release source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateSettings {
    /// The release manifest's URL (default: lembas' own releases).
    pub url: Option<String>,
    /// Whether the terminal UI looks for a newer lembas once a day (default: yes).
    pub check: Option<bool>,
}

/// `agents = { min, max }`: the team's size, counting the main agent (1 is the agent alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSetting {
    pub min: u32,
    pub max: u32,
}

/// `[sandbox]`: whether commands run sandboxed, and where else they may write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// `false` runs commands without the sandbox (the judgement alone stands).
    pub enabled: bool,
    /// More folders every command may write (`~/` is the home folder), e.g. `~/.local/bin`.
    pub writable: Vec<String>,
    /// Whether commands may open network connections (TCP): unset, they may in every mode but
    /// plan; `true` or `false` says it for every mode.
    pub network: Option<bool>,
    /// Commands that may read the person's credentials (`~/.ssh`, `~/.aws`, …) in the sandbox,
    /// as bash rule patterns: `["git push *", "ssh *"]`. A line runs with them readable only
    /// when every part of it matches one.
    pub credentials: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings { enabled: true, writable: Vec::new(), network: None, credentials: Vec::new() }
    }
}

impl Config {
    pub fn load(home: &Home) -> Result<Config, StoreError> {
        let path = home.config_file();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let config: Config = toml::from_str(&text)
            .map_err(|e| StoreError::Invalid { path: path.display().to_string(), reason: e.to_string() })?;
        // The variables lembas reads keys from are its secrets: no process it starts inherits
        // them (`lembas_sys::child_env`).
        let search_key = config.web.search.as_ref().and_then(|s| s.key_env.as_deref());
        for name in [config.knowledge.key_env.as_deref(), search_key].into_iter().flatten() {
            lembas_sys::child_env::keep_secret(name);
        }
        Ok(config)
    }

    /// The compaction threshold, kept within sensible bounds.
    pub fn compact_at(&self) -> f64 {
        self.compact_at.unwrap_or(DEFAULT_COMPACT_AT).clamp(0.5, 0.95)
    }
}

/// A setting the person changes from the UI (`/settings`).
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    Mode(String),
    Model(String),
    /// `None`: the model's own start level (the key is taken out).
    Effort(Option<String>),
    Notify(bool),
    /// `personality` (`default` takes the key out).
    Personality(String),
    CompactAt(f64),
    /// `agents = { min, max }`.
    Agents {
        min: u32,
        max: u32,
    },
}

/// Writes `settings` into `config.toml`, keeping everything else in it as the person wrote it.
pub fn save_settings(home: &Home, settings: &[Setting]) -> Result<(), StoreError> {
    edit_config(home, |doc| {
        write_settings(doc, settings);
        Ok(())
    })
    .map(|_| ())
}

/// Changes `config.toml` with `change`, keeping everything else in it as the person wrote it —
/// comments, order, other keys. The file is replaced whole (atomically, readable by the user
/// alone) only once the new one is written, never with one lembas would refuse to read, and not
/// at all when nothing changed. Answers whether it changed; `change`'s error says what is wrong
/// with the file.
pub(crate) fn edit_config(
    home: &Home,
    change: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<(), String>,
) -> Result<bool, StoreError> {
    let path = home.config_file();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let invalid = |reason: String| StoreError::Invalid { path: path.display().to_string(), reason };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
    change(&mut doc).map_err(invalid)?;
    let written = doc.to_string();
    if written == text {
        return Ok(false);
    }
    toml::from_str::<Config>(&written).map_err(|e| invalid(e.to_string()))?;
    crate::write_atomic(&path, written.as_bytes(), 0o600)?;
    Ok(true)
}

fn write_settings(doc: &mut toml_edit::DocumentMut, settings: &[Setting]) {
    for setting in settings {
        match setting {
            Setting::Mode(mode) => set(doc, "mode", mode.as_str().into()),
            Setting::Model(model) => set(doc, "model", model.as_str().into()),
            Setting::Effort(Some(level)) => set(doc, "effort", level.as_str().into()),
            Setting::Effort(None) => {
                doc.remove("effort");
            }
            Setting::Notify(on) => set(doc, "notify", (*on).into()),
            Setting::Personality(name) if name == "default" => {
                doc.remove("personality");
            }
            Setting::Personality(name) => set(doc, "personality", name.as_str().into()),
            Setting::CompactAt(share) => set(doc, "compact_at", ((share * 100.0).round() / 100.0).into()),
            Setting::Agents { min, max } => {
                let mut range = toml_edit::InlineTable::new();
                range.insert("min", i64::from(*min).into());
                range.insert("max", i64::from(*max).into());
                set(doc, "agents", range.into());
            }
        }
    }
}

/// Sets a top-level key, keeping the comment and spacing around a value already there.
fn set(doc: &mut toml_edit::DocumentMut, key: &str, value: toml_edit::Value) {
    match doc.get_mut(key).and_then(toml_edit::Item::as_value_mut) {
        Some(old) => {
            let decor = old.decor().clone();
            *old = value;
            *old.decor_mut() = decor;
        }
        None => doc[key] = toml_edit::Item::Value(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_written_keeping_the_files_comments_and_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        std::fs::create_dir_all(&home.config).unwrap();
        let before = "# my settings\nmodel = \"a\" # the fast one\neffort = \"low\"\n\n[sandbox]\nnetwork = false\n";
        std::fs::write(home.config_file(), before).unwrap();
        save_settings(
            &home,
            &[Setting::Model("b".into()), Setting::Effort(None), Setting::Notify(false), Setting::CompactAt(0.7)],
        )
        .unwrap();
        let after = std::fs::read_to_string(home.config_file()).unwrap();
        assert!(after.starts_with("# my settings\nmodel = \"b\" # the fast one\n"), "{after}");
        assert!(!after.contains("effort") && after.contains("notify = false") && after.contains("compact_at = 0.7"));
        assert!(after.contains("[sandbox]\nnetwork = false"), "{after}");
        let read = Config::load(&home).unwrap();
        assert_eq!((read.model.as_deref(), read.notify, read.sandbox.network), (Some("b"), Some(false), Some(false)));
        // A fresh home gets a file of its own.
        let other = Home::under(&dir.path().join("fresh"));
        save_settings(&other, &[Setting::Mode("edit".into())]).unwrap();
        assert_eq!(Config::load(&other).unwrap().mode.as_deref(), Some("edit"));
        // The team's size is one inline table, and it reads back.
        save_settings(&other, &[Setting::Agents { min: 2, max: 6 }]).unwrap();
        let written = std::fs::read_to_string(other.config_file()).unwrap();
        assert!(written.contains("agents = { min = 2, max = 6 }"), "{written}");
        assert_eq!(Config::load(&other).unwrap().agents, Some(AgentsSetting { min: 2, max: 6 }));
    }

    #[test]
    fn reads_settings_and_refuses_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        assert_eq!(Config::load(&home).unwrap(), Config::default());
        std::fs::create_dir_all(&home.config).unwrap();
        std::fs::write(home.config_file(), "model = \"qwen\"\ncompact_at = 0.99\n").unwrap();
        let c = Config::load(&home).unwrap();
        assert_eq!(c.model.as_deref(), Some("qwen"));
        assert_eq!(c.compact_at(), 0.95);
        std::fs::write(
            home.config_file(),
            "[permissions]\nedit = \"ask\"\n[permissions.bash]\n\"git push *\" = \"deny\"\n",
        )
        .unwrap();
        let rules = Config::load(&home).unwrap().permissions.unwrap();
        assert_eq!(rules["bash"]["git push *"], "deny");
        std::fs::write(home.config_file(), "modle = 1\n").unwrap();
        assert!(matches!(Config::load(&home), Err(StoreError::Invalid { .. })));
    }
}
