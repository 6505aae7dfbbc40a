//! The output cap (`context.md` §3): a result over the line or character limit keeps its head
//! and its tail, with one line saying how many lines were left out and where the full output is.

use lembas_spec::{Cap, loop_spec, render};

use crate::ResultId;

/// `text` as it goes to the model: unchanged when within `cap`, else head, elided line, tail.
/// Characters are counted as Unicode scalar values; a line's newline counts as one.
pub fn cap(text: &str, id: ResultId, cap: &Cap) -> String {
    let lines: Vec<&str> = crate::read::lines(text).collect();
    if lines.len() <= cap.max_lines && text.chars().count() <= cap.max_chars {
        return text.to_owned();
    }

    // The head: whole lines while both head limits hold.
    let mut head: Vec<String> = Vec::new();
    let mut used = 0;
    for line in &lines {
        let cost = line.chars().count() + usize::from(!head.is_empty());
        if head.len() >= cap.head_lines || used + cost > cap.head_chars {
            break;
        }
        used += cost;
        head.push((*line).to_owned());
    }
    if head.is_empty() && cap.head_lines > 0 {
        // Not even the first line fits: cut it, and let the elided line follow whatever it counts.
        let cut: String = lines[0].chars().take(cap.head_chars).collect();
        head.push(format!("{cut} […cut]"));
    }

    // The tail: likewise from the end, over what the head left.
    let rest = &lines[head.len()..];
    let mut tail_len = 0;
    let mut used = 0;
    for line in rest.iter().rev() {
        let cost = line.chars().count() + usize::from(tail_len > 0);
        if tail_len >= cap.tail_lines || used + cost > cap.tail_chars {
            break;
        }
        used += cost;
        tail_len += 1;
    }

    let elided = rest.len() - tail_len;
    let elided_line = render(&loop_spec().context.elided, &[("n", &elided.to_string()), ("id", &id.to_string())]);
    let mut out = head.join("\n");
    out.push('\n');
    out.push_str(&elided_line);
    for line in &rest[rest.len() - tail_len..] {
        out.push('\n');
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Cap {
        Cap { max_lines: 5, max_chars: 1000, head_lines: 2, head_chars: 1000, tail_lines: 1, tail_chars: 1000 }
    }

    #[test]
    fn short_output_is_untouched() {
        assert_eq!(cap("a\nb", ResultId(1), &small()), "a\nb");
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let text = (1..=8).map(|n| n.to_string()).collect::<Vec<_>>().join("\n");
        assert_eq!(cap(&text, ResultId(3), &small()), "1\n2\n[5 lines elided, full output #0003]\n8");
    }

    #[test]
    fn the_default_cap_counts_characters_not_bytes() {
        let spec = loop_spec().context.cap;
        let text = "é".repeat(spec.max_chars);
        assert_eq!(cap(&text, ResultId(1), &spec), text);
    }
}
