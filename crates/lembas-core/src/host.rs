//! The session host: the one way any front end reaches a session. It owns each open session's
//! task; a front end sends [`Command`]s through a [`SessionHandle`] and reads the session's
//! [`Event`]s from a stream. What the session asks the person (an approval, a question, a plan)
//! is an [`Event::Ask`] answered by [`Command::Answer`], so no front end implements an approver.
//!
//! The same rule holds whichever front end sends a command: while a turn runs, a mode, model or
//! effort change and a rename take effect at its next step (or as it ends); a prompt, a
//! compaction, an undo, a report or a close wait for the turn to end; a cancel, steering words
//! and answers act at once.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use lembas_client::{Opened, SessionHandle};
use lembas_model::CancellationToken;
use lembas_protocol::{Command, DoneReason, Event, Found, StoredSession, Submission, SubmissionId};
use lembas_store::Store;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::asks::HostAsks;
use crate::session::Session;
use crate::sink::EventSink;
use crate::{EngineError, SessionConfig};

mod stored;

/// Which session to open.
#[derive(Debug, Clone)]
pub enum Start {
    /// A new session in the project at `root`, started from `cwd`.
    New { root: PathBuf, cwd: PathBuf },
    /// A stored session, by id.
    Resume(String),
}

/// What a front end asks the host to open.
pub struct OpenSession {
    pub cfg: SessionConfig,
    pub start: Start,
    /// Whether a person is there to answer what the session asks; with nobody, whatever would
    /// be asked is refused (and the model is told so).
    pub attended: bool,
}

impl std::fmt::Debug for OpenSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSession").field("start", &self.start).field("attended", &self.attended).finish()
    }
}

/// Serves sessions to front ends: opens them, and reads stored ones.
pub struct Host {
    store: Arc<Store>,
    /// The sessions open here, and each one's team where one is offered.
    open: Mutex<HashMap<String, SessionHandle>>,
    /// Where the projects' snapshots are, so a deleted session's go with it.
    snapshots: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").finish_non_exhaustive()
    }
}

impl Host {
    pub fn new(store: Arc<Store>) -> Host {
        Host { store, open: Mutex::default(), snapshots: None }
    }

    /// The same, deleting a session's snapshots with it (`dir`: the sessions' snapshots folder).
    pub fn keeping_snapshots_in(self, dir: std::path::PathBuf) -> Host {
        Host { snapshots: Some(dir), ..self }
    }

    /// Opens a session and starts its task (within a tokio runtime). Nothing is said until a
    /// command asks (a front end that shows the session sends [`Command::SaySession`]).
    pub fn open(&self, request: OpenSession) -> Result<Opened, EngineError> {
        let OpenSession { mut cfg, start, attended } = request;
        let (events_tx, events) = EventSink::channel();
        let asks = Arc::new(HostAsks::new(events_tx.clone(), attended));
        cfg.approver = asks.clone();
        let (resumed, session) = match start {
            Start::New { root, cwd } => (false, Session::start_saying(cfg, &root, &cwd, events_tx.clone())?),
            Start::Resume(id) => (true, Session::reopen(cfg, &id, events_tx.clone(), None)?),
        };
        let (commands, queue) = unbounded_channel();
        let (handle, closing) = SessionHandle::new(session.id().to_owned(), commands);
        self.open.lock().expect("open sessions").insert(handle.id().to_owned(), handle.clone());
        let hub = session.leads_team().map(|seat| seat.hub.clone());
        // Its jobs are told of as they start, change and end, until it closes.
        let closed = CancellationToken::new();
        tokio::spawn(crate::job_asks::watch(session.jobs.clone(), events_tx.clone(), closed.clone()));
        tokio::spawn(async move {
            drive(session, queue, asks, resumed).await;
            closed.cancel();
            if let Some(hub) = hub {
                // Closed means let go: its subagents' turns stop and free their sessions too.
                hub.let_go(std::time::Duration::from_secs(3)).await;
            }
            events_tx.carry(None);
            let _ = events_tx.send(Event::Closed);
            closing.closed();
        });
        Ok(Opened { handle, events })
    }

    /// The handle of a session open here, if it is.
    pub fn handle(&self, id: &str) -> Option<SessionHandle> {
        let mut open = self.open.lock().expect("open sessions");
        open.retain(|_, h| !h.is_closed());
        open.get(id).cloned()
    }
}

/// The session's task: commands one after another; while a turn runs, those that act at once
/// do, the rest wait. What the session says while it carries a submission out is marked with
/// its id.
async fn drive(mut session: Session, mut commands: UnboundedReceiver<Submission>, asks: Arc<HostAsks>, resumed: bool) {
    let mut waiting: VecDeque<Submission> = VecDeque::new();
    let mut last: Option<DoneReason> = None;
    loop {
        session.events.carry(None);
        let Submission { id, command } = match waiting.pop_front() {
            Some(submission) => submission,
            None => {
                let next = tokio::select! {
                    submission = commands.recv() => Next::Command(submission),
                    // Between commands, a background job that ends wakes the session with its
                    // note.
                    () = session.job_ended() => Next::JobEnded,
                };
                match next {
                    Next::Command(None) => break,
                    Next::JobEnded => {
                        let (reason, gone) =
                            busy(&mut session, &asks, &mut commands, &mut waiting, None, async |s, cancel| {
                                s.deliver_job_notes(cancel).await
                            })
                            .await;
                        last = reason.or(last);
                        if gone {
                            break;
                        }
                        continue;
                    }
                    Next::Command(Some(submission)) => submission,
                }
            }
        };
        session.events.carry(Some(id.clone()));
        match words_as_prompt(command) {
            // The same prompt sent again (a link that dropped and re-sent it) is not a second
            // turn: its answer is said again.
            Command::Prompt { .. } if session.answered_before(&id) => {}
            Command::Prompt { text, attachments, machine } => {
                let (reason, gone) =
                    busy(&mut session, &asks, &mut commands, &mut waiting, Some(&id), async |s, cancel| {
                        s.turn(&text, &attachments, machine, cancel).await.0
                    })
                    .await;
                last = Some(reason);
                if gone {
                    break;
                }
                words_left_after_a_turn(&session, reason, &mut waiting);
            }
            Command::Compact => {
                let (done, gone) =
                    busy(&mut session, &asks, &mut commands, &mut waiting, Some(&id), async |s, cancel| {
                        s.compact(cancel).await
                    })
                    .await;
                if let Err(e) = done {
                    session.emit(Event::Error { message: e.to_string() });
                }
                if gone {
                    break;
                }
                steer_left_as_prompts(&session, &mut waiting);
            }
            Command::Shell { line } => {
                let ((), gone) =
                    busy(&mut session, &asks, &mut commands, &mut waiting, Some(&id), async |s, cancel| {
                        s.person_command(&line, cancel).await
                    })
                    .await;
                if gone {
                    break;
                }
                steer_left_as_prompts(&session, &mut waiting);
            }
            Command::Close { wait_for_jobs } => {
                // Nobody comes back to it later: the jobs its last turn started may finish, and
                // their notes wake it, first.
                if let (Some(secs), Some(DoneReason::Answered)) = (wait_for_jobs, last) {
                    let limit = std::time::Duration::from_secs(secs);
                    busy(&mut session, &asks, &mut commands, &mut waiting, Some(&id), async |s, cancel| {
                        s.settle(cancel, limit).await
                    })
                    .await;
                }
                break;
            }
            Command::Cancel | Command::Steer { .. } => {}
            Command::Answer { id: ask, answer } => asks.answer(ask, answer, &id),
            command @ (Command::Undo
            | Command::Rewind { .. }
            | Command::Fork { .. }
            | Command::OverwriteKept
            | Command::ReportTurns) => {
                going_back(&mut session, command).await;
            }
            command @ (Command::ReportContext
            | Command::ReportMcp
            | Command::ReportAgentFiles
            | Command::ReportNotes { .. }
            | Command::ReportTeam { .. }
            | Command::StopSubagent { .. }
            | Command::SaySession) => report(&session, command, &id, resumed),
            command @ (Command::Job { .. } | Command::FindFiles { .. }) => AtOnce::of(&session).answer(command, id),
            setting @ (Command::SetMode { .. }
            | Command::SetModel { .. }
            | Command::SetEffort { .. }
            | Command::SetPersonality { .. }
            | Command::SetInstructions { .. }
            | Command::Rename { .. }
            | Command::SetAgents { .. }) => session.apply_setting(setting),
        }
    }
    asks.give_up(true);
    // No snapshot is left reading the project once the session is let go.
    session.settle_snapshots().await;
}

/// Words for a turn that has ended are a prompt of their own.
fn words_as_prompt(command: Command) -> Command {
    match command {
        Command::Steer { text } => Command::prompt(text),
        other => other,
    }
}

/// What a front end asked to be told: the context, the servers, the custom agents, the team
/// (or a subagent stopped), the session itself.
fn report(session: &Session, command: Command, id: &SubmissionId, resumed: bool) {
    let team = || session.leads_team().map(crate::session::team::TeamView::of);
    match command {
        Command::ReportContext => session.report_context(),
        Command::ReportMcp => session.report_mcp(),
        Command::ReportAgentFiles => session.report_agent_files(),
        Command::ReportNotes { ask } => session.report_notes(ask),
        Command::ReportTeam { since } => report_team(team().as_ref(), &session.events, id, since),
        Command::StopSubagent { name } => stop_subagent(team().as_ref(), &session.events, id, &name),
        _ => session.announce(resumed),
    }
}

/// An undo, a rewind, a fork, or the list of turns a rewind can go back to; a refusal is said
/// as an error.
async fn going_back(session: &mut Session, command: Command) {
    let done = match command {
        Command::Undo => session.undo().await.map(drop),
        Command::Rewind { to, files, conversation } => session.rewind(to, files, conversation).await.map(drop),
        Command::Fork { to, files } => session.fork(to, files).await.map(drop),
        Command::OverwriteKept => session.overwrite_kept().await.map(drop),
        _ => session.report_turns().await,
    };
    if let Err(e) = done {
        session.emit(Event::Error { message: e.to_string() });
    }
}

/// Runs `work` on the session as its busy time (a turn, a compaction, a command) for the
/// submission `running` (`None`: a job's note woke it), taking in commands meanwhile: what it
/// answered, and whether every handle went while it ran (then the session closes).
async fn busy<T>(
    session: &mut Session,
    asks: &HostAsks,
    commands: &mut UnboundedReceiver<Submission>,
    waiting: &mut VecDeque<Submission>,
    running: Option<&SubmissionId>,
    work: impl AsyncFnOnce(&mut Session, &CancellationToken) -> T,
) -> (T, bool) {
    let mut busy = Busy::new(session, asks, commands, waiting, running.cloned());
    let done = busy.run(session, work).await;
    (done, busy.gone)
}

/// Words sent to steer while the session was busy with something that is not a turn (a
/// compaction, a command the person ran) have no step to go to: each is a prompt of its own,
/// after what already waits.
fn steer_left_as_prompts(session: &Session, waiting: &mut VecDeque<Submission>) {
    let left = std::mem::take(&mut *session.steer.lock().expect("steer queue"));
    waiting.extend(left.into_iter().map(|text| Submission { id: steered(), command: Command::prompt(text) }));
}

/// Words added during a turn that ended with no step left to take them: sent at once as the
/// next turn, in the order typed — or, when the person stopped the turn, given back to them.
fn words_left_after_a_turn(session: &Session, reason: DoneReason, waiting: &mut VecDeque<Submission>) {
    let left = std::mem::take(&mut *session.steer.lock().expect("steer queue"));
    if left.is_empty() {
        return;
    }
    if reason == DoneReason::Cancelled {
        session.emit(Event::SteerReturned { texts: left });
    } else {
        waiting.push_front(Submission { id: steered(), command: Command::prompt(left.join("\n\n")) });
    }
}

/// Answers `asked` with the team as it stands: its tree, when it has subagents, and its room's
/// messages numbered above `since`.
fn report_team(team: Option<&crate::session::team::TeamView>, events: &EventSink, asked: &SubmissionId, since: u64) {
    if let Some(tree) = team.and_then(crate::session::team::TeamView::tree) {
        let _ = events.answer(asked, Event::Team { tree });
    }
    let messages = team.map(|t| t.room(since));
    let _ = events.answer(asked, Event::Room { messages });
}

/// The person stops a subagent (by name or id) and its subtree, now, whatever the main agent's
/// turn is doing; `asked` is answered with the ids stopped, or why not.
fn stop_subagent(team: Option<&crate::session::team::TeamView>, events: &EventSink, asked: &SubmissionId, name: &str) {
    let stopped = team.ok_or_else(|| "This session has no team.".to_owned()).and_then(|t| t.stop_named(name));
    let _ = events.answer(
        asked,
        match stopped {
            Ok(ids) => Event::SubagentsStopped { ids },
            Err(message) => Event::Error { message },
        },
    );
}

/// The id of a prompt the host makes of steering words no turn took.
fn steered() -> SubmissionId {
    SubmissionId::fresh("steered")
}

/// What an idle session was woken by.
enum Next {
    Command(Option<Submission>),
    JobEnded,
}

/// One turn (or compaction, or settling) running, and what arrives meanwhile.
struct Busy<'a> {
    cancel: CancellationToken,
    steer: Arc<Mutex<Vec<String>>>,
    changes: Arc<Mutex<Vec<Submission>>>,
    asks: &'a HostAsks,
    commands: &'a mut UnboundedReceiver<Submission>,
    /// Commands that wait for the turn to end.
    waiting: &'a mut VecDeque<Submission>,
    /// The submission being carried out: the same one sent again is not taken twice.
    running: Option<SubmissionId>,
    /// Every handle is gone: the turn was cancelled, and the session closes after it.
    gone: bool,
    /// The session's team, which the person may stop a subagent of, or read, at once.
    team: Option<crate::session::team::TeamView>,
    /// What the session says, for the commands answered at once.
    events: EventSink,
    /// What answers the jobs' and the files' commands meanwhile.
    at_once: AtOnce,
}

/// What answers, off the session's task and during a turn too, the commands that read or steer
/// what runs beside it: its jobs (and the subagents parked with them), and `@path` searches.
struct AtOnce {
    jobs: lembas_tools::Jobs,
    parked: crate::session::subagent::ParkedAgents,
    /// The working folder `@path` mentions are found under, and the folders left out.
    files: (std::path::PathBuf, Arc<[std::path::PathBuf]>),
    events: EventSink,
}

impl AtOnce {
    fn of(session: &Session) -> AtOnce {
        AtOnce {
            jobs: session.jobs.clone(),
            parked: session.parked.clone(),
            files: (session.ws.started.clone(), session.ws.private.clone()),
            events: session.events.clone(),
        }
    }

    /// Answers `command` for `id` on a task of its own.
    fn answer(&self, command: Command, id: SubmissionId) {
        let events = self.events.clone();
        match command {
            Command::Job { ask } => {
                tokio::spawn(crate::job_asks::answer(self.jobs.clone(), self.parked.clone(), events, id, ask));
            }
            Command::FindFiles { query, limit } => {
                let (root, private) = self.files.clone();
                tokio::spawn(crate::finding::answer(root, private, query, limit, events, id));
            }
            _ => {}
        }
    }
}

impl<'a> Busy<'a> {
    fn new(
        session: &Session,
        asks: &'a HostAsks,
        commands: &'a mut UnboundedReceiver<Submission>,
        waiting: &'a mut VecDeque<Submission>,
        running: Option<SubmissionId>,
    ) -> Busy<'a> {
        Busy {
            cancel: CancellationToken::new(),
            steer: session.steer.clone(),
            changes: session.changes.clone(),
            asks,
            commands,
            waiting,
            running,
            gone: false,
            team: session.leads_team().map(crate::session::team::TeamView::of),
            events: session.events.clone(),
            at_once: AtOnce::of(session),
        }
    }

    /// Runs `work` on the session to its end, taking in commands meanwhile; then applies the
    /// settings changed while it ran.
    async fn run<T>(
        &mut self,
        session: &mut Session,
        work: impl AsyncFnOnce(&mut Session, &CancellationToken) -> T,
    ) -> T {
        let cancel = self.cancel.clone();
        let done = {
            let work = work(session, &cancel);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => break done,
                    submission = self.commands.recv(), if !self.gone => match submission {
                        None => {
                            self.gone = true;
                            self.cancel.cancel();
                        }
                        Some(submission) => self.take(submission),
                    },
                }
            }
        };
        session.apply_changes();
        done
    }

    fn take(&mut self, submission: Submission) {
        let Submission { id, command } = submission;
        match command {
            Command::Cancel => {
                self.cancel.cancel();
                // A call of the turn waiting for the person's answer is refused, so the turn can
                // stop; a background subagent's card stays.
                self.asks.give_up(false);
            }
            // What is being carried out, sent again: it goes on, and its events answer both.
            _ if self.running.as_ref() == Some(&id) => {}
            Command::Steer { text } => self.steer.lock().expect("steer queue").push(text),
            Command::Answer { id: ask, answer } => self.asks.answer(ask, answer, &id),
            Command::ReportTeam { since } => report_team(self.team.as_ref(), &self.events, &id, since),
            Command::StopSubagent { name } => stop_subagent(self.team.as_ref(), &self.events, &id, &name),
            command @ (Command::Job { .. } | Command::FindFiles { .. }) => self.at_once.answer(command, id),
            setting @ (Command::SetMode { .. }
            | Command::SetModel { .. }
            | Command::SetEffort { .. }
            | Command::SetPersonality { .. }
            | Command::SetInstructions { .. }
            | Command::Rename { .. }
            | Command::SetAgents { .. }) => {
                self.changes.lock().expect("changes").push(Submission { id, command: setting })
            }
            command => self.waiting.push_back(Submission { id, command }),
        }
    }
}

impl Session {
    /// Applies the settings changed while a turn ran, each answered under its own submission.
    pub(crate) fn apply_changes(&mut self) {
        let changes = std::mem::take(&mut *self.changes.lock().expect("changes"));
        for Submission { id, command } in changes {
            let was = self.events.carry(Some(id));
            self.apply_setting(command);
            self.events.carry(was);
        }
    }

    /// Whether the prompt `id` already ran in this session; if so its answer is said again.
    fn answered_before(&self, id: &SubmissionId) -> bool {
        let answer = self.cfg.store.turn_answer(&self.id, id.as_str()).ok().flatten();
        match answer.and_then(|json| serde_json::from_str::<Event>(&json).ok()) {
            Some(done) => {
                self.emit(done);
                true
            }
            None => false,
        }
    }

    /// Keeps how the turn the person's submission started ended, for [`Session::answered_before`].
    pub(crate) fn record_answer(&self, done: &Event) {
        if self.role.is_subagent() {
            return;
        }
        if let Some(id) = self.events.carrying()
            && let Ok(json) = serde_json::to_string(done)
        {
            let _ = self.cfg.store.record_turn(&self.id, id.as_str(), &json);
        }
    }

    /// A mode, model or effort change, or a rename; what cannot be done is said as an error.
    fn apply_setting(&mut self, setting: Command) {
        let failed = match setting {
            Command::SetMode { mode } => {
                let before = self.state.mode;
                self.set_mode(mode);
                // Asked for the mode it is in (or one past its bounds): the asker is told the
                // mode it stays in.
                if self.state.mode == before {
                    self.emit(Event::Mode { mode: before });
                }
                None
            }
            Command::SetModel { model } => match self.cfg.model_named(&model) {
                Ok(info) => self.set_model(info).err().map(|e| e.to_string()),
                Err(e) => Some(e),
            },
            Command::SetEffort { level } => {
                match level.as_deref().and_then(|l| self.level_refused(&self.cfg.model, l)) {
                    Some(refused) => Some(refused),
                    None => {
                        self.set_effort(level);
                        None
                    }
                }
            }
            Command::SetPersonality { text } => {
                // Said to the model as the personality note on the next message it is sent.
                self.cfg.personality = text.clone();
                self.emit(Event::Personality { text });
                None
            }
            Command::SetInstructions { given } => {
                // Read with the instruction files: the next message notes what changed.
                self.cfg.given_instructions = given;
                None
            }
            Command::Rename { title } => self.rename(&title).err().map(|e| e.to_string()),
            Command::SetAgents { min, max } => self.set_agents(min, max).err(),
            _ => None,
        };
        if let Some(message) = failed {
            self.emit(Event::Error { message });
        }
    }
}

impl lembas_client::Sessions for Host {
    fn sessions(&self, project: Option<&str>) -> Result<Vec<StoredSession>, lembas_client::Failure> {
        Ok(Host::sessions(self, project)?)
    }

    fn search(&self, words: &str) -> Result<Vec<Found>, lembas_client::Failure> {
        Ok(Host::search(self, words)?)
    }

    fn session(&self, id: &str) -> Result<Option<StoredSession>, lembas_client::Failure> {
        Ok(Host::session(self, id)?)
    }

    fn subagents(&self, id: &str) -> Result<Vec<StoredSession>, lembas_client::Failure> {
        Ok(Host::subagents(self, id)?)
    }

    fn transcript(&self, id: &str) -> Result<Vec<Event>, lembas_client::Failure> {
        Ok(Host::transcript(self, id)?)
    }

    fn delete(&self, id: &str) -> Result<(), lembas_client::Failure> {
        Ok(Host::delete(self, id)?)
    }
}
