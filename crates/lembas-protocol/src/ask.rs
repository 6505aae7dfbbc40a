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
    /// A subagent running as a background job asks: which job (`job` on a LLeMbas client's
    /// card; it may ask while the session itself is idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Box<crate::jobs::JobRef>>,
    /// Why the person is asked, in a sentence: the mode's rule, or what makes the call asked in
    /// every mode (`_meta.lembas.reason` on a LLeMbas client's card).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
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

/// An approval's card as the spec words it (`acp.md`, `session/request_permission`): the
/// options' ids and kinds, and how an answer reads. Kept here, in one place, for every client
/// that puts a card to a person over ACP — an editor, a LLeMbas server's web UI and phone.
pub mod card {
    use super::Approval;

    /// Allow this call once (ACP kind `allow_once`).
    pub const ONCE: &str = "once";
    /// Allow it for the rest of the session (kind `allow_always`); absent where only once can
    /// be given.
    pub const SESSION: &str = "session";
    /// Deny it (kind `reject_once`).
    pub const DENY: &str = "deny";

    /// The answer a client gave: the option it selected, with the `_meta.lembas` it sent beside
    /// it — `command`, the corrected command line (`once` only, for a call that runs one), or
    /// `feedback`, why it was denied. The ids an earlier lembas offered (`allow_once`,
    /// `allow_always`, `reject`) are read the same; any other id is a denial.
    pub fn answer(option_id: &str, lembas_meta: Option<&serde_json::Value>, runs_command: bool) -> Approval {
        let said = |key: &str| {
            lembas_meta
                .and_then(|m| m.get(key))
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        match option_id {
            ONCE | "allow_once" => match said("command") {
                Some(command) if runs_command => Approval::Edited { command },
                _ => Approval::Once,
            },
            SESSION | "allow_always" => Approval::Always,
            _ => Approval::Deny { feedback: said("feedback") },
        }
    }

    /// The method a question goes to a client of protocol 2 or later by (`acp.md`).
    pub const QUESTION: &str = "_lembas/question";
    /// The method a plan goes to a client of protocol 2 or later by.
    pub const PLAN: &str = "_lembas/plan";

    /// `_lembas/question`'s params. The spec names the method, not its shape: designed from
    /// `session/request_permission`'s (`docs/spec-decisions.md`) — the session, the id the
    /// question goes by, its words and the answers offered (none: any words), and
    /// `_meta.lembas.patient` where the person may answer at the terminal too.
    pub fn question_params(
        session_id: &str,
        call_id: &str,
        question: &super::Question,
        patient: bool,
    ) -> serde_json::Value {
        let mut params = serde_json::json!({
            "sessionId": session_id,
            "toolCallId": call_id,
            "question": question.question,
            "options": question.options,
        });
        if patient {
            params["_meta"] = serde_json::json!({ "lembas": { "patient": true } });
        }
        params
    }

    /// A question's answer: `{ answer: "…" }` (one of the options, or the person's own words),
    /// or `{ answer: null }` when they gave none.
    pub fn question_answer(answer: &serde_json::Value) -> Option<String> {
        answer
            .get("answer")
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
    }

    /// `_lembas/plan`'s params: the plan as Markdown and the modes it may be carried out in.
    pub fn plan_params(
        session_id: &str,
        call_id: &str,
        plan: &str,
        structure: Option<&crate::Plan>,
        modes: &[lembas_spec::Mode],
        patient: bool,
    ) -> serde_json::Value {
        let modes: Vec<&str> = modes.iter().map(|m| m.as_str()).collect();
        let mut params = serde_json::json!({
            "sessionId": session_id,
            "toolCallId": call_id,
            "plan": plan,
            "modes": modes,
        });
        let mut said = serde_json::Map::new();
        if patient {
            said.insert("patient".into(), true.into());
        }
        // The plan's structure (capability `plan_state`), for a client that draws it.
        if let Some(structure) = structure {
            said.insert("plan".into(), serde_json::json!(structure));
        }
        if !said.is_empty() {
            params["_meta"] = serde_json::json!({ "lembas": said });
        }
        params
    }

    /// A plan's answer: `{ outcome: "approved", mode? }` carries it out (in `mode`, one of those
    /// offered), anything else keeps planning, with `feedback` when the person gave it.
    pub fn plan_answer(answer: &serde_json::Value) -> super::PlanVerdict {
        if answer.get("outcome").and_then(serde_json::Value::as_str) == Some("approved") {
            let mode = answer.get("mode").and_then(serde_json::Value::as_str).and_then(lembas_spec::Mode::parse);
            return super::PlanVerdict::Approved { mode };
        }
        let feedback =
            answer.get("feedback").and_then(serde_json::Value::as_str).map(str::trim).filter(|f| !f.is_empty());
        super::PlanVerdict::Declined { feedback: feedback.map(str::to_owned) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::json;

        #[test]
        fn questions_and_plans_read_as_their_answers_say() {
            assert_eq!(question_answer(&json!({"answer": " Postgres "})), Some("Postgres".into()));
            assert_eq!(question_answer(&json!({"answer": null})), None);
            assert_eq!(question_answer(&json!({})), None);
            use super::super::PlanVerdict;
            assert_eq!(
                plan_answer(&json!({"outcome": "approved", "mode": "auto"})),
                PlanVerdict::Approved { mode: Some(lembas_spec::Mode::Auto) }
            );
            assert_eq!(plan_answer(&json!({"outcome": "approved"})), PlanVerdict::Approved { mode: None });
            assert_eq!(
                plan_answer(&json!({"outcome": "declined", "feedback": "split step 2"})),
                PlanVerdict::Declined { feedback: Some("split step 2".into()) }
            );
            assert_eq!(plan_answer(&json!({"outcome": "nonsense"})), PlanVerdict::Declined { feedback: None });
        }

        #[test]
        fn the_specs_ids_and_their_words_are_read() {
            assert_eq!(answer("once", None, true), Approval::Once);
            assert_eq!(answer("session", None, false), Approval::Always);
            assert_eq!(answer("deny", None, false), Approval::Deny { feedback: None });
            let fixed = json!({"command": "cargo test -p core"});
            assert_eq!(answer("once", Some(&fixed), true), Approval::Edited { command: "cargo test -p core".into() });
            assert_eq!(answer("once", Some(&fixed), false), Approval::Once, "only a call that runs a command");
            assert_eq!(answer("session", Some(&fixed), true), Approval::Always, "a correction is for once only");
            let why = json!({"feedback": "use the staging database"});
            assert_eq!(
                answer("deny", Some(&why), false),
                Approval::Deny { feedback: Some("use the staging database".into()) }
            );
            assert_eq!(answer("allow_once", None, false), Approval::Once);
            assert_eq!(answer("allow_always", None, false), Approval::Always);
            assert_eq!(answer("something-else", None, false), Approval::Deny { feedback: None });
        }
    }
}
