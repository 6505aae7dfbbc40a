//! Permissions: the four modes (`permission/modes.json`), and — as the permission work lands —
//! rules, the hardline and approvals. Pure: no I/O, so every judgment is a table test.

mod mode;

pub use mode::Mode;
