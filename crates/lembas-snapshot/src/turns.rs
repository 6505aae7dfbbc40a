//! What a session's turns changed, and a session's snapshots carried over to its fork.

use crate::{SnapshotError, Store, TurnSnapshots};

impl Store {
    /// The files each turn changed (from its `before` to its `after`), in the order given; an
    /// empty list for a turn that never ended. One `git` for them all.
    pub fn changed_by(&self, turns: &[TurnSnapshots]) -> Result<Vec<Vec<String>>, SnapshotError> {
        let ended: Vec<(&str, &str)> =
            turns.iter().filter_map(|t| Some((t.before.as_str(), t.after.as_deref()?))).collect();
        if ended.is_empty() {
            return Ok(vec![Vec::new(); turns.len()]);
        }
        let asked: String = ended.iter().map(|(before, after)| format!("{before} {after}\n")).collect();
        let args = ["diff-tree", "--stdin", "-r", "--name-only", "--no-renames", "-z"];
        let said = self.git.run(None, &args, Some(asked.as_bytes()))?;
        let mut answers = split_answers(&said, &ended).into_iter();
        Ok(turns
            .iter()
            .map(|t| if t.after.is_some() { answers.next().unwrap_or_default() } else { Vec::new() })
            .collect())
    }

    /// Gives session `to` the snapshots `from` has (refs only: the objects are shared) and its
    /// index, so `to`'s next snapshot reads only what changed.
    pub fn copy_session(&self, from: &str, to: &str) -> Result<(), SnapshotError> {
        for turn in self.turns(from)? {
            self.keep(to, turn.turn, "before", &turn.before)?;
            if let Some(after) = &turn.after {
                self.keep(to, turn.turn, "after", after)?;
            }
        }
        let (index, copy) = (self.index(from), self.index(to));
        match std::fs::copy(&index, &copy) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SnapshotError::Io(copy, e)),
            _ => Ok(()),
        }
    }
}

/// `git diff-tree --stdin -z`'s answer, cut per pair asked: each answer starts with the pair's
/// line ("<before> <after>\n"), then each changed path ends in a NUL. The next pair's line is
/// known, so a path that looks like one cannot be mistaken for it.
fn split_answers(said: &[u8], asked: &[(&str, &str)]) -> Vec<Vec<String>> {
    let mut answers = Vec::with_capacity(asked.len());
    let mut rest = said;
    for (i, (before, after)) in asked.iter().enumerate() {
        let head = format!("{before} {after}\n");
        rest = rest.strip_prefix(head.as_bytes()).unwrap_or(rest);
        let next = asked.get(i + 1).map(|(b, a)| format!("{b} {a}\n"));
        let mut paths = Vec::new();
        while !rest.is_empty() && !next.as_ref().is_some_and(|n| rest.starts_with(n.as_bytes())) {
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            paths.push(String::from_utf8_lossy(&rest[..end]).into_owned());
            rest = rest.get(end + 1..).unwrap_or_default();
        }
        answers.push(paths);
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::split_answers;

    #[test]
    fn answers_are_cut_at_the_pair_asked_next_even_when_a_path_looks_like_one() {
        let said = b"a b\nx\0c d\n\0a b\ne f\n";
        let asked = [("a", "b"), ("a", "b"), ("e", "f")];
        let answers = split_answers(said, &asked);
        assert_eq!(answers, vec![vec!["x".to_owned(), "c d\n".to_owned()], vec![], vec![]]);
    }
}
