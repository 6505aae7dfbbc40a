//! Asking the person: an approval before a call runs. A front end that has a person implements
//! [`Approver`]; with nobody to ask ([`Nobody`]) whatever would be asked is refused instead.

use std::future::Future;
use std::pin::Pin;

/// A call put to the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The call's id, as the model gave it (what a client's tool-call view knows it by).
    pub call_id: String,
    pub tool: String,
    /// The call, as one line: the command, or the path.
    pub title: String,
    /// What it reaches (paths, resolved).
    pub reaches: Vec<String>,
    /// The subagent whose call it is (its description); `None` for the main agent's own.
    pub agent: Option<String>,
    /// Only "once" can be given: a confirm-always tool, a change to what decides lembas' own
    /// permissions later, leaving the sandbox. A card offers no "for this session".
    pub once_only: bool,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Once,
    /// For the rest of the session (what it covers is the permission rules' arity).
    Always,
    /// Refused, with words the model reads.
    Deny {
        feedback: Option<String>,
    },
    /// Run once with the command line the person corrected (bash).
    Edited {
        command: String,
    },
}

/// A question from `ask_user`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub question: String,
    pub options: Vec<String>,
}

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
