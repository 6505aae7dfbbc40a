//! A call made ready to run: its arguments parsed, its tool found, the permission rules asked
//! (and the person, when they ask), a `task` call's subagent made — or answered at once.

use std::path::{Path, PathBuf};

use lembas_model::ToolCall;
use lembas_permissions::{Call, Decision};
use lembas_progress::Phase;
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::Event;
use crate::handlers::{Runs, handler};
use crate::hooks::{PreVerdict, hook_tool_name};
use crate::phase::Phases;
use crate::session::Session;
use crate::{Approval, ApprovalRequest};

/// A call ready to run, or already answered.
pub(crate) enum Prepared {
    Run {
        name: String,
        args: Value,
        paths: Vec<PathBuf>,
        exclusive: bool,
        /// A line put before the result (the person corrected the command).
        note: Option<String>,
        /// A `task` call's subagent, made and waiting to run.
        task: Option<Box<crate::session::subagent::TaskRun>>,
        /// The person approved this call (a command then gets the caches too).
        approved: bool,
    },
    /// Answered by the engine itself (recall, the plan, a question), in call order.
    Engine {
        name: String,
        args: Value,
    },
    Answer(ToolOutput),
}

/// A call's arguments: a JSON object (nothing at all reads as an empty one); anything else is
/// answered at once, and nothing runs.
fn arguments(call: &ToolCall) -> Result<Value, ToolOutput> {
    let text = if call.arguments.trim().is_empty() { "{}" } else { &call.arguments };
    match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ToolOutput::Error("The arguments must be a JSON object.".into())),
        Err(e) => Err(ToolOutput::Error(format!(
            "The arguments of this call are not valid JSON ({e}); nothing was run. Call it again with a JSON object."
        ))),
    }
}

fn unattended_refusal(name: &str, mode: &str) -> String {
    format!(
        "Not run: in {mode} mode this {name} call needs the person's approval, and nobody is here to give it. Carry on without it, and say what you could not do."
    )
}

/// What the rules say of a call, and what they judged it by.
pub(crate) struct Judged {
    pub verdict: lembas_permissions::Verdict,
    /// The paths the call reaches, as resolved from its arguments, and where they really are.
    pub paths: Vec<PathBuf>,
    pub real_paths: Vec<PathBuf>,
    /// Where it runs, really.
    pub cwd: PathBuf,
}

impl Session {
    /// Judges a call of `def` with `args` in the session's mode: the one place a call meets the
    /// permission rules, for the model's calls and for a file the person attaches.
    pub(crate) fn judge_call(&self, def: &lembas_spec::ToolDef, args: &Value) -> Judged {
        let tool = handler(&def.name);
        let paths = tool.paths(&self.ws, args);
        let real_paths: Vec<PathBuf> = paths.iter().map(|p| self.ws.real_path(p)).collect();
        let cwd = self.ws.real_path(&self.ws.resolve(args.get("cwd").and_then(Value::as_str).unwrap_or(".")));
        let ws = &self.ws;
        let real = |p: &Path| ws.real_path(p);
        let facts = Call { url: tool.url(args), ..Call::new(&def.name, def.risk, tool.command(args), &real_paths) };
        let verdict = self.judge.verdict(self.state.mode, &facts, &cwd, &real);
        Judged { verdict, paths, real_paths, cwd }
    }

    pub(crate) async fn prepare(&mut self, call: &ToolCall) -> Prepared {
        let args = match arguments(call) {
            Ok(args) => args,
            Err(answer) => return Prepared::Answer(answer),
        };
        // Only the main agent makes subagents (`subagents.md` §6): said so, even by a name the
        // subagent's list does not have.
        if self.role.is_subagent() && crate::handlers::team::main_only(&call.name) {
            let name = lembas_spec::tool(&call.name).map_or_else(|| call.name.clone(), |d| d.name.clone());
            return self.denied(call, &name, lembas_permissions::delegation::team_text("only_main"));
        }
        let def = match self.offered_def(&call.name) {
            Ok(def) => def,
            Err(answer) => return Prepared::Answer(answer),
        };
        let name = def.name.clone();
        let tool = handler(&name);
        if matches!(tool.runs, Runs::Recall) {
            return Prepared::Engine { name, args };
        }
        // A manager's work is refused before anything is asked (`team.md` §6).
        if let Some(refusal) = self.manager_refusal(&def, &args) {
            return self.denied(call, &name, refusal);
        }
        // The tree's rules are the team tools' permissions.
        if matches!(tool.runs, Runs::Team(_)) {
            return Prepared::Engine { name, args };
        }
        let judged = self.judge_call(&def, &args);
        let command = tool.command(&args);
        let mut decision = judged.verdict.decision.clone();
        if decision == Decision::Ask {
            let facts = Call { url: tool.url(&args), ..Call::new(&name, def.risk, command, &judged.real_paths) };
            if let Some(delegated) = self.delegated(&facts, &judged.cwd) {
                decision = delegated;
            }
        }
        // The person's hooks: their refusal is the model's to read; their "allow" spares a card
        // the rules would have put up (never a refusal of the rules', nor the hardline's);
        // their "ask" puts one up.
        match self.pre_tool_hooks(&name, &args).await {
            Some(PreVerdict::Deny(reason)) => return self.denied(call, &name, reason),
            Some(PreVerdict::Allow) if decision == Decision::Ask => decision = Decision::Allow,
            Some(PreVerdict::Ask) if decision == Decision::Allow => decision = Decision::Ask,
            _ => {}
        }
        // Asked in every mode, and never remembered: a confirm-always tool, and what the judge
        // says holds once only (a change to what decides lembas' own permissions later).
        // A handler may ask the same: what it writes reaches every later session.
        let confirm = def.confirm.as_deref() == Some("always") || tool.always_asks || judged.verdict.once_only;
        if confirm && decision == Decision::Allow {
            decision = Decision::Ask;
        }
        let approved = match decision {
            Decision::Allow => false,
            Decision::Refuse(reason) => return self.denied(call, &name, reason),
            Decision::Ask if !self.cfg.approver.present() => {
                return self.denied(call, &name, unattended_refusal(&name, self.state.mode.as_str()));
            }
            Decision::Ask => match self.ask_person(call, &def, &args, &judged, confirm).await {
                Ok(()) => true,
                Err(answered) => return answered,
            },
        };
        if matches!(tool.runs, Runs::Engine(_) | Runs::AtOnce(_)) {
            return Prepared::Engine { name, args };
        }
        let task = if matches!(tool.runs, Runs::Task) {
            match self.prepare_task(&call.id, &args) {
                Ok(run) => Some(Box::new(run)),
                Err(e) => return Prepared::Answer(ToolOutput::Error(e)),
            }
        } else {
            None
        };
        Prepared::Run { name, args, paths: judged.paths, exclusive: def.exclusive, note: None, task, approved }
    }

    /// The definition of a tool this session offers (or an MCP server's tool), by the name a
    /// call gives; an unknown name is answered with the tools there are.
    fn offered_def(&self, name: &str) -> Result<lembas_spec::ToolDef, ToolOutput> {
        let offered = self.tools.iter().any(|t| t.name == name);
        let def = lembas_spec::tool(name)
            .filter(|d| offered || self.tools.iter().any(|t| t.name == d.name))
            .cloned()
            .or_else(|| self.mcp_tool_def(name));
        def.ok_or_else(|| {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            ToolOutput::Error(format!("There is no tool called {name} here. The tools are: {}.", names.join(", ")))
        })
    }

    /// Puts the call to the person on a card: `Ok` when they allowed it (an "always" is kept
    /// for the session), else what the call is answered with — their refusal, or their own
    /// command line, judged, in place of the model's. A call that would fail is answered with
    /// its error at once: there is nothing to ask about.
    /// Why a call is put to the person, in a sentence for the card.
    fn asked_because(&self, def: &lembas_spec::ToolDef, judged: &Judged, confirm: bool) -> String {
        if let Some(why) = &judged.verdict.asked_because {
            return why.clone();
        }
        if confirm {
            return format!("{} is asked every time, in every mode.", def.name);
        }
        format!("{} mode asks before {} unless a rule allows it.", self.state.mode.as_str(), def.name)
    }

    async fn ask_person(
        &mut self,
        call: &ToolCall,
        def: &lembas_spec::ToolDef,
        args: &Value,
        judged: &Judged,
        confirm: bool,
    ) -> Result<(), Prepared> {
        let name = def.name.clone();
        // What the card shows, worked out off the async threads, as the tools themselves run:
        // reading a file may go through an editor that answers on this same runtime.
        let (ws, n, a) = (self.ws.clone(), name.clone(), args.clone());
        let preview = match tokio::task::spawn_blocking(move || crate::preview::call_preview(&ws, &n, &a)).await {
            Ok(Err(why)) => return Err(Prepared::Answer(ToolOutput::Error(why))),
            Ok(Ok(shown)) => shown,
            Err(_) => None,
        };
        let tool = handler(&name);
        let command = tool.command(args);
        let grants = crate::preview::session_grants(&name, command, tool.url(args));
        let request = ApprovalRequest {
            job: None,
            call_id: call.id.clone(),
            tool: name.clone(),
            title: (tool.title)(args),
            runs_command: command.is_some(),
            reaches: judged.real_paths.iter().map(|p| p.display().to_string()).collect(),
            agent: None,
            once_only: confirm,
            preview,
            session_allows: (!confirm).then(|| crate::preview::session_scope(&grants)),
            subagent: None,
            reason: self.asked_because(def, judged, confirm),
        };
        let mut phases = Phases::new(self.events.clone());
        phases.set(Phase::WaitingForPerson { what: lembas_progress::PersonWait::Approval, tool: Some(name.clone()) });
        self.notification_hooks(format!("lembas needs your permission to use {}", hook_tool_name(&name)));
        match self.cfg.approver.ask(request).await {
            Approval::Once => Ok(()),
            // Held once only: never kept for the session.
            Approval::Always if confirm => Ok(()),
            Approval::Always => {
                // A subagent's card speaks for the whole session: its parent takes it up.
                if let Some(of) = self.role.subagent() {
                    of.granted.lock().expect("granted").extend(grants.iter().cloned());
                }
                self.state.always.extend(grants);
                self.judge = self.make_judge();
                Ok(())
            }
            Approval::Edited { command: corrected } if tool.runs_a_command() => {
                // The person's own line runs once — but never past the floor.
                let mut args = args.clone();
                args["command"] = Value::String(corrected.clone());
                let facts = Call::new(&name, def.risk, Some(&corrected), &judged.real_paths);
                let decision = self.judge.evaluate(self.state.mode, &facts, &judged.cwd, &|p| self.ws.real_path(p));
                if let Decision::Refuse(reason) = decision {
                    return Err(self.denied(call, &name, reason));
                }
                let note = format!("(The person changed the command to: {corrected})");
                Err(Prepared::Run {
                    name,
                    args,
                    paths: judged.paths.clone(),
                    exclusive: def.exclusive,
                    note: Some(note),
                    task: None,
                    approved: true,
                })
            }
            Approval::Edited { .. } => Ok(()),
            Approval::Deny { feedback } => {
                let mut reason = "The person declined this call; it was not run.".to_owned();
                if let Some(words) = feedback.filter(|w| !w.trim().is_empty()) {
                    reason.push_str(&format!(" They said: {words}"));
                }
                Err(self.denied(call, &name, reason))
            }
        }
    }

    fn denied(&self, call: &ToolCall, name: &str, reason: String) -> Prepared {
        self.emit(Event::ToolDenied { call_id: call.id.clone(), tool: name.to_owned(), reason: reason.clone() });
        Prepared::Answer(ToolOutput::Error(reason))
    }
}
