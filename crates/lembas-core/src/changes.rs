//! What the person changes during a session — the mode, the model, the effort, the title — each
//! said to the front ends by an event; a model move remakes the prefix the one way it is made.

use std::sync::Arc;

use lembas_model::ToolSchema;
use lembas_models::ModelInfo;
use lembas_permissions::Mode;

use crate::offer::offered_tools;
use crate::session::Session;
use crate::{EngineError, Event, now_ms};

impl Session {
    /// Changes the permission mode; the model is told on the next message that starts a turn.
    pub fn set_mode(&mut self, mode: Mode) {
        let mode = self.cfg.bounded(mode);
        if self.state.mode != mode {
            if mode == Mode::Plan {
                self.state.mode_before_plan = Some(self.state.mode);
            }
            self.state.mode = mode;
            self.emit(Event::Mode { mode });
            if let Some(seat) = self.leads_team() {
                seat.hub.lead_mode(mode);
            }
        }
    }

    /// Moves the session to another model: the prompt is made again (and the tools, which may
    /// differ for it) — one full re-read, as the spec accepts. The date the model was told holds.
    pub fn set_model(&mut self, model: ModelInfo) -> Result<(), EngineError> {
        self.cfg.model = model;
        // The MCP servers' tools stay listed, after the model's own set.
        let mcp: Vec<ToolSchema> = self.tools.iter().filter(|t| lembas_mcp::is_mcp_name(&t.name)).cloned().collect();
        let offer = crate::offer::Offer {
            task: crate::handlers::offers(&self.tools, "task"),
            display: crate::handlers::offers(&self.tools, "show"),
            search: crate::handlers::offers(&self.tools, "web_search"),
            knowledge: crate::handlers::offers(&self.tools, "knowledge_search"),
            settings: crate::handlers::offers(&self.tools, "settings"),
            memory: crate::handlers::offers(&self.tools, "memory"),
        };
        let mut tools = offered_tools(&self.cfg.model, offer);
        // The custom agents found as the session started stay offered.
        if !self.role.is_subagent() {
            crate::agents::offer(&mut tools, &self.cfg.agent_files);
        }
        if self.cfg.model.tools != Some(false) {
            tools.extend(mcp);
        }
        self.tools = Arc::new(tools);
        self.remake_prompt(self.state.told.facts.date.clone());
        self.save_prefix()?;
        if let Some(seat) = self.leads_team() {
            seat.hub.lead_moved(&self.cfg.model);
        }
        self.emit(Event::Model { model: self.cfg.model.id.clone(), effort: self.state.effort.clone() });
        Ok(())
    }

    /// Stores the session's model, system prompt, tool list and state as they are now (after
    /// one of the few moves that may change the prefix).
    pub(crate) fn save_prefix(&self) -> Result<(), EngineError> {
        let tools = serde_json::to_string(&self.tools).expect("tools serialize");
        self.cfg.store.update_prefix(
            &self.id,
            &self.cfg.model.id,
            &self.system_prompt,
            &tools,
            &self.state_value(),
            now_ms(),
        )?;
        Ok(())
    }

    /// The effort level for the next requests (one of the model's levels).
    pub fn set_effort(&mut self, level: Option<String>) {
        if self.state.effort != level {
            self.state.effort = level;
            self.emit(Event::Model { model: self.cfg.model.id.clone(), effort: self.state.effort.clone() });
        }
    }

    /// Why `level` cannot be `model`'s effort: its levels (as the server takes them, for the
    /// model in use); `None` when it can.
    pub(crate) fn level_refused(&self, model: &ModelInfo, level: &str) -> Option<String> {
        let levels = if model.id == self.cfg.model.id { self.levels() } else { model.levels() };
        (!levels.iter().any(|l| l == level))
            .then(|| format!("{} has no effort level {level}; its levels: {}", model.id, levels.join(", ")))
    }

    /// The model's effort levels as its server takes them: narrowed to what a refusal named
    /// (`off` kept where the model has the thinking switch), or none to choose when the server
    /// takes no effort at all (`quirks.json` `effort-refused`).
    pub fn levels(&self) -> Vec<String> {
        let learned = self.cfg.client.learned_model(&self.cfg.model.id);
        let all = self.cfg.model.levels();
        if learned.no_effort {
            return vec!["default".to_owned()];
        }
        match &learned.efforts {
            Some(taken) => all.into_iter().filter(|l| l == "off" || l == "default" || taken.contains(l)).collect(),
            None => all,
        }
    }

    /// Gives the session another title.
    pub fn rename(&mut self, title: &str) -> Result<(), EngineError> {
        self.cfg.store.rename(&self.id, title)?;
        self.title = title.to_owned();
        self.fresh = false;
        self.emit(Event::Title { title: self.title.clone() });
        Ok(())
    }
}
