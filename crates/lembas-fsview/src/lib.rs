//! The file system as one session sees it (`filesystem.md`), without touching a disk.
//!
//! - [`View`]: a tree, its grants and floors, and what each operation answers — a level, a
//!   listing, or the exact error. A path the session cannot see is answered by what the model
//!   already knows, so a hidden entry and a missing one read the same.
//! - [`instructions`]: the stacked instruction chain from the boundary down to the start
//!   directory.
//!
//! On a device the whole project is one level, decided by the permission rules; this view is
//! what the same rules look like for the folders remote work may use, and the reference for the
//! texts every tool answers.

pub mod instructions;
mod level;
mod view;

pub use level::Level;
pub use view::{FsError, NodeKind, View};
