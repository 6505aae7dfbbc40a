//! The project's tasks and decisions, kept in the project (`.lembas/tasks.md`,
//! `.lembas/decisions.md`) where a team reads, edits and commits them: the agent's `tasks` and
//! `decisions` tools, `lembas tasks` / `lembas decisions` and `/tasks` / `/decisions` all read and
//! change the same files.

use std::path::{Path, PathBuf};

use lembas_tools::ToolOutput;
use serde_json::Value;

use crate::ledger::{Entry, Ledger, LedgerFile};

/// What a task may be.
pub const STATES: [&str; 4] = ["open", "doing", "done", "dropped"];

const TASKS_HEADING: &str = "# Tasks\n\nThis project's tasks, kept by lembas and by hand: each `## T<n> · title`, its `- state:` (open, doing, done or dropped), `- owner:` and the sessions that worked on it, then its text.\n";
const DECISIONS_HEADING: &str = "# Decisions\n\nWhat was decided in this project and why, newest last: each `## D<n> · title`, its date and status, what it supersedes, then the decision and its reasons.\n";

/// How many sessions a task remembers (the latest).
const SESSIONS_KEPT: usize = 5;

/// A project's tasks and decisions, by its root.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

/// Who makes a change, and when: a task's owner when none is named, the session it links to.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    /// `main`, a subagent's name, or `person`.
    pub by: &'a str,
    pub session: Option<&'a str>,
    /// `YYYY-MM-DD`.
    pub today: &'a str,
}

impl Project {
    pub fn new(root: &Path) -> Project {
        Project { root: root.to_path_buf() }
    }

    pub fn tasks(&self) -> LedgerFile {
        LedgerFile { path: self.root.join(".lembas/tasks.md"), letter: 'T', heading: TASKS_HEADING }
    }

    pub fn decisions(&self) -> LedgerFile {
        LedgerFile { path: self.root.join(".lembas/decisions.md"), letter: 'D', heading: DECISIONS_HEADING }
    }

    /// Adds a task; its id.
    pub fn add_task(&self, title: &str, details: &str, owner: Option<&str>, stamp: Stamp) -> Result<String, String> {
        let title = one_line(title).ok_or("A task needs a `title`.")?;
        self.tasks().change(|ledger| {
            let number = ledger.next_number();
            let mut entry = Entry { number, title, body: details.trim().to_owned(), ..Entry::default() };
            entry.set("state", "open");
            entry.set("owner", owner.unwrap_or(stamp.by));
            entry.set("added", stamp.today);
            link(&mut entry, stamp.session);
            ledger.entries.push(entry);
            Ok(format!("T{number}"))
        })
    }

    /// Changes a task's state, owner or title, and adds to its text; what it is now.
    pub fn update_task(&self, id: &str, change: &TaskChange, stamp: Stamp) -> Result<String, String> {
        if let Some(state) = change.state
            && !STATES.contains(&state)
        {
            return Err(format!("`state` {state:?} is not open, doing, done or dropped."));
        }
        self.tasks().change(|ledger| {
            let entry = ledger.find_mut(id)?;
            if let Some(state) = change.state {
                entry.set("state", state);
            }
            if let Some(owner) = change.owner {
                entry.set("owner", owner);
            }
            if let Some(title) = change.title.and_then(one_line) {
                entry.title = title;
            }
            if let Some(details) = change.details.map(str::trim).filter(|d| !d.is_empty()) {
                let line = format!("{} ({}): {details}", stamp.today, stamp.by);
                entry.body = if entry.body.is_empty() { line } else { format!("{}\n\n{line}", entry.body) };
            }
            entry.set("updated", stamp.today);
            link(entry, stamp.session);
            Ok(task_line(entry))
        })
    }

    /// Records a decision (marking the one it supersedes); its id.
    pub fn record_decision(&self, decision: &Decision, stamp: Stamp) -> Result<String, String> {
        let title = one_line(decision.title).ok_or("A decision needs a `title`.")?;
        let text = decision.decision.trim();
        if text.is_empty() {
            return Err("Say what was decided in `decision`.".into());
        }
        self.decisions().change(|ledger| {
            let number = ledger.next_number();
            let supersedes = match decision.supersedes.map(str::trim).filter(|s| !s.is_empty()) {
                Some(old) => {
                    let old = ledger.find_mut(old)?;
                    old.set("status", &format!("superseded by D{number}"));
                    Some(format!("D{}", old.number))
                }
                None => None,
            };
            let mut body = text.to_owned();
            if let Some(why) = decision.why.map(str::trim).filter(|w| !w.is_empty()) {
                body.push_str(&format!("\n\nWhy: {why}"));
            }
            let mut entry = Entry { number, title, body, ..Entry::default() };
            entry.set("date", stamp.today);
            entry.set("status", "accepted");
            entry.set("supersedes", supersedes.as_deref().unwrap_or_default());
            entry.set("by", stamp.by);
            link(&mut entry, stamp.session);
            ledger.entries.push(entry);
            Ok(format!("D{number}"))
        })
    }
}

/// A change to a task: each part that is given.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskChange<'a> {
    pub state: Option<&'a str>,
    pub owner: Option<&'a str>,
    pub title: Option<&'a str>,
    /// Added under its text, dated.
    pub details: Option<&'a str>,
}

/// A decision to record.
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    pub title: &'a str,
    pub decision: &'a str,
    pub why: Option<&'a str>,
    /// The decision it replaces (`D2`).
    pub supersedes: Option<&'a str>,
}

/// The session in an entry's `sessions` (the latest few).
fn link(entry: &mut Entry, session: Option<&str>) {
    let Some(session) = session else { return };
    let mut sessions: Vec<String> = entry
        .field("sessions")
        .map(|s| s.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty() && s != session).collect())
        .unwrap_or_default();
    sessions.push(session.to_owned());
    let from = sessions.len().saturating_sub(SESSIONS_KEPT);
    entry.set("sessions", &sessions[from..].join(", "));
}

fn one_line(text: &str) -> Option<String> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then_some(line)
}

/// A task in a line: `T3 [doing] Title (owner)`.
pub fn task_line(entry: &Entry) -> String {
    let owner = entry.field("owner").map(|o| format!(" ({o})")).unwrap_or_default();
    format!("T{} [{}] {}{owner}", entry.number, entry.field("state").unwrap_or("open"), entry.title)
}

/// A decision in a line: `D2 · 2026-12-05 · Title [superseded by D4]`.
pub fn decision_line(entry: &Entry) -> String {
    let date = entry.field("date").map(|d| format!(" · {d}")).unwrap_or_default();
    let status = entry.field("status").filter(|s| *s != "accepted").map(|s| format!(" [{s}]")).unwrap_or_default();
    format!("D{}{date} · {}{status}", entry.number, entry.title)
}

/// The tasks in `states` (open and doing when none is named; `all` for every one), a line each.
pub fn task_list(ledger: &Ledger, state: Option<&str>) -> String {
    let shown: Vec<String> = ledger
        .entries
        .iter()
        .filter(|e| {
            let now = e.field("state").unwrap_or("open");
            match state {
                None => now == "open" || now == "doing",
                Some("all") => true,
                Some(wanted) => now == wanted,
            }
        })
        .map(task_line)
        .collect();
    let left = ledger.entries.len() - shown.len();
    let more = if left > 0 && state.is_none() {
        format!("\n({left} done or dropped; state \"all\" lists them.)")
    } else {
        String::new()
    };
    if shown.is_empty() {
        return format!("No tasks{}.{more}", state.map(|s| format!(" {s}")).unwrap_or_else(|| " open".into()));
    }
    format!("{}{more}", shown.join("\n"))
}

/// A whole entry, as the file has it.
pub fn entry_text(letter: char, entry: &Entry) -> String {
    Ledger { letter, preamble: String::new(), entries: vec![entry.clone()] }.render()
}

/// The decisions, a line each.
pub fn decision_list(ledger: &Ledger) -> String {
    if ledger.entries.is_empty() {
        return "No decisions recorded yet (lembas decisions add TITLE --decision … starts the log).".to_owned();
    }
    ledger.entries.iter().map(decision_line).collect::<Vec<_>>().join("\n")
}

/// What the person asked of the tasks (`/tasks`), answered in the list's words.
pub fn person_asks(project: &Project, ask: &lembas_protocol::notes::TasksAsk, stamp: Stamp) -> Result<String, String> {
    use lembas_protocol::notes::TasksAsk;
    match ask {
        TasksAsk::List { all } => project.tasks().read().map(|l| task_list(&l, all.then_some("all"))),
        TasksAsk::Show { id } => project.tasks().read().and_then(|l| l.find(id).map(|e| entry_text('T', e))),
        TasksAsk::Add { title } => project.add_task(title, "", None, stamp).map(|id| format!("Added {id}: {title}")),
        TasksAsk::Set { id, state } => {
            project.update_task(id, &TaskChange { state: Some(state), ..TaskChange::default() }, stamp)
        }
    }
}

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// `tasks`: the project's task list — list, add, update, close.
pub fn tasks_tool(project: &Project, stamp: Stamp, args: &Value) -> ToolOutput {
    let id = || text(args, "id").ok_or_else(|| "`id` is required (T3).".to_owned());
    let said = match text(args, "action").unwrap_or("list") {
        "list" => project.tasks().read().map(|l| task_list(&l, text(args, "state"))),
        "add" => project
            .add_task(
                text(args, "title").unwrap_or_default(),
                text(args, "details").unwrap_or_default(),
                text(args, "owner"),
                stamp,
            )
            .map(|id| format!("Added {id}.")),
        "update" | "close" => id().and_then(|id| {
            let closing = args["action"] == "close";
            let change = TaskChange {
                state: text(args, "state").or(closing.then_some("done")),
                owner: text(args, "owner"),
                title: text(args, "title"),
                details: text(args, "details"),
            };
            project.update_task(id, &change, stamp)
        }),
        other => Err(format!("`action` {other:?} is not list, add, update or close.")),
    };
    said.map_or_else(ToolOutput::Error, ToolOutput::Text)
}

/// `decisions`: the project's decision log — list, show, record.
pub fn decisions_tool(project: &Project, stamp: Stamp, args: &Value) -> ToolOutput {
    let said = match text(args, "action").unwrap_or("list") {
        "list" => project.decisions().read().map(|l| decision_list(&l)),
        "show" => match text(args, "id") {
            Some(id) => project.decisions().read().and_then(|l| l.find(id).map(|e| entry_text('D', e))),
            None => Err("`id` is required (D2).".into()),
        },
        "record" => {
            let decision = Decision {
                title: text(args, "title").unwrap_or_default(),
                decision: text(args, "decision").unwrap_or_default(),
                why: text(args, "why"),
                supersedes: text(args, "supersedes"),
            };
            project.record_decision(&decision, stamp).map(|id| format!("Recorded {id}."))
        }
        other => Err(format!("`action` {other:?} is not list, show or record.")),
    };
    said.map_or_else(ToolOutput::Error, ToolOutput::Text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn said(out: ToolOutput) -> String {
        match out {
            ToolOutput::Text(t) => t,
            ToolOutput::Error(e) => format!("error: {e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tasks_are_added_updated_closed_and_listed_in_the_projects_file() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::new(dir.path());
        let stamp = Stamp { by: "main", session: Some("s1"), today: "2026-12-05" };
        let call = |args: Value| said(tasks_tool(&project, stamp, &args));
        assert_eq!(call(json!({"action": "list"})), "No tasks open.");
        assert_eq!(
            call(json!({"action": "add", "title": "Fix the  redirect", "details": "It loses `next`."})),
            "Added T1."
        );
        assert_eq!(call(json!({"action": "add", "title": "Tidy", "owner": "person"})), "Added T2.");
        assert_eq!(
            call(json!({"action": "update", "id": "T1", "state": "doing", "details": "Found it in auth.rs."})),
            "T1 [doing] Fix the redirect (main)"
        );
        assert_eq!(call(json!({"action": "close", "id": "2"})), "T2 [done] Tidy (person)");
        assert_eq!(
            call(json!({})),
            "T1 [doing] Fix the redirect (main)\n(1 done or dropped; state \"all\" lists them.)"
        );
        assert!(call(json!({"action": "update", "id": "T1", "state": "later"})).contains("not open, doing"));
        assert_eq!(call(json!({"action": "close", "id": "T9"})), "error: There is no T9.");
        let file = std::fs::read_to_string(dir.path().join(".lembas/tasks.md")).unwrap();
        assert!(file.starts_with("# Tasks\n"), "{file}");
        assert!(
            file.contains("## T1 · Fix the redirect\n- state: doing\n- owner: main\n- added: 2026-12-05\n- sessions: s1\n- updated: 2026-12-05\n\nIt loses `next`.\n\n2026-12-05 (main): Found it in auth.rs.\n"),
            "{file}"
        );
    }

    #[test]
    fn a_decision_that_supersedes_another_marks_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::new(dir.path());
        let stamp = Stamp { by: "main", session: None, today: "2026-12-05" };
        let call = |args: Value| said(decisions_tool(&project, stamp, &args));
        assert_eq!(
            call(
                json!({"action": "record", "title": "Index in SQLite", "decision": "Keep the index in SQLite.", "why": "One file."})
            ),
            "Recorded D1."
        );
        assert!(call(json!({"action": "record", "title": "x"})).contains("Say what was decided"));
        assert_eq!(
            call(
                json!({"action": "record", "title": "Index in its own file", "decision": "A file of its own.", "supersedes": "D1"})
            ),
            "Recorded D2."
        );
        assert_eq!(
            call(json!({"action": "list"})),
            "D1 · 2026-12-05 · Index in SQLite [superseded by D2]\nD2 · 2026-12-05 · Index in its own file"
        );
        let shown = call(json!({"action": "show", "id": "D1"}));
        assert!(
            shown.contains("- status: superseded by D2")
                && shown.ends_with("Keep the index in SQLite.\n\nWhy: One file.\n"),
            "{shown}"
        );
        assert!(
            call(json!({"action": "record", "title": "y", "decision": "z", "supersedes": "D7"}))
                .contains("There is no D7")
        );
    }
}
