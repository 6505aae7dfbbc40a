//! Which model a subagent runs on (`subagents.md` §2–§4): the session's, or another only when
//! the person's own words name it, as a whole word, without case — and only where its server
//! can hold it beside the session's.

use crate::ModelInfo;

/// A character that may not come right before a name: it would make the name part of a longer
/// word, path or version.
fn joins_before(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.' | ':')
}

/// Whether `name` occurs in `text` as a whole word, letters compared without case; a run of
/// white space in the name matches any run of white space.
pub fn names(text: &str, name: &str) -> bool {
    let parts: Vec<Vec<char>> =
        name.split_whitespace().map(|p| p.chars().flat_map(char::to_lowercase).collect()).collect();
    if parts.is_empty() {
        return false;
    }
    let text: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    (0..text.len()).any(|start| {
        if start > 0 && joins_before(text[start - 1]) {
            return false;
        }
        let Some(end) = match_at(&text, start, &parts) else { return false };
        match text.get(end) {
            None => true,
            Some(&c) if c.is_alphanumeric() || matches!(c, '_' | '-' | '/') => false,
            Some('.' | ':') => !text.get(end + 1).is_some_and(|c| c.is_alphanumeric()),
            Some(_) => true,
        }
    })
}

/// Where a match of the name's parts starting at `start` ends, if there is one.
fn match_at(text: &[char], start: usize, parts: &[Vec<char>]) -> Option<usize> {
    let mut at = start;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let spaces = text[at..].iter().take_while(|c| c.is_whitespace()).count();
            if spaces == 0 {
                return None;
            }
            at += spaces;
        }
        if !text[at..].starts_with(part) {
            return None;
        }
        at += part.len();
    }
    Some(at)
}

/// Whether the person's words name this model: its served id or its display name.
pub fn names_model(text: &str, model: &ModelInfo) -> bool {
    names(text, &model.id) || model.name.as_deref().is_some_and(|n| names(text, n))
}

fn group(model: &ModelInfo) -> Option<&str> {
    model.capacity.as_ref().and_then(|c| c.group.as_deref())
}

fn one_request(model: &ModelInfo) -> bool {
    model.capacity.as_ref().and_then(|c| c.parallel()) == Some(1)
}

/// Whether `other` is another model on `own`'s one-model server.
fn same_server(own: &ModelInfo, other: &ModelInfo) -> bool {
    other.id != own.id && group(own).is_some() && group(own) == group(other)
}

/// Whether a session on `model` is offered subagents at all (§4): its model serves two or more
/// requests at once, or another usable model is not on its one-model server.
pub fn subagent_offered(model: &ModelInfo, usable: &[ModelInfo]) -> bool {
    !one_request(model) || usable.iter().any(|m| m.id != model.id && !same_server(model, m))
}

/// A refusal of `loop.json` `subagents.texts`, word for word.
fn text(key: &str) -> String {
    lembas_spec::loop_spec().subagents["texts"][key]
        .as_str()
        .unwrap_or_else(|| panic!("subagents.texts.{key}"))
        .to_owned()
}

/// The model a subagent runs on (§2–§3): the session's, or the one asked for by its id or
/// display name — only when the person named it, and only where its server can hold it.
pub fn subagent_model(
    own: &ModelInfo,
    asked: Option<&str>,
    usable: &[ModelInfo],
    named: &[String],
) -> Result<ModelInfo, String> {
    let asked = asked.map(str::trim).filter(|a| !a.is_empty());
    let model = match asked {
        None => own.clone(),
        Some(asked) => {
            let is = |m: &ModelInfo| {
                m.id.eq_ignore_ascii_case(asked)
                    || m.name.as_deref().is_some_and(|n| {
                        n.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
                            == asked.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
                    })
            };
            let found = std::iter::once(own).chain(usable).find(|m| is(m)).cloned();
            let Some(found) = found else {
                let mut ids: Vec<&str> = std::iter::once(own).chain(usable).map(|m| m.id.as_str()).collect();
                ids.dedup();
                return Err(format!("There is no model called {asked} here. The models are: {}.", ids.join(", ")));
            };
            found
        }
    };
    if model.id != own.id && !named.contains(&model.id) {
        return Err(text("not_named"));
    }
    if same_server(own, &model) {
        return Err(text("same_group"));
    }
    if model.id == own.id && one_request(own) {
        return Err(text("one_request"));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_name_counts_only_as_a_whole_word() {
        assert!(names("use coder-30b for the tests", "coder-30b"));
        assert!(names("Use CODER-30B.", "coder-30b"), "a full stop ends a sentence");
        assert!(names("try coder-30b: it is quick", "coder-30b"));
        assert!(!names("use coder-30b-instruct", "coder-30b"));
        assert!(!names("use coder-30b.2 now", "coder-30b"), "a version goes on after the dot");
        assert!(!names("see models/coder-30b", "coder-30b"), "part of a path");
        assert!(!names("xcoder-30b", "coder-30b"));
        assert!(!names("", "coder-30b"));
    }

    #[test]
    fn white_space_in_a_display_name_matches_any_run() {
        assert!(names("ask Qwen   Coder\nto review", "Qwen Coder"));
        assert!(!names("ask QwenCoder", "Qwen Coder"));
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;
    use crate::Capacity;

    fn model(id: &str, group: Option<&str>, parallel: Option<u32>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            capacity: Some(Capacity { group: group.map(Into::into), single_session: None, parallel }),
            ..ModelInfo::default()
        }
    }

    #[test]
    fn a_subagent_runs_on_the_sessions_model_unless_the_person_named_another() {
        let own = model("qwen-27b", None, None);
        let other = ModelInfo { name: Some("Coder 30B".into()), ..model("coder-30b", None, None) };
        let usable = vec![own.clone(), other.clone()];
        assert_eq!(subagent_model(&own, None, &usable, &[]).unwrap().id, "qwen-27b");
        assert_eq!(subagent_model(&own, Some("qwen-27b"), &usable, &[]).unwrap().id, "qwen-27b");
        assert_eq!(subagent_model(&own, Some("coder-30b"), &usable, &[]).unwrap_err(), text("not_named"));
        let named = vec!["coder-30b".to_owned()];
        assert_eq!(subagent_model(&own, Some("coder  30b"), &usable, &named).unwrap().id, "coder-30b");
        assert!(subagent_model(&own, Some("gpt-9"), &usable, &named).unwrap_err().contains("no model called gpt-9"));
    }

    #[test]
    fn capacity_refusals_come_in_the_specs_order() {
        let own = model("a", Some("box"), Some(1));
        let twin = model("b", Some("box"), None);
        let away = model("c", Some("other"), Some(1));
        let usable = vec![own.clone(), twin.clone(), away.clone()];
        let named = vec!["b".to_owned(), "c".to_owned()];
        assert_eq!(subagent_model(&own, Some("b"), &usable, &named).unwrap_err(), text("same_group"));
        assert_eq!(subagent_model(&own, None, &usable, &named).unwrap_err(), text("one_request"));
        assert_eq!(subagent_model(&own, Some("c"), &usable, &named).unwrap().id, "c", "one request is fine elsewhere");
        assert!(subagent_offered(&own, &usable), "another server has a model");
        assert!(!subagent_offered(&own, &[own.clone(), twin]), "only its own one-model server");
        assert!(subagent_offered(&model("solo", None, None), &[]), "no limit said: it serves subagents itself");
    }
}
