//! Result ids: `#` and the result's number in the session, in lowercase hex, at least
//! `context.ids.digits` digits.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One tool result's id in its session. Displays as `#0001`, `#000a`, `#10000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResultId(pub u64);

impl fmt::Display for ResultId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = lembas_spec::loop_spec().context.ids.digits;
        write!(f, "#{:0digits$x}", self.0)
    }
}

impl FromStr for ResultId {
    type Err = ();

    /// Reads `#00a1` or `a1` (the `#` may be left out, as `recall` allows).
    fn from_str(s: &str) -> Result<Self, ()> {
        let hex = s.trim().strip_prefix('#').unwrap_or(s.trim());
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(());
        }
        u64::from_str_radix(hex, 16).map(ResultId).map_err(|_| ())
    }
}

/// Gives a session's result ids in order, from `#0001`. Stored with the session so a resumed
/// session, or one after compaction, never gives an id twice.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IdCounter {
    last: u64,
}

impl IdCounter {
    /// Continues after `last` (0 for a new session).
    pub fn after(last: u64) -> Self {
        IdCounter { last }
    }

    pub fn next_id(&mut self) -> ResultId {
        self.last += 1;
        ResultId(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_with_at_least_four_digits() {
        assert_eq!(ResultId(1).to_string(), "#0001");
        assert_eq!(ResultId(10).to_string(), "#000a");
        assert_eq!(ResultId(0x10000).to_string(), "#10000");
    }

    #[test]
    fn counter_counts_from_one_and_resumes() {
        let mut c = IdCounter::default();
        assert_eq!(c.next_id(), ResultId(1));
        assert_eq!(c.next_id(), ResultId(2));
        assert_eq!(IdCounter::after(41).next_id(), ResultId(42));
    }

    #[test]
    fn parses_with_or_without_the_hash() {
        assert_eq!("#002a".parse(), Ok(ResultId(42)));
        assert_eq!("2a".parse(), Ok(ResultId(42)));
        assert_eq!("#".parse::<ResultId>(), Err(()));
        assert_eq!("#xyz".parse::<ResultId>(), Err(()));
    }
}
