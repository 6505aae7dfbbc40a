//! The web tools' work: [`fetch`] a URL and give its content as text a model reads well — HTML as
//! Markdown without its scripts, styles and menus, JSON laid out, a PDF's text — within a time and
//! a size, following redirects on the same site only, and never into the person's own network
//! unless they allow it; [`search`] the web through the provider the person configured.
//!
//! Whether a call may run at all is the permission rules' (`lembas-permissions`, which also reads
//! where a URL leads); this crate refuses again, where a name is resolved, any address the rules
//! could not see from the URL alone.

mod convert;
mod fetch;
mod guard;
pub mod reader;
pub mod search;

use std::time::Duration;

pub use convert::NotText;
pub use convert::{Converted, convert};
pub use fetch::{Fetch, FetchError, Fetched, RedirectJudge, fetch};
pub use reader::Reader;
pub use search::{SearchError, SearchHit, SearchProvider, search};

/// Limits every fetch keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The whole fetch: connecting, every redirect, the body.
    pub timeout: Duration,
    /// The most of a body read; a longer one is cut there (and said so).
    pub max_bytes: usize,
    /// Redirects followed on the same site.
    pub max_redirects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(30), max_bytes: 10 * 1024 * 1024, max_redirects: 10 }
    }
}

/// An error and the errors beneath it, outermost first: where the real reason is (a refused
/// connection, a certificate, a name refused) under reqwest's own words.
pub(crate) fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |e| e.source())
}

/// The innermost reason an error gives.
pub(crate) fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    causes(e).last().map(ToString::to_string).unwrap_or_default()
}

/// What lembas says it is, to the sites it fetches from.
pub fn user_agent() -> String {
    format!("lembas/{} (coding agent; web_fetch)", env!("CARGO_PKG_VERSION"))
}
