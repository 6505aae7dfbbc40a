//! Asking the person: an approval before a call runs. A front end that has a person implements
//! [`Approver`]; with nobody to ask ([`Nobody`]) whatever would be asked is refused instead.

use std::future::Future;
use std::pin::Pin;

use lembas_protocol::{Approval, ApprovalRequest, PlanVerdict, Question, Reply, Showing};

/// Someone who can answer approvals and questions.
pub trait Approver: Send + Sync {
    /// Whether a person is there at all.
    fn present(&self) -> bool;
    fn ask(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>>;

    /// The same, for work that goes on after the turn that started it (a background subagent):
    /// cancelling the session's turn does not take the question back.
    fn ask_in_background(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        self.ask(request)
    }

    /// What came of a question (by default it cannot be put to anyone).
    fn question(&self, _question: Question) -> Pin<Box<dyn Future<Output = Reply> + Send + '_>> {
        Box::pin(async { Reply::NotAsked })
    }

    /// The person's word on the plan (plan mode's `plan_submit` call `call_id`).
    fn approve_plan(&self, _call_id: String, _plan: String) -> Pin<Box<dyn Future<Output = PlanVerdict> + Send + '_>> {
        Box::pin(async { PlanVerdict::Declined { feedback: None } })
    }

    /// A file put in the client's viewer: `Err` with why it was not shown.
    fn show(&self, _showing: Showing) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(async { Err("nothing here can show a file".to_owned()) })
    }
}

/// Nobody to ask: a headless run, a script.
#[derive(Debug, Clone, Copy, Default)]
pub struct Nobody;

impl Approver for Nobody {
    fn present(&self) -> bool {
        false
    }

    fn ask(&self, _: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(async { Approval::Deny { feedback: None } })
    }
}
