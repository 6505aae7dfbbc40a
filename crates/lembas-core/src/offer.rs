//! Which of the tools that not every session has a session is offered: read once as it starts
//! (what the project keeps, what the login reaches), and the list made from their definitions.

use std::path::Path;

use lembas_model::ToolSchema;
use lembas_models::ModelInfo;

use crate::SessionConfig;

/// The tools a session on `model` is offered, read from their definitions (`spec/tools/`):
/// every device tool whose requirements a session can meet — `plan` comes and goes, so
/// `plan_submit` is offered and answers `unavailable` outside plan mode; `display` (`show`) only
/// where the client shows files (a LLeMbas client that said so); `team`, the team's tools, with
/// the task tool (`block: task`) only where subagents are, the main agent's and not those only a
/// subagent has; `search_provider` (`web_search`) only where one is configured — and `view_image`
/// only to a model that sees (lembas' rule: docs/spec-decisions.md). In the definitions' order.
pub(crate) fn offered_tools(model: &ModelInfo, offer: Offer) -> Vec<ToolSchema> {
    let Offer { task, display, search, notes, skills, earlier_sessions, tasks, decisions, knowledge, settings, memory } =
        offer;
    if model.tools == Some(false) {
        return Vec::new();
    }
    lembas_spec::tools()
        .iter()
        .filter(|def| {
            def.on_device()
                && def.requires.iter().all(|r| match r.as_str() {
                    "plan" => true,
                    "team" => task,
                    "display" => display,
                    "search_provider" => search,
                    "notes" => notes,
                    "skills" => skills,
                    "earlier_sessions" => earlier_sessions,
                    "task_list" => tasks,
                    "decision_log" => decisions,
                    "knowledge_bases" => knowledge,
                    "settings_choice" => settings,
                    "instance_memory" => memory,
                    _ => false,
                })
        })
        .filter(|def| def.offered.as_deref() != Some("subagent"))
        .filter(|def| !def.starts_a_subagent() || task)
        .filter(|def| !crate::handlers::handler(&def.name).needs_vision || model.vision == Some(true))
        .map(|def| ToolSchema {
            name: def.name.clone(),
            description: def.description.clone(),
            parameters: def.parameters.clone(),
        })
        .collect()
}

/// Which of the tools that not every session has a session is offered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offer {
    /// Subagents: `task`, and the team's tools.
    pub task: bool,
    /// `show`: the client shows files.
    pub display: bool,
    /// `web_search`: a search provider is configured.
    pub search: bool,
    /// `note_view`, `notes_search`: there are notes to read.
    pub notes: bool,
    /// `skill_view`, `skills_list`: there are skills to load.
    pub skills: bool,
    /// `session_search`: the project has earlier sessions.
    pub earlier_sessions: bool,
    /// `tasks`: the project keeps a task list (`.lembas/tasks.md`).
    pub tasks: bool,
    /// `decisions`: the project keeps a decision log (`.lembas/decisions.md`).
    pub decisions: bool,
    /// `knowledge_search`, `knowledge_get`: the person added a knowledge base.
    pub knowledge: bool,
    /// `settings`: the login has another model, or the model declares effort levels.
    pub settings: bool,
    /// `memory`: the login's instance keeps the person's memory.
    pub memory: bool,
}

impl Offer {
    /// What a new session in `root` has to read, looked at as it starts: the tools that read
    /// notes, skills and earlier sessions are offered only where there are some.
    /// A subagent's earlier sessions are those before its parent's (`asking`).
    pub(crate) fn looking(cfg: &SessionConfig, root: &Path, asking: &str, task: bool, display: bool) -> Offer {
        Offer {
            task,
            display,
            search: cfg.web.search.is_some(),
            notes: cfg.notes.any(),
            skills: !lembas_tools::discover_skills(&cfg.skills).is_empty(),
            earlier_sessions: cfg.store.has_sessions_in(&root.display().to_string(), asking).unwrap_or(true),
            tasks: lembas_library::project::Project::new(root).tasks().exists(),
            decisions: lembas_library::project::Project::new(root).decisions().exists(),
            knowledge: cfg.knowledge.as_ref().is_some_and(|k| k.any()),
            // Levels the model declares (not the fallback every model is given): a move among
            // them is one the server is known to take.
            settings: cfg.models.iter().any(|m| m.id != cfg.model.id)
                || cfg.model.efforts.as_ref().is_some_and(|e| e.len() > 1)
                || cfg.model.thinking_switch == Some(true),
            memory: cfg.memory.is_some(),
        }
    }
}
