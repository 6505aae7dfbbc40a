//! The team tools as the engine answers them: the tree's rules, then what they start, stop and
//! deliver.

use std::sync::Arc;

use lembas_permissions::delegation::team_text;
use lembas_spec::{Mode, RiskClass};
use lembas_team::{AddArgs, AssignArgs, Delivery, LEAD, Team};
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::Event;
use crate::session::Session;
use crate::session::team::{Hub, Seat, now};

fn field<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn strings(args: &Value, key: &str) -> Vec<String> {
    lembas_team::names_of(args.get(key))
}

fn mode(args: &Value, key: &str) -> Result<Option<Mode>, String> {
    match field(args, key).map(str::trim).filter(|m| !m.is_empty()) {
        None => Ok(None),
        Some(word) => Mode::parse(word)
            .map(Some)
            .ok_or_else(|| format!("{word} is not a permission mode: auto, edit, manual or plan.")),
    }
}

fn answer(result: Result<String, String>) -> ToolOutput {
    result.map_or_else(ToolOutput::Error, ToolOutput::Text)
}

/// A tool that posts to the room: what it posted is handed to its recipients, and the call
/// answers its text.
fn posted(hub: &Arc<Hub>, result: Result<(Vec<Delivery>, String), String>) -> ToolOutput {
    answer(result.map(|(deliveries, text)| {
        hub.route(deliveries);
        text
    }))
}

/// The main agent's tools (`subagents.md` §6): a subagent calling one, or `task`, is refused.
pub(crate) fn main_only(name: &str) -> bool {
    lembas_spec::loop_spec().team["main_only"]["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|n| n.as_str() == Some(name)))
        || matches!(crate::handlers::handler(name).runs, crate::handlers::Runs::Task)
}

/// A team tool's call, answered by `work` with the caller's seat — or refused while there is
/// no team. None of the team's tools waits on anything: each is answered at once.
fn seated(session: &mut Session, work: impl FnOnce(&mut Session, &Seat, u64) -> ToolOutput) -> ToolOutput {
    match session.role.seat().cloned() {
        Some(seat) if seat.hub.team().available() => work(session, &seat, now()),
        _ => ToolOutput::Error(lembas_team::spec_text("unavailable.one_agent").to_owned()),
    }
}

pub(crate) fn team_add(session: &mut Session, call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |s, seat, _| answer(s.team_add(seat, call_id, args)))
}

pub(crate) fn team_replace(session: &mut Session, call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |s, seat, _| answer(s.team_replace(seat, call_id, args)))
}

/// A message to others of the tree.
pub(crate) fn team_send(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| send(seat, strings(args, "to"), args, at))
}

/// A message to the parent before the final reply.
pub(crate) fn report(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| send(seat, vec![lembas_team::spec_text("names.parent").to_owned()], args, at))
}

fn send(seat: &Seat, to: Vec<String>, args: &Value, at: u64) -> ToolOutput {
    let sent = {
        let mut team = seat.hub.team();
        team.send(&seat.me, &to, field(args, "message").unwrap_or_default(), at).map(|d| (d, team.sent_text()))
    };
    posted(&seat.hub, sent)
}

pub(crate) fn team_read(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |s, seat, at| {
        let since = args.get("since").and_then(Value::as_u64).unwrap_or(0);
        let names = s.model_names();
        ToolOutput::Text(seat.hub.team().read(&seat.me, since, at, &|id| names(id)))
    })
}

pub(crate) fn team_whoami(session: &mut Session, _call_id: &str, _args: &Value) -> ToolOutput {
    seated(session, |s, seat, _| {
        seat.hub.team().set_context(&seat.me, s.state.last_input, s.window());
        ToolOutput::Text(seat.hub.team().whoami(&seat.me, s.cfg.model.display_name()))
    })
}

pub(crate) fn team_stop(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| {
        let stopped = seat.hub.team().stop(&seat.me, field(args, "name").unwrap_or_default(), at);
        match stopped {
            Ok((ids, text)) => {
                seat.hub.halt(&ids);
                seat.hub.schedule();
                ToolOutput::Text(text)
            }
            Err(e) => ToolOutput::Error(e),
        }
    })
}

pub(crate) fn team_finish(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| {
        let finished = seat.hub.team().finish(&seat.me, field(args, "report").unwrap_or_default(), at);
        if finished.is_ok() {
            // Its turn stops after this call.
            seat.hub.finish_turn(&seat.me);
        }
        posted(&seat.hub, finished)
    })
}

pub(crate) fn team_findings(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, _| match field(args, "action") {
        Some("write") => answer(seat.hub.team().write_finding(&seat.me, field(args, "text").unwrap_or_default())),
        Some("read") => answer(seat.hub.team().read_findings(&seat.me, field(args, "of"))),
        _ => ToolOutput::Error("`action` is write or read.".into()),
    })
}

pub(crate) fn team_assign(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| {
        let parsed = mode(args, "mode").map(|mode| AssignArgs {
            name: field(args, "name").unwrap_or_default().into(),
            task: field(args, "task").unwrap_or_default().into(),
            role: field(args, "role").map(str::to_owned),
            parent: field(args, "parent").map(str::to_owned),
            mode,
        });
        let assigned = parsed.and_then(|a| {
            let said = Team::assigned_text(&a.name);
            seat.hub.team().assign(&seat.me, a, at).map(|d| (d, said))
        });
        posted(&seat.hub, assigned)
    })
}

pub(crate) fn team_request(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| {
        let tool = field(args, "tool").unwrap_or_default().trim();
        let risk = lembas_spec::tool(tool).map_or(RiskClass::Execute, |d| d.risk);
        let asked = seat.hub.team().request(
            &seat.me,
            tool,
            field(args, "pattern").unwrap_or_default(),
            field(args, "why").unwrap_or_default(),
            risk,
            at,
        );
        posted(&seat.hub, asked)
    })
}

pub(crate) fn team_decide(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    seated(session, |_, seat, at| {
        let allow = args.get("allow").and_then(Value::as_bool).unwrap_or(false);
        let decided =
            seat.hub.team().decide(&seat.me, field(args, "id").unwrap_or_default(), allow, field(args, "note"), at);
        posted(&seat.hub, decided)
    })
}

impl Session {
    /// The person changed the team's size setting: said to the main agent on its next message;
    /// nobody is stopped by a lower Max.
    pub fn set_agents(&mut self, min: u32, max: u32) -> Result<(), String> {
        crate::check_agents(min, max)?;
        let seat =
            self.leads_team().ok_or("This session has no team: subagents are off, or no model can serve one.")?;
        {
            let mut team = seat.hub.team();
            team.min = min;
            team.max = max;
        }
        seat.hub.tell();
        self.emit(Event::Agents { min, max });
        Ok(())
    }

    /// A model's name for the tree, by its id.
    fn model_names(&self) -> impl Fn(&str) -> String + use<> {
        let models: Vec<(String, String)> = std::iter::once(&self.cfg.model)
            .chain(&self.cfg.models)
            .map(|m| (m.id.clone(), m.display_name().to_owned()))
            .collect();
        move |id: &str| models.iter().find(|(m, _)| m == id).map_or_else(|| id.to_owned(), |(_, n)| n.clone())
    }

    fn team_add(&self, seat: &Seat, call_id: &str, args: &Value) -> Result<String, String> {
        let parsed = AddArgs {
            name: field(args, "name").unwrap_or_default().into(),
            role: field(args, "role").unwrap_or_default().into(),
            task: field(args, "task").unwrap_or_default().into(),
            goal: field(args, "goal").map(str::to_owned),
            lead: args.get("lead").and_then(Value::as_bool).unwrap_or(false),
            parent: field(args, "parent").map(str::to_owned),
            mode: mode(args, "mode")?,
            request: strings(args, "request"),
        };
        if parsed.task.trim().is_empty() {
            return Err("`task` is required: the subagent's whole brief, standing on its own.".into());
        }
        let model = || {
            let chosen = crate::agents::Chosen::named(field(args, "agent").unwrap_or_default(), &self.cfg.agent_files)?;
            let model = lembas_models::subagent_model(
                &self.cfg.model,
                field(args, "model"),
                &self.cfg.models,
                &self.state.named,
            )?;
            Ok((chosen.explores(), chosen.custom_name(), model.id))
        };
        let added = seat.hub.team().add(&seat.me, parsed, model, now())?;
        let brief = seat.hub.team().agent(&added.id).map(|a| a.task.clone()).unwrap_or_default();
        self.make_member(seat, &added.id, call_id, brief)?;
        if added.working {
            seat.hub.start(&added.id);
        }
        seat.hub.tell();
        Ok(added.text)
    }

    fn team_replace(&self, seat: &Seat, call_id: &str, args: &Value) -> Result<String, String> {
        let hub = &seat.hub;
        let replaced =
            hub.team().replace(&seat.me, field(args, "name").unwrap_or_default(), field(args, "task"), now())?;
        hub.halt(std::slice::from_ref(&replaced.old));
        self.make_member(seat, &replaced.id, call_id, replaced.brief.clone())?;
        if replaced.working {
            hub.start(&replaced.id);
        }
        hub.schedule();
        Ok(replaced.text)
    }

    /// A manager does not do the work (`team.md` §6): a call of risk write or execute is
    /// refused before any permission check — but `job_stop`, and a `bash` call the default rules
    /// alone allow in manual mode (reading, for review).
    pub(crate) fn manager_refusal(&self, def: &lembas_spec::ToolDef, args: &Value) -> Option<String> {
        let seat = self.role.seat()?;
        let kept = lembas_spec::loop_spec().team["work"]["kept"]
            .as_array()
            .is_some_and(|k| k.iter().any(|n| n.as_str() == Some(def.name.as_str())));
        if !matches!(def.risk, RiskClass::Write | RiskClass::Execute) || kept {
            return None;
        }
        if !seat.hub.team().is_manager(&seat.me) {
            return None;
        }
        if let Some(command) = crate::handlers::handler(&def.name).command(args) {
            let defaults = lembas_permissions::Judge::with_defaults(self.judge.ctx.clone());
            let paths: Vec<std::path::PathBuf> = Vec::new();
            let call = lembas_permissions::Call::new(&def.name, def.risk, Some(command), &paths);
            let cwd = self.ws.real_path(&self.ws.resolve(field(args, "cwd").unwrap_or(".")));
            let real = |p: &std::path::Path| self.ws.real_path(p);
            if defaults.evaluate(Mode::Manual, &call, &cwd, &real) == lembas_permissions::Decision::Allow {
                return None;
            }
        }
        Some(team_text("manager"))
    }

    /// A subagent's call its own mode would ask for (`subagents.md` §7): run with a grant the
    /// main agent gave, refused when the main agent could allow it (asked for, or not to be
    /// asked for), and put to the person only when nobody in the tree could allow it.
    pub(crate) fn delegated(
        &self,
        call: &lembas_permissions::Call,
        cwd: &std::path::Path,
    ) -> Option<lembas_permissions::Decision> {
        use lembas_permissions::Decision;
        use lembas_permissions::delegation::{Grant, SubagentAnswer, subagent_call};
        let seat = self.role.seat().filter(|s| s.me != LEAD)?;
        let (main_mode, request, grants) = {
            let team = seat.hub.team();
            let agent = team.agent(&seat.me)?;
            let request: Vec<RiskClass> =
                agent.request.iter().filter_map(|k| lembas_permissions::delegation::risk_class(k)).collect();
            let grants: Vec<Grant> = agent
                .grants
                .iter()
                .map(|(tool, pattern)| Grant { tool: tool.clone(), pattern: pattern.clone() })
                .collect();
            (team.lead().mode, request, grants)
        };
        let real = |p: &std::path::Path| self.ws.real_path(p);
        Some(match subagent_call(&self.judge, main_mode, self.state.mode, &request, &grants, call, cwd, &real, None) {
            SubagentAnswer::Run => Decision::Allow,
            SubagentAnswer::Person => Decision::Ask,
            SubagentAnswer::Refused(reason) => Decision::Refuse(reason),
        })
    }
}
