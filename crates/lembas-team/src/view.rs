//! The team as clients read it (`subagents.md` §12, `acp.md` `_lembas/team`): the tree of agents
//! and the room's messages, typed, so a front end reads fields rather than indexing JSON. Their
//! serialized shape is the protocol's.

use lembas_progress::Progress;
use lembas_spec::Mode;
use serde::{Deserialize, Serialize};

use crate::{Kind, State};

/// The tree: the team's size and bounds, the agents that have not ended in tree order, and
/// those that have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamTree {
    pub min: u32,
    pub max: u32,
    pub size: u32,
    /// Places the person asked for with Min, not filled yet.
    pub open_slots: u32,
    pub agents: Vec<TeamAgent>,
    pub ended: Vec<TeamAgent>,
}

/// Tokens in an agent's context now, and its model's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentContext {
    pub used: u64,
    pub window: Option<u64>,
}

/// One agent of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamAgent {
    pub id: String,
    pub name: String,
    pub position: String,
    /// Its parent's id; `None` for the main agent.
    pub parent: Option<String>,
    pub state: State,
    /// The model it runs on (its id).
    pub model: String,
    pub mode: Mode,
    /// Request options: the risk classes it may ask the main agent for.
    pub request: Vec<String>,
    pub manager: bool,
    pub context: AgentContext,
    /// How many findings it wrote.
    pub findings: usize,
    /// What it does now: its phase while a turn runs, `queued` while it waits for a slot.
    pub progress: Option<Progress>,
    /// Beside the spec's fields, what a front end shows without asking again: its findings,
    /// the stored session of its conversation, and how many room messages are its.
    #[serde(default)]
    pub found: Vec<String>,
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub messages: usize,
    /// Its brief (a subagent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<u64>,
}

/// One message of the room, as the person reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomMessage {
    pub n: u64,
    /// The sender's name.
    pub from: String,
    /// As addressed: the names joined with ", ", or `all`.
    pub to: String,
    /// The recipients' names.
    pub recipients: Vec<String>,
    pub text: String,
    pub time: u64,
    /// A subagent's final reply to its parent.
    pub report: bool,
    pub kind: Kind,
}

/// A subagent's findings, numbered from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Findings {
    pub id: String,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub n: usize,
    pub text: String,
}

impl TeamAgent {
    /// Its findings, numbered from 1.
    pub fn numbered_findings(&self) -> Findings {
        let findings =
            self.found.iter().enumerate().map(|(i, text)| Finding { n: i + 1, text: text.clone() }).collect();
        Findings { id: self.id.clone(), findings }
    }
}
