//! The personalities a person chooses for how the agent speaks (`acp.md` *personalization*; the
//! spec's texts are not in our copy, so these few are lembas' own): their names, and the text a
//! session's prompt or its personality note carries.

/// The personalities, by name (`default` is none of them; `custom` is the person's own text).
pub const PERSONALITIES: [&str; 5] = ["default", "concise", "friendly", "teacher", "custom"];

/// The name the prompt gives the person's own instructions from their LLeMbas account (or the
/// personalization a chat sent).
pub const ACCOUNT_INSTRUCTIONS: &str = "Your instructions (LLeMbas account)";
/// The name the prompt gives a LLeMbas chat's own system prompt.
pub const CHAT_INSTRUCTIONS: &str = "This chat's instructions";

/// The text of personality `name` (`custom`: the person's own text); `None` for the default and
/// for an empty custom text; an unknown name is an error naming the known ones.
pub fn personality_text(name: &str, custom: Option<&str>) -> Result<Option<String>, String> {
    match name.trim() {
        "" | "default" => Ok(None),
        "custom" => Ok(custom.map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned)),
        known if PERSONALITIES.contains(&known) => {
            let text = lembas_spec::file(&format!("prompts/personalities/{known}.md")).unwrap_or_default();
            Ok(Some(text.trim().to_owned()))
        }
        other => Err(format!("no personality {other:?}: choose {}", PERSONALITIES.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_personality_has_its_text_and_an_unknown_one_is_named() {
        assert_eq!(personality_text("default", None), Ok(None));
        assert!(personality_text("concise", None).unwrap().unwrap().starts_with("Be terse."));
        assert!(personality_text("teacher", None).unwrap().is_some());
        assert_eq!(
            personality_text("custom", Some("  Speak like a pirate. ")),
            Ok(Some("Speak like a pirate.".into()))
        );
        assert_eq!(personality_text("custom", None), Ok(None));
        assert!(personality_text("grumpy", None).unwrap_err().contains("choose default, concise"));
    }
}
