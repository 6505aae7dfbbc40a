//! What the person's hooks (`lembas-hooks`) do to a session, as Claude Code's hooks do: the
//! same JSON in, the same meaning of their exit codes and answers. A hook never bypasses the
//! hardline or a rule's refusal (its "allow" only spares the person a card); its refusal is a
//! tool result the model reads; one that fails or hangs is said in the transcript and the
//! session goes on. Subagents run them too, named in the input (`agent`).

use lembas_hooks::{HookEvent, HookRun};
use serde_json::{Value, json};

use crate::Event;
use crate::session::Session;

/// How many times the Stop hooks may send a turn on: past it, the turn ends.
pub(crate) const STOP_HOOK_TURNS: u32 = 3;

/// What the PreToolUse hooks said of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PreVerdict {
    /// No card for the person, where the rules would have asked.
    Allow,
    /// Refused, with the reason the model reads.
    Deny(String),
    /// Put to the person, where the rules would have let it run.
    Ask,
}

impl Session {
    /// The input every hook reads, and the event's own fields.
    fn hook_input(&self, event: HookEvent, fields: Value) -> Value {
        let mut input = json!({
            "session_id": self.id,
            "transcript_path": Value::Null,
            "cwd": self.ws.root,
            "hook_event_name": event.name(),
            "permission_mode": self.state.mode.as_str(),
        });
        if let Some(of) = self.role.subagent() {
            input["agent"] = json!(of.label);
        }
        if let (Value::Object(input), Value::Object(fields)) = (&mut input, fields) {
            input.extend(fields);
        }
        input
    }

    /// A call's arguments as a hook reads them: as the model sent them, and — where they name a
    /// `path` — its absolute form as `file_path`, the field Claude Code's hooks read.
    fn hook_tool_input(&self, args: &Value) -> Value {
        let mut input = args.clone();
        if let Some(path) = args.get("path").and_then(Value::as_str) {
            input["file_path"] = json!(self.ws.resolve(path));
        }
        input
    }

    /// Runs the hooks of `event` (for a call of `tool`) in order, each as it is configured;
    /// what went wrong with one is said, and the others still run.
    async fn run_hooks(&self, event: HookEvent, tool: Option<&str>, fields: Value) -> Vec<HookRun> {
        let hooks = self.cfg.hooks.clone();
        let mut runs = Vec::new();
        if !hooks.any(event, tool) {
            return runs;
        }
        let input = self.hook_input(event, fields);
        for hook in hooks.at(event, tool) {
            match lembas_hooks::run(hook, &input, &self.ws.root).await {
                Ok(ran) => {
                    if let Some(trouble) = ran.trouble(hook) {
                        self.emit(Event::Notice { message: trouble });
                    }
                    runs.push(ran);
                }
                Err(e) => self.emit(Event::Notice { message: e }),
            }
        }
        runs
    }

    /// Before a call of `tool` with `args` runs.
    pub(crate) async fn pre_tool_hooks(&self, tool: &str, args: &Value) -> Option<PreVerdict> {
        if !self.cfg.hooks.any(HookEvent::PreToolUse, Some(tool)) {
            return None;
        }
        let fields = json!({ "tool_name": hook_tool_name(tool), "tool_input": self.hook_tool_input(args) });
        let mut verdict = None;
        for ran in self.run_hooks(HookEvent::PreToolUse, Some(tool), fields).await {
            if ran.blocks() {
                return Some(PreVerdict::Deny(refusal(&ran.stderr)));
            }
            let Some(answer) = ran.json() else { continue };
            let specific = &answer["hookSpecificOutput"];
            let reason =
                specific["permissionDecisionReason"].as_str().or(answer["reason"].as_str()).unwrap_or_default();
            match specific["permissionDecision"].as_str().or(answer["decision"].as_str()) {
                Some("deny" | "block") => return Some(PreVerdict::Deny(refusal(reason))),
                Some("ask") => verdict = Some(PreVerdict::Ask),
                Some("allow" | "approve") if verdict.is_none() => verdict = Some(PreVerdict::Allow),
                _ => {}
            }
        }
        verdict
    }

    /// After a call of `tool` ran and answered `result`: what the hooks add for the model.
    pub(crate) async fn post_tool_hooks(&self, tool: &str, args: &Value, result: &str) -> Option<String> {
        if !self.cfg.hooks.any(HookEvent::PostToolUse, Some(tool)) {
            return None;
        }
        let fields = json!({ "tool_name": hook_tool_name(tool), "tool_input": self.hook_tool_input(args), "tool_response": result });
        let said: Vec<String> = self
            .run_hooks(HookEvent::PostToolUse, Some(tool), fields)
            .await
            .into_iter()
            .filter_map(|ran| {
                if ran.blocks() {
                    return Some(ran.stderr.trim().to_owned());
                }
                let answer = ran.json()?;
                let context = answer["hookSpecificOutput"]["additionalContext"].as_str();
                let reason = (answer["decision"] == "block").then(|| answer["reason"].as_str()).flatten();
                reason.or(context).map(str::to_owned)
            })
            .filter(|s| !s.is_empty())
            .collect();
        (!said.is_empty()).then(|| format!("\n\n[The person's hook says:]\n{}", said.join("\n")))
    }

    /// As the person's `words` open a turn (and, on the session's first turn here, as it
    /// starts): what the hooks add to the message, or why they block it.
    pub(crate) async fn prompt_hooks(&mut self, words: &str) -> Result<String, String> {
        let mut added = Vec::new();
        if !std::mem::replace(&mut self.hooks_started, true) {
            let source = if self.history.is_empty() { "startup" } else { "resume" };
            for ran in self.run_hooks(HookEvent::SessionStart, None, json!({ "source": source })).await {
                added.extend(context_of(&ran, "SessionStart"));
            }
        }
        for ran in self.run_hooks(HookEvent::UserPromptSubmit, None, json!({ "prompt": words })).await {
            if ran.blocks() {
                return Err(ran.stderr.trim().to_owned());
            }
            if let Some(answer) = ran.json()
                && answer["decision"] == "block"
            {
                return Err(answer["reason"].as_str().unwrap_or_default().to_owned());
            }
            added.extend(context_of(&ran, "UserPromptSubmit"));
        }
        Ok(added.iter().map(|text| format!("\n\n{text}")).collect())
    }

    /// lembas would notify the person (`message`: what waits for them): the Notification hooks
    /// run beside the card, never holding it up.
    pub(crate) fn notification_hooks(&self, message: String) {
        if !self.cfg.hooks.any(HookEvent::Notification, None) {
            return;
        }
        let input = self.hook_input(HookEvent::Notification, json!({ "message": message }));
        let (hooks, root, events) = (self.cfg.hooks.clone(), self.ws.root.clone(), self.events.clone());
        tokio::spawn(async move {
            for hook in hooks.at(HookEvent::Notification, None) {
                let trouble = match lembas_hooks::run(hook, &input, &root).await {
                    Ok(ran) => ran.trouble(hook),
                    Err(e) => Some(e),
                };
                if let Some(message) = trouble {
                    let _ = events.send(Event::Notice { message });
                }
            }
        });
    }

    /// The turn would end: why the Stop hooks send it on, if they do. `active`: it was sent on
    /// by them already this turn.
    pub(crate) async fn stop_hooks(&self, active: bool) -> Option<String> {
        if !self.cfg.hooks.any(HookEvent::Stop, None) {
            return None;
        }
        for ran in self.run_hooks(HookEvent::Stop, None, json!({ "stop_hook_active": active })).await {
            if ran.blocks() {
                return Some(ran.stderr.trim().to_owned());
            }
            if let Some(answer) = ran.json()
                && answer["decision"] == "block"
            {
                return Some(answer["reason"].as_str().unwrap_or("go on").to_owned());
            }
        }
        None
    }
}

/// What a prompt's or a start's hook adds: its words printed on success, or its JSON's
/// `additionalContext`.
fn context_of(ran: &HookRun, event: &str) -> Option<String> {
    if let Some(answer) = ran.json() {
        let specific = &answer["hookSpecificOutput"];
        return (specific["hookEventName"] == event || specific["hookEventName"].is_null())
            .then(|| specific["additionalContext"].as_str().map(str::to_owned))
            .flatten()
            .filter(|c| !c.is_empty());
    }
    (ran.code == Some(0)).then(|| ran.stdout.trim().to_owned()).filter(|s| !s.is_empty())
}

fn refusal(reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        "Refused by the person's hook.".to_owned()
    } else {
        format!("Refused by the person's hook: {reason}")
    }
}

/// A tool's name as the hooks read it: Claude Code's where it has one (hooks written for it
/// compare `tool_name` with `Bash`), lembas' own otherwise.
pub(crate) fn hook_tool_name(tool: &str) -> &str {
    lembas_hooks::claude_name(tool).unwrap_or(tool)
}
