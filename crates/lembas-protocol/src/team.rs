//! The team as a client reads it: the tree of agents, the room's messages, a subagent's
//! findings (`subagents.md` §12, `acp.md` `_lembas/team`), typed.

pub use lembas_team::{
    AgentContext, Finding, Findings, Kind as MessageKind, RoomMessage, State as AgentState, TeamAgent, TeamTree,
};
