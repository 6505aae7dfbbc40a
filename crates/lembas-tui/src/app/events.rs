//! What the engine's events do to the UI's state: blocks streamed and settled, tool calls run and
//! ended, cards asked, turns ended, sessions announced.

use lembas_protocol::{DoneReason, Event, Mode, ToolOutcome};

use super::{App, Block, Card, ToolState};

impl App {
    fn flush_live(&mut self) {
        if let Some(block) = self.live.take() {
            self.finished.push(block);
        }
    }
    /// A reply streams into the live area; what of it is settled — whole blocks before a blank
    /// line, outside code, with the next block begun — goes on to the scrollback, so the live
    /// area holds (and redraws) only the block being written.
    fn settle_streamed(&mut self) {
        let Some(Block::Assistant(text)) = &mut self.live else { return };
        if let Some(at) = settled_len(text) {
            let rest = text.split_off(at);
            let settled = std::mem::replace(text, rest);
            self.finished.push(Block::Assistant(settled.trim_end().to_owned()));
        }
    }
    /// What a subagent's event changes: its task's block shows what it does now, and its
    /// tokens count toward the turn's (never toward the main agent's window).
    fn apply_subagent(&mut self, call_id: &str, event: &Event) {
        match event {
            Event::ToolStart { tool, title, .. } => {
                let block =
                    self.running.iter_mut().find(|b| matches!(b, Block::Tool { call_id: id, .. } if id == call_id));
                if let Some(Block::Tool { summary, .. }) = block {
                    *summary = if title.is_empty() { format!("→ {tool}") } else { format!("→ {tool} {title}") };
                }
            }
            Event::Usage { input, output, .. } => {
                self.turn_tokens += input + output;
                self.used.0 += input;
                self.used.1 += output;
            }
            _ => {}
        }
    }
    /// What an engine event changes.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Prompt { text, machine } => self.prompted(text, *machine),
            Event::Text { delta } => {
                match &mut self.live {
                    Some(Block::Assistant(text)) => text.push_str(delta),
                    _ => {
                        self.flush_live();
                        self.live = Some(Block::Assistant(delta.clone()));
                    }
                }
                self.settle_streamed();
            }
            Event::Reasoning { delta } => match &mut self.live {
                Some(Block::Thinking(text)) => text.push_str(delta),
                _ => {
                    self.flush_live();
                    self.live = Some(Block::Thinking(delta.clone()));
                }
            },
            Event::ToolStart { call_id, tool, title, .. } => self.tool_started(call_id, tool, title),
            Event::ToolEnd { call_id, outcome, .. } => self.tool_ended(call_id, outcome),
            Event::ToolDenied { call_id, reason, .. } => self.tool_ended(call_id, &ToolOutcome::refused(reason)),
            Event::Usage { input, output, cached } => {
                self.context.0 = *input;
                self.turn_tokens += input + output;
                self.used.0 += input;
                self.used.1 += output;
                self.last_cached = *cached;
            }
            Event::Team { tree } => self.team = Some(tree.clone()),
            // Shown by the loop when it answers the person's `/team`.
            Event::Room { .. } => {}
            // The status bar counts jobs from `Event::Jobs`; a job's own news is for a client
            // with a jobs panel (the link's web UI).
            Event::Job { .. } | Event::JobNote { .. } | Event::JobSaid { .. } => {}
            // The terminal completes `@path` from its own list.
            Event::FilesFound { .. } => {}
            Event::SubagentsStopped { ids } => self.subagents_stopped(ids),
            Event::Jobs { running, subagents } => {
                self.jobs = running - subagents;
                self.background_subagents = *subagents;
            }
            Event::Context { window, shares, offer, cache_miss } => {
                self.shares = shares.clone();
                self.offer = offer.clone();
                self.cache_miss = cache_miss.clone();
                // Before the first counted request (a new or resumed session) the engine's
                // estimate is all there is.
                if self.context.0 == 0 {
                    self.context = (shares.iter().map(|s| s.tokens).sum(), *window);
                }
            }
            Event::Phase { progress } => self.progress = progress.clone(),
            Event::Mode { mode } => self.mode = Some(*mode),
            Event::Model { model, effort } => {
                if *model != self.model {
                    self.levels = None;
                }
                self.model = model.clone();
                self.effort = effort.clone();
            }
            Event::Title { title } => self.title = title.clone(),
            Event::Personality { .. } => {
                self.finished.push(Block::Notice("The agent speaks as chosen from the next message.".into()));
            }
            Event::Agents { min, max } => self.agents = (*min, *max),
            Event::Ask { id, ask } => {
                self.asks.push_back((*id, ask.clone()));
                self.next_card();
            }
            // Answered (here, or elsewhere) or given up: its card goes.
            Event::Answered { id } => self.answered_elsewhere(*id),
            Event::Closed => {}
            Event::Levels { levels } => {
                self.levels = Some(levels.clone());
                if self.effort.as_ref().is_some_and(|e| !levels.contains(e)) {
                    self.effort = None;
                }
            }
            Event::Plan { plan } => {
                self.flush_live();
                let shown = plan_update(self.last_plan.as_deref(), &plan.render());
                self.last_plan = Some(plan.render());
                self.finished.push(Block::Notice(shown));
            }
            Event::Compacted { .. } => {
                self.flush_live();
                self.finished.push(Block::Notice("The conversation was summarised to make room.".into()));
            }
            Event::Notice { message } => {
                self.flush_live();
                self.finished.push(Block::Notice(message.clone()));
            }
            Event::Steered { text } => self.steered(text),
            Event::SteerReturned { texts } => self.steer_returned(texts),
            Event::Subagent { call_id, event, .. } => self.apply_subagent(call_id, event),
            Event::Undone { prompt, later, files } => self.undone(prompt.as_deref(), *later, files),
            Event::Turns { turns } => self.choose_turn(turns),
            Event::SnapshotStore { bytes, cap } => self.snapshots = Some((*bytes, *cap)),
            Event::Forked { prompt, files, .. } => {
                self.finished.push(Block::Notice(lembas_protocol::fork_said(prompt, files)));
            }
            Event::McpServers { servers } => self.finished.push(Block::Notice(mcp_report(servers))),
            Event::AgentFiles { agents } => self.finished.push(Block::Notice(agents_report(agents))),
            Event::Notes { said } => self.finished.push(Block::Notice(crate::notes::said(said))),
            Event::Error { message } => {
                self.flush_live();
                self.finished.push(Block::Error(message.clone()));
            }
            Event::Done { reason, .. } => self.turn_done(*reason),
            Event::Session { id, model, mode, title, resumed, sandbox } => {
                self.session_opened(id, model, *mode, title, *resumed, sandbox)
            }
            Event::Step { .. } => {}
        }
    }

    /// A turn began with these words (the person's, or a note that woke the session).
    fn prompted(&mut self, text: &str, machine: bool) {
        self.flush_live();
        // Words queued while the last turn ran, now a turn of their own.
        if !machine {
            self.queued.retain(|q| !text.contains(q.as_str()));
        }
        self.finished.push(if machine { Block::Notice(text.to_owned()) } else { Block::User(text.to_owned()) });
        self.busy = true;
        self.turn_started = Some(std::time::Instant::now());
        self.turn_tokens = 0;
    }

    /// The person's `/team stop`: said with the names the tree knows them by.
    fn subagents_stopped(&mut self, ids: &[String]) {
        let agents = self.team.iter().flat_map(|t| t.agents.iter().chain(&t.ended));
        let named: Vec<String> = ids
            .iter()
            .map(|id| agents.clone().find(|a| &a.id == id).map_or_else(|| id.clone(), |a| format!("{} ({id})", a.name)))
            .collect();
        if !named.is_empty() {
            self.finished.push(Block::Notice(format!("Stopped {}.", named.join(", "))));
        }
    }

    /// A call started: a running block under the turn.
    fn tool_started(&mut self, call_id: &str, tool: &str, title: &str) {
        self.flush_live();
        // A command the person runs themselves is not a turn: words sent meanwhile are a
        // prompt of their own, and Esc stops the command.
        if call_id.starts_with("person-") {
            self.shell_running = true;
        }
        self.running.push(Block::Tool {
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            title: title.to_owned(),
            state: ToolState::Running,
            summary: String::new(),
            shown: String::new(),
            body: String::new(),
        });
    }

    /// A call ended (or was refused): its block is finished with its summary, and a change's
    /// diff or a command's output.
    fn tool_ended(&mut self, call_id: &str, outcome: &ToolOutcome) {
        if call_id.starts_with("person-") {
            self.shell_running = false;
        }
        let position = self.running.iter().position(|b| matches!(b, Block::Tool { call_id: id, .. } if id == call_id));
        let Some(position) = position else { return };
        let mut block = self.running.remove(position);
        if let Block::Tool { state, summary, shown, body, .. } = &mut block {
            summary.clone_from(&outcome.summary);
            *state = if outcome.went_wrong { ToolState::Failed } else { ToolState::Done };
            body.clone_from(&outcome.body);
            // A change shows its diff and a command its output, folded past a dozen lines;
            // anything else its summary alone.
            if outcome.show_body {
                *shown = match outcome.whole {
                    true => without_summary(&outcome.body, &outcome.summary),
                    false => fold(&outcome.body),
                };
            }
        }
        self.finished.push(block);
    }

    /// An ask was answered (here, or elsewhere) or given up: its card goes.
    fn answered_elsewhere(&mut self, id: u64) {
        if self.asking == Some(id) {
            self.asking = None;
            if !matches!(self.card, Some(Card::LooserMode(_) | Card::Overwrite(_))) {
                self.card = None;
            }
            self.next_card();
        } else {
            self.asks.retain(|(waiting, _)| *waiting != id);
        }
    }

    /// Words the person added, taken by the model at this step: out of the queue, into the
    /// conversation.
    fn steered(&mut self, text: &str) {
        // Taken by the model at this step: out of the queue, into the conversation.
        if let Some(at) = self.queued.iter().position(|q| q == text) {
            self.queued.remove(at);
        }
        self.flush_live();
        self.finished.push(Block::User(text.to_owned()));
    }

    /// Words added to a turn that was stopped before they went: back to the person, not sent.
    fn steer_returned(&mut self, texts: &[String]) {
        // The turn was stopped before they went: back to the person, not sent.
        self.queued.retain(|q| !texts.contains(q));
        let mut words = texts.join("\n");
        if !self.input.is_empty() {
            words = format!("{words}\n{}", self.input.text());
        }
        self.input.set(&words);
    }

    /// The last turn was taken back: said, out of the transcript, its words back in the input.
    fn undone(&mut self, prompt: Option<&str>, later: u32, files: &lembas_protocol::FilesBack) {
        self.finished.push(Block::Notice(lembas_protocol::undo_said(prompt, later, files)));
        // What was left because the person changed it since: theirs to overwrite or keep.
        if !files.kept.is_empty() && self.card.is_none() {
            self.card = Some(Card::Overwrite(files.kept.clone()));
        }
        // Only files came back (the turn is behind a compaction): the conversation stands.
        let Some(prompt) = prompt else { return };
        // Out of the transcript too (Ctrl-O): from the turn's words on. (The terminal's
        // scrollback keeps what it was shown.)
        let first_line = prompt.lines().next().unwrap_or_default();
        if let Some(at) =
            self.transcript.iter().rposition(|b| matches!(b, Block::User(text) if text.starts_with(first_line)))
        {
            self.transcript.truncate(at);
        }
        // Its words come back to the input, to change and send again.
        if self.input.is_empty() {
            self.input.set(prompt);
        }
    }

    /// A turn ended: the footer says how, and a stopped one is marked where its words are.
    fn turn_done(&mut self, reason: DoneReason) {
        self.close_blocks();
        // The footer says how the turn ended; its last phase ("Stopped", "Retrying") goes.
        self.progress = None;
        let took = self
            .turn_started
            .take()
            .map(|t| lembas_protocol::progress::elapsed(t.elapsed().as_secs() as i64))
            .unwrap_or_default();
        let ended = match reason {
            DoneReason::Answered => "",
            DoneReason::Limit => " · stopped at a limit",
            DoneReason::Cancelled => " · stopped by you",
            DoneReason::Failed => " · failed",
        };
        self.last_turn = Some(format!("{took} · {} tokens{ended}", self.turn_tokens));
        // Said where the turn's words are, too: the scrollback and the transcript.
        if reason == DoneReason::Cancelled {
            self.finished.push(Block::Notice("(stopped by you)".into()));
        }
        if self.notify && !self.focused {
            self.to_notify = Some(format!("lembas: {} — the reply is ready", self.title));
        }
    }

    /// A session was opened or announced: the welcome line the first time, else its name.
    fn session_opened(&mut self, id: &str, model: &str, mode: Mode, title: &str, resumed: bool, sandbox: &str) {
        self.session_id = id.to_owned();
        self.title = title.to_owned();
        self.context.0 = 0;
        if !self.welcomed && !resumed {
            // The first thing a person sees: what runs, where, on what, how freely.
            self.finished.push(Block::Notice(self.welcome(model, mode, sandbox)));
        } else {
            let what = if resumed { "Resumed" } else { "Session" };
            self.finished.push(Block::Notice(format!("── {what}: {title} ──")));
        }
        self.welcomed = true;
        self.model = model.to_owned();
        self.mode = Some(mode);
    }
    /// What streamed is finished; calls that never ended (a cancelled turn) are finished as
    /// stopped.
    pub(super) fn close_blocks(&mut self) {
        self.flush_live();
        for mut block in std::mem::take(&mut self.running) {
            if let Block::Tool { state, .. } = &mut block {
                *state = ToolState::Failed;
            }
            self.finished.push(block);
        }
        self.busy = false;
    }
    /// Gives the running call `call_id`'s block another title (a command the person corrected).
    pub(crate) fn retitle(&mut self, call_id: &str, title: &str) {
        for block in self.running.iter_mut() {
            if let Block::Tool { call_id: id, title: shown, .. } = block
                && id == call_id
            {
                *shown = title.to_owned();
            }
        }
    }
    /// The opening line: lembas' version, the project, the model and the mode — and the sandbox
    /// when it is less than whole.
    fn welcome(&self, model: &str, mode: Mode, sandbox: &str) -> String {
        let folder = match (&self.root, std::env::var_os("HOME").map(std::path::PathBuf::from)) {
            (Some(root), Some(home)) if root.starts_with(&home) && root != &home => {
                format!("~/{}", root.strip_prefix(&home).unwrap_or(root).display())
            }
            (Some(root), _) => root.display().to_string(),
            (None, _) => String::new(),
        };
        let mut line = format!("lembas {} · {folder} · model {model} · {mode} mode", env!("CARGO_PKG_VERSION"));
        if !sandbox.is_empty() && sandbox != "active" {
            line.push_str(&format!("\nsandbox: {sandbox}"));
        }
        line
    }
}

/// `/mcp`: each server and where it stands.
fn mcp_report(servers: &[lembas_protocol::ServerStatus]) -> String {
    if servers.is_empty() {
        return "No MCP servers are configured: add them under [mcp_servers.NAME] in config.toml, or in the project's .mcp.json (read once you trust the project).".into();
    }
    let mut lines = vec!["MCP servers:".to_owned()];
    for server in servers {
        let state = match &server.state {
            lembas_protocol::ServerState::Connecting => "connecting…".to_owned(),
            lembas_protocol::ServerState::Ready { tools } => {
                format!("connected, {tools} tool{}", if *tools == 1 { "" } else { "s" })
            }
            lembas_protocol::ServerState::Failed { reason } => format!("not connected: {reason}"),
        };
        lines.push(format!("  {} — {state}", server.name));
    }
    lines.join("\n")
}

/// How much of a streaming reply is settled: up to the start of the last line that begins a
/// new block at the margin after a blank line, outside a code fence. `None` when nothing is.
pub(crate) fn settled_len(text: &str) -> Option<usize> {
    let mut in_fence = false;
    let mut after_blank = false;
    let mut offset = 0;
    let mut settled = None;
    for line in text.split_inclusive('\n') {
        let starts_block = line.chars().next().is_some_and(|c| !c.is_whitespace());
        if !in_fence && after_blank && starts_block && offset > 0 {
            settled = Some(offset);
        }
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence {
            in_fence = !in_fence;
        }
        after_blank = line.trim().is_empty() && line.ends_with('\n');
        offset += line.len();
    }
    settled
}

/// A plan as shown: whole the first time (or when it is another plan), then only the lines an
/// update changed or added.
pub(crate) fn plan_update(before: Option<&str>, now: &str) -> String {
    let Some(before) = before.filter(|b| b.lines().next() == now.lines().next()) else { return now.to_owned() };
    let old: std::collections::HashSet<&str> = before.lines().collect();
    let changed: Vec<&str> = now.lines().filter(|l| !l.trim().is_empty() && !old.contains(l)).collect();
    let title = now.lines().next().unwrap_or("Plan");
    match changed.len() {
        0 => format!("{title} — unchanged"),
        _ => format!("{title} — updated:\n{}", changed.join("\n")),
    }
}

/// Lines of a diff or a command's output shown before the rest folds.
const SHOWN_LINES: usize = 12;

/// A diff or a command's output, its first lines, and a line saying how
/// many more there are (the transcript view, Ctrl-O, shows them). One line more is shown rather
/// than folded.
fn fold(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= SHOWN_LINES + 1 {
        return lines.join("\n");
    }
    // Its start and its end: a test run's verdict, a build's error, is at the end.
    let head = SHOWN_LINES / 2;
    let tail = SHOWN_LINES - head;
    let mut shown: Vec<&str> = lines[..head].to_vec();
    let between = format!("… {} more lines (Ctrl-O shows all)", lines.len() - head - tail);
    shown.push(&between);
    shown.extend(&lines[lines.len() - tail..]);
    shown.join("\n")
}

/// A body shown whole under its summary, without the line the summary already says.
fn without_summary(body: &str, summary: &str) -> String {
    let body = body.trim();
    match body.split_once('\n') {
        Some((first, rest)) if first.trim() == summary => rest.trim().to_owned(),
        _ => body.to_owned(),
    }
}

/// `/agents`: each custom agent with what it is for, its tools and mode, and its file.
fn agents_report(agents: &[lembas_protocol::agents::AgentFileInfo]) -> String {
    if agents.is_empty() {
        return "No custom agents: agent files go in a trusted project's .agent/agents/ (or .claude/agents/), or your own agents folder. task and the team start general and explore.".into();
    }
    let mut lines = vec!["Custom agents (beside general and explore):".to_owned()];
    for agent in agents {
        let tools =
            agent.tools.as_ref().map_or("a general agent's tools".to_owned(), |t| format!("tools {}", t.join(", ")));
        let mode = agent.mode.as_ref().map(|m| format!(", at most {m} mode")).unwrap_or_default();
        lines.push(format!("- {}: {}\n  {tools}{mode} · {}", agent.name, agent.description, agent.file));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_body_folds_but_never_a_single_line() {
        let thirteen: String = (1..=13).map(|i| format!("line {i}\n")).collect();
        assert!(!fold(&thirteen).contains("more line"), "{}", fold(&thirteen));
        let twenty: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let folded: Vec<String> = fold(&twenty).lines().map(str::to_owned).collect();
        assert_eq!(folded.len(), 13, "{folded:?}");
        assert_eq!(folded[..2], ["line 1", "line 2"], "its start");
        assert_eq!(folded[6], "… 8 more lines (Ctrl-O shows all)");
        assert_eq!(folded[12], "line 20", "and its end, where a test run's verdict is");
    }

    /// A bash call `id` of `command` starts.
    fn start_bash(app: &mut App, id: &str, command: &str) {
        app.apply(&Event::ToolStart {
            call_id: id.into(),
            tool: "bash".into(),
            title: command.into(),
            args: serde_json::json!({ "command": command }),
            paths: Vec::new(),
        });
    }

    #[test]
    fn a_refusal_is_shown_whole_under_its_summary_never_folded() {
        let rule = "Add `allow bash(git push *)` to .lembas/settings.toml to let it run.";
        let reason: String =
            format!("bash not run: git push is asked in edit mode.\n{}{rule}", "The remote is shared.\n".repeat(14));
        let mut app = App::default();
        start_bash(&mut app, "c1", "git push");
        app.apply(&Event::ToolDenied { call_id: "c1".into(), tool: "bash".into(), reason: reason.clone() });
        let Some(Block::Tool { summary, shown, .. }) = app.finished.last() else { panic!("{:?}", app.finished) };
        assert_eq!(summary, "bash not run: git push is asked in edit mode.");
        assert!(shown.ends_with(rule) && !shown.contains("more lines"), "{shown}");
        assert!(!shown.contains("asked in edit mode"), "the summary's line is not said twice: {shown}");
        // A one-line refusal the summary says whole shows nothing more.
        start_bash(&mut app, "c2", "ls");
        app.apply(&Event::ToolDenied {
            call_id: "c2".into(),
            tool: "bash".into(),
            reason: "Refused by a rule.".into(),
        });
        let Some(Block::Tool { shown, .. }) = app.finished.last() else { panic!() };
        assert!(shown.is_empty(), "{shown}");
    }

    #[test]
    fn a_streaming_reply_settles_at_blank_lines_outside_code() {
        assert_eq!(settled_len("one\n\ntw"), Some(5));
        assert_eq!(settled_len("one\n\n"), None, "the next block has not begun");
        assert_eq!(settled_len("one\n\n  indented"), None, "an indented line may belong to what came before");
        assert_eq!(settled_len("```\ncode\n\nmore"), None, "a blank line in code settles nothing");
        assert_eq!(settled_len("```\ncode\n```\n\nafter"), Some(14));
        let mut app = App::default();
        for delta in ["# Title\n\nfirst para", "graph\n\n2. second", " item"] {
            app.apply(&Event::Text { delta: delta.into() });
        }
        assert_eq!(app.finished, [Block::Assistant("# Title".into()), Block::Assistant("first paragraph".into())]);
        assert_eq!(app.live, Some(Block::Assistant("2. second item".into())));
    }

    #[test]
    fn a_plan_update_shows_what_changed() {
        let first = "Plan: store\n\n1. Schema\n   [ ] 1.1 tables\n   [ ] 1.2 indexes";
        assert_eq!(plan_update(None, first), first);
        let later = "Plan: store\n\n1. Schema\n   [x] 1.1 tables\n   [ ] 1.2 indexes\n   [ ] 1.3 migrations";
        assert_eq!(plan_update(Some(first), later), "Plan: store — updated:\n   [x] 1.1 tables\n   [ ] 1.3 migrations");
        assert_eq!(plan_update(Some(first), "Plan: another\n1. x"), "Plan: another\n1. x");
    }
}
