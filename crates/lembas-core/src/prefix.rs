//! The session's system prompt and what the model was told: made from the instruction files as
//! they read now, and the facts a note compares against on the next message.

use std::path::PathBuf;

use lembas_context::note::{Facts, Told};

use crate::prompt::{PromptParts, instructions, system_prompt};
use crate::session::Session;

impl Session {
    /// What can change during the session, as it stands now (what a note compares with what the
    /// model was told).
    pub(crate) fn facts_now(&self) -> Facts {
        self.facts_with(self.instruction_files())
    }

    /// The facts, with the instruction files as already read.
    pub(crate) fn facts_with(&self, files: Vec<crate::Instruction>) -> Facts {
        Facts {
            date: Some((self.cfg.today)()),
            mode: Some(self.state.mode.to_string()),
            mcp: self.state.mcp_instructions.clone(),
            files: files.into_iter().map(|i| (i.name, i.text)).collect(),
            team: self.team_note(),
            team_stopped: self.leads_team().and_then(|seat| seat.hub.stopped_note()),
            // The main agent's: a subagent speaks to its parent, not the person.
            personality: self.cfg.personality.clone().filter(|_| !self.role.is_subagent()),
            memory: self.state.memory.clone(),
            ..Facts::default()
        }
    }

    /// What the main agent is told of its team's size (`team.md` §10): the range, then that it
    /// works through subagents from the start (Min 2 or more) or alone (Max 1), then that its
    /// own model cannot serve them, where so.
    fn team_note(&self) -> Option<String> {
        let seat = self.leads_team()?;
        let (min, max) = {
            let team = seat.hub.team();
            (team.min, team.max)
        };
        let note = &lembas_spec::loop_spec().context.note;
        let mut lines =
            vec![lembas_spec::render(note.text("team"), &[("min", &min.to_string()), ("max", &max.to_string())])];
        if max == 1 {
            lines.push(note.text("team_one").to_owned());
        } else if min >= 2 {
            lines.push(lembas_spec::render(note.text("team_lead"), &[("members", &(min - 1).to_string())]));
        }
        let own_parallel = self.cfg.model.capacity.as_ref().and_then(|c| c.parallel());
        if max > 1 && own_parallel == Some(1) {
            lines.push(note.text("team_own").to_owned());
        }
        Some(lines.join("\n"))
    }

    /// Makes the system prompt again from what stands now, and counts all of it as told; `date`
    /// is what the model keeps knowing of the date, which the prompt does not carry. The
    /// instruction files are read once for both.
    pub(crate) fn remake_prompt(&mut self, date: Option<String>) {
        let found = self.instruction_files();
        self.system_prompt = self.system_prompt_from(&found);
        // The prompt carries neither the date nor the team's size: both go in the first note, and
        // what was said of them before a new prompt still holds.
        let team = self.state.told.facts.team.clone();
        self.state.told = Told::knows(Facts { date, team, ..self.facts_with(found) });
    }

    /// The instruction files the prompt is made from, as they read now, by the prompt's name
    /// for each (a file the person edits during the session is noted on the next message).
    pub(crate) fn instruction_files(&self) -> Vec<crate::Instruction> {
        let mut found = instructions(
            &self.ws,
            self.cfg.global_instructions.as_deref(),
            &self.cfg.extra_instructions,
            self.cfg.user_home.as_deref(),
        );
        // The person's own from their account (or a chat's), after the files: the main agent's.
        if !self.role.is_subagent() {
            let given = self.cfg.given_instructions.iter().filter(|(_, text)| !text.trim().is_empty());
            found.extend(given.map(|(name, text)| crate::Instruction {
                name: name.clone(),
                text: text.trim_end().to_owned(),
                path: PathBuf::new(),
            }));
        }
        found
    }

    /// The model changed these files itself: an instruction file among them needs no note (its
    /// tool result already said what it wrote).
    pub(crate) fn model_changed(&mut self, paths: &[PathBuf]) {
        let now = self.instruction_files();
        for file in &now {
            if paths.iter().any(|p| *p == file.path || self.ws.real_path(p) == self.ws.real_path(&file.path)) {
                self.state.told.facts.files.insert(file.name.clone(), file.text.clone());
            }
        }
        // One it deleted (or emptied) is no longer read at all.
        for path in paths {
            let name = lembas_paths::prompt_name(path, &self.ws.root, self.cfg.user_home.as_deref());
            if !now.iter().any(|f| f.name == name) {
                self.state.told.facts.files.remove(&name);
            }
        }
    }

    pub(crate) fn system_prompt_from(&self, found: &[crate::Instruction]) -> String {
        system_prompt(&PromptParts {
            ws: &self.ws,
            mode: self.state.mode,
            unattended: !self.cfg.approver.present(),
            instructions: found,
            mcp: &self.state.mcp_instructions,
            subagent: self.role.subagent().map(|s| s.block.as_str()),
            // Skills are named only where they can be opened (a small window may leave them out).
            skills: &if crate::handlers::offers(&self.tools, "skill_view") {
                lembas_tools::discover_skills(&self.cfg.skills)
            } else {
                Vec::new()
            },
            team: self.leads_team().is_some(),
            personality: self.cfg.personality.as_deref().filter(|_| !self.role.is_subagent()),
            memory: self.state.memory.as_deref(),
            library: self.library(),
        })
    }

    /// What the session has of the library to read, in the prompt's words; `None` where no tool
    /// reads it (note_manage alone, in a fresh project, has nothing to read yet).
    fn library(&self) -> Option<crate::prompt::Library<'_>> {
        let has = |tool: &str| crate::handlers::offers(&self.tools, tool);
        let mut parts = Vec::new();
        if has("note_view") {
            parts.push("the notes");
        }
        match (has("tasks"), has("decisions")) {
            (true, true) => parts.push("the project's tasks and decisions"),
            (true, false) => parts.push("the project's tasks"),
            (false, true) => parts.push("the project's decisions"),
            (false, false) => {}
        }
        let knowledge = has("knowledge_search");
        if knowledge {
            parts.push("the knowledge bases");
        }
        if has("memory") {
            parts.push("the memory");
        }
        let knowledge_scope = self.cfg.knowledge_scope.as_deref().filter(|_| knowledge);
        (!parts.is_empty()).then_some(crate::prompt::Library { parts, knowledge_scope })
    }

    /// Whether the project has an instruction file at its root (`AGENTS.md`, or `CLAUDE.md`
    /// that people already keep).
    pub(crate) fn has_instruction_file(&self) -> bool {
        ["AGENTS.md", "CLAUDE.md"].iter().any(|f| self.ws.root.join(f).is_file())
    }
}
