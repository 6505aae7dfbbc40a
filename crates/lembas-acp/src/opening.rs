//! Opening a session for the client: what its `_meta` chooses, the editor's files, and — on a
//! LLeMbas server's link — the folder and mode the device allows.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    McpServer, ReadTextFileRequest, SessionMode, SessionModeState, WriteTextFileRequest,
};
use lembas_client::{Choices, OpenRequest, OpenedSession};
use lembas_protocol::{Command, Mode};

use crate::{Opening, Server, Slot, invalid, options, reads, refused};

/// The editor's files, through `fs/read_text_file` and `fs/write_text_file`, so the agent reads
/// the editor's unsaved buffers.
struct ClientFiles {
    cx: ConnectionTo<Client>,
    session_id: Arc<Mutex<String>>,
    reads: bool,
    writes: bool,
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles").field("reads", &self.reads).field("writes", &self.writes).finish()
    }
}

impl lembas_client::EditorFiles for ClientFiles {
    fn read(&self, path: &Path) -> Option<Result<String, String>> {
        if !self.reads {
            return None;
        }
        let id = self.session_id.lock().expect("session id").clone();
        let asked = self.cx.send_request(ReadTextFileRequest::new(id, path.to_path_buf()));
        // File tools run on blocking threads; wait there for the editor's answer.
        let answer = tokio::runtime::Handle::current().block_on(asked.block_task());
        Some(answer.map(|r| r.content).map_err(|e| format!("The editor could not give {}: {e}", path.display())))
    }

    fn write(&self, path: &Path, content: &str) -> Option<Result<(), String>> {
        if !self.writes {
            return None;
        }
        let id = self.session_id.lock().expect("session id").clone();
        let asked = self.cx.send_request(WriteTextFileRequest::new(id, path.to_path_buf(), content.to_owned()));
        let answer = tokio::runtime::Handle::current().block_on(asked.block_task());
        Some(answer.map(|_| ()).map_err(|e| format!("The editor could not write {}: {e}", path.display())))
    }
}

/// What `session/new`'s `_meta` chooses (`acp.md`): `mode`; the model by `lembas_model` (an
/// instance's name) or `model` (a ref the device knows); `effort`, one of the model's levels — a
/// level the model does not offer is read as its start level; for a LLeMbas client, the chat's
/// Subagents setting, whether subagents are off, and the person's earlier words. An unknown mode
/// or model is an error.
fn choose(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> Result<Choices, String> {
    let Some(meta) = meta else { return Ok(Choices::default()) };
    let word = |key: &str| meta.get(key).and_then(|v| v.as_str());
    let mode = match word("mode") {
        Some(mode) => {
            Some(Mode::parse(mode).ok_or_else(|| format!("no such mode {mode}: use manual, edit, auto or plan"))?)
        }
        None => None,
    };
    Ok(Choices {
        mode,
        widest_mode: None,
        display: false,
        model: word("lembas_model").or_else(|| word("model")).map(str::to_owned),
        effort: word("effort").map(str::to_owned),
        // A LLeMbas client's chat setting stands over the device's own (capability `agents`).
        agents: options::sent_agents(Some(meta))?,
        subagents_off: options::subagents_off(Some(meta)),
        said: options::sent_said(Some(meta)),
        scoped: false,
        knowledge_scope: options::sent_library(Some(meta)),
        personality: options::sent_personality(Some(meta)),
        given_instructions: options::sent_instructions(Some(meta)),
    })
}

/// What `session/new` answers in its `_meta` (`acp.md`): the model, mode and effort the session
/// runs with, and whether the model is the instance's (true on a LLeMbas server's link; no
/// instance is behind an editor).
fn chosen(
    model: &lembas_protocol::ModelInfo,
    mode: Mode,
    effort: Option<&str>,
    instance: bool,
) -> serde_json::Map<String, serde_json::Value> {
    let effort = effort.map_or_else(|| model.start_level(), str::to_owned);
    let mut meta = serde_json::Map::new();
    meta.insert(
        "lembas".into(),
        serde_json::json!({ "model": model.id, "mode": mode, "effort": effort, "instance": instance }),
    );
    meta
}

pub(crate) fn modes(current: Mode) -> SessionModeState {
    let available = Mode::ALL
        .iter()
        .rev()
        .map(|m| {
            let name = match m {
                Mode::Manual => "Manual",
                Mode::Edit => "Edit",
                Mode::Auto => "Auto",
                Mode::Plan => "Plan",
            };
            SessionMode::new(m.as_str(), name)
        })
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// Why opening a session failed: a remote folder refused, or anything else.
pub(crate) enum OpenError {
    /// A scheduled run this device does not take now.
    Scheduled(agent_client_protocol::Error),
    Refused(String),
    Failed(String),
}

impl OpenError {
    pub(crate) fn answer(self) -> agent_client_protocol::Error {
        match self {
            OpenError::Scheduled(refusal) => refusal,
            OpenError::Refused(why) => refused(&why, "folder"),
            OpenError::Failed(why) => invalid(&why),
        }
    }
}

impl Server {
    pub(crate) async fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: &Path,
        resume: Option<&str>,
        client_servers: &[McpServer],
        meta: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<Opening, OpenError> {
        // The limits as they are now, read once for the whole decision.
        let limits = self.limits();
        // A scheduled run first: off, it is refused whatever else is asked.
        let scheduled = match crate::scheduled::sent(meta) {
            Some(run) => Some(crate::scheduled::admit(run, limits.as_ref()).map_err(OpenError::Scheduled)?),
            None => None,
        };
        // On the link: only a folder the device accepts, at its real path, and never wider
        // than the device's widest mode.
        let (cwd, widest_mode) = match (&self.remote, limits) {
            (Some(remote), Some(limits)) => {
                let real = limits.admit(cwd, remote.trusted.as_ref()).map_err(OpenError::Refused)?;
                (real, Some(limits.max_mode))
            }
            _ => (cwd.to_path_buf(), None),
        };
        let cwd = cwd.as_path();
        let (reads, writes) = *self.client_fs.lock().expect("client fs");
        let files_session = Arc::new(Mutex::new(String::new()));
        let editor_files = (reads || writes).then(|| {
            Arc::new(ClientFiles { cx: cx.clone(), session_id: files_session.clone(), reads, writes })
                as Arc<dyn lembas_client::EditorFiles>
        });
        if let Some(id) = resume {
            // Loaded again while open here: the open one gives way (and its hold on the session).
            let before = self.sessions.lock().expect("sessions").remove(id);
            if let Some(before) = before {
                before.handle.send(Command::Cancel);
                before.handle.close().await;
            }
        }
        // What the client chose; a session a LLeMbas server's client opens keeps its memory in
        // that chat's data group.
        let asked = Choices { scoped: self.remote.is_some(), ..choose(meta).map_err(OpenError::Failed)? };
        let given = asked.given_instructions.clone().unwrap_or_default();
        let request = OpenRequest {
            cwd: cwd.to_path_buf(),
            resume: resume.map(str::to_owned),
            attended: true,
            choices: match &scheduled {
                // The schedule's mode, and no wider for as long as the session lives; nobody is
                // looking, so nothing is shown.
                Some(run) => Choices { mode: Some(run.mode), widest_mode: Some(run.mode), ..asked },
                None => Choices {
                    widest_mode,
                    display: self.client_shows.load(std::sync::atomic::Ordering::Relaxed),
                    ..asked
                },
            },
            mcp_servers: client_servers.iter().map(|s| serde_json::to_value(s).unwrap_or_default()).collect(),
            editor_files,
        };
        let OpenedSession { opened, mode, model, models, effort, agents } =
            self.host.open(request).map_err(|e| OpenError::Failed(e.to_string()))?;
        // On a LLeMbas server's link every model is the instance's; an editor's are the device's.
        let instance = crate::events::Instance {
            connection: self.remote.as_ref().and_then(|r| r.connection.clone()),
            served: self.remote.is_some(),
        };
        let said = chosen(&model, mode, effort.as_deref(), instance.served);
        let choice = options::Choice { models, model, effort, agents };
        let offered = choice.options();
        let id = opened.handle.id().to_owned();
        *files_session.lock().expect("session id") = id.clone();
        let slot = Slot::new(opened.handle, choice, scheduled, false);
        *slot.instructions.lock().expect("instructions") = given;
        let lembas_client = self.lembas_client.load(std::sync::atomic::Ordering::Relaxed);
        let waits = self.remote.as_ref().map(|r| r.approval_timeout);
        self.peer.connected_if_none(cx);
        Self::forward(self.peer.clone(), slot.clone(), opened.events, lembas_client, instance, waits);
        self.sessions.lock().expect("sessions").insert(id.clone(), slot);
        Ok((id, mode, said, offered))
    }
}

impl Server {
    /// A session the client names that is not open here, opened from the store under the same
    /// rules as `session/new` (capability `sessions`: the id lasts across restarts) — a main
    /// session of the store that no other lembas holds open, in its project, within the
    /// device's roots and trust. Answers why not when it is stored but may not be opened here;
    /// nothing when it is open, or unknown (the method then says there is no such session).
    pub(crate) async fn open_stored(
        &self,
        cx: &ConnectionTo<Client>,
        id: &str,
    ) -> Option<agent_client_protocol::Error> {
        if self.slot(id).is_some() {
            return None;
        }
        let stored = self.host.session(id).ok().flatten().filter(|s| s.parent.is_none())?;
        if self.host.held_elsewhere(id) {
            return Some(invalid("that session is open in another lembas on this computer (a terminal, say)"));
        }
        self.open(cx, Path::new(&stored.project), Some(id), &[], None).await.err().map(OpenError::answer)
    }
}

impl Slot {
    /// A session the server holds, on `handle`, running with `choice`; for `scheduled` run
    /// (if any); `patient` for a terminal's shared session.
    pub(crate) fn new(
        handle: lembas_client::SessionHandle,
        choice: options::Choice,
        scheduled: Option<crate::scheduled::Admitted>,
        patient: bool,
    ) -> Slot {
        Slot {
            reads: reads::Reads::default(),
            handle,
            prompts: Arc::default(),
            commands: Arc::default(),
            choice: Arc::new(Mutex::new(choice)),
            busy: Arc::default(),
            progress: Arc::default(),
            plan: Arc::default(),
            turn: Arc::default(),
            turns: Arc::default(),
            personality: Arc::default(),
            instructions: Arc::default(),
            follow: Arc::default(),
            error: Arc::default(),
            scheduled: Arc::new(Mutex::new(scheduled)),
            asking: Arc::default(),
            patient,
        }
    }
}
