//! The LLeMbas harness spec (version in [`VERSION`]) as typed data.
//!
//! Everything here is read from the repository's `spec/` folder at build time: `loop.json` (the
//! numbers and the protocol's fixed texts), the tool definitions, the permission modes and the
//! prompt texts. No other crate spells a spec text literally; they ask this crate for it and fill
//! its `{{variables}}` with [`render`].
//!
//! ```
//! let texts = &lembas_spec::loop_spec().context;
//! let line = lembas_spec::render(&texts.same_result, &[("earlier", "#0001")]);
//! assert_eq!(line, "Same result as #0001.");
//! ```

mod filesystem;
mod loop_spec;
mod mode;
mod modes;
mod template;
mod tools;

pub use filesystem::{FilesystemSpec, filesystem};
pub use loop_spec::*;
pub use mode::Mode;
pub use modes::{ModeSpec, ModesSpec, modes};
pub use template::{placeholders, render};
pub use tools::{RiskClass, ToolDef, tool, tools};

/// The spec's own version (`spec/VERSION`).
pub const VERSION: &str = include_str!("../../../spec/VERSION").trim_ascii();

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/spec_files.rs"));
}

/// The text of an embedded spec file by its path under `spec/` (`prompts/modes/plan.md`).
pub fn file(path: &str) -> Option<&'static str> {
    embedded::FILES.iter().find(|(p, _)| *p == path).map(|(_, text)| *text)
}

/// Every embedded spec file under a folder (`tools/`), as (path, text), sorted by path.
pub fn files_under(prefix: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    embedded::FILES.iter().copied().filter(move |(p, _)| p.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_the_spec_we_implement() {
        assert_eq!(VERSION, "3.6.0");
    }

    #[test]
    fn embedded_files_are_found_by_path() {
        assert!(file("tools/read.json").is_some());
        assert!(file("permission/modes.json").is_some());
        assert!(file("no/such.json").is_none());
        assert!(files_under("tools/").count() >= 20);
    }
}
