//! Permissions: the four modes (`permission/modes.json`), and — as the permission work lands —
//! rules, the hardline and approvals. Pure: no I/O, so every judgment is a table test.

mod judge;
mod mode;

pub use judge::{Decision, judge};
pub use mode::Mode;
