//! lembas inside editors: an Agent Client Protocol server (JSON-RPC 2.0 over stdio) on the same
//! engine as the terminal, through Zed's `agent-client-protocol` crate.
//!
//! It answers `initialize`, `session/new`, `session/load` (the stored session replayed as
//! updates), `session/prompt` (engine events as `session/update` notifications, the stop reason
//! as the answer), `session/cancel` and `session/set_mode` with lembas' four modes; approvals go
//! to the client as `session/request_permission`. A prompt runs outside the dispatch loop, so a
//! cancel arrives while it runs. Sessions run on lembas-core's host, as the terminal's do.
//!
//! MCP servers: each session connects the person's configured ones and those the client passes
//! in `session/new` (stdio or streamable HTTP; a client's entry replaces a configured one of the
//! same name).

mod asks;
mod commands;
mod events;
mod handshake;
mod jobs;
mod methods;
mod monitor;
mod opening;
mod options;
mod peer;
mod prompt;
mod reads;
mod remote;
mod rewind;
mod scheduled;
mod shared;
mod status;
mod team;
mod updates;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    CancelNotification, ConfigOptionUpdate, InitializeRequest, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, SessionConfigOption, SessionNotification, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ConnectTo};
use lembas_client::{Host, SessionHandle};
use lembas_protocol::{Command, Event, Mode, Said, SubmissionId};
use tokio::sync::oneshot;

use opening::modes;
pub use remote::{Limits, Remote};
pub use shared::{Announced, Shared};
pub use updates::{kind_of, replay, updates};

/// A command typed as a prompt, and where to say how it went.
type WaitingCommand = (commands::Awaited, oneshot::Sender<String>);

/// A session the server holds: its handle on the host, its team, the client's prompts and typed
/// commands waiting for what ends them (by submission: the same `turnId` sent twice waits for one
/// turn), and what it runs with.
#[derive(Clone)]
struct Slot {
    handle: SessionHandle,
    /// What a client reads of it (the team) through the host's commands, waiting for answers.
    reads: reads::Reads,
    prompts: Arc<Mutex<HashMap<SubmissionId, Vec<oneshot::Sender<scheduled::TurnEnd>>>>>,
    /// lembas commands typed as prompts, waiting for the event that ends each.
    commands: Arc<Mutex<HashMap<SubmissionId, WaitingCommand>>>,
    /// The model and effort it runs with, for its configuration options.
    choice: Arc<Mutex<options::Choice>>,
    /// A turn runs — the client's or one a report or a job's note started (`_lembas/session/status`).
    busy: Arc<std::sync::atomic::AtomicBool>,
    /// The main agent's progress as last said (`_lembas/session/status`).
    progress: Arc<Mutex<Option<lembas_protocol::Progress>>>,
    /// The plan as last said (capability `plan_state`: `_lembas/session/status`, `_lembas/plan`).
    plan: Arc<Mutex<Option<lembas_protocol::Plan>>>,
    /// The id of the turn that runs, if one does (`_lembas/session/status`, capability `turns`).
    turn: Arc<Mutex<Option<SubmissionId>>>,
    /// The client's turns waiting behind it, and the last one that finished.
    turns: Arc<Mutex<status::Turns>>,
    /// The chat's personality as a prompt last sent it (capability `context`).
    personality: Arc<Mutex<Option<Option<String>>>>,
    /// What the spec's events say beyond the engine's (steer ids, subagents' call titles).
    follow: Arc<Mutex<events::Follow>>,
    /// The chat's instructions as it has them, by the prompt's name for each (capability
    /// `context`).
    instructions: Arc<Mutex<Vec<(String, String)>>>,
    /// The error the running turn met, for its answer.
    error: Arc<Mutex<Option<String>>>,
    /// The scheduled run the session is for, as last admitted (`acp.md` *Scheduled work*).
    scheduled: Arc<Mutex<Option<scheduled::Admitted>>>,
    /// What it asks the client and waits for, by the ask's id: the task asking and the call it
    /// is for, so that an ask answered elsewhere (at the terminal) or given up is taken back.
    asking: asks::Asking,
    /// A terminal's shared session: the person may answer at the terminal too (`patient`), so
    /// what it asks waits for the client with no timeout.
    patient: bool,
}

impl Slot {
    /// What `event`, said for `submission`, answers: a lembas command typed as a prompt that it
    /// ends, or the client's prompts whose turn it ends.
    fn answered(&self, submission: &SubmissionId, event: &Event) {
        let ended = {
            let mut waiting = self.commands.lock().expect("commands");
            // Only the event that ends the command takes it out: what the command says on the
            // way (its progress) carries the same submission.
            match waiting.get(submission).and_then(|(awaited, _)| awaited.ended_by(event)) {
                Some(said) => waiting.remove(submission).map(|waiter| (said, waiter)),
                None => None,
            }
        };
        if let Some((said, (_, reply))) = ended {
            let _ = reply.send(said);
        }
        self.reads.said(submission, event);
        if let Event::Done { reason, text, .. } = event {
            let error = self.error.lock().expect("error").take();
            let end = scheduled::TurnEnd { reason: *reason, text: text.clone(), error };
            for waiting in self.prompts.lock().expect("prompts").remove(submission).unwrap_or_default() {
                let _ = waiting.send(end.clone());
            }
        }
    }
}

/// What opening a session answers: its id, mode, `_meta` and configuration options.
type Opening = (String, Mode, serde_json::Map<String, serde_json::Value>, Vec<SessionConfigOption>);

struct Server {
    host: Arc<dyn Host>,
    sessions: Mutex<HashMap<String, Slot>>,
    /// What the client said it does with files: (reads them, writes them).
    client_fs: Mutex<(bool, bool)>,
    /// The client speaks lembas' own protocol (`_meta.lembas` at `initialize`): it gets
    /// `_lembas/event` notifications besides the ACP updates.
    lembas_client: std::sync::atomic::AtomicBool,
    /// The client shows files (`clientCapabilities._meta.lembas.show`): `show` is offered.
    client_shows: std::sync::atomic::AtomicBool,
    /// On a LLeMbas server's link: the device's limits and how approvals wait. `None` on stdio.
    remote: Option<Remote>,
    /// The client's connection now (a link's comes and goes).
    peer: peer::Peer,
    /// The device's limits now, on the link (`remote`'s at first).
    limits: std::sync::RwLock<Option<Limits>>,
    /// Sessions a terminal shares, announced after every `initialize`.
    announced: Mutex<Vec<shared::Announcement>>,
}

/// The `sessionId` a `_lembas/*` request names.
fn session_id(params: &serde_json::Value) -> Result<&str, agent_client_protocol::Error> {
    params["sessionId"].as_str().ok_or_else(|| invalid("sessionId is required"))
}

fn invalid(message: &str) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(serde_json::json!({ "reason": message }))
}

/// A remote request refused (`-32602`): the reason in words as the message, what to change as
/// `data.reason` (`acp.md`: `folder`, `scheduled_off`, `plan`, `permission`).
fn refused(message: &str, reason: &str) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INVALID_PARAMS, message)
        .data(serde_json::json!({ "reason": reason }))
}

impl Server {
    /// The device's limits as they stand (the person may change them while linked).
    fn limits(&self) -> Option<Limits> {
        self.limits.read().expect("limits").clone()
    }

    fn slot(&self, id: &str) -> Option<Slot> {
        self.sessions.lock().expect("sessions").get(id).cloned()
    }

    /// A session's events, forwarded to the client as updates for as long as the session lives;
    /// what it asks goes to the client, and a client's turn that ends answers its prompt.
    fn forward(
        peer: peer::Peer,
        slot: Slot,
        mut events: tokio::sync::mpsc::UnboundedReceiver<Said>,
        lembas_client: bool,
        instance: events::Instance,
        approval_timeout: Option<std::time::Duration>,
    ) {
        tokio::spawn(async move {
            let id = slot.handle.id().to_owned();
            while let Some(Said { submission, event }) = events.recv().await {
                match &event {
                    Event::Prompt { .. } => {
                        slot.busy.store(true, std::sync::atomic::Ordering::SeqCst);
                        slot.turns.lock().expect("turns").started(submission.as_ref());
                        *slot.turn.lock().expect("turn") = submission.clone();
                        *slot.error.lock().expect("error") = None;
                    }
                    Event::Error { message } => *slot.error.lock().expect("error") = Some(message.clone()),
                    Event::Done { .. } => {
                        slot.busy.store(false, std::sync::atomic::Ordering::SeqCst);
                        let ended = slot.turn.lock().expect("turn").take();
                        slot.turns.lock().expect("turns").finished(ended.as_ref());
                    }
                    Event::Phase { progress } => *slot.progress.lock().expect("progress") = progress.clone(),
                    Event::Plan { plan } => *slot.plan.lock().expect("plan") = Some(plan.clone()),
                    _ => {}
                }
                // Every engine event, to a client of lembas' protocol (`acp.md` `_lembas/event`:
                // the subagent tree, progress, turns with their ids, …); an editor gets the ACP
                // updates alone and draws the subagents' calls under their tool calls.
                // Between links nobody hears it: a client that comes back reads where the session
                // stands (`_lembas/session/status`).
                let cx = peer.now().1;
                if let Some(cx) = cx.as_ref().filter(|_| {
                    lembas_client && !matches!(event, Event::Closed | Event::JobSaid { .. } | Event::FilesFound { .. })
                }) {
                    let said = {
                        let mut follow = slot.follow.lock().expect("follow");
                        events::lembas_events(&id, submission.as_ref(), &event, &instance, &mut follow)
                    };
                    for params in said {
                        if let Ok(message) = agent_client_protocol::UntypedMessage::new("_lembas/event", params) {
                            let _ = cx.send_notification(message);
                        }
                    }
                }
                match &event {
                    Event::Closed => break,
                    Event::Model { model, effort } => {
                        let options = {
                            let mut choice = slot.choice.lock().expect("choice");
                            choice.changed(model, effort.as_deref());
                            choice.options()
                        };
                        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options));
                        if let Some(cx) = &cx {
                            let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
                        }
                    }
                    Event::Agents { min, max } => slot.choice.lock().expect("choice").agents = (*min, *max),
                    Event::Ask { id: ask_id, ask } => slot.ask(&peer, &id, *ask_id, ask, approval_timeout),
                    Event::Answered { id: ask_id } => slot.taken_back(&peer, &id, *ask_id),
                    _ => {}
                }
                if let Some(submission) = &submission {
                    slot.answered(submission, &event);
                }
                if let Some(cx) = &cx {
                    for update in updates(&event) {
                        let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
                    }
                }
            }
        });
    }
}

/// Serves ACP on `transport` until the client closes it; then every running turn is cancelled
/// (what was answered stays stored) and the host shut down. Sessions open on `host`, which fills
/// in what the client does not choose from the person's set-up (what a session asks goes to the
/// client). A LLeMbas server's link, which comes and goes, holds an [`AcpServer`] instead.
pub async fn serve(
    transport: impl ConnectTo<Agent> + 'static,
    host: Arc<dyn Host>,
    remote: Option<Remote>,
) -> Result<(), agent_client_protocol::Error> {
    let server = AcpServer::new(host, remote);
    let result = server.serve(transport).await;
    server.finish().await;
    result
}

/// lembas' ACP server, over as many connections one after another as its client makes: the
/// sessions a connection opened go on when it ends, what they say goes to the next, and a prompt
/// sent again there under its `turnId` is answered by its turn (a LLeMbas server's link).
#[derive(Clone)]
pub struct AcpServer {
    server: Arc<Server>,
}

impl std::fmt::Debug for AcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpServer").field("remote", &self.server.remote).finish_non_exhaustive()
    }
}

impl AcpServer {
    /// A server on `host`; `remote` holds it to a device's limits (a LLeMbas server's link).
    pub fn new(host: Arc<dyn Host>, remote: Option<Remote>) -> AcpServer {
        AcpServer {
            server: Arc::new(Server {
                host,
                sessions: Mutex::new(HashMap::new()),
                client_fs: Mutex::new((false, false)),
                lembas_client: std::sync::atomic::AtomicBool::new(false),
                client_shows: std::sync::atomic::AtomicBool::new(false),
                limits: std::sync::RwLock::new(remote.as_ref().map(|r| r.limits.clone())),
                announced: Mutex::default(),
                remote,
                peer: peer::Peer::default(),
            }),
        }
    }

    /// Serves one connection until the client closes it (or the future is dropped: the link
    /// taken down).
    pub async fn serve(&self, transport: impl ConnectTo<Agent> + 'static) -> Result<(), agent_client_protocol::Error> {
        /// Whoever the client was is gone once the connection is, however it ended.
        struct Gone<'a>(&'a peer::Peer);
        impl Drop for Gone<'_> {
            fn drop(&mut self) {
                self.0.gone(self.0.now().0);
            }
        }
        let _gone = Gone(&self.server.peer);
        connection(self.server.clone(), agent_client_protocol::DynConnectTo::new(transport)).await
    }

    /// The device's limits as they stand (its `remote`'s until the person changes them).
    pub fn limits(&self) -> Limits {
        self.server.limits().expect("a server on the link has limits")
    }

    /// The person changed the device's limits: sessions opened from now on are held to these,
    /// and the next `initialize` says them.
    pub fn set_limits(&self, limits: Limits) {
        *self.server.limits.write().expect("limits") = Some(limits);
    }

    /// Whether a turn runs in any of its sessions.
    pub fn busy(&self) -> bool {
        self.server
            .sessions
            .lock()
            .expect("sessions")
            .values()
            .any(|s| s.busy.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// Ends every session: a running turn is cancelled (what was answered stays stored), and the
    /// host shut down.
    pub async fn finish(&self) {
        let server = &self.server;
        let slots: Vec<Slot> = server.sessions.lock().expect("sessions").drain().map(|(_, slot)| slot).collect();
        for slot in &slots {
            slot.handle.send(Command::Cancel);
        }
        for slot in &slots {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), slot.handle.close()).await;
        }
        server.host.shut_down().await;
    }
}

/// One of lembas' own methods (`acp.md` `_lembas/*`), answered.
async fn lembas_method(
    server: &Server,
    request: &agent_client_protocol::UntypedMessage,
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>,
) -> Result<serde_json::Value, agent_client_protocol::Error> {
    let params = &request.params;
    // The team's methods and `configure` name a session the client may have opened before a
    // restart: it is opened from the store (capability `sessions`).
    if (request.method.starts_with("_lembas/team")
        || request.method.starts_with("_lembas/job")
        || request.method == "_lembas/files/search"
        || request.method == "_lembas/configure")
        && let Some(refused) = server.open_stored(cx, session_id(params)?).await
    {
        return Err(refused);
    }
    match request.method.as_str() {
        "_lembas/session/status" => status::answer(server, params).await,
        "_lembas/monitor" => monitor::answer(server, params).await,
        "_lembas/configure" => methods::configure(server, params),
        "_lembas/steer" => methods::steer(server, params),
        "_lembas/session/compact" => methods::compact(server, params).await,
        "_lembas/session/delete" => methods::delete(server, params).await,
        "_lembas/directories" => methods::directories(server, params),
        "_lembas/session/history" => methods::history(server, params),
        "_lembas/session/rewind" => rewind::answer(server, params).await,
        "_lembas/files/search" => methods::files_search(server, params).await,
        method if method == "_lembas/jobs" || method.starts_with("_lembas/job/") => {
            jobs::answer(server, method, params).await
        }
        method => team::answer(server, method, params).await,
    }
}

/// One connection's dispatch, each request to its handler until the client closes it: one for
/// every transport (stdio, the link's frames), so the handlers are compiled once.
async fn connection(
    server: Arc<Server>,
    transport: agent_client_protocol::DynConnectTo<Agent>,
) -> Result<(), agent_client_protocol::Error> {
    let (s1, s2, s3, s4, s5, s6, s7, s8) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
    );
    Agent
        .v1()
        .name("lembas")
        .on_receive_request(
            async move |request: InitializeRequest, responder, cx| {
                // Whoever initializes is the client now (each link starts so).
                s1.peer.connected(cx);
                let answered = handshake::initialize(&s1, request, responder);
                // A terminal's shared sessions, told to each client that comes.
                shared::announce_all(&s1);
                answered
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| match s2
                .open(&cx, &request.cwd, None, &request.mcp_servers, request.meta.as_ref())
                .await
            {
                Ok((id, mode, said, offered)) => {
                    responder.respond(
                        NewSessionResponse::new(id.clone()).modes(modes(mode)).config_options(offered).meta(said),
                    )?;
                    cx.send_notification(SessionNotification::new(id, commands::offered()))
                }
                Err(e) => responder.respond_with_error(e.answer()),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| match s3
                .open(&cx, &request.cwd, Some(&request.session_id.0), &request.mcp_servers, None)
                .await
            {
                Ok((id, mode, _, offered)) => {
                    // The stored conversation is replayed before the answer.
                    let transcript = s3.host.transcript(&id).unwrap_or_default();
                    for update in replay(&transcript) {
                        cx.send_notification(SessionNotification::new(id.clone(), update))?;
                    }
                    responder.respond(LoadSessionResponse::new().modes(modes(mode)).config_options(offered))?;
                    cx.send_notification(SessionNotification::new(id, commands::offered()))
                }
                Err(e) => responder.respond_with_error(e.answer()),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                // A session not open here is opened from the store (capability `sessions`).
                if let Some(refused) = s4.open_stored(&cx, &request.session_id.0).await {
                    return responder.respond_with_error(refused);
                }
                prompt::request(&s4, request, responder, cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                let Some(slot) = s5.slot(&request.session_id.0) else {
                    return responder.respond_with_error(invalid("no such session"));
                };
                let Some(mode) = Mode::parse(&request.mode_id.0) else {
                    return responder.respond_with_error(invalid("no such mode: use manual, edit, auto or plan"));
                };
                // During a turn it takes effect at the turn's next step, as from any front end.
                slot.handle.send(Command::SetMode { mode });
                responder.respond(SetSessionModeResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                set_config_option(&s7, request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        // lembas' own methods (`acp.md`): last, since an untyped request matches any method.
        .on_receive_request(
            async move |request: agent_client_protocol::UntypedMessage, responder, cx| match lembas_method(
                &s8, &request, &cx,
            )
            .await
            {
                Ok(result) => responder.respond(result),
                Err(e) => responder.respond_with_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Some(slot) = s6.slot(&notification.session_id.0) {
                    slot.handle.send(Command::Cancel);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// `session/set_config_option`: the model, effort or team size, answered with the options as
/// they will be.
fn set_config_option(
    server: &Server,
    request: SetSessionConfigOptionRequest,
    responder: agent_client_protocol::v1::Responder<SetSessionConfigOptionResponse>,
) -> Result<(), agent_client_protocol::Error> {
    let Some(slot) = server.slot(&request.session_id.0) else {
        return responder.respond_with_error(invalid("no such session"));
    };
    let mut choice = slot.choice.lock().expect("choice").clone();
    let option = request.config_id.0.to_string();
    match options::command(&choice, &option, &request.value) {
        Ok(command) => {
            // Answered with the options as they will be; the session's `model`
            // event confirms them (during a turn, at its next step).
            match &command {
                Command::SetModel { model } => choice.changed(model, None),
                Command::SetEffort { level } => {
                    let model = choice.model.id.clone();
                    choice.changed(&model, level.as_deref());
                }
                // The session's `agents` event confirms it; the slot keeps it from
                // here so the next prompt's setting is compared with it.
                Command::SetAgents { min, max } => {
                    choice.agents = (*min, *max);
                    slot.choice.lock().expect("choice").agents = (*min, *max);
                }
                _ => {}
            }
            slot.handle.send(command);
            responder.respond(SetSessionConfigOptionResponse::new(choice.options()))
        }
        Err(e) => responder.respond_with_error(invalid(&e)),
    }
}

/// [`serve`] on standard input and output: `lembas serve --stdio`.
pub async fn serve_stdio(host: Arc<dyn Host>) -> Result<(), agent_client_protocol::Error> {
    serve(agent_client_protocol::Stdio::new(), host, None).await
}
