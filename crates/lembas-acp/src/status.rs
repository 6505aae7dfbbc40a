//! `_lembas/session/status` (`acp.md`): where a session stands, for a client that reattaches
//! after a restart or a dropped link — whether it exists, who holds it, whether a turn runs, its
//! title, the main agent's progress (capability `progress`) and its subagent tree (capability
//! `tree`), so the client draws them at once.

use serde_json::{Value, json};

use crate::{Server, invalid};

/// The answer for `{ sessionId }`. A session not open here is `held: "terminal"` while another
/// lembas has it open (the lock on it says so), else `"none"`; its tree is the one it kept.
/// `turnId` is the running turn's (capability `turns`), `queued` the client's turns waiting
/// behind it (a prompt sent during a turn is taken up after it), `lastTurnId` the last one that
/// finished while the session was open here.
pub(crate) async fn answer(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let id = crate::session_id(params)?;
    let stored = server.host.session(id).map_err(|e| invalid(&e.to_string()))?;
    let slot = server.slot(id);
    let held = match (&slot, &stored) {
        (Some(_), _) => "here",
        (None, Some(_)) if server.host.held_elsewhere(id) => "terminal",
        _ => "none",
    };
    let busy = slot.as_ref().is_some_and(|s| s.busy.load(std::sync::atomic::Ordering::SeqCst));
    let tree = match &slot {
        Some(slot) => slot.reads.team(&slot.handle, u64::MAX).await.map_err(|e| invalid(&e))?.0,
        None if stored.is_some() => server.host.kept_tree(id).map_err(|e| invalid(&e.to_string()))?,
        None => None,
    };
    Ok(json!({
        "sessionId": id,
        "exists": stored.is_some(),
        "held": held,
        "busy": busy,
        "title": stored.as_ref().map(|s| s.title.clone()),
        "turnId": slot.as_ref().and_then(|s| s.turn.lock().expect("turn").clone()),
        "queued": slot.as_ref().map_or_else(Vec::new, |s| s.turns.lock().expect("turns").queued.clone()),
        "lastTurnId": match slot.as_ref().and_then(|s| s.turns.lock().expect("turns").last.clone()) {
            Some(last) => Some(last),
            // Not open here, or no turn finished since it opened: the last one it kept.
            None if stored.is_some() => server.host.last_turn(id).ok().flatten(),
            None => None,
        },
        "progress": slot.as_ref().and_then(|s| s.progress.lock().expect("progress").clone()),
        "plan": slot.as_ref().and_then(|s| s.plan.lock().expect("plan").clone()),
        "tree": tree,
        "jobs": match &slot {
            Some(slot) => crate::jobs::listed(slot).await,
            None => None,
        },
    }))
}

/// A session's turns as the client named them (capability `turns`): those waiting for the turn
/// that runs, oldest first, and the last one that finished.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    queued: Vec<String>,
    last: Option<String>,
}

impl Turns {
    /// The client sent a prompt under `turn`: it waits until its turn starts.
    pub(crate) fn waiting(&mut self, turn: &str) {
        if !self.queued.iter().any(|t| t == turn) && self.last.as_deref() != Some(turn) {
            self.queued.push(turn.to_owned());
        }
    }

    /// A turn started (the client's, or one of the session's own).
    pub(crate) fn started(&mut self, turn: Option<&lembas_protocol::SubmissionId>) {
        if let Some(turn) = turn {
            self.queued.retain(|t| *t != turn.0);
        }
    }

    /// A turn finished.
    pub(crate) fn finished(&mut self, turn: Option<&lembas_protocol::SubmissionId>) {
        if let Some(turn) = turn {
            self.queued.retain(|t| *t != turn.0);
            self.last = Some(turn.0.clone());
        }
    }
}
