//! Which of a reply's calls run together (`loop.json` `parallel`): in the model's order, at most
//! `max` at once, a call that waits on the person (exclusive) alone, and never two calls on one
//! file in one batch — the later waits for the earlier. Pure, so the rule is a table test.

use std::path::PathBuf;

/// What placing a call needs to know of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placing<'a> {
    /// The call's place in the reply.
    pub index: usize,
    pub paths: &'a [PathBuf],
    pub exclusive: bool,
}

/// The batches, as the calls' indexes, in the order they run.
pub(crate) fn batches(calls: &[Placing<'_>], max: usize) -> Vec<Vec<usize>> {
    let max = max.max(1);
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut batch: Vec<&Placing<'_>> = Vec::new();
    for call in calls {
        let clashes = batch.iter().any(|other| other.exclusive || call.paths.iter().any(|p| other.paths.contains(p)));
        if !batch.is_empty() && (batch.len() >= max || call.exclusive || clashes) {
            batches.push(batch.drain(..).map(|c| c.index).collect());
        }
        batch.push(call);
    }
    if !batch.is_empty() {
        batches.push(batch.into_iter().map(|c| c.index).collect());
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(calls: &[(&[&str], bool)], max: usize) -> Vec<Vec<usize>> {
        let paths: Vec<Vec<PathBuf>> = calls.iter().map(|(p, _)| p.iter().map(PathBuf::from).collect()).collect();
        let placing: Vec<Placing<'_>> = calls
            .iter()
            .enumerate()
            .map(|(index, (_, exclusive))| Placing { index, paths: &paths[index], exclusive: *exclusive })
            .collect();
        batches(&placing, max)
    }

    #[test]
    fn calls_run_together_up_to_the_limit() {
        assert_eq!(place(&[(&["a"], false), (&["b"], false), (&["c"], false)], 4), [vec![0, 1, 2]]);
        assert_eq!(place(&[(&["a"], false), (&["b"], false), (&["c"], false)], 2), [vec![0, 1], vec![2]]);
        assert!(place(&[], 4).is_empty());
    }

    #[test]
    fn calls_on_one_file_run_in_order() {
        assert_eq!(place(&[(&["a"], false), (&["b"], false), (&["a", "c"], false)], 4), [vec![0, 1], vec![2]]);
        assert_eq!(place(&[(&[], false), (&[], false)], 4), [vec![0, 1]], "calls on no file never clash");
    }

    #[test]
    fn a_call_that_waits_on_the_person_runs_alone() {
        assert_eq!(place(&[(&["a"], false), (&[], true), (&["b"], false)], 4), [vec![0], vec![1], vec![2]]);
        assert_eq!(place(&[(&[], true), (&[], true)], 4), [vec![0], vec![1]]);
    }
}
