//! A reply's tool calls: parsed, judged, run together (at most `parallel.max` at once; a call
//! that waits on the person alone; calls on one file in order), then inserted in call order
//! through the context ledger.

use std::path::{Path, PathBuf};

use lembas_context::{ResultId, change_result, patch_result, recall};
use lembas_model::{CancellationToken, Message, ToolCall};
use lembas_permissions::{Call, Decision, always_pattern};
use lembas_progress::{Phase, short_what};
use lembas_spec::loop_spec;
use lembas_store::NewResult;
use lembas_tools::{ToolOutput, paths_of, run_file_tool};
use serde_json::Value;

use crate::Event;
use crate::phase::Phases;
use crate::session::{Entry, Session};
use crate::{Approval, ApprovalRequest};

/// The job tools, on this session's jobs.
async fn job_tool(jobs: &lembas_tools::Jobs, name: &str, args: &Value) -> ToolOutput {
    let id = args.get("id").and_then(Value::as_str).unwrap_or_default().trim();
    let result = match name {
        "job_list" => Ok(jobs.list()),
        _ if id.is_empty() => Err("`id` is required (job1, job2, …).".to_owned()),
        "job_output" => {
            let wait = args.get("wait").and_then(Value::as_u64).unwrap_or(0).min(600);
            jobs.output(id, std::time::Duration::from_secs(wait)).await
        }
        "job_send" => match args.get("input").and_then(Value::as_str) {
            Some(input) => jobs.send(id, input).await,
            None => Err("`input` is required.".to_owned()),
        },
        _ => jobs.stop(id).await,
    };
    result.map_or_else(ToolOutput::Error, ToolOutput::Text)
}

/// A call ready to run, or already answered.
enum Prepared {
    Run {
        name: String,
        args: Value,
        paths: Vec<PathBuf>,
        exclusive: bool,
        /// A line put before the result (the person corrected the command).
        note: Option<String>,
        /// A `task` call's subagent, made and waiting to run.
        task: Option<Box<crate::subagent::TaskRun>>,
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

/// The one-line title of a call: the command, the path, the pattern — the same live and when
/// a stored session is drawn again.
pub(crate) fn title_of(name: &str, args: &Value) -> String {
    let field = ["command", "path", "pattern", "id"].iter().find_map(|k| args.get(*k).and_then(Value::as_str));
    match (name, field) {
        ("apply_patch", _) => "patch".to_owned(),
        ("task", _) => short_what(args.get("description").and_then(Value::as_str).unwrap_or_default()),
        (_, Some(f)) => short_what(f),
        // An MCP tool's arguments are its own: shown as given, cut to a line.
        (n, None) if lembas_mcp::is_mcp_name(n) && args.as_object().is_some_and(|a| !a.is_empty()) => {
            short_what(&args.to_string())
        }
        _ => String::new(),
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

/// `bash`'s command line; `None` for every other tool.
fn command_of<'a>(name: &str, args: &'a Value) -> Option<&'a str> {
    if name == "bash" { args.get("command").and_then(Value::as_str) } else { None }
}

impl Session {
    /// Judges a call of `def` with `args` in the session's mode: the one place a call meets the
    /// permission rules, for the model's calls and for a file the person attaches.
    pub(crate) fn judge_call(&self, def: &lembas_spec::ToolDef, args: &Value) -> Judged {
        let paths = paths_of(&self.ws, &def.name, args);
        let real_paths: Vec<PathBuf> = paths.iter().map(|p| self.ws.real_path(p)).collect();
        let cwd = self.ws.real_path(&self.ws.resolve(args.get("cwd").and_then(Value::as_str).unwrap_or(".")));
        let ws = &self.ws;
        let real = |p: &Path| ws.real_path(p);
        let facts = Call { tool: &def.name, risk: def.risk, command: command_of(&def.name, args), paths: &real_paths };
        let verdict = self.judge.verdict(self.state.mode, &facts, &cwd, &real);
        Judged { verdict, paths, real_paths, cwd }
    }

    async fn prepare(&mut self, call: &ToolCall) -> Prepared {
        let args: Value = match serde_json::from_str(if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        }) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Prepared::Answer(ToolOutput::Error("The arguments must be a JSON object.".into())),
            Err(e) => {
                return Prepared::Answer(ToolOutput::Error(format!(
                    "The arguments of this call are not valid JSON ({e}); nothing was run. Call it again with a JSON object."
                )));
            }
        };
        let offered = self.tools.iter().any(|t| t.name == call.name);
        let def = lembas_spec::tool(&call.name)
            .filter(|d| offered || self.tools.iter().any(|t| t.name == d.name))
            .cloned()
            .or_else(|| self.mcp_tool_def(&call.name));
        let Some(def) = def else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            return Prepared::Answer(ToolOutput::Error(format!(
                "There is no tool called {} here. The tools are: {}.",
                call.name,
                names.join(", ")
            )));
        };
        let name = def.name.clone();
        if name == "recall" {
            return Prepared::Engine { name, args };
        }
        let Judged { verdict, paths, real_paths, cwd } = self.judge_call(&def, &args);
        let mode = self.state.mode;
        let command = command_of(&name, &args);
        let mut decision = verdict.decision;
        // Asked in every mode, and never remembered: a confirm-always tool, and what the judge
        // says holds once only (a change to what decides lembas' own permissions later).
        // skill_manage writes the person's own skills, which reach every later session.
        let confirm = def.confirm.as_deref() == Some("always") || name == "skill_manage" || verdict.once_only;
        if confirm && decision == Decision::Allow {
            decision = Decision::Ask;
        }
        let mut approved = false;
        match decision {
            Decision::Allow => {}
            Decision::Refuse(reason) => return self.denied(call, &name, reason),
            Decision::Ask if !self.cfg.approver.present() => {
                return self.denied(call, &name, unattended_refusal(&name, mode.as_str()));
            }
            Decision::Ask => {
                // Worked out off the async threads, as the tools themselves run: reading a file
                // may go through an editor that answers on this same runtime.
                let preview = {
                    let (ws, name, args) = (self.ws.clone(), name.clone(), args.clone());
                    tokio::task::spawn_blocking(move || crate::preview::call_preview(&ws, &name, &args))
                        .await
                        .ok()
                        .flatten()
                };
                let request = ApprovalRequest {
                    call_id: call.id.clone(),
                    tool: name.clone(),
                    title: title_of(&name, &args),
                    reaches: real_paths.iter().map(|p| p.display().to_string()).collect(),
                    agent: None,
                    once_only: confirm,
                    preview,
                    session_allows: (!confirm).then(|| crate::preview::session_scope(&name, command)),
                };
                let mut phases = Phases::new(self.events.clone());
                phases.set(Phase::WaitingForPerson {
                    what: lembas_progress::PersonWait::Approval,
                    tool: Some(name.clone()),
                });
                approved = true;
                match self.cfg.approver.ask(request).await {
                    Approval::Once => {}
                    Approval::Always if !confirm => {
                        let allowed: Vec<(String, Option<String>)> = match command {
                            Some(line) => lembas_permissions::command::split(line)
                                .iter()
                                .map(|part| ("bash".to_owned(), Some(always_pattern(&part.argv))))
                                .collect(),
                            None => vec![(name.clone(), None)],
                        };
                        // A subagent's card speaks for the whole session: its parent takes it up.
                        if let Some(of) = &self.subagent {
                            of.granted.lock().expect("granted").extend(allowed.iter().cloned());
                        }
                        self.state.always.extend(allowed);
                        self.judge = self.make_judge();
                    }
                    Approval::Always => {}
                    Approval::Edited { command: corrected } if name == "bash" => {
                        // The person's own line runs once — but never past the floor.
                        let mut args = args.clone();
                        args["command"] = Value::String(corrected.clone());
                        let facts = Call { tool: &name, risk: def.risk, command: Some(&corrected), paths: &real_paths };
                        let decision = self.judge.evaluate(mode, &facts, &cwd, &|p| self.ws.real_path(p));
                        if let Decision::Refuse(reason) = decision {
                            return self.denied(call, &name, reason);
                        }
                        let note = format!("(The person changed the command to: {corrected})");
                        return Prepared::Run {
                            name,
                            args,
                            paths,
                            exclusive: def.exclusive,
                            note: Some(note),
                            task: None,
                            approved: true,
                        };
                    }
                    Approval::Edited { .. } => {}
                    Approval::Deny { feedback } => {
                        let mut reason = "The person declined this call; it was not run.".to_owned();
                        if let Some(words) = feedback.filter(|w| !w.trim().is_empty()) {
                            reason.push_str(&format!(" They said: {words}"));
                        }
                        return self.denied(call, &name, reason);
                    }
                }
            }
        }
        if matches!(name.as_str(), "plan_write" | "plan_update" | "plan_submit" | "ask_user") {
            return Prepared::Engine { name, args };
        }
        let task = if name == "task" {
            match self.prepare_task(&call.id, &args) {
                Ok(run) => Some(Box::new(run)),
                Err(e) => return Prepared::Answer(ToolOutput::Error(e)),
            }
        } else {
            None
        };
        Prepared::Run { name, args, paths, exclusive: def.exclusive, note: None, task, approved }
    }

    fn denied(&self, call: &ToolCall, name: &str, reason: String) -> Prepared {
        self.emit(Event::ToolDenied { call_id: call.id.clone(), tool: name.to_owned(), reason: reason.clone() });
        Prepared::Answer(ToolOutput::Error(reason))
    }

    /// Runs a reply's calls; answers the tool messages and the results to store, in call order.
    pub(crate) async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> (Vec<Entry>, Vec<NewResult>) {
        let mut prepared = Vec::with_capacity(calls.len());
        for call in calls {
            let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            let paths = paths_of(&self.ws, &call.name, &args).iter().map(|p| p.display().to_string()).collect();
            self.emit(Event::ToolStart {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                title: title_of(&call.name, &args),
                args,
                paths,
            });
            prepared.push(self.prepare(call).await);
        }

        // Files a call will change are kept as they are first, for an undo.
        for prepared in &prepared {
            if let Prepared::Run { name, paths, .. } = prepared {
                self.back_up(name, paths);
            }
        }

        let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let placing: Vec<crate::batches::Placing<'_>> = prepared
            .iter()
            .enumerate()
            .filter_map(|(index, p)| match p {
                Prepared::Run { paths, exclusive, .. } => {
                    Some(crate::batches::Placing { index, paths, exclusive: *exclusive })
                }
                _ => None,
            })
            .collect();
        let batches = crate::batches::batches(&placing, loop_spec().parallel.max);
        for batch in batches {
            // The subagents of this batch, taken out to run (each runs once).
            let mut tasks: Vec<Option<Box<crate::subagent::TaskRun>>> = batch
                .iter()
                .map(|&i| match &mut prepared[i] {
                    Prepared::Run { task, .. } => task.take(),
                    _ => None,
                })
                .collect();
            let waiting = tasks.iter().flatten().filter(|t| !t.background).count() as u64;
            if waiting > 0 {
                phases.set(Phase::WaitingForSubagents { running: waiting });
            } else if let Some(&first) = batch.first()
                && let Prepared::Run { name, args, .. } = &prepared[first]
            {
                phases.set(Phase::RunningTool {
                    tool: name.clone(),
                    what: Some(title_of(name, args)).filter(|w| !w.is_empty()),
                });
            }
            let runs = batch.iter().zip(tasks.iter_mut()).map(|(&i, task)| {
                let Prepared::Run { name, args, approved, .. } = &prepared[i] else {
                    unreachable!("batches hold runnable calls")
                };
                let task = task.take();
                let bash = (name == "bash").then(|| self.command_runner(*approved, &calls[i].id));
                let call_id = calls[i].id.clone();
                let events = self.events.clone();
                let ws = self.ws.clone();
                let (name, args) = (name.clone(), args.clone());
                let cancel = cancel.clone();
                let jobs = self.jobs.clone();
                let parked = self.parked.clone();
                let mcp = self.cfg.mcp.clone();
                let skills = self.cfg.skills.clone();
                async move {
                    if cancel.is_cancelled() {
                        return ToolOutput::Error("Not run: the turn was interrupted.".into());
                    }
                    if let Some(task) = task {
                        return if task.background {
                            task.start_job(call_id, events, &jobs, &parked)
                        } else {
                            task.run(call_id, events, &cancel).await
                        };
                    }
                    match name.as_str() {
                        "bash" => {
                            let runner = bash.expect("made for bash");
                            return runner.run(&ws, &args, &cancel, &jobs).await;
                        }
                        "job_list" | "job_output" | "job_send" | "job_stop" => {
                            // A message to a background subagent that has reported wakes it.
                            if name == "job_send"
                                && let (Some(id), Some(input)) =
                                    (args.get("id").and_then(Value::as_str), args.get("input").and_then(Value::as_str))
                                && let Some(woke) = crate::subagent::wake(&parked, &jobs, id, input)
                            {
                                return woke;
                            }
                            return job_tool(&jobs, &name, &args).await;
                        }
                        "skills_list" | "skill_view" | "skill_manage" => {
                            return tokio::task::spawn_blocking(move || {
                                lembas_tools::run_skill_tool(&skills, &name, &args)
                            })
                            .await
                            .unwrap_or_else(|e| ToolOutput::Error(format!("The tool failed: {e}")));
                        }
                        mcp_name if lembas_mcp::is_mcp_name(mcp_name) => {
                            let Some(hub) = mcp else {
                                return ToolOutput::Error(format!("No MCP server offers {mcp_name} in this session."));
                            };
                            let out = hub.call(mcp_name, args, &cancel).await;
                            return match out {
                                out if out.is_error => ToolOutput::Error(out.text),
                                out if out.images.is_empty() => ToolOutput::Text(out.text),
                                out => ToolOutput::TextAndImages { text: out.text, images: out.images },
                            };
                        }
                        _ => {}
                    }
                    tokio::task::spawn_blocking(move || run_file_tool(&ws, &name, &args))
                        .await
                        .unwrap_or_else(|e| ToolOutput::Error(format!("The tool failed: {e}")))
                }
            });
            for (i, output) in batch.iter().zip(futures::future::join_all(runs).await) {
                outputs[*i] = Some(output);
            }
        }

        // Insertion, in call order: ids, brackets, stubs and caps.
        let mut entries = Vec::with_capacity(calls.len());
        let mut results = Vec::with_capacity(calls.len());
        // Images go to the model in a message of their own after the results (a tool message
        // carries text only).
        let mut images = Vec::new();
        for ((call, prepared), output) in calls.iter().zip(prepared).zip(outputs) {
            let id = self.state.ids.next_id();
            let (name, args, output) = match prepared {
                Prepared::Run { name, args, note: Some(note), .. } => {
                    let output = match output.unwrap_or(ToolOutput::Error("Not run.".into())) {
                        ToolOutput::Text(t) => ToolOutput::Text(format!("{note}\n{t}")),
                        ToolOutput::Error(t) => ToolOutput::Error(format!("{note}\n{t}")),
                        other => other,
                    };
                    (name, args, output)
                }
                Prepared::Run { name, args, .. } => {
                    (name, args, output.unwrap_or(ToolOutput::Error("Not run.".into())))
                }
                Prepared::Engine { name, args } => {
                    let output = self.engine_tool(&call.id, &name, &args).await;
                    (name, args, output)
                }
                Prepared::Answer(answer) => (call.name.clone(), Value::Null, answer),
            };
            let is_error = output.is_error();
            let output = match output {
                ToolOutput::Image { call_path, mime, data, .. } => {
                    use base64::Engine as _;
                    images.push(format!(
                        "data:{mime};base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(&data)
                    ));
                    ToolOutput::Text(format!(
                        "{call_path}: {mime}, {} bytes. The image follows this result.",
                        data.len()
                    ))
                }
                ToolOutput::TextAndImages { text, images: pictures } if self.cfg.model.vision == Some(true) => {
                    let n = pictures.len();
                    images.extend(pictures);
                    let follow = if n == 1 { "The image follows" } else { "The images follow" };
                    ToolOutput::Text(format!("{text}\n({follow} this result.)"))
                }
                ToolOutput::TextAndImages { text, .. } => {
                    ToolOutput::Text(format!("{text}\n(Images not sent: this model does not take images.)"))
                }
                other => other,
            };
            let read_file = match &output {
                ToolOutput::Read { file, .. } => Some(file.clone()),
                _ => None,
            };
            let mut skill_notes = String::new();
            let diffs = match &output {
                ToolOutput::Changes(changes) => {
                    let paths: Vec<PathBuf> = changes
                        .iter()
                        .map(|c| match c {
                            lembas_context::FileChange::Created { path, .. }
                            | lembas_context::FileChange::Changed { path, .. }
                            | lembas_context::FileChange::Deleted { path } => self.ws.resolve(path),
                        })
                        .collect();
                    self.model_changed(&paths);
                    for path in &paths {
                        if let Some(note) = lembas_tools::skill_written_note(&self.cfg.skills, path) {
                            skill_notes.push('\n');
                            skill_notes.push_str(&note);
                        }
                    }
                    changes.iter().map(|c| self.file_diff(c)).collect()
                }
                _ => Vec::new(),
            };
            let (mut text, mut stored) = if name == "recall" && !is_error {
                let answer = self.recall_text(id, &args);
                (answer.clone(), answer)
            } else {
                self.insert(id, &name, &args, output)
            };
            // A note the tool adds follows the diff (context.md §5).
            text.push_str(&skill_notes);
            stored.push_str(&skill_notes);
            if let Some(nearby) = read_file.and_then(|f| self.nearby_instructions(&f)) {
                text.push_str(&nearby);
                stored.push_str(&nearby);
            }
            self.emit(Event::ToolEnd {
                call_id: call.id.clone(),
                tool: name.clone(),
                result_id: Some(id.to_string()),
                text: text.clone(),
                is_error,
                diffs,
            });
            results.push(NewResult { id: id.0, tool: name, text: stored });
            entries.push(Entry {
                message: Message::Tool { tool_call_id: call.id.clone(), content: text },
                turn: false,
                summary: false,
                failed: is_error,
                wire: Default::default(),
            });
        }
        if !images.is_empty() {
            let message = Message::User { content: "[The images the results above refer to:]".into(), images };
            entries.push(Entry { message, turn: false, summary: false, failed: false, wire: Default::default() });
        }
        (entries, results)
    }

    /// A tool's output as the model sees it, and what is stored.
    fn insert(&mut self, id: ResultId, name: &str, args: &Value, output: ToolOutput) -> (String, String) {
        let ledger = &mut self.state.ledger;
        match output {
            ToolOutput::Read { call_path, file, content, offset, limit } => {
                match ledger.read(id, &call_path, &file, &content, offset, limit) {
                    Ok(inserted) => (inserted.text, inserted.stored),
                    Err(e) => {
                        let message = format!("{} ({})", e, file.display());
                        let inserted = ledger.output(id, name, args, &message);
                        (inserted.text, inserted.stored)
                    }
                }
            }
            ToolOutput::Changes(changes) => {
                let inserted = if changes.len() == 1 && name != "apply_patch" {
                    change_result(id, &changes[0])
                } else {
                    patch_result(id, &changes)
                };
                (inserted.text, inserted.stored)
            }
            ToolOutput::Image { .. } | ToolOutput::TextAndImages { .. } => {
                unreachable!("images are turned into text before insertion")
            }
            ToolOutput::Text(text) | ToolOutput::Error(text) => {
                let inserted = ledger.output(id, name, args, &text);
                (inserted.text, inserted.stored)
            }
        }
    }

    /// The tools the engine answers itself. `recall` is answered at insertion (it needs its own
    /// id), so here it is a placeholder.
    async fn engine_tool(&mut self, call_id: &str, name: &str, args: &Value) -> ToolOutput {
        match name {
            "plan_write" => match crate::Plan::from_args(args) {
                Ok(plan) => {
                    let text = plan.render();
                    self.state.plan = Some(plan.clone());
                    self.emit(Event::Plan { plan });
                    ToolOutput::Text(text)
                }
                Err(e) => ToolOutput::Error(e),
            },
            "plan_update" => {
                let Some(plan) = self.state.plan.as_mut() else {
                    return ToolOutput::Error("There is no plan yet: write it with plan_write first.".into());
                };
                match plan.update(args) {
                    Ok(()) => {
                        let plan = plan.clone();
                        let text = plan.render();
                        self.emit(Event::Plan { plan });
                        ToolOutput::Text(text)
                    }
                    Err(e) => ToolOutput::Error(e),
                }
            }
            "plan_submit" => self.plan_submit(call_id).await,
            "ask_user" => {
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
                match self.cfg.approver.question(crate::Question { question, options }).await {
                    crate::Reply::Answered { words } => ToolOutput::Text(format!("The person answered: {words}")),
                    crate::Reply::Silent => ToolOutput::Error(
                        "The person did not answer: decide yourself, and say what you assumed.".into(),
                    ),
                    crate::Reply::NotAsked => ToolOutput::Error(
                        "This question could not be put to the person here: decide yourself, and say what you assumed."
                            .into(),
                    ),
                }
            }
            _ => ToolOutput::Text(String::new()),
        }
    }

    async fn plan_submit(&mut self, call_id: &str) -> ToolOutput {
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

    /// Instruction files below the start directory that reach the model the first time
    /// something under their directory is read ("nearby instructions"), as a block to add to
    /// that read's result; each is handed over once per session.
    fn nearby_instructions(&mut self, file: &std::path::Path) -> Option<String> {
        let below = file.parent()?.strip_prefix(&self.ws.started).ok()?;
        let mut dir = self.ws.started.clone();
        let mut blocks = Vec::new();
        for part in below.components() {
            dir.push(part);
            let readable = |p: &str| {
                let path = std::path::Path::new(p);
                path.is_file() && self.ws.contains(path)
            };
            let Some(found) = lembas_fsview::instructions::in_directory(&dir.to_string_lossy(), &readable) else {
                continue;
            };
            let found = PathBuf::from(found);
            if !self.nearby_seen.insert(found.clone()) {
                continue;
            }
            if let Ok(body) = std::fs::read_to_string(&found)
                && !body.trim().is_empty()
            {
                let name = lembas_paths::prompt_name(&found, &self.ws.root, self.cfg.user_home.as_deref());
                blocks.push(format!("\n\n<instructions path=\"{name}\">\n{}\n</instructions>", body.trim_end()));
            }
        }
        (!blocks.is_empty()).then(|| blocks.concat())
    }

    fn file_diff(&self, change: &lembas_context::FileChange) -> crate::FileDiff {
        use lembas_context::FileChange;
        let (path, old, new) = match change {
            FileChange::Created { path, after } => (path, None, Some(after.clone())),
            FileChange::Changed { path, before, after } => (path, Some(before.clone()), Some(after.clone())),
            FileChange::Deleted { path } => (path, None, None),
        };
        crate::FileDiff { path: self.ws.resolve(path).display().to_string(), old, new }
    }

    /// `recall`: a stored result of this session, shown again.
    fn recall_text(&self, id: ResultId, args: &Value) -> String {
        let target = args.get("id").and_then(Value::as_str).unwrap_or_default();
        let number = |key: &str| args.get(key).and_then(Value::as_u64).map(|n| n as usize);
        let stored = target.parse::<ResultId>().ok().and_then(|t| self.cfg.store.result(&self.id, t.0).ok().flatten());
        recall(id, target, stored.as_deref(), number("offset"), number("limit"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_calls_title_is_its_command_path_or_an_mcp_tools_arguments() {
        assert_eq!(title_of("bash", &json!({"command": "cargo test\nmore"})), "cargo test");
        assert_eq!(title_of("mcp__peer__add", &json!({"a": 2, "b": 40})), r#"{"a":2,"b":40}"#);
        assert_eq!(title_of("mcp__fs__read_text_file", &json!({"path": "a.txt"})), "a.txt");
        assert_eq!(title_of("mcp__peer__die", &json!({})), "");
    }
}
