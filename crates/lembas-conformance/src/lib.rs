//! The conformance runner: each `conformance/<area>.json` is `{ "about", "cases": [...] }`, and
//! each area has one runner that turns a case's input into lembas' answer. A case passes when
//! the answer equals its `expect` as JSON.
//!
//! Runners implement the rules through the same crates lembas runs on, never the examples: a
//! case the runner has never seen runs like any other. A file whose area has no runner is
//! reported, not skipped, so a new area cannot pass unnoticed.

mod areas;
mod report;

pub use report::{CaseFailure, FileReport, Outcome, run_file, run_paths};

use serde_json::Value;

/// One area's runner: a case in, lembas' answer out (compared with the case's `expect`), or an
/// error saying why the case could not be run.
pub type Runner = fn(&Value) -> Result<Value, String>;

/// The runner of an area, by the case file's stem.
pub fn runner(area: &str) -> Option<Runner> {
    areas::ALL.iter().find(|(name, _)| *name == area).map(|(_, run)| *run)
}

/// Every area with a runner.
pub fn areas() -> impl Iterator<Item = &'static str> {
    areas::ALL.iter().map(|(name, _)| *name)
}
