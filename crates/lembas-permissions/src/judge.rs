//! What a mode does with a call, from `permission/modes.json`: run it, ask the person, or refuse.
//!
//! This is the mode table alone. Rules (`defaults.json`, the person's and the project's), the
//! hardline and arity refine it; where a mode says `rules` and no rule has spoken, a reader runs
//! and anything else is asked (or, in plan mode, refused).

use lembas_spec::{RiskClass, modes};

use crate::Mode;

/// The outcome of judging one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    /// Refused, with the sentence the model is told.
    Refuse(String),
}

/// Judges a call of a tool with `risk` in `mode`. `outside` is true when the call reaches a path
/// outside the project (judged on its real path): that is always put to the person.
pub fn judge(mode: Mode, risk: RiskClass, outside: bool) -> Decision {
    let spec = &modes().modes[mode.as_str()];
    let word = match risk {
        RiskClass::Read => &spec.read,
        RiskClass::Write => &spec.write,
        RiskClass::Execute => &spec.execute,
        RiskClass::Interact => &spec.interact,
    };
    let refused =
        || Decision::Refuse(spec.refused.clone().unwrap_or_else(|| format!("The {mode} mode does not allow this.")));
    match (mode, risk) {
        // Plan mode changes nothing but the plan, and runs only what a rule allows.
        (Mode::Plan, RiskClass::Write | RiskClass::Execute) => refused(),
        (_, RiskClass::Write) if outside => Decision::Ask,
        (_, RiskClass::Read) if outside && word != "allow" => Decision::Ask,
        _ => match word.as_str() {
            "allow" => Decision::Allow,
            "ask" => Decision::Ask,
            "rules" => match risk {
                RiskClass::Read | RiskClass::Interact => Decision::Allow,
                RiskClass::Write | RiskClass::Execute => Decision::Ask,
            },
            _ => refused(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_table() {
        use Decision::*;
        use RiskClass::*;
        let plan_refusal = modes().modes["plan"].refused.clone().unwrap();
        let table = [
            (Mode::Manual, Read, Allow),
            (Mode::Manual, Write, Ask),
            (Mode::Manual, Execute, Ask),
            (Mode::Edit, Write, Allow),
            (Mode::Edit, Execute, Ask),
            (Mode::Auto, Write, Allow),
            (Mode::Auto, Execute, Allow),
            (Mode::Plan, Read, Allow),
            (Mode::Plan, Write, Refuse(plan_refusal.clone())),
            (Mode::Plan, Execute, Refuse(plan_refusal)),
        ];
        for (mode, risk, expected) in table {
            assert_eq!(judge(mode, risk, false), expected, "{mode} {risk:?}");
        }
    }

    #[test]
    fn a_change_outside_the_project_is_asked_even_in_auto() {
        assert_eq!(judge(Mode::Auto, RiskClass::Write, true), Decision::Ask);
        assert_eq!(judge(Mode::Edit, RiskClass::Read, true), Decision::Ask);
        assert_eq!(judge(Mode::Auto, RiskClass::Read, true), Decision::Allow);
    }
}
