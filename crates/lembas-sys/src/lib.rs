//! What lembas does to the system on its own behalf, made safe in one place, since the project
//! it works in may be written by the model or shipped by someone else:
//!
//! - [`child_env`]: every process lembas starts — commands, jobs, hooks, MCP servers, the page
//!   reader, an editor — gets the person's environment less lembas' secrets.
//! - [`handed`]: the login's key, given in the environment, moved out of lembas' own
//!   environment block as it starts.
//! - [`write_whole`]: a file written whole or not at all, through a temporary file made
//!   exclusively (never through a link a repository planted) under a name nobody can guess.

pub mod child_env;
pub mod git;
pub mod handed;
mod whole;

pub use whole::{write_whole, write_whole_synced};
