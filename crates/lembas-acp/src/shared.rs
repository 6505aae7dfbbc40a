//! A session a terminal shares with a LLeMbas server (`acp.md`: `announce`): the terminal keeps
//! it — its model, its holder, its cards — and the server's client follows it over a link of the
//! terminal's own, with every event a session it opened would send, and may answer what it asks
//! (`patient`: the person may answer at the terminal first, so the client does not time it out).
//! After each `initialize` the device announces the session (`_lembas/announce`, a request whose
//! answer may say where the person follows it); the server opens nothing on such a link (its
//! limits say `enabled: false`).

use std::path::PathBuf;
use std::sync::Arc;

use lembas_client::Opened;
use lembas_protocol::{Mode, ModelInfo};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use crate::{AcpServer, Server, Slot, events, options};

/// A session a terminal holds, to be shared: its handle and a copy of what it says, and what it
/// runs with now.
#[derive(Debug)]
pub struct Shared {
    pub opened: Opened,
    pub cwd: PathBuf,
    pub title: String,
    pub model: ModelInfo,
    /// The login's models.
    pub models: Vec<ModelInfo>,
    pub effort: Option<String>,
    pub mode: Mode,
    pub agents: (u32, u32),
    /// The session's model is the instance's (`instance` of `announce`).
    pub instance: bool,
    /// What the server made of each announcement.
    pub announced: UnboundedSender<Announced>,
}

/// The server's answer to `_lembas/announce`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announced {
    /// It follows the session; `url`, where the person does too, when the server says.
    Followed { url: Option<String> },
    /// It refused (or does not know the method): its words.
    Refused(String),
}

/// What the server holds of a shared session to announce it on every link.
#[derive(Clone)]
pub(crate) struct Announcement {
    pub params: Value,
    pub told: UnboundedSender<Announced>,
}

impl AcpServer {
    /// Shares `shared` with the client, on this connection and every later one: its events go
    /// there as a session the client opened would send them, and the client may prompt it and
    /// answer what it asks. Closing is the terminal's: the server never closes it.
    pub fn share(&self, shared: Shared) {
        let server = &self.server;
        let id = shared.opened.handle.id().to_owned();
        let params = json!({
            "sessionId": id,
            "cwd": shared.cwd,
            "title": shared.title,
            "model": shared.model.id,
            "mode": shared.mode,
            "effort": shared.effort.clone().unwrap_or_else(|| shared.model.start_level()),
            "instance": shared.instance,
        });
        let choice = options::Choice {
            models: shared.models,
            model: shared.model,
            effort: shared.effort,
            agents: shared.agents,
        };
        let slot = Slot::new(shared.opened.handle, choice, None, true);
        let instance = events::Instance {
            connection: server.remote.as_ref().and_then(|r| r.connection.clone()),
            served: shared.instance,
        };
        // The server's client speaks lembas' protocol; what is said before it has initialized
        // goes to nobody, and it reads the conversation so far with `_lembas/session/history`.
        Server::forward(server.peer.clone(), slot.clone(), shared.opened.events, true, instance, None);
        server.sessions.lock().expect("sessions").insert(id, slot);
        let announcement = Announcement { params, told: shared.announced };
        server.announced.lock().expect("announced").push(announcement.clone());
        // Already linked: announced now; otherwise after the next `initialize`.
        if server.peer.now().1.is_some() {
            announce(server, announcement);
        }
    }

    /// Lets every shared session go without closing it (the terminal holds it): nothing more
    /// of it reaches the client.
    pub fn unshare(&self) {
        let server = &self.server;
        let ids: Vec<String> = server
            .announced
            .lock()
            .expect("announced")
            .drain(..)
            .filter_map(|a| a.params["sessionId"].as_str().map(str::to_owned))
            .collect();
        let mut sessions = server.sessions.lock().expect("sessions");
        for id in ids {
            sessions.remove(&id);
        }
    }
}

/// Announces the shared sessions to the client that has just initialized.
pub(crate) fn announce_all(server: &Arc<Server>) {
    let announcements = server.announced.lock().expect("announced").clone();
    for announcement in announcements {
        announce(server, announcement);
    }
}

/// `_lembas/announce` to the client there is; its answer goes to whoever shared the session.
fn announce(server: &Server, announcement: Announcement) {
    let Some(cx) = server.peer.now().1 else { return };
    let Ok(request) = agent_client_protocol::UntypedMessage::new("_lembas/announce", announcement.params) else {
        return;
    };
    tokio::spawn(async move {
        let said = match cx.send_request(request).block_task().await {
            Ok(answer) => {
                let answer = serde_json::to_value(answer).unwrap_or_default();
                Announced::Followed { url: answer["url"].as_str().map(str::to_owned) }
            }
            Err(e) => Announced::Refused(e.message.clone()),
        };
        let _ = announcement.told.send(said);
    });
}
