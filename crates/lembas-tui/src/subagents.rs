//! `/subagents`: the session's subagents, and any one's transcript, read-only (`subagents.md`
//! §11) — read from the store, so it shows what a working subagent has done so far as well as
//! what an ended one did.

use lembas_protocol::Event;

use crate::app::{App, Block};

impl App {
    /// Lists this session's subagents (`children`), or shows the transcript of the one numbered
    /// `pick` (`transcript` reads one by id).
    pub fn show_subagents(
        &mut self,
        children: Result<Vec<lembas_protocol::StoredSession>, String>,
        pick: Option<usize>,
        transcript: impl Fn(&str) -> Result<Vec<Event>, String>,
    ) {
        let children = match children {
            Ok(children) => children,
            Err(e) => return self.finished.push(Block::Error(e)),
        };
        if children.is_empty() {
            return self.finished.push(Block::Notice("No subagents in this session yet.".into()));
        }
        let Some(n) = pick else {
            let lines: Vec<String> = children
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{:>2}. {} — {} messages", i + 1, c.title, c.messages))
                .collect();
            let list = lines.join("\n");
            return self.finished.push(Block::Notice(format!("{list}\n/subagents N shows one's transcript.")));
        };
        let Some(child) = children.get(n - 1) else {
            return self
                .finished
                .push(Block::Error(format!("There is no subagent {n}: the list has {}.", children.len())));
        };
        match transcript(&child.id) {
            Ok(events) => {
                self.finished.push(Block::Notice(format!("── subagent \"{}\", read-only ──", child.title)));
                self.finished.extend(transcript_blocks(&events));
                self.finished.push(Block::Notice(format!("── end of \"{}\" ──", child.title)));
            }
            Err(e) => self.finished.push(Block::Error(e)),
        }
    }
}

impl App {
    /// A team subagent's transcript (`/team open NAME`), read-only: what it has done so far.
    pub fn show_transcript(&mut self, name: &str, events: Result<Vec<Event>, String>) {
        match events {
            Ok(events) => {
                self.finished.push(Block::Notice(format!("── subagent \"{name}\", read-only ──")));
                self.finished.extend(transcript_blocks(&events));
                self.finished.push(Block::Notice(format!("── end of \"{name}\" so far ──")));
            }
            Err(e) => self.finished.push(Block::Error(e)),
        }
    }
}

/// A stored conversation as blocks, drawn as any replayed conversation is: the same events
/// through the same state, so a subagent's transcript looks as a resumed session does.
fn transcript_blocks(events: &[Event]) -> Vec<Block> {
    let mut view = App::default();
    events.iter().for_each(|e| view.apply(e));
    view.end_replay();
    view.finished
}
