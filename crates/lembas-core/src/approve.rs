//! Asking the person: an approval before a call runs. A front end that has a person implements
//! [`Approver`]; with nobody to ask ([`Nobody`]) whatever would be asked is refused instead.

use std::future::Future;
use std::pin::Pin;

use lembas_protocol::{Approval, ApprovalRequest, Question};

/// Someone who can answer approvals and questions.
pub trait Approver: Send + Sync {
    /// Whether a person is there at all.
    fn present(&self) -> bool;
    fn ask(&self, request: ApprovalRequest) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>>;

    /// The person's answer to a question, or `None` when nobody answers.
    fn question(&self, _question: Question) -> Pin<Box<dyn Future<Output = Option<String>> + Send + '_>> {
        Box::pin(async { None })
    }

    /// Whether the person approves the plan (plan mode's `plan_submit`), with their words.
    fn approve_plan(&self, _plan: String) -> Pin<Box<dyn Future<Output = Approval> + Send + '_>> {
        Box::pin(async { Approval::Deny { feedback: None } })
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
