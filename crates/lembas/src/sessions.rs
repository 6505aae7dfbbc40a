//! `lembas sessions`: list, show, rename, delete and search the stored sessions.

use lembas_core::{Event, Host, StoredSession};
use serde_json::json;

use crate::cli::{SessionsAction, exit};
use crate::{Failure, setup};

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

fn line(s: &StoredSession) -> String {
    format!("{}  {}  {}  {}", &s.id[..s.id.len().min(13)], when(s.updated_at), s.title, s.project)
}

fn resolve(host: &Host, id: &str) -> Result<String, Failure> {
    crate::resuming::find_session(host, id)
}

pub fn sessions(action: Option<SessionsAction>, json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let host = Host::new(setup::store(&home, false)?).keeping_snapshots_in(home.snapshots_dir());
    match action.unwrap_or(SessionsAction::List) {
        SessionsAction::List => {
            let list = host.sessions(None)?;
            if json {
                out!("{}", serde_json::to_string(&list)?);
            } else if list.is_empty() {
                out!("No sessions yet.");
            } else {
                list.iter().for_each(|s| out!("{}", line(s)));
            }
        }
        SessionsAction::Show { id } => {
            // A subagent's session is shown by its full id (its parent's listing gives it).
            let id = match host.session(&id)? {
                Some(_) => id,
                None => resolve(&host, &id)?,
            };
            let subagents = host.subagents(&id)?;
            let record = host.session(&id)?.ok_or_else(|| Failure::new(exit::USAGE, format!("no session {id}")))?;
            if json {
                let out = json!({ "id": record.id, "title": record.title, "project": record.project, "model": record.model,
                                  "created_at": record.created_at, "updated_at": record.updated_at,
                                  "messages": host.messages(&id)?, "parent": record.parent, "subagents": subagents });
                out!("{out}");
                return Ok(exit::OK);
            }
            out!(
                "{} — {}\n{} · {} · {}\n",
                record.title,
                record.id,
                record.project,
                record.model,
                when(record.updated_at)
            );
            // Drawn from the events the engine replays, titles as they were live.
            for event in host.transcript(&id)? {
                match event {
                    Event::Prompt { text, .. } => out!("> {}\n", text.trim()),
                    Event::Text { delta } if !delta.trim().is_empty() => out!("{}\n", delta.trim()),
                    Event::ToolStart { tool, title, .. } => out!("› {tool} {title}"),
                    Event::ToolEnd { text, .. } => out!("  {}", text.lines().next().unwrap_or("")),
                    _ => {}
                }
            }
            if !subagents.is_empty() {
                out!("Subagents (`lembas sessions show ID` shows one):");
                subagents.iter().for_each(|s| out!("  {}  {} — {} messages", s.id, s.title, s.messages));
            }
        }
        SessionsAction::Rename { id, title } => {
            let id = resolve(&host, &id)?;
            host.rename(&id, &title)?;
            if !json {
                out!("Renamed {id}.");
            }
        }
        SessionsAction::Delete { id } => {
            let id = resolve(&host, &id)?;
            host.delete(&id)?;
            if !json {
                out!("Deleted {id}.");
            }
        }
        SessionsAction::Search { words } => {
            let hits = host.search(&words.join(" "))?;
            if json {
                out!("{}", serde_json::to_string(&hits)?);
            } else if hits.is_empty() {
                out!("No session mentions that.");
            } else {
                for hit in hits {
                    out!("{}\n    {}", line(&hit.session), hit.snippet.replace('\n', " "));
                }
            }
        }
    }
    Ok(exit::OK)
}
