//! What a session asks the person, as the host puts it to every front end: an approval, a
//! question or a plan becomes an [`Event::Ask`] and waits for the [`Command::Answer`] that
//! answers it; a turn cancelled while it asks takes its card back, and with nobody there
//! nothing is asked (it is refused, and the model is told).
//!
//! [`Command::Answer`]: lembas_protocol::Command::Answer

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use lembas_protocol::{Answer, Approval, ApprovalRequest, Ask, Event, PlanVerdict, Question, Reply, SubmissionId};
use tokio::sync::oneshot;

use crate::Approver;
use crate::sink::EventSink;

/// The approver the host gives every session: what would be asked becomes an [`Event::Ask`],
/// and the answer comes back as [`Command::Answer`].
pub(crate) struct HostAsks {
    events: EventSink,
    attended: bool,
    next: AtomicU64,
    /// What waits for an answer, and whether it comes from background work (which a cancelled
    /// turn does not give up).
    pending: Mutex<HashMap<u64, (oneshot::Sender<Answer>, bool)>>,
}

impl HostAsks {
    pub(crate) fn new(events: EventSink, attended: bool) -> HostAsks {
        HostAsks { events, attended, next: AtomicU64::new(1), pending: Mutex::default() }
    }

    /// Puts `ask` to the person and waits for the answer; `None` when nobody answers (the
    /// session closed, or the ask was given up).
    async fn put(&self, ask: Ask, background: bool) -> Option<Answer> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        self.pending.lock().expect("asks").insert(id, (reply, background));
        // Taken back if the asking call is dropped unanswered (its turn was cancelled), so
        // every front end's card goes.
        let guard = Unanswered { asks: self, id };
        if self.events.send(Event::Ask { id, ask }).is_err() {
            return None;
        }
        let answer = answer.await.ok();
        std::mem::forget(guard);
        answer
    }

    /// An approval put to the person; refused when nobody is there or nobody answers.
    async fn approval(&self, request: ApprovalRequest, background: bool) -> Approval {
        if !self.attended {
            return refused();
        }
        match self.put(Ask::Approval(request), background).await {
            Some(Answer::Approval(approval)) => approval,
            _ => refused(),
        }
    }

    /// The answer to ask `id`, sent as `submission` (the event that takes its card away answers
    /// that submission).
    pub(crate) fn answer(&self, id: u64, answer: Answer, submission: &SubmissionId) {
        let reply = self.pending.lock().expect("asks").remove(&id);
        if let Some((reply, _)) = reply {
            let _ = reply.send(answer);
            let _ = self.events.answer(submission, Event::Answered { id });
        }
    }

    /// What the turn asked is given up (refused) — and with `background`, what background work
    /// asked too (the session closes); every front end's card goes.
    pub(crate) fn give_up(&self, background: bool) {
        let given_up: Vec<u64> = self
            .pending
            .lock()
            .expect("asks")
            .extract_if(|_, (_, from_job)| background || !*from_job)
            .map(|(id, _)| id)
            .collect();
        for id in given_up {
            let _ = self.events.send(Event::Answered { id });
        }
    }
}

/// Takes an ask back when the call that made it is dropped before an answer came.
struct Unanswered<'a> {
    asks: &'a HostAsks,
    id: u64,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.asks.pending.lock().expect("asks").remove(&self.id).is_some() {
            let _ = self.asks.events.send(Event::Answered { id: self.id });
        }
    }
}

fn refused() -> Approval {
    Approval::Deny { feedback: None }
}

impl Approver for HostAsks {
    fn present(&self) -> bool {
        self.attended
    }

    fn ask(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(self.approval(request, false))
    }

    fn ask_in_background(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(self.approval(request, true))
    }

    fn question(&self, question: Question) -> Pin<Box<dyn Future<Output = Reply> + Send + '_>> {
        Box::pin(async move {
            if !self.attended {
                return Reply::NotAsked;
            }
            match self.put(Ask::Question(question), false).await {
                Some(Answer::Reply { words: Some(words) }) => Reply::Answered { words },
                Some(Answer::Unasked) => Reply::NotAsked,
                _ => Reply::Silent,
            }
        })
    }

    fn approve_plan(&self, call_id: String, plan: String) -> Pin<Box<dyn Future<Output = PlanVerdict> + Send + '_>> {
        Box::pin(async move {
            let declined = PlanVerdict::Declined { feedback: None };
            if !self.attended {
                return declined;
            }
            match self.put(Ask::Plan { call_id, plan }, false).await {
                Some(Answer::Plan(verdict)) => verdict,
                Some(Answer::Approval(Approval::Once | Approval::Always)) => PlanVerdict::Approved { mode: None },
                Some(Answer::Approval(Approval::Deny { feedback })) => PlanVerdict::Declined { feedback },
                _ => declined,
            }
        })
    }

    fn show(&self, showing: lembas_protocol::Showing) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(async move {
            if !self.attended {
                return Err("nobody is looking".to_owned());
            }
            match self.put(Ask::Show(showing), false).await {
                Some(Answer::Shown { shown: true, .. }) => Ok(()),
                Some(Answer::Shown { reason, .. }) => {
                    Err(reason.unwrap_or_else(|| "the viewer did not show it".into()))
                }
                _ => Err("the viewer did not answer".to_owned()),
            }
        })
    }
}
