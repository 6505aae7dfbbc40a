//! A team that lasts as long as its session (`team.md` §7: "a session that is not open keeps
//! them until it is resumed"): the tree, the room and every message not yet delivered are kept
//! in the store whenever the team changes, and a resumed session reopens them — each subagent
//! on the team back in its own stored session, parked with its context, and woken when it has
//! something to do.
//!
//! A closed session's turns stop with it, as the main agent's does. A subagent whose turn was
//! cut short is woken on resume with what it missed (or a word that it was interrupted) and
//! goes on; one that was paused for a full context ends out of context, its parent told `gone`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use lembas_model::CancellationToken;
use lembas_team::{LEAD, Team};
use serde::{Deserialize, Serialize};

use super::{Hub, Member, now};
use crate::Event;
use crate::session::Session;

/// What a subagent whose turn the closing cut short is told when it is woken again, if no
/// message waits for it. Our own words.
const CUT_SHORT: &str =
    "The session was closed while you worked, and is open again. Go on with your part from where you stopped.";

/// A team as the store keeps it.
#[derive(Serialize, Deserialize)]
pub(crate) struct Kept {
    team: Team,
    /// Marked messages for the main agent, not yet delivered.
    #[serde(default)]
    mail: Vec<String>,
    /// Each subagent's messages not yet delivered, its brief if it never started, and the call
    /// that made it.
    #[serde(default)]
    members: BTreeMap<String, KeptMember>,
    /// The subagents the person stopped (the main agent's note says them).
    #[serde(default)]
    stopped_by_person: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct KeptMember {
    inbox: Vec<String>,
    brief: Option<String>,
    call_id: String,
}

impl Kept {
    /// The team kept for session `id`; a kept team that cannot be read is said and dropped (the
    /// session itself opens all the same).
    pub(crate) fn load(store: &lembas_store::Store, id: &str, events: &crate::sink::EventSink) -> Option<Kept> {
        let text = match store.team(id) {
            Ok(text) => text?,
            Err(e) => {
                let _ = events.send(Event::Notice { message: format!("The session's team could not be read: {e}") });
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(kept) => Some(kept),
            Err(e) => {
                let _ = events.send(Event::Notice {
                    message: format!("The session's team could not be read ({e}); it starts with no subagents."),
                });
                None
            }
        }
    }

    pub(crate) fn into_team(self) -> (Team, KeptRest) {
        (self.team, KeptRest { mail: self.mail, members: self.members, stopped_by_person: self.stopped_by_person })
    }
}

/// The tree of a kept team as clients draw it (`subagents.md` §12), for a session not open here;
/// `None` when it never had a subagent or cannot be read.
pub(crate) fn kept_tree(text: &str) -> Option<lembas_team::TeamTree> {
    let kept: Kept = serde_json::from_str(text).ok()?;
    (kept.team.agents().len() > 1).then(|| kept.team.data())
}

/// What a kept team brings besides its tree, for the hub that reopens it.
pub(crate) struct KeptRest {
    mail: Vec<String>,
    members: BTreeMap<String, KeptMember>,
    stopped_by_person: Vec<String>,
}

impl Hub {
    /// Keeps the team as it stands, when that differs from what was kept last. Nothing is kept
    /// once the session closed: what its stopping turns change after is not the team it left.
    pub(crate) fn keep(&self) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        let text = self.kept_text();
        let mut last = self.kept.lock().expect("kept");
        if last.as_deref() == Some(text.as_str()) {
            return;
        }
        if let Err(e) = self.store.save_team(&self.session, &text) {
            let _ = self.events.send(Event::Notice { message: format!("The team could not be kept: {e}") });
            return;
        }
        *last = Some(text);
    }

    /// The team as the store keeps it. A hub starts out counting its first form as kept: a
    /// session whose team never changed keeps no row.
    pub(crate) fn kept_text(&self) -> String {
        let team = self.team().clone();
        let members = self
            .members
            .lock()
            .expect("members")
            .iter()
            .map(|(id, m)| {
                let kept = KeptMember {
                    inbox: m.inbox.lock().expect("inbox").clone(),
                    brief: m.brief.clone(),
                    call_id: m.call_id.clone(),
                };
                (id.clone(), kept)
            })
            .collect();
        let kept = Kept {
            team,
            mail: self.mail.lock().expect("mail").clone(),
            members,
            stopped_by_person: self.stopped_by_person.lock().expect("stopped").clone(),
        };
        serde_json::to_string(&kept).expect("a team serializes")
    }

    /// The main session closes: the team is kept as it stands, then every subagent's turn
    /// stops where it is and its session is let go.
    pub(crate) fn close(self: &Arc<Self>) {
        self.keep();
        self.closed.store(true, Ordering::SeqCst);
        let live = self.team().live_subtree(LEAD);
        self.halt(&live);
    }

    /// Says what reopening the team did, once: after the session is drawn, or as its next turn
    /// starts.
    pub(crate) fn say_pending(&self) {
        if let Some(message) = self.pending_notice.lock().expect("notice").take() {
            let _ = self.events.send(Event::Notice { message });
        }
    }

    /// Restores what a kept team had besides its tree.
    pub(crate) fn restore(&self, rest: &mut KeptRest) {
        *self.mail.lock().expect("mail") = std::mem::take(&mut rest.mail);
        *self.stopped_by_person.lock().expect("stopped") = std::mem::take(&mut rest.stopped_by_person);
    }
}

impl Session {
    /// Reopens the kept team of this resumed main session: each subagent on the team back in
    /// its stored session and parked; those whose turn was cut short, or with messages waiting,
    /// woken (in a runtime; the order they wait in is the order they were working or waiting).
    pub(crate) fn reopen_team(&mut self, mut rest: KeptRest) {
        let Some(seat) = self.leads_team().cloned() else { return };
        let hub = seat.hub.clone();
        hub.restore(&mut rest);
        let (cut_short, deliveries) = hub.team().reopen(now());
        let live: Vec<(String, Option<String>)> = {
            let team = hub.team();
            team.agents()[1..].iter().filter(|a| !a.state.ended()).map(|a| (a.id.clone(), a.session.clone())).collect()
        };
        for (id, stored) in live {
            let kept = rest.members.remove(&id);
            let call_id = kept.as_ref().map_or_else(|| format!("team-{id}"), |k| k.call_id.clone());
            let reopened = stored.ok_or_else(|| "no stored session".to_owned()).and_then(|stored| {
                let (cfg, of) = self.member_setup(&seat, &id, &call_id)?;
                let (sender, events) = crate::sink::EventSink::channel();
                let child = Session::reopen(cfg, &stored, sender, Some(of)).map_err(|e| e.to_string())?;
                Ok((child, events))
            });
            let (child, events) = match reopened {
                Ok(parts) => parts,
                Err(why) => {
                    // Its conversation is gone: it cannot go on, so it leaves the team.
                    let name = hub.team().agent(&id).map(|a| a.name.clone()).unwrap_or_default();
                    self.emit(Event::Notice {
                        message: format!("Subagent {name} could not be reopened ({why}); it left the team."),
                    });
                    hub.team().stop_ids(std::slice::from_ref(&id), now());
                    continue;
                }
            };
            let (mut inbox, brief) = kept.map(|k| (k.inbox, k.brief)).unwrap_or_default();
            if brief.is_none() && inbox.is_empty() && cut_short.contains(&id) {
                inbox.push(CUT_SHORT.to_owned());
            }
            child.steer_handle().lock().expect("inbox").extend(inbox);
            let member = Member {
                changes: child.changes.clone(),
                inbox: child.steer_handle(),
                stop: CancellationToken::new(),
                parked: Some((child, events)),
                brief,
                call_id,
            };
            hub.members.lock().expect("members").insert(id, member);
        }
        let going_on: Vec<String> = {
            let team = hub.team();
            cut_short
                .iter()
                .filter_map(|id| team.agent(id).filter(|a| !a.state.ended()).map(|a| a.name.clone()))
                .collect()
        };
        if !going_on.is_empty() {
            // Said once the front end has drawn the session (or as its next turn starts).
            *hub.pending_notice.lock().expect("notice") = Some(format!(
                "The session closed while {} worked; {} on where {} stopped.",
                going_on.join(", "),
                if going_on.len() == 1 { "it goes" } else { "they go" },
                if going_on.len() == 1 { "it" } else { "they" },
            ));
        }
        // Everyone with something to do is woken below, in order.
        hub.deliver(deliveries);
        if tokio::runtime::Handle::try_current().is_err() {
            // Nobody could run their turns here: they wait, parked, for the next message.
            hub.tell();
            return;
        }
        let others: Vec<String> = hub.members.lock().expect("members").keys().cloned().collect();
        for id in cut_short.iter().chain(others.iter().filter(|id| !cut_short.contains(id))) {
            hub.wake_if_waiting(id);
        }
        hub.tell();
    }
}
