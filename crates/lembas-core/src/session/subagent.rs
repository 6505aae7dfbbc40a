//! Subagents started with `task` (`subagents.md`): a session of its own that works for this one,
//! in the same project, with the same permission mode and rules, and whose final reply comes back
//! as the call's result — or, in the background, as a job's note.
//!
//! What it keeps to:
//! - **Its model** is the session's, unless the person named another in their own words (§2); a
//!   model the server cannot hold beside the session's is refused (§3). Nothing else picks one.
//! - **Never more than its parent**: the same mode, rules and what the person allowed for the
//!   session; what would be asked goes to the person, on a card that names the subagent.
//! - **No task, no questions, no plan** in its tool list: only the main agent makes subagents,
//!   and a subagent cannot ask the person anything.
//! - **Kept**: its conversation is stored as a session whose parent is this one (never listed on
//!   its own; deleted with its parent).

use std::sync::Arc;

use lembas_model::CancellationToken;
use lembas_spec::{loop_spec, render};
use lembas_tools::ToolOutput;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::approve::Approver;
use crate::session::Session;
use crate::worktree::Worktree;
use crate::{Approval, ApprovalRequest, Question};
use crate::{DoneReason, Event};

/// Whom a subagent's session works for.
#[derive(Debug, Clone)]
pub(crate) struct SubagentOf {
    /// The parent session's id.
    pub parent: String,
    /// What the person reads it as: the call's description.
    pub label: String,
    /// Its standing, said at the end of its system prompt.
    pub block: String,
    /// An `explore` subagent: reading tools only.
    pub read_only: bool,
    /// A custom agent's tools, by name: no others (`None`: what its kind has).
    pub tools: Option<Vec<String>>,
    /// Where what the person allows "for this session" on its cards goes, for the parent.
    pub granted: crate::session::Grants,
    /// A team's subagent: its seat in the tree, and whether it has request options.
    pub team: Option<(crate::session::team::Seat, bool)>,
}

/// A subagent's approvals go to the person, named: the same card and answers as the main agent's.
/// They are asked under the parent's `task` call, the one call of it a client knows.
pub(crate) struct OnBehalf {
    inner: Arc<dyn Approver>,
    /// A team subagent's id, name and position, for a client that names it.
    subagent: Option<lembas_protocol::SubagentRef>,
    label: String,
    task_call: String,
    /// It works on after the turn that started it: cancelling a later turn leaves its cards.
    background: bool,
    /// The job it runs as, once it was started as one: its cards name it.
    job: JobSlot,
}

/// Where a background subagent's job is noted once it has an id, for its cards.
pub(crate) type JobSlot = Arc<std::sync::OnceLock<lembas_protocol::jobs::JobRef>>;

impl OnBehalf {
    pub(crate) fn new(
        inner: Arc<dyn Approver>,
        label: String,
        task_call: String,
        subagent: Option<lembas_protocol::SubagentRef>,
    ) -> OnBehalf {
        OnBehalf { inner, label, task_call, background: true, subagent, job: JobSlot::default() }
    }
}

impl Approver for OnBehalf {
    fn present(&self) -> bool {
        self.inner.present()
    }

    fn ask(
        &self,
        mut request: ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Approval> + Send + '_>> {
        request.agent = Some(self.label.clone());
        request.call_id = self.task_call.clone();
        request.subagent = self.subagent.clone();
        request.job = self.job.get().cloned().map(Box::new);
        if self.background { self.inner.ask_in_background(request) } else { self.inner.ask(request) }
    }

    fn question(&self, _: Question) -> std::pin::Pin<Box<dyn std::future::Future<Output = crate::Reply> + Send + '_>> {
        // It has no ask_user; should one be called anyway, nobody is asked.
        Box::pin(async { crate::Reply::NotAsked })
    }
}

/// A subagent ready to run: its session, and where its events come out.
pub(crate) struct TaskRun {
    child: Session,
    prompt: String,
    label: String,
    events: UnboundedReceiver<lembas_protocol::Said>,
    pub background: bool,
    /// Its own checkout, when it was asked for one.
    worktree: Option<Worktree>,
    /// Its place in the team's size and its model's slots, while it runs.
    seat: Option<crate::session::team::TaskSeat>,
    /// Its agent (`general`, `explore`, a custom agent's name), for its job.
    agent: String,
    /// Where its cards learn the job it runs as.
    job: JobSlot,
}

impl Session {
    /// Takes up what the person allowed "for this session" on a subagent's card: it holds for
    /// the whole session, never only for that subagent.
    pub(crate) fn take_up_grants(&mut self) {
        let granted = std::mem::take(&mut *self.granted.lock().expect("granted"));
        let mut changed = false;
        for grant in granted {
            if !self.state.always.contains(&grant) {
                self.state.always.push(grant);
                changed = true;
            }
        }
        if changed {
            self.judge = self.make_judge();
        }
    }

    /// Notes which usable models the person's own words name (§2); a name stays named for the
    /// rest of the session.
    pub(crate) fn note_named(&mut self, words: &str) {
        for model in std::iter::once(&self.cfg.model).chain(&self.cfg.models) {
            if !self.state.named.contains(&model.id) && lembas_models::names_model(words, model) {
                self.state.named.push(model.id.clone());
            }
        }
    }

    /// A `task` call's subagent, made and stored but not started; the error is the call's result.
    pub(crate) fn prepare_task(&self, call_id: &str, args: &Value) -> Result<TaskRun, String> {
        if self.role.is_subagent() {
            return Err(lembas_permissions::delegation::team_text("only_main"));
        }
        if let Some(refusal) = self.leads_team().and_then(|seat| seat.hub.team().task_refusal()) {
            return Err(refusal);
        }
        let field = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default();
        let prompt = field("prompt");
        if prompt.is_empty() {
            return Err("`prompt` is required: the whole task, standing on its own.".into());
        }
        let label = match field("description") {
            "" => lembas_progress::short_what(prompt),
            d => lembas_progress::short_what(d),
        };
        let model = lembas_models::subagent_model(
            &self.cfg.model,
            args.get("model").and_then(Value::as_str),
            &self.cfg.models,
            &self.state.named,
        )?;
        let mut cfg = self.cfg.clone();
        if model.id != cfg.model.id {
            cfg.effort = None;
        } else {
            cfg.effort = self.state.effort.clone();
        }
        cfg.model = model;
        cfg.mode = self.state.mode;
        cfg.max_steps = loop_spec().steps.subagent_max;
        // Memory is the main agent's, who speaks with the person.
        cfg.memory = None;
        let job = JobSlot::default();
        cfg.approver = Arc::new(OnBehalf {
            subagent: None,
            inner: self.cfg.approver.clone(),
            label: label.clone(),
            task_call: call_id.to_owned(),
            background: args.get("background").and_then(Value::as_bool).unwrap_or(false),
            job: job.clone(),
        });
        // What the person allowed for this session holds for its subagents too: never more.
        cfg.rules = self.judge.rules.clone();
        let chosen = crate::agents::Chosen::named(field("agent"), &self.cfg.agent_files)?;
        let explore = chosen.explores();
        cfg.mode = chosen.mode(self.state.mode);
        let read_only = if explore {
            "\n\nYou explore: you have tools to read and search, and none to change anything or run commands."
        } else if cfg.mode == lembas_permissions::Mode::Plan {
            "\n\nThe session is in plan mode: read and search, but change nothing."
        } else {
            ""
        };
        let (worktree, ws) = if args.get("worktree").and_then(Value::as_bool).unwrap_or(false) {
            let under = self.cfg.jobs_dir.join(&self.id).join("worktrees");
            let unique = uuid::Uuid::now_v7().simple().to_string();
            let tree = Worktree::create(&self.ws.root, &under, &label, &unique[unique.len() - 6..])?;
            let (mut ws, _) = lembas_tools::Workspace::new(&tree.path, &tree.started(&self.ws.root, &self.ws.started));
            ws.editor = None;
            ws.home = self.ws.home.clone();
            (Some(tree), ws)
        } else {
            (None, self.ws.clone())
        };
        let mut instructions =
            "Work on it with your tools until it is done, deciding for yourself where the task leaves a choice."
                .to_owned();
        if let Some(tree) = &worktree {
            instructions.push_str(&format!(
                " You work in a git worktree of the project of your own, on branch {}: what you change there is committed on that branch when you finish, for the main agent to merge.",
                tree.branch
            ));
        }
        instructions.push_str(&chosen.instructions());
        let block = render(
            crate::prompt::text("blocks/subagent.md"),
            &[("name", &label), ("instructions", &instructions), ("report", ""), ("read_only", read_only)],
        );
        let of = SubagentOf {
            parent: self.id.clone(),
            label: label.clone(),
            block,
            read_only: explore,
            tools: chosen.tools(),
            granted: self.granted.clone(),
            team: None,
        };
        let (sender, events) = crate::sink::EventSink::channel();
        let child = Session::create(cfg, ws, sender, Some(of)).map_err(|e| e.to_string())?;
        let background = args.get("background").and_then(Value::as_bool).unwrap_or(false);
        let seat = self.leads_team().map(|s| crate::session::team::TaskSeat::take(&s.hub, &child.cfg.model.id));
        let agent = match field("agent") {
            "" => "general".to_owned(),
            named => named.to_lowercase(),
        };
        Ok(TaskRun { child, prompt: prompt.to_owned(), label, events, background, worktree, seat, agent, job })
    }
}

/// The result a parent gets for how its subagent's turn ended.
fn report_result(label: &str, reason: DoneReason, report: String, error: Option<String>) -> ToolOutput {
    let report = report.trim().to_owned();
    match reason {
        DoneReason::Answered if report.is_empty() => {
            ToolOutput::Error(format!("The subagent \"{label}\" ended without a report."))
        }
        DoneReason::Answered => ToolOutput::Text(report),
        DoneReason::Limit => ToolOutput::Text(format!(
            "(The subagent \"{label}\" stopped at a limit — its steps or its context window — before it finished; what it could report:)\n\n{report}"
        )),
        DoneReason::Cancelled => ToolOutput::Error(format!("The subagent \"{label}\" was stopped before it finished.")),
        DoneReason::Failed => ToolOutput::Error(format!(
            "The subagent \"{label}\" failed: {}",
            error.unwrap_or_else(|| "no reason was given".into())
        )),
    }
}

/// A result with what became of the subagent's worktree, if it had one.
async fn with_worktree(result: ToolOutput, worktree: Option<Worktree>, label: &str) -> ToolOutput {
    let Some(tree) = worktree else { return result };
    let label = label.to_owned();
    let line = tokio::task::spawn_blocking(move || tree.finish(&label))
        .await
        .unwrap_or_else(|e| format!("(Its worktree could not be closed: {e})"));
    match result {
        ToolOutput::Text(text) => ToolOutput::Text(format!("{text}\n\n{line}")),
        ToolOutput::Error(text) => ToolOutput::Error(format!("{text}\n\n{line}")),
        other => other,
    }
}

/// Told a subagent's progress each time it changes (`None`: nothing runs).
pub(crate) type SeesProgress = Box<dyn Fn(Option<&lembas_progress::Progress>) + Send>;

/// What else watches a subagent's events as they are passed on.
pub(crate) enum Watch {
    /// A background subagent's job log (its `job_output`).
    Log(lembas_tools::AgentLog),
    /// A team subagent's progress, kept in the tree.
    Phase(SeesProgress),
}

/// Passes a subagent's events on to its parent's front ends, marked with the call they belong
/// to, until its prompt is done (or its session is gone); answers the last error it said, if
/// any, and the channel, for a subagent woken again later.
pub(crate) async fn forward(
    mut events: UnboundedReceiver<lembas_protocol::Said>,
    parent: crate::sink::EventSink,
    call_id: String,
    label: String,
    mut watch: Option<Watch>,
) -> (Option<String>, UnboundedReceiver<lembas_protocol::Said>) {
    let mut error = None;
    let job = match &watch {
        Some(Watch::Log(log)) => Some(log.id().to_owned()),
        _ => None,
    };
    while let Some(lembas_protocol::Said { event, .. }) = events.recv().await {
        if let Event::Error { message } = &event {
            error = Some(message.clone());
        }
        match (watch.as_mut(), &event) {
            (Some(Watch::Log(log)), event) => {
                if let Some(line) = log_line(event) {
                    log.write(&line);
                }
                if matches!(event, Event::Step { .. } | Event::ToolEnd { .. }) {
                    log.count(matches!(event, Event::Step { .. }));
                }
            }
            (Some(Watch::Phase(seen)), Event::Phase { progress }) => seen(progress.as_ref()),
            _ => {}
        }
        let done = matches!(event, Event::Done { .. });
        let _ = parent.send(Event::Subagent {
            call_id: call_id.clone(),
            agent: label.clone(),
            job: job.clone(),
            event: Box::new(event),
        });
        if done {
            break;
        }
    }
    (error, events)
}

/// The forwarder's answer once the subagent's events are all passed on; should it never see
/// the end, the report does not wait for it past a moment.
pub(crate) async fn forwarded(
    forwarding: tokio::task::JoinHandle<(Option<String>, UnboundedReceiver<lembas_protocol::Said>)>,
) -> (Option<String>, Option<UnboundedReceiver<lembas_protocol::Said>>) {
    match tokio::time::timeout(std::time::Duration::from_secs(2), forwarding).await {
        Ok(Ok((error, events))) => (error, Some(events)),
        _ => (None, None),
    }
}

/// A background subagent whose report is in: kept, so `job_send` can wake it with a message
/// and its context intact (`team.md`: `job_send` restarts a finished subagent).
pub(crate) struct Parked {
    child: Session,
    events: UnboundedReceiver<lembas_protocol::Said>,
    label: String,
    call_id: String,
    parent: crate::sink::EventSink,
}

/// The parked subagents of a session, by job id.
pub(crate) type ParkedAgents = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Parked>>>;

/// Wakes the parked subagent of job `id` with `message`: it works on in the background as the
/// same job, and its next report comes as the job's note. `None` when there is none to wake.
pub(crate) fn wake(parked: &ParkedAgents, jobs: &lembas_tools::Jobs, id: &str, message: &str) -> Option<ToolOutput> {
    if !jobs.agent_ended(id) {
        return None;
    }
    let p = parked.lock().expect("parked subagents").remove(id)?;
    let stop = CancellationToken::new();
    let Some(log) = jobs.revive_agent(id, stop.clone(), p.child.steer_handle()) else {
        parked.lock().expect("parked subagents").insert(id.to_owned(), p);
        return None;
    };
    let label = p.label.clone();
    let answer = format!(
        "Woke {id}: the subagent \"{label}\" reads your message and works on in the background. Its report comes to you as a message when it ends."
    );
    run_in_background(
        p.child,
        message.to_owned(),
        p.label,
        p.events,
        None,
        p.call_id,
        p.parent,
        stop,
        log,
        id.to_owned(),
        parked.clone(),
        None,
    );
    Some(ToolOutput::Text(answer))
}

/// A subagent's prompt run as job `id`: its events forwarded and logged, its report the job's
/// note; afterwards it is parked, unless it worked in a worktree (closed with its report).
#[allow(clippy::too_many_arguments)]
fn run_in_background(
    mut child: Session,
    prompt: String,
    label: String,
    events: UnboundedReceiver<lembas_protocol::Said>,
    worktree: Option<Worktree>,
    call_id: String,
    parent: crate::sink::EventSink,
    stop: CancellationToken,
    log: lembas_tools::AgentLog,
    id: String,
    parked: ParkedAgents,
    seat: Option<crate::session::team::TaskSeat>,
) {
    let finisher = log.clone();
    tokio::spawn(async move {
        // Its place in the team's size, until its prompt is done.
        let _seat = seat;
        let forwarding =
            tokio::spawn(forward(events, parent.clone(), call_id.clone(), label.clone(), Some(Watch::Log(log))));
        let (reason, report) = Box::pin(child.run_for_report(&prompt, &stop)).await;
        // What it started in the background ends with its prompt.
        child.jobs.stop_all();
        let (error, events) = forwarded(forwarding).await;
        let state = match reason {
            DoneReason::Cancelled => lembas_tools::JobState::Stopped,
            DoneReason::Failed => lembas_tools::JobState::Exited(1),
            _ => lembas_tools::JobState::Exited(0),
        };
        let keep = worktree.is_none() && reason != DoneReason::Cancelled;
        let text = match with_worktree(report_result(&label, reason, report, error), worktree, &label).await {
            ToolOutput::Text(t) | ToolOutput::Error(t) => t,
            _ => String::new(),
        };
        if keep && let Some(events) = events {
            let kept = Parked { child, events, label, call_id, parent };
            parked.lock().expect("parked subagents").insert(id, kept);
        }
        finisher.finish(state, text);
    });
}

/// What a background subagent's log (its `job_output`) shows of an event.
fn log_line(event: &Event) -> Option<String> {
    match event {
        Event::ToolStart { tool, title, .. } if title.is_empty() => Some(format!("→ {tool}")),
        Event::ToolStart { tool, title, .. } => Some(format!("→ {tool} {title}")),
        Event::ToolDenied { tool, reason, .. } => Some(format!("  {tool} not run: {reason}")),
        Event::Error { message } => Some(format!("error: {message}")),
        _ => None,
    }
}

impl TaskRun {
    /// Runs the subagent to its report (the foreground: the call waits for it).
    pub(crate) async fn run(
        self,
        call_id: String,
        parent: crate::sink::EventSink,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let TaskRun { mut child, prompt, label, events, worktree, seat, .. } = self;
        let forwarding = tokio::spawn(forward(events, parent, call_id, label.clone(), None));
        let (reason, report) = Box::pin(child.run_for_report(&prompt, cancel)).await;
        // Its background commands end with it (and its event channel closes); its slot frees.
        drop(child);
        drop(seat);
        let (error, _) = forwarded(forwarding).await;
        with_worktree(report_result(&label, reason, report, error), worktree, &label).await
    }

    /// Starts the subagent as one of `jobs`, answering at once with the job's id; its report
    /// arrives as the job's note.
    pub(crate) fn start_job(
        self,
        call_id: String,
        parent: crate::sink::EventSink,
        jobs: &lembas_tools::Jobs,
        parked: &ParkedAgents,
    ) -> ToolOutput {
        let TaskRun { child, prompt, label, events, worktree, seat, agent, job, .. } = self;
        let stop = CancellationToken::new();
        let about = lembas_tools::AgentAbout::new(&agent, &child.cfg.model.id, child.id());
        let (id, log) = match jobs.start_agent(&label, about, stop.clone(), child.steer_handle()) {
            Ok(started) => started,
            Err(e) => return ToolOutput::Error(e),
        };
        let _ = job.set(lembas_protocol::jobs::JobRef { id: id.clone(), agent, description: label.clone() });
        let answer = format!(
            "Started {id}: the subagent \"{label}\" works in the background. Its report comes to you as a message when it ends; job_output {id} shows its progress meanwhile."
        );
        run_in_background(child, prompt, label, events, worktree, call_id, parent, stop, log, id, parked.clone(), seat);
        ToolOutput::Text(answer)
    }
}
