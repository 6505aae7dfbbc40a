//! The UI's side of the seam: the session it shows, what that session says, and what the
//! person's actions send it. Answers are matched to what asked for them by submission id: the
//! conversation of a session opened to be shown is drawn under the announcement that answers
//! this UI's own `SaySession`, and `/team` shows the room that answers its own `ReportTeam`.

use std::sync::Arc;

use lembas_client::{SessionHandle, Sessions};
use lembas_protocol::{Answer, Command, Event, Said, SubmissionId};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::app::settings;
use crate::{Action, App, Begin, Block, Open, SaveSettings};

/// What an action leaves the UI to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Go,
    Quit,
}

pub(crate) struct Driver {
    open: Open,
    host: Arc<dyn Sessions>,
    save: Option<SaveSettings>,
    session: SessionHandle,
    pub(crate) events: UnboundedReceiver<Said>,
    /// A session opened to be shown, and the announcement whose answer it is drawn under.
    replay: Option<(SubmissionId, String)>,
    /// `/team` asked: the room that answers it is shown.
    team_asked: Option<SubmissionId>,
    /// The LLeMbas server beside the session: schedules, sharing.
    server: crate::server::ServerSide,
}

impl Driver {
    /// Opens the session the UI begins on and asks what the first screen shows.
    pub(crate) fn start(
        open: Open,
        host: Arc<dyn Sessions>,
        begin: Begin,
        server: crate::server::ServerSide,
        app: &mut App,
    ) -> std::io::Result<Driver> {
        let opened = open(begin.resume.as_deref()).map_err(std::io::Error::other)?;
        let mut driver = Driver {
            open,
            host,
            save: begin.save,
            session: opened.handle,
            events: opened.events,
            replay: None,
            team_asked: None,
            server,
        };
        // `/subagents` needs its id before the announcement comes.
        app.session_id = driver.session.id().to_owned();
        // How full the window starts, for `/context` and the status bar before the first request.
        driver.session.send(Command::ReportContext);
        // A new session opens with its welcome line; a resumed one with its announcement, and
        // its conversation under it.
        driver.announce(begin.resume);
        if let Some(prompt) = begin.prompt {
            app.history.push(prompt.clone());
            driver.session.send(Command::prompt(prompt));
        }
        if begin.pick_session {
            app.show_sessions(listed(driver.host.as_ref(), None, app.root.as_deref()));
        }
        Ok(driver)
    }

    /// Asks the session to say itself; with `shown`, its stored conversation is drawn under
    /// the announcement that answers.
    fn announce(&mut self, shown: Option<String>) {
        let announced = self.session.send(Command::SaySession);
        self.replay = shown.zip(announced).map(|(id, asked)| (asked, id));
    }

    /// Draws `first` and whatever else the session has said since; whether a turn ended.
    pub(crate) fn take(&mut self, app: &mut App, first: Said) -> bool {
        let mut batch = vec![first];
        while let Ok(more) = self.events.try_recv() {
            batch.push(more);
        }
        let mut turn_ended = false;
        for Said { submission, event } in batch {
            turn_ended |= matches!(event, Event::Done { .. });
            app.apply(&event);
            let answers = |asked: Option<&SubmissionId>| asked.is_some() && submission.as_ref() == asked;
            if let Event::Room { messages } = &event
                && answers(self.team_asked.as_ref())
            {
                self.team_asked = None;
                app.show_team(messages.as_deref());
            }
            // A fork is where the person goes on: opened, its turn's words back in the input.
            if let Event::Forked { id, prompt, .. } = &event {
                self.open_session(app, Some(id.clone()));
                if app.input.is_empty() {
                    app.input.set(prompt);
                }
            }
            if let Event::Session { id, .. } = &event
                && answers(self.replay.as_ref().map(|(asked, _)| asked))
            {
                self.replay = None;
                match self.host.transcript(id) {
                    Ok(transcript) => transcript.iter().for_each(|e| app.apply(e)),
                    Err(e) => app.finished.push(Block::Error(e.to_string())),
                }
                app.end_replay();
            }
        }
        turn_ended
    }

    /// Carries out what the person did.
    pub(crate) fn act(&mut self, app: &mut App, action: Action) -> Flow {
        if matches!(action, Action::Quit) {
            return Flow::Quit;
        }
        if let Some(command) = self.command_for(app, action) {
            self.session.send(command);
        }
        Flow::Go
    }

    /// The command an action sends, having done what the UI does itself for it.
    fn command_for(&mut self, app: &mut App, action: Action) -> Option<Command> {
        let answer = |app: &mut App, answer: Answer| app.answered().map(|id| Command::Answer { id, answer });
        match action {
            Action::Quit => None,
            Action::Prompt(text) => Some(prompt_with_files(app, text)),
            Action::PlanPrompt(text) => {
                self.session.send(Command::SetMode { mode: lembas_protocol::Mode::Plan });
                Some(prompt_with_files(app, text))
            }
            Action::Shell(line) => Some(Command::Shell { line }),
            Action::Settings(changes) => {
                self.settings(app, changes);
                None
            }
            Action::Steer(text) => {
                // Shown as queued under the turn until the model takes them.
                app.queued.push(text.clone());
                Some(Command::Steer { text })
            }
            Action::Open(id) => {
                self.open_session(app, id);
                None
            }
            Action::List { words, all } => {
                let project = if all { None } else { app.root.as_deref() };
                app.show_sessions(listed(self.host.as_ref(), words.as_deref(), project));
                None
            }
            Action::Team => {
                // The tree and room as they stand now (the tree's own events come at most four
                // a second), shown when the room that answers this comes.
                self.team_asked = self.session.send(Command::ReportTeam { since: 0 });
                None
            }
            Action::Transcript { name, session } => {
                app.show_transcript(&name, self.host.transcript(&session).map_err(|e| e.to_string()));
                None
            }
            Action::Subagents(pick) => {
                let host = &self.host;
                let children = host.subagents(&app.session_id).map_err(|e| e.to_string());
                app.show_subagents(children, pick, |id| host.transcript(id).map_err(|e| e.to_string()));
                None
            }
            Action::Cancel => Some(Command::Cancel),
            Action::StopAtCard => {
                // Stopped first, so the declined call's turn does not go on to the model.
                self.session.send(Command::Cancel);
                answer(app, Answer::Approval(lembas_protocol::Approval::Deny { feedback: None }))
            }
            Action::StopAtQuestion => {
                self.session.send(Command::Cancel);
                answer(app, Answer::Reply { words: None })
            }
            Action::Answer(approval) => answer(app, Answer::Approval(approval)),
            Action::Plan(verdict) => answer(app, Answer::Plan(verdict)),
            Action::Reply(words) => answer(app, Answer::Reply { words: Some(words) }),
            Action::SetMode(mode) => Some(Command::SetMode { mode }),
            Action::Compact => Some(Command::Compact),
            Action::Undo => Some(Command::Undo),
            Action::OverwriteKept => Some(Command::OverwriteKept),
            Action::Turns => Some(Command::ReportTurns),
            Action::GoBack(command) => Some(command),
            Action::SetModel(model) => Some(Command::SetModel { model: model.id }),
            Action::SetEffort(level) => Some(Command::SetEffort { level }),
            // The engine says the new title (`Event::Title`); the status bar shows it.
            Action::Rename(title) => Some(Command::Rename { title }),
            Action::Mcp => Some(Command::ReportMcp),
            Action::AgentFiles => Some(Command::ReportAgentFiles),
            Action::Notes(ask) => Some(Command::ReportNotes { ask }),
            Action::SetAgents(min, max) => {
                app.agents = (min, max);
                Some(Command::SetAgents { min, max })
            }
            Action::StopSubagent(name) => Some(Command::StopSubagent { name }),
            Action::Schedule(ask) => {
                self.server.schedule(app, ask);
                None
            }
            Action::Share(on) => {
                self.server.share(app, on);
                None
            }
        }
    }

    /// `/settings` changed: kept in config.toml, and each change sent or applied here.
    fn settings(&mut self, app: &mut App, changes: Vec<settings::Change>) {
        match self.save.as_ref().map(|save| save(&changes)) {
            Some(Ok(path)) => app.finished.push(Block::Notice(format!("Settings kept in {path}."))),
            Some(Err(e)) => app.finished.push(Block::Error(format!("The settings were not kept: {e}"))),
            None => {}
        }
        for change in changes {
            let command = match change {
                settings::Change::Mode(mode) => Some(Command::SetMode { mode }),
                settings::Change::Model(model) => Some(Command::SetModel { model }),
                settings::Change::Effort(level) => Some(Command::SetEffort { level }),
                settings::Change::Notify(on) => {
                    app.notify = on;
                    None
                }
                settings::Change::Personality(name) => {
                    match lembas_protocol::personality_text(&name, app.personality_custom.as_deref()) {
                        Ok(text) => {
                            app.personality = name;
                            Some(Command::SetPersonality { text })
                        }
                        Err(e) => {
                            app.finished.push(Block::Error(e));
                            None
                        }
                    }
                }
                settings::Change::Agents(min, max) => {
                    app.agents = (min, max);
                    Some(Command::SetAgents { min, max })
                }
                settings::Change::CompactAt(share) => {
                    app.compact_at = share;
                    app.finished
                        .push(Block::Notice("Compaction starts at the new share from the next session on.".into()));
                    None
                }
            };
            if let Some(command) = command {
                self.session.send(command);
            }
        }
    }

    /// Moves to session `id` (`None`: a new one). The session open here is shown again rather
    /// than opened twice (this process holds it).
    fn open_session(&mut self, app: &mut App, id: Option<String>) {
        if id.as_deref() != Some(self.session.id()) {
            match (self.open)(id.as_deref()) {
                Ok(next) => {
                    let before = std::mem::replace(&mut self.session, next.handle);
                    self.events = next.events;
                    tokio::spawn(async move { before.close().await });
                }
                Err(e) => app.finished.push(Block::Error(e)),
            }
        }
        self.announce(id);
    }

    /// Stops the running turn at once (the UI is closing).
    pub(crate) fn stop(&self) {
        self.session.send(Command::Cancel);
    }

    /// Closes the session (what its turn answered is stored; its hold is let go): its id, when
    /// it holds a conversation to go on with.
    pub(crate) async fn close(self) -> Option<String> {
        let id = self.session.id().to_owned();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.session.close()).await;
        let said = self.host.session(&id).ok().flatten().is_some_and(|s| s.messages > 0);
        said.then_some(id)
    }
}

/// A prompt, with each `@path` of a project file it names attached: the engine reads it as
/// `read` would.
fn prompt_with_files(app: &App, text: String) -> Command {
    let attachments = crate::app::mentioned_files(&text, &app.files)
        .into_iter()
        .map(|path| match &app.root {
            Some(root) => root.join(path).display().to_string(),
            None => path,
        })
        .map(|path| lembas_protocol::Attachment::File { path })
        .collect();
    Command::Prompt { text, attachments, machine: false }
}

/// The stored sessions (newest first), or those whose words match (best first): the project's
/// at `project`, or every project's.
fn listed(
    host: &dyn Sessions,
    words: Option<&str>,
    project: Option<&std::path::Path>,
) -> Result<Vec<(lembas_protocol::StoredSession, Option<String>)>, String> {
    let project = project.map(|p| p.display().to_string());
    let found: Result<Vec<_>, _> = match words {
        Some(w) => host.search(w).map(|hits| {
            hits.into_iter()
                .filter(|h| project.as_ref().is_none_or(|p| &h.session.project == p))
                .map(|h| (h.session, Some(h.snippet)))
                .collect()
        }),
        None => host.sessions(project.as_deref()).map(|list| list.into_iter().map(|s| (s, None)).collect()),
    };
    found.map_err(|e| e.to_string())
}
