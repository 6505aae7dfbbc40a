//! `/share` in the terminal: a session the TUI holds, followed by the LLeMbas server's web UI.
//!
//! The terminal carries the share itself, over a link of its own (`lembas_link::share`): the
//! session's holder is this process (the store's lock), so no other process could run it, and the
//! share lives exactly as long as the terminal has the session open. Every session the TUI opens
//! goes through a tap ([`Sharing::tee`]) that hands the UI what the session says and, while the
//! session is shared, a copy to lembas' ACP server on that link — the same code that serves the
//! sessions the server opens. The server's client may answer the session's cards (`patient`)
//! and prompt it; the person at the terminal sees both.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_client::{Opened, SessionHandle};
use lembas_protocol::{Event, Mode, ModelInfo, Said};
use lembas_tui::server::{ShareAsk, ShareNews};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

/// How long the server has to take a share before the terminal says it did not.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// The sessions the TUI has open, and the one it shares.
pub(crate) struct Sharing {
    taps: Mutex<HashMap<String, Tap>>,
    current: Mutex<Option<Current>>,
    /// The link to dial: the server, the token, no limits (the server opens nothing on it).
    plan: lembas_link::LinkPlan,
    /// What the server's requests on the link reach (the history of the shared session, …).
    host: Arc<dyn lembas_client::Host>,
    /// The login's models (a session's model is the instance's when it is one of them).
    models: Vec<ModelInfo>,
    agents: (u32, u32),
    cwd: PathBuf,
}

/// An open session as the tap sees it: what it runs with now, and where its copy goes while
/// shared.
struct Tap {
    handle: SessionHandle,
    model: ModelInfo,
    effort: Option<String>,
    mode: Mode,
    title: String,
    copy: Option<UnboundedSender<Said>>,
    /// The share to end when the session closes, and why it ended.
    ends: Option<(CancellationToken, Arc<Mutex<Option<String>>>)>,
}

struct Current {
    session: String,
    stop: CancellationToken,
}

/// What the TUI opens a session with, for the tap.
pub(crate) struct Running {
    pub model: ModelInfo,
    pub effort: Option<String>,
    pub mode: Mode,
}

/// The link a share dials: the login's server and token; limits that let the server open
/// nothing on it.
pub(crate) fn plan(login: &lembas_config::Login, token: String) -> lembas_link::LinkPlan {
    let remote = lembas_acp::Remote {
        limits: lembas_acp::Limits {
            enabled: false,
            roots: Vec::new(),
            max_mode: Mode::Manual,
            require_trust: true,
            scheduled: false,
        },
        connection: login.connection.clone(),
        trusted: Arc::new(|_| false),
        // Unused: what a shared session asks waits for the person, here or there.
        approval_timeout: Duration::from_secs(lembas_config::DEFAULT_APPROVAL_TIMEOUT),
    };
    lembas_link::LinkPlan {
        root: login.server.clone(),
        token,
        remote,
        device: crate::remote::this_device(),
        shares: None,
    }
}

impl Sharing {
    pub(crate) fn new(
        plan: lembas_link::LinkPlan,
        host: Arc<dyn lembas_client::Host>,
        models: Vec<ModelInfo>,
        agents: (u32, u32),
        cwd: PathBuf,
    ) -> Arc<Sharing> {
        Arc::new(Sharing { taps: Mutex::default(), current: Mutex::default(), plan, host, models, agents, cwd })
    }

    /// The session as the UI gets it: what it says goes through the tap, which copies it to the
    /// share while there is one.
    pub(crate) fn tee(self: &Arc<Self>, opened: Opened, running: Running) -> Opened {
        let (to_ui, events) = unbounded_channel();
        let id = opened.handle.id().to_owned();
        let tap = Tap {
            handle: opened.handle.clone(),
            model: running.model,
            effort: running.effort,
            mode: running.mode,
            title: String::new(),
            copy: None,
            ends: None,
        };
        self.taps.lock().expect("taps").insert(id.clone(), tap);
        let sharing = self.clone();
        let mut said = opened.events;
        tokio::spawn(async move {
            while let Some(one) = said.recv().await {
                let closed = matches!(one.event, Event::Closed);
                sharing.saw(&id, &one);
                // The UI may have moved to another session; the share still hears this one end.
                let _ = to_ui.send(one);
                if closed {
                    break;
                }
            }
            sharing.closed(&id);
        });
        Opened { handle: opened.handle, events }
    }

    /// The login's model `name` names (its id, or the name it is shown with).
    fn known(&self, name: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| m.is_named(name))
    }

    /// What the tap keeps of what a session said, and the copy for its share.
    fn saw(&self, id: &str, said: &Said) {
        let mut taps = self.taps.lock().expect("taps");
        let Some(tap) = taps.get_mut(id) else { return };
        match &said.event {
            Event::Model { model, effort } => {
                tap.model =
                    self.known(model).cloned().unwrap_or_else(|| ModelInfo { id: model.clone(), ..tap.model.clone() });
                tap.effort = effort.clone();
            }
            Event::Mode { mode } => tap.mode = *mode,
            Event::Title { title } => tap.title = title.clone(),
            // A resumed session runs on its own model, said when it opens.
            Event::Session { title, model, mode, .. } => {
                tap.title = title.clone();
                tap.mode = *mode;
                if let Some(known) = self.known(model) {
                    tap.model = known.clone();
                }
            }
            _ => {}
        }
        if let Some(copy) = &tap.copy {
            let _ = copy.send(said.clone());
        }
    }

    /// The session closed: its share, if it has one, ends.
    fn closed(&self, id: &str) {
        let tap = self.taps.lock().expect("taps").remove(id);
        if let Some((stop, why)) = tap.and_then(|t| t.ends) {
            *why.lock().expect("why") = Some("Sharing ended: the session closed.".into());
            stop.cancel();
        }
    }

    /// `/share` and `/share off`.
    pub(crate) async fn ask(
        self: Arc<Self>,
        ask: ShareAsk,
        news: UnboundedSender<ShareNews>,
    ) -> Result<String, String> {
        match ask {
            ShareAsk::Stop => match self.current.lock().expect("current").take() {
                Some(current) => {
                    current.stop.cancel();
                    Ok("Sharing stopped: the server no longer follows this session.".into())
                }
                None => Ok("This session is not shared.".into()),
            },
            ShareAsk::Start { session } => self.start(session, news).await,
        }
    }

    async fn start(self: Arc<Self>, session: String, news: UnboundedSender<ShareNews>) -> Result<String, String> {
        {
            let mut current = self.current.lock().expect("current");
            if current.as_ref().is_some_and(|c| c.session == session) {
                return Ok("This session is already shared. /share off stops it.".into());
            }
            // One share at a time: another session's ends.
            if let Some(before) = current.take() {
                before.stop.cancel();
            }
        }
        let stop = CancellationToken::new();
        let why = Arc::new(Mutex::new(None));
        let (copy, copied) = unbounded_channel();
        let (told, mut answers) = unbounded_channel();
        let shared = {
            let mut taps = self.taps.lock().expect("taps");
            let Some(tap) = taps.get_mut(&session) else { return Err("This session is not open here.".into()) };
            tap.copy = Some(copy);
            tap.ends = Some((stop.clone(), why.clone()));
            lembas_acp::Shared {
                opened: Opened { handle: tap.handle.clone(), events: copied },
                cwd: self.cwd.clone(),
                title: tap.title.clone(),
                instance: self.known(&tap.model.id).is_some(),
                model: tap.model.clone(),
                models: self.models.clone(),
                effort: tap.effort.clone(),
                mode: tap.mode,
                agents: self.agents,
                announced: told,
            }
        };
        let acp = lembas_acp::AcpServer::new(self.host.clone(), Some(self.plan.remote.clone()));
        let plan = lembas_link::LinkPlan { shares: Some(session.clone()), ..self.plan.clone() };
        acp.share(shared);
        *self.current.lock().expect("current") = Some(Current { session: session.clone(), stop: stop.clone() });
        let mut link = tokio::spawn(hold(plan, acp, stop.clone(), news.clone()));
        let first = tokio::select! {
            answer = answers.recv() => answer.map(Ok),
            held = &mut link => Some(Err(held.ok().and_then(Result::err).map_or_else(
                || "the share's link ended before the server answered".to_owned(),
                |e| e.to_string(),
            ))),
            () = tokio::time::sleep(ANSWER_WITHIN) => None,
        };
        let server = self.plan.root.clone();
        let said = match first {
            Some(Ok(lembas_acp::Announced::Followed { url })) => Ok(match url {
                Some(url) => format!(
                    "Shared with {server}: follow it at {url}. It may answer what this session asks. /share off stops."
                ),
                None => format!(
                    "Shared with {server}: its web UI follows this session and may answer what it asks. /share off stops."
                ),
            }),
            Some(Ok(lembas_acp::Announced::Refused(reason))) => {
                Err(format!("{server} did not take the share: {reason}"))
            }
            Some(Err(why)) => Err(format!("The session could not be shared: {why}")),
            None => Err(format!("{server} did not answer the share within {} s.", ANSWER_WITHIN.as_secs())),
        };
        if said.is_err() {
            stop.cancel();
            self.let_go(&session);
            return said;
        }
        // From here on, what becomes of the share is news for the UI.
        let sharing = self.clone();
        tokio::spawn(async move {
            let ended = tokio::select! {
                held = link => held.ok().and_then(Result::err).map(|e| format!("Sharing ended: {e}")),
                Some(lembas_acp::Announced::Refused(reason)) = answers.recv() => {
                    stop.cancel();
                    Some(format!("Sharing ended: the server no longer takes it ({reason})."))
                }
            };
            sharing.let_go(&session);
            // `/share off` has said so already; a closed session or a stop for good says why.
            let text = ended.or_else(|| why.lock().expect("why").take());
            if let Some(text) = text {
                let _ = news.send(ShareNews { text, ended: true });
            }
        });
        said
    }

    /// The share of `session` ended (its token is cancelled): its copy stops, and it is no
    /// longer the current one — unless a share begun since has taken its place.
    fn let_go(&self, session: &str) {
        if let Some(tap) = self.taps.lock().expect("taps").get_mut(session)
            && tap.ends.as_ref().is_none_or(|(stop, _)| stop.is_cancelled())
        {
            tap.copy = None;
            tap.ends = None;
        }
        let mut current = self.current.lock().expect("current");
        if current.as_ref().is_some_and(|c| c.session == session && c.stop.is_cancelled()) {
            *current = None;
        }
    }

    /// Ends the share, if there is one (the UI is closing).
    pub(crate) fn stop(&self) {
        if let Some(current) = self.current.lock().expect("current").take() {
            current.stop.cancel();
        }
    }
}

/// Holds the share's link until `stop`; a drop and its return are news once each.
async fn hold(
    plan: lembas_link::LinkPlan,
    acp: lembas_acp::AcpServer,
    stop: CancellationToken,
    news: UnboundedSender<ShareNews>,
) -> Result<(), lembas_link::LinkStop> {
    // 0: never linked yet; 1: linked; 2: dropped after being linked.
    let standing = std::sync::atomic::AtomicU8::new(0);
    let say = |state: lembas_link::LinkState, line: &str| {
        use lembas_link::LinkState::{Dialling, Linked};
        use std::sync::atomic::Ordering::SeqCst;
        let before = standing.load(SeqCst);
        let (text, now) = match (state, before) {
            (Linked, 2) => (Some("The share is linked again.".to_owned()), 1),
            (Linked, _) => (None, 1),
            (Dialling, 1) => (Some(format!("The share's link dropped ({line}).")), 2),
            (Dialling, before) => (None, before),
        };
        standing.store(now, SeqCst);
        if let Some(text) = text {
            let _ = news.send(ShareNews { text, ended: false });
        }
    };
    lembas_link::share(&plan, &acp, &say, &stop).await
}
