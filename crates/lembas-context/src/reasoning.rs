//! Reasoning goes back to the model during its turn (`context.md` §8).
//!
//! The current turn is every message after the last one that started a turn: a message the
//! person wrote, or a machine message that starts a turn of its own. A delivery at a step
//! boundary (a job's note, words added to a running turn) does not start one, and a tool result
//! never does. Assistant messages of the current turn carry their reasoning; earlier ones none.

/// What the rule needs to know of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A user message; `starts_turn` is false for a delivery at a step boundary.
    User {
        starts_turn: bool,
    },
    Assistant,
    Tool,
    /// A compaction's summary, which starts the history afresh.
    Summary,
}

/// For each message, whether its reasoning (if it has any) is sent back.
pub fn sends_reasoning(messages: &[Kind]) -> Vec<bool> {
    let turn_start = messages
        .iter()
        .rposition(|m| matches!(m, Kind::User { starts_turn: true } | Kind::Summary))
        .map_or(0, |i| i + 1);
    messages.iter().enumerate().map(|(i, m)| *m == Kind::Assistant && i >= turn_start).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_turn_carries_reasoning() {
        use Kind::*;
        let kinds = [
            User { starts_turn: true },
            Assistant,
            Tool,
            User { starts_turn: true },
            Assistant,
            User { starts_turn: false },
            Assistant,
        ];
        assert_eq!(sends_reasoning(&kinds), [false, false, false, false, true, false, true]);
    }

    #[test]
    fn a_history_without_a_turn_start_is_all_current() {
        assert_eq!(sends_reasoning(&[Kind::Assistant, Kind::Tool]), [true, false]);
        assert_eq!(sends_reasoning(&[Kind::Assistant, Kind::Summary, Kind::Assistant]), [false, false, true]);
    }
}
