//! The four permission modes live with the spec data (`lembas_spec::Mode`), so the protocol
//! every front end speaks can name them without the judgement.

pub use lembas_spec::Mode;
