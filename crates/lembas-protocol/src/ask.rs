//! What the session asks the person, and how they answer: an approval before a call runs, a
//! question from `ask_user`, a plan from `plan_submit`.

use lembas_spec::Mode;
use serde::{Deserialize, Serialize};

/// A call put to the person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// What the call would do, for the person to see before allowing it: the diff of a change
    /// to files, a new file's content, a command in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// The call runs a command line — the preview, whole — which the person may correct before
    /// it runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runs_command: bool,
    /// What "for this session" would allow from now on, in words (`git commit *`, every
    /// `webfetch` call); `None` when only "once" can be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_allows: Option<String>,
    /// A team subagent's call nobody in the tree could allow (`subagents.md` §7): which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentRef>,
}

/// A subagent of the team as an approval names it: its id, name and position.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentRef {
    pub id: String,
    pub name: String,
    pub position: String,
}

/// The person's answer to an approval or a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub question: String,
    pub options: Vec<String>,
}

/// Something the session waits on the person for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ask {
    Approval(ApprovalRequest),
    Question(Question),
    /// The plan (`plan_submit`'s call), rendered, to approve or to send back with words.
    Plan {
        call_id: String,
        plan: String,
    },
    /// A file to show in the client's viewer (`show`): asked only of a client that said it shows
    /// files (`acp.md` `_lembas/show`).
    Show(Showing),
}

/// A file the session asks the client to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Showing {
    pub call_id: String,
    /// Relative to the session's working folder.
    pub path: String,
    /// `markdown`, `code`, `text` or `html`, from the file's name.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub text: String,
}

/// The person's word on a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum PlanVerdict {
    /// Approved: carry it out, in `mode` (`None`: the mode before plan mode, else edit).
    Approved { mode: Option<Mode> },
    /// Keep planning, with their words.
    Declined { feedback: Option<String> },
}

/// What came of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Answered {
        words: String,
    },
    /// The person was asked and gave no answer.
    Silent,
    /// Nobody could be asked this (no person there, or a client that cannot put it).
    NotAsked,
}

/// An answer to an [`Ask`]: an approval's [`Approval`] (on a plan, yes or no), a plan's
/// verdict with the mode to carry it out in, a question's words (`None`: not answered), or word
/// that the front end cannot put this ask to a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    Approval(Approval),
    Plan(PlanVerdict),
    Reply {
        words: Option<String>,
    },
    /// Whether the file was shown, and why not.
    Shown {
        shown: bool,
        reason: Option<String>,
    },
    Unasked,
}
