//! The `team` area: the tree, the room and the team tools, run as a sequence of calls.
//!
//! A case is `{setting?: {min, max}, mode?, models?: {id: {parallel?, group?}}, steps, expect}`.
//! Each step is a call `{op, as?, at?, ...arguments}` made by the agent named `as` (default
//! `lead`) at `at` seconds; its answer — the tool's text or its refusal, word for word — is
//! compared with the same place in `expect`. `inbox` answers what was delivered to an agent since
//! its last `inbox` (blank-line separated); `end` is a subagent's turn ending (`reply`, `ended`);
//! `pause` its context filling; `switch` the main agent's mode changing (every agent's
//! `name:mode` after, in tree order); `task` whether `task` may start one more.

use std::collections::BTreeMap;

use lembas_spec::{Mode, RiskClass};
use lembas_team::{AddArgs, AssignArgs, Delivery, LEAD, ModelSlots, Team};
use serde_json::{Value, json};

use super::unknown_op;

fn field<'a>(step: &'a Value, key: &str) -> Option<&'a str> {
    step.get(key).and_then(Value::as_str)
}

fn mode(step: &Value, key: &str) -> Result<Option<Mode>, String> {
    match field(step, key) {
        None => Ok(None),
        Some(word) => Mode::parse(word).map(Some).ok_or_else(|| format!("no mode {word:?}")),
    }
}

fn strings(step: &Value, key: &str) -> Vec<String> {
    lembas_team::names_of(step.get(key))
}

struct Run {
    team: Team,
    inboxes: BTreeMap<String, Vec<String>>,
}

impl Run {
    fn deliver(&mut self, deliveries: Vec<Delivery>) {
        for d in deliveries {
            self.inboxes.entry(d.to).or_default().push(d.text);
        }
    }

    fn id_of(&self, name: &str) -> Result<String, String> {
        self.team.any_named(name).map(|a| a.id.clone()).ok_or_else(|| format!("no agent {name:?} in the case"))
    }
}

pub(crate) fn run(case: &Value) -> Result<Value, String> {
    let (min, max) = match case.get("setting") {
        Some(s) => (s["min"].as_u64().unwrap_or(1) as u32, s["max"].as_u64().unwrap_or(4) as u32),
        None => lembas_team::default_setting(),
    };
    let lead_mode = mode(case, "mode")?.unwrap_or(Mode::Edit);
    let mut team = Team::new(min, max, "m", lead_mode, 0);
    if let Some(models) = case.get("models").and_then(Value::as_object) {
        for (id, m) in models {
            let slots = ModelSlots {
                parallel: m.get("parallel").and_then(Value::as_u64).map(|p| p as u32),
                group: m.get("group").and_then(Value::as_str).map(str::to_owned),
            };
            team.set_slots(id, slots);
        }
    }
    let mut run = Run { team, inboxes: BTreeMap::new() };
    let steps = case.get("steps").and_then(Value::as_array).ok_or("the case has no steps")?;
    let mut answers = Vec::new();
    for step in steps {
        answers.push(Value::String(one(&mut run, step)?));
    }
    Ok(Value::Array(answers))
}

fn one(run: &mut Run, step: &Value) -> Result<String, String> {
    let op = field(step, "op").ok_or("a step has no op")?;
    let caller = run.id_of(field(step, "as").unwrap_or(LEAD))?;
    let now = step.get("at").and_then(Value::as_u64).unwrap_or(0) * 1000;
    let answer = |r: Result<String, String>| r.unwrap_or_else(|e| e);
    let team = &mut run.team;
    Ok(match op {
        "add" => add(team, step, &caller, now)?,
        "send" => match team.send(&caller, &strings(step, "to"), field(step, "message").unwrap_or_default(), now) {
            Ok(deliveries) => {
                run.deliver(deliveries);
                run.team.sent_text()
            }
            Err(e) => e,
        },
        "read" => {
            let since = step.get("since").and_then(Value::as_u64).unwrap_or(0);
            team.read(&caller, since, now, &|m| m.to_owned())
        }
        "whoami" => team.whoami(&caller, "m"),
        "stop" => answer(team.stop(&caller, field(step, "name").unwrap_or_default(), now).map(|(_, t)| t)),
        "finish" => match team.finish(&caller, field(step, "report").unwrap_or_default(), now) {
            Ok((deliveries, text)) => {
                run.deliver(deliveries);
                text
            }
            Err(e) => e,
        },
        "findings" => match field(step, "action") {
            Some("write") => answer(team.write_finding(&caller, field(step, "text").unwrap_or_default())),
            _ => answer(team.read_findings(&caller, field(step, "of"))),
        },
        "assign" => {
            let args = AssignArgs {
                name: field(step, "name").unwrap_or_default().into(),
                task: field(step, "task").unwrap_or_default().into(),
                role: field(step, "role").map(str::to_owned),
                parent: field(step, "parent").map(str::to_owned),
                mode: mode(step, "mode")?,
            };
            let name = args.name.clone();
            match team.assign(&caller, args, now) {
                Ok(deliveries) => {
                    run.deliver(deliveries);
                    Team::assigned_text(&name)
                }
                Err(e) => e,
            }
        }
        "replace" => answer(
            team.replace(&caller, field(step, "name").unwrap_or_default(), field(step, "task"), now).map(|r| r.text),
        ),
        "brief" => {
            // What a replacement is briefed with.
            match team.replace(&caller, field(step, "name").unwrap_or_default(), field(step, "task"), now) {
                Ok(r) => r.brief,
                Err(e) => e,
            }
        }
        "request" => request(run, step, &caller, now),
        "decide" => {
            let allow = step.get("allow").and_then(Value::as_bool).unwrap_or(false);
            match team.decide(&caller, field(step, "id").unwrap_or_default(), allow, field(step, "note"), now) {
                Ok((deliveries, text)) => {
                    run.deliver(deliveries);
                    text
                }
                Err(e) => e,
            }
        }
        "end" => {
            let deliveries =
                team.turn_ended(&caller, field(step, "reply").unwrap_or_default(), field(step, "ended"), now);
            run.deliver(deliveries);
            let started = run.team.start_waiting();
            json!(started).to_string()
        }
        "pause" => team.pause(&caller).unwrap_or_default(),
        "context" => {
            let used = step.get("used").and_then(Value::as_u64).unwrap_or(0);
            team.set_context(&caller, used, step.get("window").and_then(Value::as_u64));
            String::new()
        }
        "switch" => {
            let to = mode(step, "mode")?.ok_or("switch needs a mode")?;
            team.set_lead_mode(to);
            let order = team.tree_order();
            order
                .iter()
                .filter_map(|id| team.agent(id))
                .map(|a| format!("{}:{}", a.name, a.mode.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        }
        "task" => team.task_refusal().unwrap_or_else(|| "started".into()),
        "inbox" => run.inboxes.remove(&caller).unwrap_or_default().join("\n\n"),
        "manager" => team.is_manager(&caller).to_string(),
        other => return Err(unknown_op(other)),
    })
}

/// A `request` step: `caller` asks for a permission, its answer.
fn request(run: &mut Run, step: &Value, caller: &str, now: u64) -> String {
    let risk = match field(step, "risk").unwrap_or("write") {
        "read" => RiskClass::Read,
        "execute" => RiskClass::Execute,
        _ => RiskClass::Write,
    };
    let tool = field(step, "tool").unwrap_or_default();
    let pattern = field(step, "pattern").unwrap_or_default();
    match run.team.request(caller, tool, pattern, field(step, "why").unwrap_or_default(), risk, now) {
        Ok((deliveries, text)) => {
            run.deliver(deliveries);
            text
        }
        Err(e) => e,
    }
}

/// An `add` step: a subagent added by `caller`, its answer.
fn add(team: &mut Team, step: &Value, caller: &str, now: u64) -> Result<String, String> {
    let args = AddArgs {
        name: field(step, "name").unwrap_or_default().into(),
        role: field(step, "role").unwrap_or_default().into(),
        task: field(step, "task").unwrap_or_default().into(),
        goal: field(step, "goal").map(str::to_owned),
        lead: step.get("lead").and_then(Value::as_bool).unwrap_or(false),
        parent: field(step, "parent").map(str::to_owned),
        mode: mode(step, "mode")?,
        request: strings(step, "request"),
    };
    let model = field(step, "model").unwrap_or("m").to_owned();
    Ok(team.add(caller, args, || Ok((false, None, model)), now).map(|a| a.text).unwrap_or_else(|e| e))
}
