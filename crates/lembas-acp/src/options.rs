//! The model, the effort level and the team's size as ACP session configuration options: offered
//! when a session opens, set with `session/set_config_option` (during a turn they take effect at
//! its next step, as from any front end), and sent again whenever the session's model or effort
//! changes. The size is two selects, Min and Max (`subagents.setting`), each moved on its own; a
//! pair outside the bounds is refused with them, never clamped.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption,
};
use lembas_protocol::{Command, ModelInfo};

/// What a session runs with, as its options show it.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    /// The login's models.
    pub models: Vec<ModelInfo>,
    pub model: ModelInfo,
    /// `None`: the model's start level.
    pub effort: Option<String>,
    /// The team's size setting: Min and Max, the main agent included.
    pub agents: (u32, u32),
}

impl Choice {
    /// The options: the model (every model of the login), and the effort when the model has
    /// levels to choose from.
    pub(crate) fn options(&self) -> Vec<SessionConfigOption> {
        let mut models: Vec<&ModelInfo> = self.models.iter().collect();
        if !models.iter().any(|m| m.id == self.model.id) {
            models.insert(0, &self.model);
        }
        let choices: Vec<SessionConfigSelectOption> =
            models.iter().map(|m| SessionConfigSelectOption::new(m.id.clone(), m.display_name().to_owned())).collect();
        let mut options = vec![
            SessionConfigOption::select("model", "Model", self.model.id.clone(), choices)
                .category(SessionConfigOptionCategory::Model),
        ];
        let levels = self.model.levels();
        if levels.len() > 1 {
            let current = self.effort.clone().unwrap_or_else(|| self.model.start_level());
            let choices: Vec<SessionConfigSelectOption> =
                levels.iter().map(|l| SessionConfigSelectOption::new(l.clone(), l.clone())).collect();
            options.push(
                SessionConfigOption::select("effort", "Effort", current, choices)
                    .category(SessionConfigOptionCategory::ThoughtLevel),
            );
        }
        let numbers: Vec<SessionConfigSelectOption> = (1..=lembas_protocol::agents::cap())
            .map(|n| SessionConfigSelectOption::new(n.to_string(), n.to_string()))
            .collect();
        let label = lembas_protocol::agents::setting_text("label");
        for (id, key, value) in [("agents_min", "min", self.agents.0), ("agents_max", "max", self.agents.1)] {
            let name = format!("{label}: {}", lembas_protocol::agents::setting_text(key));
            options.push(
                SessionConfigOption::select(id, name, value.to_string(), numbers.clone())
                    .description(lembas_protocol::agents::setting_text("hint")),
            );
        }
        options
    }

    /// The session's model or effort changed (its `model` event).
    pub(crate) fn changed(&mut self, model: &str, effort: Option<&str>) {
        if let Some(found) = self.models.iter().find(|m| m.id == model) {
            self.model = found.clone();
        }
        self.effort = effort.map(str::to_owned);
    }
}

/// The host command `session/set_config_option` asks for, or why it cannot be.
pub(crate) fn command(choice: &Choice, option: &str, value: &SessionConfigOptionValue) -> Result<Command, String> {
    let SessionConfigOptionValue::ValueId { value } = value else {
        return Err(format!("{option} takes one of its listed values"));
    };
    let value = value.0.to_string();
    match option {
        "model" if choice.models.iter().chain([&choice.model]).any(|m| m.id == value) => {
            Ok(Command::SetModel { model: value })
        }
        "model" => Err(format!("no model {value}")),
        "effort" if choice.model.levels().contains(&value) => Ok(Command::SetEffort { level: Some(value) }),
        "effort" => Err(format!("{} has no effort level {value}", choice.model.id)),
        "agents_min" | "agents_max" => {
            let n: u32 = value.parse().map_err(|_| format!("{value} is not a number of agents"))?;
            let (min, max) = if option == "agents_min" { (n, choice.agents.1) } else { (choice.agents.0, n) };
            lembas_protocol::agents::check(min, max)?;
            Ok(Command::SetAgents { min, max })
        }
        other => Err(format!("no option {other}: the options are model, effort, agents_min and agents_max")),
    }
}

/// What a LLeMbas client put under `key` of a request's `_meta.lembas`.
fn lembas_meta<'a>(
    meta: Option<&'a serde_json::Map<String, serde_json::Value>>,
    key: &str,
) -> Option<&'a serde_json::Value> {
    meta.and_then(|m| m.get("lembas")).and_then(|l| l.get(key))
}

/// The Subagents setting a LLeMbas client sends down (`acp.md` capability `agents`:
/// `_meta.lembas.agents` on `session/new` and every `session/prompt`): `None` when it sent none.
/// A Max over the device's cap is lowered to it, and Min with it (`team.md` §2: lowered, never
/// refused); a pair that is wrong otherwise is refused with the bounds.
pub(crate) fn sent_agents(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<Option<(u32, u32)>, String> {
    let Some(agents) = lembas_meta(meta, "agents") else {
        return Ok(None);
    };
    let number = |key: &str| {
        agents
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| format!("_meta.lembas.agents needs whole numbers min and max (got {agents})"))
    };
    let cap = u64::from(lembas_protocol::agents::cap());
    let (sent_min, sent_max) = (number("min")?, number("max")?);
    // Only a pair the cap is under is lowered: Max to the cap, Min with it.
    let (min, max) = if sent_max > cap { (sent_min.min(cap), cap) } else { (sent_min, sent_max) };
    let (min, max) = (min as u32, max as u32);
    lembas_protocol::agents::check(min, max)?;
    Ok(Some((min, max)))
}

/// `_meta.lembas.said` on `session/new`: the person's earlier messages of the chat, oldest first
/// (what is not a string is left out).
pub(crate) fn sent_said(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> Vec<String> {
    let said = lembas_meta(meta, "said").and_then(serde_json::Value::as_array);
    said.map(|words| words.iter().filter_map(|w| w.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// `_meta.lembas.library` (capability `library`): the knowledge bases the chat is limited to, as
/// names — `{ "bases": [...] }` or the list itself; anything else limits nothing.
pub(crate) fn sent_library(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<Vec<String>> {
    let library = lembas_meta(meta, "library")?;
    let names = library.get("bases").unwrap_or(library).as_array()?;
    Some(names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect())
}

/// `_meta.lembas.personalization` (capability `context`): the chat's personality as its text
/// (none for `default` or an unknown one); `None` when the chat sent no personalization.
pub(crate) fn sent_personality(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<Option<String>> {
    let sent = lembas_meta(meta, "personalization")?.as_object()?;
    let word = |key: &str| sent.get(key).and_then(serde_json::Value::as_str);
    Some(
        lembas_protocol::personality_text(word("personality").unwrap_or("default"), word("personality_custom"))
            .ok()
            .flatten(),
    )
}

/// The chat's two instructions as `_meta.lembas` sends them, each under the name the prompt gives
/// it: its personalization's `instructions` and its `system_prompt` — `None` for one not sent,
/// empty for one sent without words.
fn instructions_sent(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> [(&'static str, Option<&str>); 2] {
    let personal = lembas_meta(meta, "personalization")
        .map(|p| p.get("instructions").and_then(|i| i.as_str()).unwrap_or_default());
    let system = lembas_meta(meta, "system_prompt").map(|s| s.as_str().unwrap_or_default());
    [(lembas_protocol::ACCOUNT_INSTRUCTIONS, personal), (lembas_protocol::CHAT_INSTRUCTIONS, system)]
}

/// The chat's own instructions (capability `context`), those with words; `None` when it sent
/// neither.
pub(crate) fn sent_instructions(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<Vec<(String, String)>> {
    let sent = instructions_sent(meta);
    if sent.iter().all(|(_, text)| text.is_none()) {
        return None;
    }
    Some(
        sent.into_iter()
            .filter_map(|(name, text)| text.filter(|t| !t.trim().is_empty()).map(|t| (name.to_owned(), t.to_owned())))
            .collect(),
    )
}

/// The chat's instructions after a prompt's `_meta.lembas`: each of the two it sent replaces
/// the one it had (an empty one takes it away); one it did not send stays. `None` when the
/// prompt changed nothing.
pub(crate) fn instructions_after(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
    had: &[(String, String)],
) -> Option<Vec<(String, String)>> {
    let mut now: Vec<(String, String)> = Vec::new();
    for (name, sent) in instructions_sent(meta) {
        let text = match sent {
            Some(text) => text.to_owned(),
            None => had.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone()).unwrap_or_default(),
        };
        if !text.trim().is_empty() {
            now.push((name.to_owned(), text));
        }
    }
    (now != had).then_some(now)
}

/// `_meta.lembas.subagents: false`: the instance has subagents switched off for the chat.
pub(crate) fn subagents_off(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
    lembas_meta(meta, "subagents") == Some(&serde_json::Value::Bool(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_sent_down_is_read_lowered_to_the_cap_or_refused() {
        let meta = |v: serde_json::Value| serde_json::json!({ "lembas": v }).as_object().cloned();
        assert_eq!(sent_agents(None), Ok(None));
        assert_eq!(sent_agents(meta(serde_json::json!({})).as_ref()), Ok(None));
        assert_eq!(sent_agents(meta(serde_json::json!({"agents": {"min": 2, "max": 3}})).as_ref()), Ok(Some((2, 3))));
        let cap = lembas_protocol::agents::cap();
        let over = meta(serde_json::json!({"agents": {"min": 40, "max": 50}}));
        assert_eq!(sent_agents(over.as_ref()), Ok(Some((cap, cap))), "lowered, never refused");
        assert!(sent_agents(meta(serde_json::json!({"agents": {"min": 3, "max": 2}})).as_ref()).is_err());
        assert!(sent_agents(meta(serde_json::json!({"agents": {"min": 0, "max": 2}})).as_ref()).is_err());
        assert!(sent_agents(meta(serde_json::json!({"agents": "many"})).as_ref()).is_err());
        assert!(subagents_off(meta(serde_json::json!({"subagents": false})).as_ref()));
        assert!(!subagents_off(meta(serde_json::json!({"subagents": true})).as_ref()));
    }

    #[test]
    fn a_chats_library_names_the_bases_it_is_limited_to() {
        let meta = |v: serde_json::Value| serde_json::json!({ "lembas": v }).as_object().cloned();
        let bases = Some(vec!["ops".to_owned()]);
        assert_eq!(sent_library(meta(serde_json::json!({"library": {"bases": ["ops"]}})).as_ref()), bases);
        assert_eq!(sent_library(meta(serde_json::json!({"library": ["ops"]})).as_ref()), bases);
        assert_eq!(sent_library(meta(serde_json::json!({"library": "lembas"})).as_ref()), None);
        assert_eq!(sent_library(None), None);
    }

    #[test]
    fn instructions_a_prompt_sends_replace_their_own_and_leave_the_others() {
        let meta = |v: serde_json::Value| serde_json::json!({ "lembas": v }).as_object().cloned();
        let chat = lembas_protocol::CHAT_INSTRUCTIONS.to_owned();
        let account = lembas_protocol::ACCOUNT_INSTRUCTIONS.to_owned();
        let had = vec![(account.clone(), "Be kind.".to_owned()), (chat.clone(), "Plan.".to_owned())];
        assert_eq!(instructions_after(None, &had), None, "nothing sent: nothing changes");
        let same = meta(serde_json::json!({ "system_prompt": "Plan." }));
        assert_eq!(instructions_after(same.as_ref(), &had), None);
        let moved = meta(serde_json::json!({ "system_prompt": "Build." }));
        assert_eq!(
            instructions_after(moved.as_ref(), &had),
            Some(vec![(account.clone(), "Be kind.".to_owned()), (chat.clone(), "Build.".to_owned())])
        );
        let cleared = meta(serde_json::json!({ "personalization": { "instructions": "" } }));
        assert_eq!(instructions_after(cleared.as_ref(), &had), Some(vec![(chat, "Plan.".to_owned())]));
    }

    #[test]
    fn a_chats_personalization_and_system_prompt_are_read_when_sent() {
        let meta = |v: serde_json::Value| serde_json::json!({ "lembas": v }).as_object().cloned();
        let sent = meta(
            serde_json::json!({ "personalization": { "personality": "custom", "personality_custom": "Be terse.", "instructions": "" }, "system_prompt": "Plan the move." }),
        );
        assert_eq!(sent_personality(sent.as_ref()), Some(Some("Be terse.".to_owned())));
        let given = sent_instructions(sent.as_ref()).unwrap();
        assert_eq!(given, [(lembas_protocol::CHAT_INSTRUCTIONS.to_owned(), "Plan the move.".to_owned())]);
        let plain = meta(serde_json::json!({ "personalization": { "personality": "default" } }));
        assert_eq!(sent_personality(plain.as_ref()), Some(None), "the default: none, over the device's own");
        assert_eq!(sent_instructions(plain.as_ref()), Some(Vec::new()), "sent empty: the device's own are not used");
        assert_eq!((sent_personality(None), sent_instructions(None)), (None, None));
    }

    fn model(id: &str, efforts: &[&str]) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            efforts: Some(efforts.iter().map(|e| e.to_string()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn the_model_and_its_levels_are_offered_and_set() {
        let mut choice = Choice {
            models: vec![model("small", &[]), model("big", &["low", "high"])],
            model: model("small", &[]),
            effort: None,
            agents: (1, 4),
        };
        let options = serde_json::to_value(choice.options()).unwrap();
        assert_eq!(options.as_array().unwrap().len(), 3, "no levels, no effort option: {options}");
        assert_eq!((options[1]["id"].as_str(), options[1]["currentValue"].as_str()), (Some("agents_min"), Some("1")));
        let pick = |v: &str| SessionConfigOptionValue::value_id(v.to_owned());
        assert_eq!(command(&choice, "agents_max", &pick("6")), Ok(Command::SetAgents { min: 1, max: 6 }));
        // Min past Max is refused with the bounds, not clamped.
        assert!(command(&choice, "agents_min", &pick("5")).unwrap_err().contains("1 ≤ min ≤ max ≤ 32"));
        assert_eq!(options[0]["currentValue"], "small");
        assert_eq!(options[0]["options"].as_array().unwrap().len(), 2);
        let pick = |v: &str| SessionConfigOptionValue::value_id(v.to_owned());
        assert_eq!(command(&choice, "model", &pick("big")), Ok(Command::SetModel { model: "big".into() }));
        assert!(command(&choice, "model", &pick("huge")).is_err());
        choice.changed("big", Some("high"));
        let options = serde_json::to_value(choice.options()).unwrap();
        assert_eq!(
            (options[0]["currentValue"].as_str(), options[1]["currentValue"].as_str()),
            (Some("big"), Some("high"))
        );
        choice.agents = (2, 3);
        let options = serde_json::to_value(choice.options()).unwrap();
        assert_eq!(options[3]["currentValue"], "3");
        assert_eq!(command(&choice, "effort", &pick("low")), Ok(Command::SetEffort { level: Some("low".into()) }));
        assert!(command(&choice, "effort", &pick("extreme")).is_err());
        assert!(command(&choice, "colour", &pick("red")).is_err());
    }
}
