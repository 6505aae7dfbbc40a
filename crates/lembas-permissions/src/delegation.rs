//! Subagents' permissions (`subagents.md` §7): a subagent's mode is its parent's or stricter;
//! request options let a narrowed one ask the main agent; a call nobody in the tree can allow
//! goes to the person.

use std::path::{Path, PathBuf};

use lembas_spec::{RiskClass, loop_spec, render};
use serde_json::Value;

use crate::Mode;
use crate::command::split;
use crate::judge::{Call, Decision, Judge};
use crate::rules::{Action, RuleSet, Source, Subject};

/// A text of `loop.json` `team.texts`, word for word.
pub fn team_text(key: &str) -> String {
    let team = &loop_spec().team["texts"];
    team.get(key).and_then(Value::as_str).unwrap_or_else(|| panic!("loop.json team.texts.{key}")).to_owned()
}

/// A risk class by the name a request option uses.
pub fn risk_class(name: &str) -> Option<RiskClass> {
    match name {
        "read" => Some(RiskClass::Read),
        "write" => Some(RiskClass::Write),
        "execute" => Some(RiskClass::Execute),
        _ => None,
    }
}

/// `team_add`'s mode check: the subagent's mode (its parent's when none is given), or the
/// refusal word for word.
pub fn check_add(parent: Mode, mode: Option<Mode>, request: &[String]) -> Result<Mode, String> {
    let mode = mode.unwrap_or(parent);
    if mode.is_looser_than(parent) {
        return Err(render(&team_text("wider"), &[("parent_mode", parent.as_str())]));
    }
    // In the spec's order: the mode, then whether options may go with it, then their kinds.
    if !request.is_empty() && !parent.is_looser_than(mode) {
        return Err(team_text("request_not_narrower"));
    }
    if let Some(bad) = request.iter().find(|k| risk_class(k).is_none()) {
        return Err(render(&team_text("request_kind"), &[("kind", bad)]));
    }
    Ok(mode)
}

/// Who decides a subagent's call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubagentAnswer {
    Run,
    /// An approval card to the person.
    Person,
    Refused(String),
}

/// A grant the main agent gave a subagent (`team_decide`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub tool: String,
    pub pattern: String,
}

/// What a subagent in `mode`, under a main agent in `main_mode`, may do with `call`.
#[allow(clippy::too_many_arguments)]
pub fn subagent_call(
    judge: &Judge,
    main_mode: Mode,
    mode: Mode,
    request: &[RiskClass],
    grants: &[Grant],
    call: &Call,
    cwd: &Path,
    real: &dyn Fn(&Path) -> PathBuf,
    unattended: Option<&str>,
) -> SubagentAnswer {
    let own = judge.evaluate(mode, call, cwd, real);
    let main = || judge.evaluate(main_mode, call, cwd, real);
    let own = match own {
        // A grant lets the call run, but never past what the main agent itself could allow.
        Decision::Ask if granted(judge, grants, call) && main() == Decision::Allow => Decision::Allow,
        other => other,
    };
    match own {
        Decision::Allow => SubagentAnswer::Run,
        Decision::Refuse(reason) => SubagentAnswer::Refused(reason),
        Decision::Ask => match main() {
            Decision::Allow if request.contains(&call.risk) => SubagentAnswer::Refused(team_text("requestable")),
            Decision::Allow => SubagentAnswer::Refused(team_text("not_delegated")),
            Decision::Ask => match unattended {
                Some(reason) => SubagentAnswer::Refused(reason.to_owned()),
                None => SubagentAnswer::Person,
            },
            Decision::Refuse(reason) => SubagentAnswer::Refused(reason),
        },
    }
}

/// Whether the subagent's grants cover every part of the call: each part of a command, each
/// path (a grant's path pattern read as a rule's is, against the project root), a fetch's URL.
fn granted(judge: &Judge, grants: &[Grant], call: &Call) -> bool {
    let mut rules = RuleSet::default();
    for g in grants.iter().filter(|g| g.tool == call.tool) {
        rules.add(&g.tool, Some(&g.pattern), Action::Allow, Source::Session);
    }
    if let Some(target) = call.url.and_then(|u| crate::network::parse(u).ok()) {
        return rules.matching(call.tool, Subject::Url(&target)) == Some(Action::Allow);
    }
    match call.command {
        Some(line) => {
            let parts = split(line);
            !parts.is_empty()
                && parts.iter().all(|p| rules.matching(call.tool, Subject::Command(&p.line())) == Some(Action::Allow))
        }
        None => {
            !call.paths.is_empty()
                && call.paths.iter().all(|p| rules.matching(call.tool, judge.path_subject(p)) == Some(Action::Allow))
        }
    }
}

/// `team_request`: whether a subagent may ask for `tool` (of `risk`), and the answer it gets.
/// `next_id` is the request's number in the session.
pub fn request_answer(request: &[String], tool: &str, risk: RiskClass, next_id: u64) -> String {
    let kind = match risk {
        RiskClass::Read => "read",
        RiskClass::Write => "write",
        RiskClass::Execute => "execute",
        RiskClass::Interact => "interact",
    };
    if !request.iter().any(|k| k == kind) {
        return render(&team_text("not_requestable"), &[("tool", tool), ("kinds", &request.join(", "))]);
    }
    let prefix = loop_spec().team["request"]["id_prefix"].as_str().unwrap_or("r");
    render(&team_text("requested"), &[("id", &format!("{prefix}{next_id}"))])
}

/// When the main agent's mode becomes stricter, every subagent looser than its parent becomes
/// as strict, down the tree. `tree` is (name, parent, mode) in tree order, `lead` the main agent.
pub fn tighten(main_mode: Mode, tree: &mut [(String, String, Mode)]) {
    for i in 0..tree.len() {
        let parent = tree[i].1.clone();
        let parent_mode = if parent == "lead" {
            main_mode
        } else {
            tree.iter().find(|(n, _, _)| *n == parent).map_or(main_mode, |t| t.2)
        };
        if tree[i].2.is_looser_than(parent_mode) {
            tree[i].2 = parent_mode;
        }
    }
}
