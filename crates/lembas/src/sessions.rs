//! `lembas sessions`: list, show, rename, delete and search the stored sessions.

use lembas_store::{SessionSummary, Store};
use serde_json::{Value, json};

use crate::cli::{SessionsAction, exit};
use crate::{Failure, setup};

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

fn line(s: &SessionSummary) -> String {
    format!("{}  {}  {}  {}", &s.id[..s.id.len().min(13)], when(s.updated_at), s.title, s.project)
}

fn resolve(store: &Store, id: &str) -> Result<String, Failure> {
    crate::setup::find_session(store, id)
}

pub fn sessions(action: Option<SessionsAction>, json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let store = setup::store(&home)?;
    match action.unwrap_or(SessionsAction::List) {
        SessionsAction::List => {
            let list = store.list(None)?;
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
            let id = match store.session(&id)? {
                Some(_) => id,
                None => resolve(&store, &id)?,
            };
            let subagents = store.children(&id)?;
            let record = store.session(&id)?.ok_or_else(|| Failure::new(exit::USAGE, format!("no session {id}")))?;
            let messages: Vec<Value> =
                store.messages(&id)?.iter().filter_map(|m| serde_json::from_str(&m.json).ok()).collect();
            if json {
                let out = json!({ "id": record.id, "title": record.title, "project": record.project, "model": record.model,
                                  "created_at": record.created_at, "updated_at": record.updated_at, "messages": messages,
                                  "parent": record.parent, "subagents": subagents });
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
            for m in messages {
                let content = m["content"].as_str().unwrap_or("");
                match m["role"].as_str() {
                    Some("user") => out!("> {}\n", content.trim()),
                    Some("assistant") => {
                        if !content.trim().is_empty() {
                            out!("{}\n", content.trim());
                        }
                        for call in m["tool_calls"].as_array().into_iter().flatten() {
                            out!(
                                "› {} {}",
                                call["name"].as_str().unwrap_or(""),
                                call["arguments"].as_str().unwrap_or("")
                            );
                        }
                    }
                    Some("tool") => out!("  {}", content.lines().next().unwrap_or("")),
                    _ => {}
                }
            }
            if !subagents.is_empty() {
                out!("Subagents (`lembas sessions show ID` shows one):");
                subagents.iter().for_each(|s| out!("  {}  {} — {} messages", s.id, s.title, s.messages));
            }
        }
        SessionsAction::Rename { id, title } => {
            let id = resolve(&store, &id)?;
            store.rename(&id, &title)?;
            if !json {
                out!("Renamed {id}.");
            }
        }
        SessionsAction::Delete { id } => {
            let id = resolve(&store, &id)?;
            store.delete(&id)?;
            if !json {
                out!("Deleted {id}.");
            }
        }
        SessionsAction::Search { words } => {
            let hits = store.search(&words.join(" "))?;
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
