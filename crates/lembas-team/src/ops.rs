//! What the team tools do to the tree (`subagents.md` §6–§10), each refusal in the spec's order.

use lembas_permissions::delegation::check_add;
use lembas_spec::Mode;
use regex::Regex;

use crate::room::{Delivery, Kind};
use crate::{Agent, LEAD, State, Team, render_text, spec_text, text};

/// `team_add`'s arguments.
#[derive(Debug, Clone, Default)]
pub struct AddArgs {
    pub name: String,
    pub role: String,
    pub task: String,
    pub goal: Option<String>,
    pub lead: bool,
    pub parent: Option<String>,
    pub mode: Option<Mode>,
    pub request: Vec<String>,
}

/// A subagent added: its id, the answer, and whether it starts now (else it waits for a slot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub id: String,
    pub text: String,
    pub working: bool,
}

/// `team_assign`'s arguments.
#[derive(Debug, Clone, Default)]
pub struct AssignArgs {
    pub name: String,
    pub task: String,
    pub role: Option<String>,
    pub parent: Option<String>,
    pub mode: Option<Mode>,
}

/// A subagent replaced: the old one's id, the new one's, its brief and the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub old: String,
    pub id: String,
    pub brief: String,
    pub text: String,
    pub working: bool,
}

fn name_pattern() -> Regex {
    Regex::new(spec_text("names.pattern")).expect("team.names.pattern")
}

fn reserved(name: &str) -> bool {
    lembas_spec::loop_spec().team["names"]["reserved"]
        .as_array()
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
}

impl Team {
    fn only_main(&self, caller: &str) -> Result<(), String> {
        if caller == LEAD { Ok(()) } else { Err(text("only_main")) }
    }

    /// The id of a parent named in `team_add` or `team_assign`: the main agent or a sub-manager.
    fn manager_named(&self, name: Option<&str>) -> Result<String, String> {
        let name = name.map(str::trim).filter(|n| !n.is_empty()).unwrap_or(LEAD);
        if name == LEAD {
            return Ok(LEAD.into());
        }
        match self.live_named(name) {
            None => Err(render_text("unknown", &[("name", name), ("names", &self.live_names())])),
            Some(agent) if !agent.sub_manager => Err(render_text("not_manager", &[("name", name)])),
            Some(agent) => Ok(agent.id.clone()),
        }
    }

    /// `team_add` (`subagents.md` §6): checks in order, then adds. `model` is asked last, once
    /// everything else holds: the agent and model it runs (explore, a custom agent's name, model id), or the refusal
    /// `task` would give.
    pub fn add(
        &mut self,
        caller: &str,
        args: AddArgs,
        model: impl FnOnce() -> Result<(bool, Option<String>, String), String>,
        now: u64,
    ) -> Result<Added, String> {
        self.only_main(caller)?;
        let name = args.name.trim();
        if name == "all" {
            return Err(text("all_name"));
        }
        if !name_pattern().is_match(name) {
            return Err(render_text("bad_name", &[("name", name)]));
        }
        if reserved(name) || self.live_named(name).is_some() {
            return Err(render_text("taken", &[("name", name)]));
        }
        let goal = args.goal.as_deref().map(str::trim).filter(|g| !g.is_empty());
        if self.goal.is_none() && goal.is_none() {
            return Err(text("no_goal"));
        }
        if self.size() + 1 > self.max {
            return Err(render_text("full", &[("max", &self.max.to_string())]));
        }
        let parent = self.manager_named(args.parent.as_deref())?;
        let parent_mode = self.agent(&parent).map_or(self.lead().mode, |p| p.mode);
        let mode = check_add(parent_mode, args.mode, &args.request)?;
        let (explore, custom, model) = model()?;
        if let Some(goal) = goal {
            self.goal = Some(goal.to_owned());
        }
        let id = format!("{}{}", spec_text("names.id_prefix"), self.next_id);
        self.next_id += 1;
        let mut agent = Agent::new(&id, name, &one_line(&args.role), mode, &model, now);
        agent.parent = Some(parent.clone());
        agent.task = args.task.trim().to_owned();
        agent.goal = goal.map(str::to_owned).or_else(|| self.goal.clone()).unwrap_or_default();
        agent.request = args.request;
        agent.sub_manager = args.lead;
        agent.explore = explore;
        agent.custom = custom;
        self.agents.push(agent);
        self.want_slot(&id);
        let agent = self.agent(&id).expect("just added");
        let working = agent.state == State::Working;
        let parallel = self.slots.get(&agent.model).and_then(|s| s.parallel).unwrap_or(0).to_string();
        let key = match (working, parent == LEAD) {
            (true, true) => "added",
            (false, true) => "added_waiting",
            (true, false) => "added_under",
            (false, false) => "added_waiting_under",
        };
        let parent_name = self.parent_name(&id);
        let text = render_text(
            key,
            &[
                ("name", name),
                ("role", &agent.role),
                ("parent", &parent_name),
                ("parallel", &parallel),
                ("size", &self.size().to_string()),
                ("max", &self.max.to_string()),
            ],
        );
        Ok(Added { id, text, working })
    }

    /// `team_assign`: a new task for a subagent that has not ended, told under the assignment
    /// mark (a finished one is woken).
    pub fn assign(&mut self, caller: &str, args: AssignArgs, now: u64) -> Result<Vec<Delivery>, String> {
        self.only_main(caller)?;
        let name = args.name.trim();
        let id = match self.live_named(name) {
            Some(agent) if agent.id != LEAD => agent.id.clone(),
            _ if self.any_named(name).is_some_and(|a| a.id != LEAD) => {
                return Err(render_text("has_ended", &[("name", name)]));
            }
            _ => return Err(render_text("unknown", &[("name", name), ("names", &self.live_names())])),
        };
        let parent = match args.parent.as_deref() {
            Some(p) => Some(self.manager_named(Some(p))?),
            None => None,
        };
        if let Some(parent) = &parent
            && self.in_subtree(&id, parent)
        {
            return Err(render_text("cycle", &[("name", name), ("parent", &self.agent(parent).expect("named").name)]));
        }
        let parent_id = parent.clone().or_else(|| self.agent(&id).and_then(|a| a.parent.clone()));
        let parent_mode = parent_id.as_deref().and_then(|p| self.agent(p)).map_or(self.lead().mode, |p| p.mode);
        let own = self.agent(&id).expect("live").mode;
        let mode = args.mode.unwrap_or(own);
        if mode.is_looser_than(parent_mode) {
            return Err(render_text("wider", &[("parent_mode", parent_mode.as_str())]));
        }
        let agent = self.agent_mut(&id).expect("live");
        agent.task = args.task.trim().to_owned();
        agent.mode = mode;
        if let Some(role) = args.role.as_deref().map(one_line).filter(|r| !r.is_empty()) {
            agent.role = role;
        }
        if let Some(parent) = parent {
            agent.parent = Some(parent);
            agent.moved_from = None;
        }
        let to = agent.name.clone();
        let deliveries =
            self.post(LEAD, (to, vec![id.clone()]), args.task.trim().to_owned(), Kind::Assignment, None, now);
        Ok(deliveries)
    }

    /// What `team_assign` answers.
    pub fn assigned_text(name: &str) -> String {
        render_text("assigned", &[("name", name.trim())])
    }

    /// `team_replace`: the subagent ends (stopped, if it has not), and a new one with its name,
    /// position, parent, mode, request options and model takes its place with a new id, briefed
    /// with the task and the old one's findings; the subagents under the old one move under it.
    pub fn replace(&mut self, caller: &str, name: &str, task: Option<&str>, now: u64) -> Result<Replaced, String> {
        self.only_main(caller)?;
        let name = name.trim();
        let old = match self.any_named(name) {
            Some(agent) if agent.id != LEAD => agent.clone(),
            _ => return Err(render_text("unknown", &[("name", name), ("names", &self.live_names())])),
        };
        if !old.state.ended() {
            self.release(&old.id, State::Stopped, now);
            self.end(&old.id, now);
        }
        let task = task.map(str::trim).filter(|t| !t.is_empty()).unwrap_or(&old.task).to_owned();
        let brief = lembas_spec::render(
            &text("replace_brief"),
            &[("task", &task), ("name", &old.name), ("id", &old.id), ("findings", &findings_list(&old.findings))],
        );
        let id = format!("{}{}", spec_text("names.id_prefix"), self.next_id);
        self.next_id += 1;
        let mut agent = old.clone();
        agent.id = id.clone();
        agent.task = task;
        agent.state = State::Finished;
        agent.findings = Vec::new();
        agent.context = (0, None);
        agent.last_active = now;
        agent.ended_at = None;
        agent.grants = Vec::new();
        agent.waiting_since = None;
        agent.moved_from = None;
        agent.session = None;
        agent.progress = None;
        self.agents.push(agent);
        for moved in self.agents.iter_mut() {
            if !moved.state.ended()
                && (moved.parent.as_deref() == Some(&old.id) || moved.moved_from.as_deref() == Some(&old.id))
            {
                moved.parent = Some(id.clone());
                moved.moved_from = None;
            }
        }
        self.want_slot(&id);
        let working = self.agent(&id).is_some_and(|a| a.state == State::Working);
        let text = render_text(
            "replaced",
            &[("name", name), ("id", &id), ("size", &self.size().to_string()), ("max", &self.max.to_string())],
        );
        Ok(Replaced { old: old.id, id, brief, text, working })
    }

    /// `team_stop`: a subagent and its whole subtree, or with `all` every subagent. Answers the
    /// ids stopped, in tree order, and the text.
    pub fn stop(&mut self, caller: &str, name: &str, now: u64) -> Result<(Vec<String>, String), String> {
        self.only_main(caller)?;
        let name = name.trim();
        let ids: Vec<String> = if name == "all" {
            let all = self.live_subtree(LEAD);
            if all.is_empty() {
                return Err(text("nobody_to_stop"));
            }
            all
        } else {
            let Some(agent) = self.live_named(name) else {
                return Err(render_text("unknown", &[("name", name), ("names", &self.live_names())]));
            };
            if agent.id == LEAD {
                return Err(render_text("not_yours", &[("name", name)]));
            }
            self.live_subtree(&agent.id)
        };
        Ok((ids.clone(), self.stop_ids(&ids, now)))
    }

    /// Stops these agents (the person's stop, too): they end, their slots free. Answers the
    /// `stopped` text.
    pub fn stop_ids(&mut self, ids: &[String], now: u64) -> String {
        let mut names = Vec::new();
        for id in ids {
            if let Some(agent) = self.agent(id)
                && !agent.state.ended()
            {
                names.push(agent.name.clone());
                self.release(id, State::Stopped, now);
                if let Some(agent) = self.agent_mut(id) {
                    agent.ended_at = Some(now);
                }
                for request in self.requests.iter_mut().filter(|r| r.from == *id) {
                    request.open = false;
                }
            }
        }
        render_text(
            "stopped",
            &[("names", &names.join(", ")), ("size", &self.size().to_string()), ("max", &self.max.to_string())],
        )
    }

    /// `team_finish`: the report goes to the parent, and the subagent ends.
    pub fn finish(&mut self, caller: &str, report: &str, now: u64) -> Result<(Vec<Delivery>, String), String> {
        if caller == LEAD {
            return Err(text("no_parent"));
        }
        let to = self.parent_name(caller);
        let deliveries = self.report(caller, report.trim().to_owned(), now);
        self.release(caller, State::Done, now);
        self.end(caller, now);
        Ok((deliveries, render_text("finished", &[("to", &to)])))
    }

    /// `team_findings` `write`: kept for the caller, numbered from 1.
    pub fn write_finding(&mut self, caller: &str, finding: &str) -> Result<String, String> {
        let finding = finding.trim();
        if finding.is_empty() {
            return Err("`text` is required: the finding to keep.".into());
        }
        let agent = self.agent_mut(caller).ok_or_else(|| text("not_yours_findings"))?;
        agent.findings.push(finding.to_owned());
        Ok(render_text("noted", &[("n", &agent.findings.len().to_string())]))
    }

    /// `team_findings` `read`: the caller's, or those of an agent in its subtree (the main agent:
    /// anybody's), ended ones included.
    pub fn read_findings(&self, caller: &str, of: Option<&str>) -> Result<String, String> {
        let of = of.map(str::trim).filter(|o| !o.is_empty());
        let agent = match of {
            None => self.agent(caller),
            Some(key) => self.any_named(key),
        };
        let Some(agent) = agent else {
            let name = of.unwrap_or_default();
            return Err(render_text("unknown", &[("name", name), ("names", &self.live_names())]));
        };
        if caller != LEAD && !self.in_subtree(caller, &agent.id) {
            return Err(text("not_yours_findings"));
        }
        let header = lembas_spec::render(spec_text("findings.header"), &[("name", &agent.name), ("id", &agent.id)]);
        Ok(format!("{header}\n{}", findings_list(&agent.findings)))
    }

    /// `team_request`: a subagent asks the main agent for a call its mode does not allow.
    /// `risk` is the tool's risk class (`read`, `write`, `execute`).
    pub fn request(
        &mut self,
        caller: &str,
        tool: &str,
        pattern: &str,
        why: &str,
        risk: lembas_spec::RiskClass,
        now: u64,
    ) -> Result<(Vec<Delivery>, String), String> {
        let agent = self.agent(caller).ok_or_else(|| text("only_main"))?;
        let answer = lembas_permissions::delegation::request_answer(&agent.request, tool, risk, self.next_request);
        let id = format!("{}{}", request_prefix(), self.next_request);
        if !answer.contains(&id) {
            return Err(answer);
        }
        self.next_request += 1;
        self.requests.push(crate::Request {
            id: id.clone(),
            from: caller.to_owned(),
            tool: tool.trim().to_owned(),
            pattern: pattern.trim().to_owned(),
            open: true,
        });
        let body = lembas_spec::render(
            &text("request_body"),
            &[("tool", tool.trim()), ("pattern", pattern.trim()), ("why", why.trim())],
        );
        let deliveries = self.post(caller, (LEAD.into(), vec![LEAD.into()]), body, Kind::Request, Some(id), now);
        Ok((deliveries, answer))
    }

    /// `team_decide`: the main agent allows or refuses an open request; the subagent is told,
    /// and allowed, it gets the grant for the rest of its life.
    pub fn decide(
        &mut self,
        caller: &str,
        id: &str,
        allow: bool,
        note: Option<&str>,
        now: u64,
    ) -> Result<(Vec<Delivery>, String), String> {
        self.only_main(caller)?;
        let id = id.trim();
        let Some(request) = self.requests.iter_mut().find(|r| r.id == id && r.open) else {
            return Err(render_text("no_request", &[("id", id)]));
        };
        request.open = false;
        let request = request.clone();
        let vars = [("tool", request.tool.as_str()), ("pattern", request.pattern.as_str())];
        let mut body = render_text(if allow { "decision_allowed" } else { "decision_refused" }, &vars);
        if let Some(note) = note.map(str::trim).filter(|n| !n.is_empty()) {
            body.push_str("\n\n");
            body.push_str(note);
        }
        let agent = self.agent_mut(&request.from).expect("a request's agent");
        if allow {
            agent.grants.push((request.tool.clone(), request.pattern.clone()));
        }
        let name = agent.name.clone();
        let deliveries =
            self.post(LEAD, (name.clone(), vec![request.from.clone()]), body, Kind::Decision, Some(id.to_owned()), now);
        let decision = text(if allow { "allowed" } else { "refused" });
        Ok((deliveries, render_text("decided", &[("decision", &decision), ("id", id), ("name", &name)])))
    }
}

fn request_prefix() -> &'static str {
    spec_text("request.id_prefix")
}

/// A position is one line.
fn one_line(role: &str) -> String {
    role.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Findings as `team.findings` lists them, or `no_findings`.
pub(crate) fn findings_list(findings: &[String]) -> String {
    if findings.is_empty() {
        return text("no_findings");
    }
    findings
        .iter()
        .enumerate()
        .map(|(i, f)| lembas_spec::render(spec_text("findings.item"), &[("n", &(i + 1).to_string()), ("text", f)]))
        .collect::<Vec<_>>()
        .join("\n")
}
