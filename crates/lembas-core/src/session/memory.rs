//! The person's memory, kept by their LLeMbas instance (`acp.md` *Memory*, `filesystem.md`
//! *Memory*): read as the session starts and put into its prompt (the prompt never changes under
//! a session, so a later change is the `memory` note on the next message); the model changes it
//! with the `memory` tool, whose result already tells it — that change needs no note.
//!
//! The instance is asked in the background: as the session starts or is resumed (its first
//! message in this process waits for the answer a little, like for an MCP server), after each
//! turn (so a change made in the person's chats or in `/memory` reaches the next message), and
//! after the model's own change.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_mcp::InstanceMcp;
use lembas_protocol::notes::{MemoryChange, NotesSaid};
use serde_json::{Value, json};

use crate::Event;
use crate::session::Session;

/// The resource the instance gives the memory as, rendered for a system prompt.
pub const MEMORY_RESOURCE: &str = "lembas://memory";

/// Why a session or a command has no memory, for `/memory` and `lembas memory` alike.
pub const NO_MEMORY_WHY: &str = "it is kept by a LLeMbas server, and this login is to a plain model server, its token lacks the memory scope, or config.toml keeps the library local";

/// What the last read of the memory said.
#[derive(Debug, Default)]
struct Latest {
    /// The text read, or why it could not be; taken by the session.
    read: Option<Result<String, String>>,
    /// The text the model's own change left: already told by its tool's result.
    model_wrote: Option<String>,
    /// The person was told the memory could not be read (once, until a read works again).
    failure_told: bool,
    /// The session has taken a read in this process: later messages do not wait for one.
    taken: bool,
}

/// One session's way to its memory: the instance, the scope its calls carry, and the latest read.
#[derive(Clone)]
pub(crate) struct MemoryLink {
    instance: Arc<InstanceMcp>,
    /// The session's id, when a link client opened it (its chat's data group).
    scope: Option<String>,
    latest: Arc<Mutex<Latest>>,
    reading: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
}

impl std::fmt::Debug for MemoryLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryLink").field("scope", &self.scope).finish_non_exhaustive()
    }
}

/// The memory as the prompt and the note carry it: `None` for none.
fn kept(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

impl MemoryLink {
    /// The link of session `id`, reading the memory from now; `None` where the login keeps none.
    pub(crate) fn for_session(cfg: &crate::SessionConfig, id: &str) -> Option<MemoryLink> {
        let instance = cfg.memory.clone()?;
        let link = MemoryLink {
            instance,
            scope: cfg.memory_scoped.then(|| id.to_owned()),
            latest: Arc::default(),
            reading: Arc::default(),
        };
        // A runtime is there wherever sessions run; a plain test without one simply reads later.
        if tokio::runtime::Handle::try_current().is_ok() {
            link.refresh();
        }
        Some(link)
    }

    /// Reads the memory again in the background; the session takes the answer before its next
    /// message.
    pub(crate) fn refresh(&self) {
        let (instance, scope, latest) = (self.instance.clone(), self.scope.clone(), self.latest.clone());
        let task = tokio::spawn(async move {
            let read = instance.read(MEMORY_RESOURCE, scope.as_deref()).await;
            latest.lock().expect("memory").read = Some(read);
        });
        if let Some(before) = self.reading.lock().expect("memory read").replace(task) {
            before.abort();
        }
    }

    /// Waits up to `wait` for a read under way.
    async fn settle(&self, wait: Duration) {
        let task = self.reading.lock().expect("memory read").take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(wait, task).await;
        }
    }

    /// A `memory` call, with the session's scope; after a change that worked, the memory as it
    /// now stands is read at once, and marked as the model's own.
    pub(crate) async fn call(&self, args: Value, cancel: &lembas_model::CancellationToken) -> lembas_tools::ToolOutput {
        let out = self.instance.call("memory", args, self.scope.as_deref(), cancel).await;
        if out.is_error {
            return lembas_tools::ToolOutput::Error(out.text);
        }
        if let Ok(now) = self.instance.read(MEMORY_RESOURCE, self.scope.as_deref()).await {
            let mut latest = self.latest.lock().expect("memory");
            latest.model_wrote = Some(now.clone());
            latest.read = Some(Ok(now));
        }
        lembas_tools::ToolOutput::Text(out.text)
    }
}

impl Session {
    /// Before a message that starts a turn: the memory read since the last one. Before the
    /// session's first request it waits for the read (as long as for MCP servers) and the prompt
    /// is made with it — nothing has been sent yet, so that costs nothing; later, what changed is
    /// the next note, unless the model changed it itself.
    pub(crate) async fn take_memory(&mut self) -> Result<(), crate::EngineError> {
        let Some(link) = self.role.memory().cloned() else { return Ok(()) };
        let first = self.history.is_empty();
        // The first message in this process, of a new session or a resumed one, waits for the
        // read the session started with.
        if !link.latest.lock().expect("memory").taken {
            link.settle(Duration::from_millis(lembas_spec::loop_spec().context.mcp_wait_ms)).await;
        }
        let (read, model_wrote, failure_told) = {
            let mut latest = link.latest.lock().expect("memory");
            latest.taken = true;
            let (read, told_before) = (latest.read.take(), latest.failure_told);
            // A failed read is told once; a read that worked lets the next failure be told.
            if let Some(result) = &read {
                latest.failure_told = result.is_err();
            }
            (read, latest.model_wrote.take(), told_before)
        };
        match read {
            Some(Ok(text)) => {
                let memory = kept(&text);
                let changed = memory != self.state.memory;
                self.state.memory = memory.clone();
                if first && changed {
                    self.remake_prompt(None);
                    self.save_prefix()?;
                } else if model_wrote.is_some_and(|wrote| wrote == text) {
                    self.state.told.facts.memory = memory;
                }
            }
            Some(Err(why)) if !failure_told => self
                .emit(Event::Notice { message: format!("The memory on the LLeMbas server could not be read: {why}") }),
            Some(Err(_)) | None => {}
        }
        Ok(())
    }

    /// After a turn: what the model's own change left counts as told (its tool result said it),
    /// kept with the session; then the memory is read again, for the next message.
    pub(crate) fn reread_memory(&mut self) {
        let Some(link) = self.role.memory().cloned() else { return };
        let wrote = link.latest.lock().expect("memory").model_wrote.take();
        if let Some(wrote) = wrote {
            self.state.memory = kept(&wrote);
            self.state.told.facts.memory = kept(&wrote);
            if let Err(e) = self.save_prefix() {
                self.emit(Event::Error { message: e.to_string() });
            }
        }
        link.refresh();
    }
}

/// One entry of the memory as the instance renders it: the heading of its section (none: the
/// agent's own notes) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    heading: Option<String>,
    text: String,
}

impl Entry {
    /// The target its section is most likely the text of: `user` under a heading about the
    /// person, else `memory`; the other is tried when the instance finds no such entry there.
    fn targets(&self) -> [&'static str; 2] {
        let about_person =
            self.heading.as_deref().is_some_and(|h| ["person", "user"].iter().any(|w| h.to_lowercase().contains(w)));
        if about_person { ["user", "memory"] } else { ["memory", "user"] }
    }
}

/// The entries of the rendered memory: sections under `#` headings, entries apart by a `§` line.
fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut heading = None;
    let mut lines: Vec<&str> = Vec::new();
    let flush = |lines: &mut Vec<&str>, heading: &Option<String>, out: &mut Vec<Entry>| {
        let text = lines.join("\n").trim().to_owned();
        if !text.is_empty() {
            out.push(Entry { heading: heading.clone(), text });
        }
        lines.clear();
    };
    for line in text.lines() {
        if line.trim() == "§" {
            flush(&mut lines, &heading, &mut out);
        } else if line.starts_with('#') {
            flush(&mut lines, &heading, &mut out);
            heading = Some(line.trim_start_matches('#').trim().to_owned());
        } else {
            lines.push(line);
        }
    }
    flush(&mut lines, &heading, &mut out);
    out
}

/// The memory as `/memory` shows it: each entry numbered under its section, then the instruction
/// files this session reads (the person's own files on this machine).
fn listing(text: &str, files: &[String]) -> String {
    let entries = entries(text);
    let mut lines = Vec::new();
    if entries.is_empty() {
        lines.push(
            "Nothing is remembered on the LLeMbas server (/memory add TEXT, or ask the agent to remember).".to_owned(),
        );
    } else {
        lines.push("Memory on the LLeMbas server — /memory add TEXT, change N TEXT, forget N:".to_owned());
        let mut heading = None;
        for (n, entry) in entries.iter().enumerate() {
            if entry.heading != heading {
                heading = entry.heading.clone();
                lines.push(heading.clone().unwrap_or_default());
            }
            lines.push(format!("  {}. {}", n + 1, entry.text.replace('\n', "\n     ")));
        }
    }
    if !files.is_empty() {
        lines.push(String::new());
        lines.push(format!("Instruction files this session reads (yours to edit): {}", files.join(", ")));
    }
    lines.join("\n")
}

impl MemoryLink {
    /// What the person asked of their memory (`/memory`): the entries, after a change when they
    /// made one. A change goes through the instance's own tool, and the memory read after it is
    /// the session's next note.
    async fn person_asks(&self, change: Option<MemoryChange>, files: &[String]) -> NotesSaid {
        let scope = self.scope.as_deref();
        let read = |why: String| NotesSaid::Failed { reason: format!("The LLeMbas server's memory: {why}") };
        let mut text = match self.instance.read(MEMORY_RESOURCE, scope).await {
            Ok(text) => text,
            Err(why) => return read(why),
        };
        let mut done = String::new();
        if let Some(change) = change {
            match self.change_for_person(&text, change).await {
                Ok(said) => done = format!("{said}\n\n"),
                Err(reason) => return NotesSaid::Failed { reason },
            }
            text = match self.instance.read(MEMORY_RESOURCE, scope).await {
                Ok(text) => text,
                Err(why) => return read(why),
            };
            self.latest.lock().expect("memory").read = Some(Ok(text.clone()));
        }
        NotesSaid::Text { text: format!("{done}{}", listing(&text, files)) }
    }

    /// One change the person made, by the entry's number in `text` as it was shown.
    async fn change_for_person(&self, text: &str, change: MemoryChange) -> Result<String, String> {
        let cancel = lembas_model::CancellationToken::new();
        let listed = entries(text);
        let entry = |n: usize| {
            listed.get(n.wrapping_sub(1)).cloned().ok_or_else(|| format!("There is no entry {n}: /memory lists them."))
        };
        let (calls, said) = match change {
            MemoryChange::Add { text } => {
                (vec![json!({ "action": "add", "target": "memory", "content": text })], "Remembered.")
            }
            MemoryChange::Change { entry: n, text } => {
                let old = entry(n)?;
                let calls = old
                    .targets()
                    .map(|t| json!({ "action": "replace", "target": t, "old_text": old.text, "content": text }));
                (calls.to_vec(), "Changed.")
            }
            MemoryChange::Forget { entry: n } => {
                let old = entry(n)?;
                let calls = old.targets().map(|t| json!({ "action": "remove", "target": t, "old_text": old.text }));
                (calls.to_vec(), "Forgotten.")
            }
        };
        let mut last = String::new();
        for args in calls {
            let out = self.instance.call("memory", args, self.scope.as_deref(), &cancel).await;
            if !out.is_error {
                return Ok(said.to_owned());
            }
            last = out.text;
        }
        Err(last)
    }
}

/// The person's memory as the command line asks for it (`lembas memory`): the entries, after a
/// change when one is asked — the device's own, with no session's scope.
pub async fn memory_said(instance: Arc<InstanceMcp>, change: Option<MemoryChange>) -> NotesSaid {
    let link = MemoryLink { instance, scope: None, latest: Arc::default(), reading: Arc::default() };
    link.person_asks(change, &[]).await
}

impl Session {
    /// The person's memory as a front end asked for it (`/memory`), said when the server answers.
    pub(crate) fn report_memory(&self, change: Option<MemoryChange>) {
        let Some(link) = self.role.memory().cloned() else {
            let reason = format!("There is no memory here: {NO_MEMORY_WHY}.");
            self.emit(Event::Notes { said: NotesSaid::Failed { reason } });
            return;
        };
        let files: Vec<String> = self.instruction_files().into_iter().map(|f| f.name).collect();
        let events = self.events.clone();
        tokio::spawn(async move {
            let said = link.person_asks(change, &files).await;
            let _ = events.send(Event::Notes { said });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_by_section_and_by_the_mark_between_them() {
        let text = "Prefers tabs.\n§\nUses fish\nat home.\n\n## About the person\nIs Ada.";
        let found = entries(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[1].text, "Uses fish\nat home.");
        assert_eq!(found[0].targets(), ["memory", "user"]);
        assert_eq!(found[2].heading.as_deref(), Some("About the person"));
        assert_eq!(found[2].targets(), ["user", "memory"]);
        assert!(entries("").is_empty() && entries("\n§\n").is_empty());
        let shown = listing(text, &[]);
        assert!(shown.contains("  2. Uses fish\n     at home.\nAbout the person\n  3. Is Ada."), "{shown}");
    }
}
