//! Permissions: what the agent may do without asking, what it must ask, and what it may never
//! do — the same judgment for every tool, in every front end. Pure: no I/O, so every judgment is
//! a table test; where a path must be found on disk, the caller passes a resolver.
//!
//! - [`Mode`]: the four modes, loosest first.
//! - [`command`]: a command line spelled plainly, every part judged.
//! - [`hardline`]: the floor, refused in every mode, and protected paths; [`credentials`]: the
//!   person's, asked in every mode when read by name.
//! - [`RuleSet`]: the rules, most specific first; [`always_pattern`]: what an approval for the
//!   session covers.
//! - [`Judge`]: one call's judgment; [`delegation`]: a subagent's.
//! - [`network`]: where a URL leads, and the person's own network kept out of the web tools' reach.

mod arity;
pub mod command;
pub mod credentials;
pub mod delegation;
pub mod effects;
mod grammar;
pub mod hardline;
mod judge;
mod mode;
pub mod network;
mod rules;
mod url_pattern;
pub mod words;

pub use arity::always_pattern;
pub use credentials::{credentials, credentials_used};
pub use hardline::Context;
pub use judge::{Call, Decision, Judge, Verdict};
pub use mode::Mode;
pub use rules::{Action, RuleSet, Source, Subject, every_part_matches, rule_key};
