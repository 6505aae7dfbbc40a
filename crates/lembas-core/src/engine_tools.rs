//! The tools the engine answers itself, in call order: the plan, and questions to the person.

use futures::FutureExt;
use futures::future::BoxFuture;
use lembas_progress::Phase;
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::Event;
use crate::phase::Phases;
use crate::session::Session;

/// `plan_write`: the plan, made anew.
pub(crate) fn plan_write(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    match crate::Plan::from_args(args) {
        Ok(plan) => {
            let text = plan.render();
            session.state.plan = Some(plan.clone());
            session.emit(Event::Plan { plan });
            ToolOutput::Text(text)
        }
        Err(e) => ToolOutput::Error(e),
    }
}

/// `plan_update`: the plan's tasks, changed.
pub(crate) fn plan_update(session: &mut Session, _call_id: &str, args: &Value) -> ToolOutput {
    match session.state.plan.as_mut() {
        None => ToolOutput::Error("There is no plan yet: write it with plan_write first.".into()),
        Some(plan) => match plan.update(args) {
            Ok(()) => {
                let plan = plan.clone();
                let text = plan.render();
                session.emit(Event::Plan { plan });
                ToolOutput::Text(text)
            }
            Err(e) => ToolOutput::Error(e),
        },
    }
}

/// `plan_submit`: the plan, put to the person.
pub(crate) fn plan_submit<'a>(
    session: &'a mut Session,
    call_id: &'a str,
    _args: &'a Value,
) -> BoxFuture<'a, ToolOutput> {
    session.plan_submit(call_id).boxed()
}

/// `ask_user`: a question, put to the person.
pub(crate) fn ask_user<'a>(session: &'a mut Session, _call_id: &'a str, args: &'a Value) -> BoxFuture<'a, ToolOutput> {
    session.ask_user(args).boxed()
}

impl Session {
    async fn ask_user(&mut self, args: &Value) -> ToolOutput {
        let question = args.get("question").and_then(Value::as_str).unwrap_or_default().trim().to_owned();
        if question.is_empty() {
            return ToolOutput::Error("`question` is required.".into());
        }
        let options: Vec<String> = args
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_str().map(str::to_owned))
            .collect();
        if !self.cfg.approver.present() {
            return ToolOutput::Error(
                "Nobody is here to answer questions: decide yourself, and say what you assumed.".into(),
            );
        }
        let mut phases = Phases::new(self.events.clone());
        phases.set(Phase::WaitingForPerson { what: lembas_progress::PersonWait::Question, tool: None });
        self.notification_hooks("lembas is waiting for your answer".into());
        match self.cfg.approver.question(crate::Question { question, options }).await {
            crate::Reply::Answered { words } => ToolOutput::Text(format!("The person answered: {words}")),
            crate::Reply::Silent => {
                ToolOutput::Error("The person did not answer: decide yourself, and say what you assumed.".into())
            }
            crate::Reply::NotAsked => ToolOutput::Error(
                "This question could not be put to the person here: decide yourself, and say what you assumed.".into(),
            ),
        }
    }

    pub(crate) async fn plan_submit(&mut self, call_id: &str) -> ToolOutput {
        if self.state.mode != lembas_permissions::Mode::Plan {
            let def = lembas_spec::tool("plan_submit").expect("spec/tools/plan_submit.json");
            return ToolOutput::Error(def.unavailable.clone().unwrap_or_default());
        }
        let Some(plan) = self.state.plan.clone() else {
            return ToolOutput::Error("There is no plan to submit: write it with plan_write first.".into());
        };
        if !self.cfg.approver.present() {
            // Kept where plan mode keeps plans, for the person to read and approve later.
            let file = self.plans_dir().join(format!("{}.md", &self.id[..self.id.len().min(13)]));
            let kept = file
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&file, plan.render()))
                .map(|()| lembas_paths::prompt_name(&file, &self.ws.root, self.cfg.user_home.as_deref()));
            let where_ = match &kept {
                Ok(name) => {
                    self.emit(Event::Notice { message: format!("The plan is in {name}; it waits for your approval.") });
                    format!(" It is kept in {name}.")
                }
                Err(_) => String::new(),
            };
            return ToolOutput::Error(format!(
                "Nobody is here to approve the plan, so plan mode goes on: say that the plan waits for approval.{where_}"
            ));
        }
        let mut phases = Phases::new(self.events.clone());
        phases.set(Phase::WaitingForPerson { what: lembas_progress::PersonWait::Plan, tool: None });
        match self.cfg.approver.approve_plan(call_id.to_owned(), plan.render()).await {
            crate::PlanVerdict::Approved { mode: chosen } => {
                // The mode the person chose, else the one before plan mode, else edit.
                let before = self.state.mode_before_plan.take();
                let mode = chosen
                    .or(before)
                    .filter(|m| *m != lembas_permissions::Mode::Plan)
                    .unwrap_or(lembas_permissions::Mode::Edit);
                let mode = self.cfg.bounded(mode);
                self.state.mode = mode;
                // The result says so: no note needed.
                self.state.told.facts.mode = Some(mode.to_string());
                self.emit(Event::Mode { mode });
                ToolOutput::Text(format!(
                    "The person approved the plan. Plan mode has ended: the permission mode is now {mode}. Carry out the plan, keeping it current with plan_update."
                ))
            }
            crate::PlanVerdict::Declined { feedback } => {
                let said =
                    feedback.filter(|f| !f.trim().is_empty()).map(|f| format!(" They said: {f}")).unwrap_or_default();
                ToolOutput::Error(format!(
                    "The person did not approve the plan yet.{said} Revise it with plan_write and submit it again."
                ))
            }
        }
    }
}
