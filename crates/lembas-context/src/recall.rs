//! `recall` (`context.md` §4): a stored result shown again, in full, a window of its lines.

use lembas_spec::{loop_spec, render};

use crate::read::{WINDOW_LINES, lines};
use crate::{ResultId, count_lines};

/// The text `recall` answers under its own `id`. `target` is the argument as the model gave it
/// (`#0020` or `0020`); `stored` is what the session stored for it, if anything. A recall is
/// neither capped nor deduplicated.
pub fn recall(id: ResultId, target: &str, stored: Option<&str>, offset: Option<usize>, limit: Option<usize>) -> String {
    let ctx = &loop_spec().context;
    let parsed = target.parse::<ResultId>().ok();
    let target_text = match parsed {
        Some(t) => t.to_string(),
        None if target.starts_with('#') => target.to_owned(),
        None => format!("#{target}"),
    };
    let header = render(&ctx.header, &[("id", &id.to_string())]);
    let Some(stored) = stored.filter(|_| parsed.is_some()) else {
        return format!("{header} {}", render(&ctx.no_result, &[("target", &target_text)]));
    };

    let total = count_lines(stored);
    let from = offset.unwrap_or(1).max(1);
    if total > 0 && from > total {
        return format!("{header} Line {from} is past the end of {target_text}: it has {total} lines.");
    }
    let to = (from + limit.unwrap_or(WINDOW_LINES).max(1) - 1).min(total);
    let shown: Vec<&str> = lines(stored).skip(from - 1).take((to + 1).saturating_sub(from)).collect();
    let bracket = render(
        &ctx.recall_header,
        &[
            ("id", &id.to_string()),
            ("target", &target_text),
            ("from", &from.min(total).to_string()),
            ("to", &to.to_string()),
            ("of", &total.to_string()),
        ],
    );
    // The bracket says which lines these are and of how many: nothing follows the lines
    // (`context.md` §4 — the "N more lines" note is read's, not recall's).
    format!("{bracket}\n{}", shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ids_are_said_so() {
        assert_eq!(recall(ResultId(0x21), "ffff", None, None, None), "[#0021] No stored result #ffff in this session.");
        assert_eq!(
            recall(ResultId(0x21), "#zz", Some("x"), None, None),
            "[#0021] No stored result #zz in this session."
        );
    }

    #[test]
    fn a_window_of_the_stored_text() {
        let stored = (1..=5).map(|n| format!("l{n}")).collect::<Vec<_>>().join("\n");
        assert_eq!(
            recall(ResultId(9), "#0003", Some(&stored), Some(2), Some(2)),
            "[#0009 recall #0003 lines 2-3 of 5]\nl2\nl3"
        );
        assert!(recall(ResultId(9), "3", Some(&stored), Some(9), None).contains("past the end"));
    }
}
