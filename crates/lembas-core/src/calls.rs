//! A reply's tool calls run: each made ready (`prepare.rs`), placed in batches (`batches.rs`:
//! at most `parallel.max` at once, a call that waits on the person alone, calls on one file in
//! order), run together, then inserted in call order through the context ledger (`insert.rs`).

use std::path::PathBuf;

use lembas_model::{CancellationToken, Message, ToolCall};
use lembas_progress::Phase;
use lembas_spec::loop_spec;
use lembas_store::NewResult;
use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::Event;
use crate::handlers::{Call, CallTools, Runs, handler};
use crate::phase::Phases;
use crate::prepare::Prepared;
use crate::session::Session;
use crate::session::history::Entry;

impl Session {
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
            let tool = handler(&call.name);
            let paths = tool.paths(&self.ws, &args).iter().map(|p| p.display().to_string()).collect();
            self.emit(Event::ToolStart {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                title: (tool.title)(&args),
                args,
                paths,
            });
            prepared.push(self.prepare(call).await);
        }

        // Before the turn's first call that may change the project, its files are kept, for an
        // undo.
        if prepared.iter().any(|p| matches!(p, Prepared::Run { name, .. } if handler(name).may_change_the_project())) {
            self.snapshot_before().await;
        }

        let outputs = self.run_batches(calls, &mut prepared, cancel, phases).await;
        self.insert_outputs(calls, prepared, outputs).await
    }

    /// Runs the calls that are to run, batch by batch; each one's output, by call.
    async fn run_batches(
        &mut self,
        calls: &[ToolCall],
        prepared: &mut [Prepared],
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Vec<Option<ToolOutput>> {
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
            let mut tasks: Vec<Option<Box<crate::session::subagent::TaskRun>>> = batch
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
                let title = (handler(name).title)(args);
                phases.set(Phase::RunningTool {
                    tool: name.clone(),
                    what: Some(lembas_progress::short_what(&title)).filter(|w| !w.is_empty()),
                });
            }
            let runs = batch.iter().zip(tasks.iter_mut()).map(|(&i, task)| {
                let Prepared::Run { name, args, approved, .. } = &prepared[i] else {
                    unreachable!("batches hold runnable calls")
                };
                let task = task.take();
                let command =
                    handler(name).command(args).map(|line| self.command_runner(*approved, &calls[i].id, line));
                let tools = CallTools {
                    events: self.events.clone(),
                    ws: self.ws.clone(),
                    jobs: self.jobs.clone(),
                    parked: self.parked.clone(),
                    mcp: self.cfg.mcp.clone(),
                    skills: self.cfg.skills.clone(),
                    notes: self.cfg.notes.clone(),
                    knowledge: self.cfg.knowledge.clone(),
                    knowledge_scope: self.cfg.knowledge_scope.clone(),
                    memory: self.role.memory().cloned(),
                    web: self.web_call(name, args),
                };
                let call =
                    Call { id: calls[i].id.clone(), name: name.clone(), args: args.clone(), cancel: cancel.clone() };
                crate::handlers::run_one(tools, call, task, command)
            });
            for (i, output) in batch.iter().zip(futures::future::join_all(runs).await) {
                outputs[*i] = Some(output);
            }
        }
        outputs
    }

    /// What a web call runs with: whether its URL may reach the person's own network, and the
    /// rules (as they stand now, in this mode) that judge each redirect before it is followed.
    fn web_call(&self, name: &str, args: &serde_json::Value) -> crate::handlers::WebCall {
        let Some(url) = handler(name).url(args) else {
            return crate::handlers::WebCall { setup: self.cfg.web.clone(), ..Default::default() };
        };
        let (judge, mode, tool) = (self.judge.clone(), self.state.mode, name.to_owned());
        let redirects = lembas_web::RedirectJudge(std::sync::Arc::new(move |from: &str, to: &str| {
            judge.redirect(mode, &tool, from, to)
        }));
        crate::handlers::WebCall {
            setup: self.cfg.web.clone(),
            private_ok: self.judge.opens_private(name, url),
            redirects: Some(redirects),
        }
    }

    /// The outputs inserted in call order through the context ledger: ids, brackets, stubs and
    /// caps; the tool messages and the results to store.
    async fn insert_outputs(
        &mut self,
        calls: &[ToolCall],
        prepared: Vec<Prepared>,
        outputs: Vec<Option<ToolOutput>>,
    ) -> (Vec<Entry>, Vec<NewResult>) {
        let mut entries = Vec::with_capacity(calls.len());
        let mut results = Vec::with_capacity(calls.len());
        // Images go to the model in a message of their own after the results (a tool message
        // carries text only).
        let mut images = Vec::new();
        for ((call, prepared), output) in calls.iter().zip(prepared).zip(outputs) {
            let id = self.state.ids.next_id();
            let ran = !matches!(prepared, Prepared::Answer(_));
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
                    let output = match handler(&name).runs {
                        Runs::Engine(run) => run(self, &call.id, &args).await,
                        Runs::AtOnce(answer) | Runs::Team(answer) => answer(self, &call.id, &args),
                        // Answered below, where its own id is known.
                        _ => ToolOutput::Text(String::new()),
                    };
                    (name, args, output)
                }
                Prepared::Answer(answer) => (call.name.clone(), Value::Null, answer),
            };
            let is_error = output.is_error();
            let output = self.for_the_model(output, &mut images);
            let read_file = match &output {
                ToolOutput::Read { file, .. } => Some(file.clone()),
                _ => None,
            };
            let (diffs, skill_notes) = self.changed_files(&output);
            let tool = handler(&name);
            let (mut text, mut stored) = if matches!(tool.runs, Runs::Recall) && !is_error {
                let answer = self.recall_text(id, &args);
                (answer.clone(), answer)
            } else {
                self.insert(id, &name, &args, output)
            };
            // A note the tool adds follows the diff (context.md §5).
            text.push_str(&skill_notes);
            stored.push_str(&skill_notes);
            // What the person's PostToolUse hooks say of it, after it.
            if ran
                && !is_error
                && let Some(said) = self.post_tool_hooks(&name, &args, &text).await
            {
                text.push_str(&said);
                stored.push_str(&said);
            }
            if let Some(nearby) = read_file.and_then(|f| self.nearby_instructions(&f)) {
                text.push_str(&nearby);
                stored.push_str(&nearby);
            }
            self.emit(Event::ToolEnd {
                call_id: call.id.clone(),
                tool: name.clone(),
                result_id: Some(id.to_string()),
                outcome: crate::handlers::describe::outcome(tool, &text, is_error),
                text: text.clone(),
                is_error,
                diffs,
            });
            results.push(NewResult { id: id.0, tool: name, text: stored });
            let message = Message::Tool { tool_call_id: call.id.clone(), content: text };
            entries.push(Entry { failed: is_error, ..Entry::of(message) });
        }
        if !images.is_empty() {
            let message = Message::User { content: "[The images the results above refer to:]".into(), images };
            entries.push(Entry::of(message));
        }
        (entries, results)
    }

    /// An output as the model reads it: a picture becomes a line that says it follows (the
    /// picture goes in `images`, sent after the results), and pictures a model that does not
    /// see cannot take are said to be left out.
    fn for_the_model(&self, output: ToolOutput, images: &mut Vec<String>) -> ToolOutput {
        match output {
            ToolOutput::Image { call_path, mime, data, .. } => {
                use base64::Engine as _;
                images.push(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(&data)));
                ToolOutput::Text(format!("{call_path}: {mime}, {} bytes. The image follows this result.", data.len()))
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
        }
    }

    /// What a call that changed files did: each change's diff for the person, and the notes
    /// for the model about skills it wrote (the files are marked as the model's changes).
    fn changed_files(&mut self, output: &ToolOutput) -> (Vec<crate::FileDiff>, String) {
        let ToolOutput::Changes(changes) = output else { return (Vec::new(), String::new()) };
        let paths: Vec<PathBuf> = changes
            .iter()
            .map(|c| match c {
                lembas_context::FileChange::Created { path, .. }
                | lembas_context::FileChange::Changed { path, .. }
                | lembas_context::FileChange::Deleted { path } => self.ws.resolve(path),
            })
            .collect();
        self.model_changed(&paths);
        let mut skill_notes = String::new();
        for path in &paths {
            if let Some(note) = lembas_tools::skill_written_note(&self.cfg.skills, path) {
                skill_notes.push('\n');
                skill_notes.push_str(&note);
            }
        }
        (changes.iter().map(|c| self.file_diff(c)).collect(), skill_notes)
    }
}
