//! One prompt: the steps of a turn, the wrap-up at the backstop, and compaction.

use std::time::Instant;

use lembas_model::{CancellationToken, ChatRequest, Message, ModelError, Reply, StreamEvent};
use lembas_progress::{ModelWait, Phase, StopReason};
use lembas_spec::{loop_spec, render};
use lembas_store::UsageRow;

use crate::phase::Phases;
use crate::prompt::{text, title_from};
use crate::room::{Ask, Room};
use crate::session::Session;
use crate::session::history::Entry;
use crate::{DoneReason, EngineError, Event, now_ms};

impl Session {
    /// A reply with no calls whose text holds them — an open model's server left them there
    /// (`lembas_model::text_calls`) — gets them as calls, taken out of its text, so the turn
    /// goes on; only calls of the tools this session offers count.
    fn recover_text_calls(&self, reply: &mut lembas_model::Reply) {
        if !reply.tool_calls.is_empty() {
            return;
        }
        let tools = &self.tools;
        let schema = |name: &str| tools.iter().find(|t| t.name == name).map(|t| t.parameters.clone());
        if let Some(found) = lembas_model::text_calls::recover(&reply.text, &schema) {
            reply.text = found.text;
            reply.reasoning.push_str(&found.reasoning);
            reply.tool_calls = found.calls;
        }
    }

    /// A subagent's one turn: how it ended, and its final reply (its report).
    pub(crate) async fn run_for_report(&mut self, task: &str, cancel: &CancellationToken) -> (DoneReason, String) {
        self.turn(task, &[], false, cancel).await
    }

    pub(crate) async fn turn(
        &mut self,
        words: &str,
        attachments: &[lembas_protocol::Attachment],
        machine: bool,
        cancel: &CancellationToken,
    ) -> (DoneReason, String) {
        let mut phases = Phases::new(self.events.clone());
        self.stopped_by = None;
        // The main agent of a team takes a slot of its model first: first in line, but after
        // the subagents already working on it.
        let lead = self.leads_team().map(|seat| seat.hub.clone());
        if let Some(hub) = &lead {
            hub.say_pending();
            let model = self.cfg.model.id.clone();
            hub.lead_turn_begins(|| phases.set(Phase::WaitingForModel { model, reason: ModelWait::Slots })).await;
        }
        let done = self.turn_holding_slot(words, attachments, machine, cancel, &mut phases).await;
        if let Some(hub) = &lead {
            hub.lead_turn_ends();
        }
        done
    }

    async fn turn_holding_slot(
        &mut self,
        words: &str,
        attachments: &[lembas_protocol::Attachment],
        machine: bool,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> (DoneReason, String) {
        let (reason, text, steps) = match self.run_prompt(words, attachments, machine, cancel, phases).await {
            Ok(done) => done,
            Err((error, steps)) => {
                let (reason, message) = match error {
                    EngineError::Model(ModelError::Cancelled) => (DoneReason::Cancelled, None),
                    other => (DoneReason::Failed, Some(other.to_string())),
                };
                if let Some(message) = message {
                    phases.set(Phase::Failed { reason: message.lines().next().unwrap_or("").to_owned() });
                    self.emit(Event::Error { message });
                }
                (reason, String::new(), steps)
            }
        };
        match reason {
            DoneReason::Answered => phases.clear(),
            DoneReason::Cancelled => phases.set(Phase::Stopped { reason: Some(StopReason::Person) }),
            DoneReason::Limit => {
                // A budget is named as one, never as the step limit.
                let limit = self.stopped_by.unwrap_or("steps");
                let why = if matches!(limit, "tokens" | "seconds") { StopReason::Budget } else { StopReason::Steps };
                phases.set(Phase::Stopped { reason: Some(why) });
                if let Some(name) = loop_spec().budgets.limit.get(limit) {
                    self.emit(Event::Notice {
                        message: format!("Stopped at the {name}: the answer says what was done so far."),
                    });
                }
            }
            DoneReason::Failed => {}
        }
        self.snapshot_after().await;
        // A change made elsewhere meanwhile (the person's chats, /memory) reaches the next message.
        self.reread_memory();
        let usage = std::mem::take(&mut self.turn_usage);
        let done = Event::Done { reason, text: text.clone(), steps, session: self.id.clone(), usage };
        self.record_answer(&done);
        self.emit(done);
        (reason, text)
    }

    async fn run_prompt(
        &mut self,
        words: &str,
        attachments: &[lembas_protocol::Attachment],
        machine: bool,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<(DoneReason, String, u32), (EngineError, u32)> {
        self.open_turn(words, attachments, machine).await.map_err(|e| (e, 0))?;
        self.sandbox_unprepared = true;
        let mut steps = 0;
        let started = Instant::now();
        self.prompt_tokens = 0;
        let mut nudged = Nudged::default();
        let mut sent_on = 0;
        loop {
            if cancel.is_cancelled() {
                return Ok((DoneReason::Cancelled, String::new(), steps));
            }
            self.deliver_at_step_boundary(steps).map_err(|e| (e, steps))?;
            if let Some(limit) = self.limit_reached(steps, started) {
                self.stopped_by = Some(limit);
                let text = self.wrap_up(limit, cancel, phases).await.map_err(|e| (e, steps))?;
                return Ok((DoneReason::Limit, text, steps));
            }
            if let Some((reason, text)) = self.make_room(cancel, phases).await.map_err(|e| (e, steps))? {
                return Ok((reason, text, steps));
            }
            steps += 1;
            self.emit(Event::Step { n: steps });
            let mut reply = self.ask_model(cancel, phases).await.map_err(|e| (e, steps))?;
            self.recover_text_calls(&mut reply);
            let assistant = Entry::of(Message::Assistant {
                content: reply.text.clone(),
                reasoning: (!reply.reasoning.is_empty()).then(|| reply.reasoning.clone()),
                tool_calls: reply.tool_calls.clone(),
            });
            if reply.tool_calls.is_empty() {
                match self.reply_without_calls(reply, assistant, &mut nudged, phases) {
                    Ok(Some((DoneReason::Answered, text))) => {
                        // The person's Stop hooks may send the turn on, a few times at most.
                        match self.sent_on_by_hooks(&mut sent_on).await {
                            Ok(true) => continue,
                            Ok(false) => return Ok((DoneReason::Answered, text, steps)),
                            Err(e) => return Err((e, steps)),
                        }
                    }
                    Ok(Some((reason, text))) => return Ok((reason, text, steps)),
                    Ok(None) => continue,
                    Err(e) => return Err((e, steps)),
                }
            }
            let (entries, results) = self.run_calls(&reply.tool_calls, cancel, phases).await;
            self.take_up_grants();
            self.report_jobs();
            let mut step = vec![assistant];
            step.extend(entries);
            self.commit(step, results).map_err(|e| (e, steps))?;
            if cancel.is_cancelled() {
                return Ok((DoneReason::Cancelled, String::new(), steps));
            }
            if let Some(end) = self.after_step(cancel, phases).await.map_err(|e| (e, steps))? {
                return Ok((end.0, end.1, steps));
            }
        }
    }

    /// A turn begins: the prompt is said (and names the session, when it is its first), what
    /// joins it since the last turn is taken up, the undo point marked, and the person's
    /// message — their words, what they attached, the session note — stored.
    async fn open_turn(
        &mut self,
        words: &str,
        attachments: &[lembas_protocol::Attachment],
        machine: bool,
    ) -> Result<(), EngineError> {
        // The person's hooks first: a prompt they block is neither said nor kept.
        let hooked = match machine || self.role.is_subagent() {
            true => String::new(),
            false => self.prompt_hooks(words).await.map_err(EngineError::Blocked)?,
        };
        self.emit(Event::Prompt { text: words.to_owned(), machine });
        self.window_room().map_err(EngineError::Window)?;
        if !machine && !self.role.is_subagent() {
            self.note_named(words);
        }
        if self.fresh && !machine {
            self.fresh = false;
            self.title = title_from(words);
            self.cfg.store.rename(&self.id, &self.title)?;
            self.emit(Event::Title { title: self.title.clone() });
        }
        // What the person allowed on a background subagent's card since the last turn.
        self.take_up_grants();
        // A server that connected since the last turn joins now, so its instructions are in
        // this message's note.
        self.take_late_mcp_servers().await?;
        self.take_memory().await?;
        if !machine && !self.role.is_subagent() {
            // Where an undo goes back to: before this turn's first message.
            self.mark_turn()?;
            self.snapshot_ahead().await;
        }
        // What the person ran themselves since the last prompt comes with this one.
        let mut attachments = attachments.to_vec();
        attachments.extend(std::mem::take(&mut self.person_ran));
        let attached = self.attach(&attachments);
        let now = self.facts_now();
        // The note closes the message: what was attached belongs with the words.
        let typed = (!attached.text.is_empty() || !hooked.is_empty()).then(|| words.to_owned());
        let words = format!("{words}{}{hooked}", attached.text);
        let mut content = match self.state.told.note(&now) {
            Some(note) => format!("{words}\n\n{note}"),
            None => words,
        };
        // A project with no instruction file: the spec's task to make one, once a session, on
        // the person's first message (never a subagent's; never where a small window left out
        // ask_user, which the task asks through).
        if !machine
            && !self.role.is_subagent()
            && !self.state.agents_nudged
            && crate::handlers::offers(&self.tools, "ask_user")
            && !self.has_instruction_file()
        {
            self.state.agents_nudged = true;
            let task = render(text("tasks/init.md"), &[("git_question", text("tasks/git_question.md").trim())]);
            content = format!("{content}\n\n{}", task.trim_end());
        }
        let mut first = Entry::user(content, true);
        first.typed = typed;
        if let Message::User { images, .. } = &mut first.message {
            *images = attached.images;
        }
        self.commit(vec![first], attached.results)
    }

    /// Deliveries at a step boundary: settings the person changed, words they (or the team)
    /// added, jobs that ended.
    fn deliver_at_step_boundary(&mut self, steps: u32) -> Result<(), EngineError> {
        self.apply_changes();
        let steered = std::mem::take(&mut *self.steer.lock().expect("steer queue"));
        if !self.role.is_subagent() {
            for words in &steered {
                self.note_named(words);
                self.emit(Event::Steered { text: words.clone() });
            }
        }
        let mut delivered: Vec<Entry> = if self.role.seat().is_some() && self.role.is_subagent() {
            // A subagent's messages at one step go in one user message, in room order.
            (!steered.is_empty()).then(|| Entry::user(steered.join("\n\n"), false)).into_iter().collect()
        } else {
            steered.into_iter().map(|w| Entry::user(w, false)).collect()
        };
        if steps > 0
            && let Some(note) = self.job_notes()
        {
            delivered.push(Entry::user(note, false));
        }
        if delivered.is_empty() { Ok(()) } else { self.commit(delivered, Vec::new()) }
    }

    /// The limit the turn has reached, if any: its steps, its tokens, its seconds.
    fn limit_reached(&self, steps: u32, started: Instant) -> Option<&'static str> {
        if steps >= self.cfg.max_steps {
            Some("steps")
        } else if self.cfg.budget_tokens.is_some_and(|b| self.prompt_tokens >= b) {
            Some("tokens")
        } else if self.cfg.budget_seconds.is_some_and(|b| started.elapsed().as_secs() >= b) {
            Some("seconds")
        } else {
            None
        }
    }

    /// The step's request. When the server refuses the conversation for its length: the window
    /// it names is learnt, the conversation compacted, and the request made once more (a
    /// subagent does not compact).
    async fn ask_model(
        &mut self,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<lembas_model::Reply, EngineError> {
        match self.request(None, cancel, phases).await {
            Err(EngineError::Model(lembas_model::ModelError::Rejected { message, .. }))
                if lembas_model::refused_for_length(&message) && !self.role.is_subagent() =>
            {
                if let Some(window) = lembas_model::window_in_refusal(&message) {
                    self.state.learned_window = Some(window);
                    self.report_context();
                }
                self.compact_with(cancel, phases).await?;
                self.request(None, cancel, phases).await
            }
            other => other,
        }
    }

    /// A reply with no calls: the answer, which ends the turn — unless it was empty or cut off,
    /// when the model is nudged to go on once (`None`: the turn goes on); a second time, the
    /// turn ends without an answer.
    fn reply_without_calls(
        &mut self,
        reply: lembas_model::Reply,
        assistant: Entry,
        nudged: &mut Nudged,
        phases: &mut Phases,
    ) -> Result<Option<(DoneReason, String)>, EngineError> {
        let cut = reply.finish_reason == Some(lembas_model::FinishReason::Length);
        let empty = reply.text.trim().is_empty();
        let nudges = &loop_spec().nudges;
        let (nudge, already) = match (cut, empty) {
            (true, _) => (&nudges.cut_off, &mut nudged.cut),
            (false, true) => (&nudges.empty_reply, &mut nudged.empty),
            (false, false) => {
                self.commit(vec![assistant], Vec::new())?;
                return Ok(Some((DoneReason::Answered, reply.text)));
            }
        };
        if !*already {
            *already = true;
            let nudge = Entry::user(nudge.clone(), false);
            self.commit(vec![assistant, nudge], Vec::new())?;
            return Ok(None);
        }
        // Nudged once already: the turn ends, honestly, without an answer.
        self.commit(vec![assistant], Vec::new())?;
        let message = if cut {
            "The model's reply was cut off at its output limit again after it was asked to continue: the turn ends unfinished."
        } else {
            "The model's reply was empty again after it was asked to go on: the turn ends without an answer."
        };
        phases.set(Phase::Failed { reason: message.to_owned() });
        self.emit(Event::Error { message: message.to_owned() });
        Ok(Some((DoneReason::Failed, reply.text)))
    }

    /// The turn would end with an answer: whether the person's Stop hooks send it on (their
    /// reason, a message of the turn's, for the model to act on), at most
    /// [`crate::hooks::STOP_HOOK_TURNS`] times a turn and never in a subagent.
    async fn sent_on_by_hooks(&mut self, sent_on: &mut u32) -> Result<bool, EngineError> {
        if self.role.is_subagent() || *sent_on >= crate::hooks::STOP_HOOK_TURNS {
            return Ok(false);
        }
        let Some(reason) = self.stop_hooks(*sent_on > 0).await else { return Ok(false) };
        *sent_on += 1;
        let ask = format!("[Your turn would end here; the person's Stop hook asks you to go on:]\n{reason}");
        self.commit(vec![Entry::user(ask, false)], Vec::new())?;
        Ok(true)
    }

    /// After a step with calls: a team's subagent whose context is full pauses; a window that
    /// is full is compacted, or ends a subagent's turn with what it has.
    async fn after_step(
        &mut self,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<Option<(DoneReason, String)>, EngineError> {
        if let Some(paused) = self.team_member_paused() {
            // A team's subagent is paused once its context reaches `pause_at`, after the step
            // that took it there: its last turn follows (the hub gives it); that last turn runs
            // to its own step limit.
            if !paused && self.context_full() {
                return Ok(Some((DoneReason::Answered, String::new())));
            }
        } else if self.window_is_full() {
            if self.role.is_subagent() {
                // A subagent does not compact (subagents.md §9): it reports what it has.
                self.stopped_by = Some("context");
                let text = self.wrap_up("context", cancel, phases).await?;
                return Ok(Some((DoneReason::Limit, text)));
            }
            self.compact_with(cancel, phases).await?;
        }
        Ok(None)
    }

    /// One model request with the session's prefix; `extra` adds a last user message that is
    /// not part of the history (the wrap-up), after which nothing follows in this window.
    pub(crate) async fn request(
        &mut self,
        extra: Option<&str>,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<Reply, EngineError> {
        self.take_late_mcp_servers().await?;
        let mut messages = self.request_messages();
        let ask = match extra {
            Some(extra) => {
                messages.push(Message::user(extra).to_wire(false));
                Ask::Last
            }
            None => Ask::Step,
        };
        let tools = self.tools.clone();
        self.send(messages, tools, ask, cancel, phases).await
    }

    /// Sends `messages` with the session's tools, its reply limited to what the window leaves
    /// it (`crate::room`).
    pub(crate) async fn send(
        &mut self,
        messages: Vec<lembas_model::WireMessage>,
        tools: std::sync::Arc<Vec<lembas_model::ToolSchema>>,
        ask: Ask,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<Reply, EngineError> {
        // The request's size, made once: its room now, and the server's count of it after.
        let size = crate::counted::Size::of(&messages, &tools);
        let max_tokens = match self.room(self.request_tokens(size), ask) {
            Room::Reply(limit) | Room::Tight(limit) => limit,
            // By the estimate it does not fit; the server, which counts, judges (a refusal for
            // length is compacted and retried). A summary keeps its own bound.
            Room::None { window, .. } if ask == Ask::Summary => Some(Session::summary_room(window)),
            Room::None { .. } => self.cfg.model.max_output,
        };
        let shared = self.compared_with_last(&messages, &tools);
        let level = self.state.effort.clone().unwrap_or_else(|| self.cfg.model.start_level());
        let request = ChatRequest {
            model: self.cfg.model.id.clone(),
            messages: std::sync::Arc::new(messages),
            tools,
            extra: lembas_models::request_fields(&self.cfg.model, &level),
            max_tokens,
        };
        self.sending(&request.messages, &request.tools);
        phases.set(Phase::ReadingPrompt { done: None, total: None });
        let events = self.events.clone();
        let mut writing_since: Option<Instant> = None;
        let mut written = 0u64;
        // Once the request is out, the sandbox for the turn's commands is made ready meanwhile
        // (the files as they were, for its undo, are read from the turn's start: `snapshots.rs`).
        let mut prepare_sandbox = self.sandbox_preparation();
        let mut on_event = |event: StreamEvent| {
            if let Some(prepare) = prepare_sandbox.take() {
                prepare();
            }
            match event {
                StreamEvent::Text(delta) => {
                    let since = *writing_since.get_or_insert_with(Instant::now);
                    written += 1;
                    let seconds = since.elapsed().as_secs_f64();
                    let rate = (seconds >= 0.5).then(|| written as f64 / seconds);
                    phases.set(Phase::Writing { rate });
                    let _ = events.send(Event::Text { delta });
                }
                StreamEvent::Reasoning(delta) => {
                    phases.set(Phase::Thinking);
                    let _ = events.send(Event::Reasoning { delta });
                }
                StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallArgs { .. } => {
                    phases.set(Phase::Writing { rate: None });
                }
                StreamEvent::PromptProgress { done, total } => {
                    phases.set(Phase::ReadingPrompt { done: Some(done), total: Some(total) })
                }
                StreamEvent::Retrying { reason, in_seconds, attempt } => {
                    phases.set(Phase::Retrying { reason, in_seconds, attempt: Some(u64::from(attempt)) });
                    writing_since = None;
                    written = 0;
                }
            }
        };
        let reply = self.cfg.client.chat(&request, &mut on_event, cancel).await;
        self.tell_narrowed_levels();
        let reply = reply?;
        if let Some(seat) = self.role.seat() {
            // The tree shows how full each agent's context is.
            let used = reply.usage.as_ref().map_or(self.state.last_input, |u| u.input_tokens);
            seat.hub.team().set_context(&seat.me, used, self.window());
        }
        if let Some(usage) = reply.usage {
            self.measured(size.total(), usage.input_tokens);
            // Judged against the previous request's count, before this one replaces it.
            self.explain_miss(shared, usage.cached_tokens);
            self.state.counted = Some(crate::counted::Counted::of(size, usage.input_tokens));
            self.state.last_input = usage.input_tokens;
            self.prompt_tokens += usage.input_tokens + usage.output_tokens;
            self.turn_usage.input += usage.input_tokens;
            self.turn_usage.output += usage.output_tokens;
            self.turn_usage.cached += usage.cached_tokens.unwrap_or(0);
            let row = UsageRow { input: usage.input_tokens, output: usage.output_tokens, cached: usage.cached_tokens };
            self.cfg.store.record_usage(&self.id, &self.cfg.model.id, row, now_ms())?;
            self.emit(Event::Usage {
                input: usage.input_tokens,
                output: usage.output_tokens,
                cached: usage.cached_tokens,
            });
            self.report_context();
        }
        Ok(reply)
    }

    /// The last request: the same prefix and tools, the wrap-up message naming the limit; a call
    /// in its reply is not run. The exchange is kept, so the transcript says the prompt stopped.
    pub(crate) async fn wrap_up(
        &mut self,
        limit: &str,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<String, EngineError> {
        let spec = loop_spec();
        let name = spec.budgets.limit.get(limit).map_or(limit, String::as_str);
        let message = render(&spec.wrap_up.message, &[("limit", name)]);
        let reply = self.request(Some(&message), cancel, phases).await?;
        let entries = vec![
            Entry::user(message, false),
            Entry::of(Message::Assistant { content: reply.text.clone(), reasoning: None, tool_calls: Vec::new() }),
        ];
        self.commit(entries, Vec::new())?;
        Ok(reply.text)
    }

    /// Tells front ends once the model's levels narrowed, and moves a chosen level the server
    /// does not take back to the model's start level.
    fn tell_narrowed_levels(&mut self) {
        let levels = self.levels();
        if levels == self.cfg.model.levels() || self.levels_told.as_ref() == Some(&levels) {
            return;
        }
        if self.state.effort.as_ref().is_some_and(|e| !levels.contains(e)) {
            self.state.effort = None;
        }
        self.levels_told = Some(levels.clone());
        self.emit(Event::Levels { levels });
    }
}

/// The nudges a turn has sent: each at most once.
#[derive(Debug, Default)]
struct Nudged {
    empty: bool,
    cut: bool,
}
