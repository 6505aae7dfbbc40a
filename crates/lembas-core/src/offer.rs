//! Which of the tools that not every session has a session is offered: read once as it starts
//! (what the project keeps, what the login reaches), and the list made from their definitions.

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
    let Offer { task, display, search, knowledge, settings, memory } = offer;
    if model.tools == Some(false) {
        return Vec::new();
    }
    lembas_spec::tools()
        .iter()
        .filter(|def| {
            def.on_device()
                && def.requires.iter().all(|r| match r.as_str() {
                    // What may come during the session: offered from the start, answering its
                    // `unavailable` text while it has not come (`context.md` §10 rule 4).
                    "plan" | "notes" | "skills" | "earlier_sessions" => true,
                    "team" => task,
                    "display" => display,
                    "search_provider" => search,
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

/// Which of the tools that not every session has a session is offered: only what is fixed for
/// the session (its configuration, its login, its model, its kind) — notes, skills, earlier
/// sessions, a task list and a decision log may all come during it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offer {
    /// Subagents: `task`, and the team's tools.
    pub task: bool,
    /// `show`: the client shows files.
    pub display: bool,
    /// `web_search`: a search provider is configured.
    pub search: bool,
    /// `knowledge_search`, `knowledge_get`: the person added a knowledge base.
    pub knowledge: bool,
    /// `settings`: the login has another model, or the model declares effort levels.
    pub settings: bool,
    /// `memory`: the login's instance keeps the person's memory.
    pub memory: bool,
}

impl Offer {
    /// What a new session's configuration and login allow.
    pub(crate) fn looking(cfg: &SessionConfig, task: bool, display: bool) -> Offer {
        Offer {
            task,
            display,
            search: cfg.web.search.is_some(),
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
