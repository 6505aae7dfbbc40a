//! `lembas kb`: the person's knowledge bases — folders of documents added, listed, indexed again
//! and searched as the agent's `knowledge_search` does — and where they are kept for sessions.

use std::sync::Arc;

use lembas_config::{Config, Home, Login};
use lembas_knowledge::{Embedder, IndexReport, Knowledge};

use crate::cli::{KbAction, exit};
use crate::{Failure, setup};

/// The knowledge bases in lembas' data folder, embedded with `[knowledge] model` — on the
/// login's server, or on the one `[knowledge] url` names (its key in `key_env`) — else with the
/// login's own embedding model, the first its server lists.
pub fn knowledge(home: &Home, config: &Config, login: Option<&Login>) -> Knowledge {
    let settings = &config.knowledge;
    let listed = || login.filter(|_| settings.url.is_none()).and_then(|l| l.embedders.first().cloned());
    let embedder = settings.model.clone().or_else(listed).and_then(|model| match (&settings.url, login) {
        (Some(url), _) => Some(Embedder {
            url: url.clone(),
            model,
            key: settings.key_env.as_deref().and_then(|name| {
                lembas_sys::child_env::keep_secret(name);
                std::env::var(name).ok()
            }),
        }),
        (None, Some(login)) => Some(Embedder { url: login.base_url.clone(), model, key: login.secret.clone() }),
        (None, None) => None,
    });
    Knowledge::new(home.data.join("knowledge"), embedder).keeping_out(never_indexed(home))
}

/// What no knowledge base indexes or reads, whatever folder the person names: the credentials
/// the sandbox hides (`protected.home`) and lembas' own configuration, data and state folders
/// (the login's key among them).
fn never_indexed(home: &Home) -> Vec<std::path::PathBuf> {
    let credentials = home.user_home.as_deref().map(lembas_permissions::credentials).unwrap_or_default();
    let own = [home.config.clone(), home.data.clone(), home.state.clone()];
    credentials.into_iter().map(|(place, _)| place).chain(own).collect()
}

/// The bases `names` names, each one the person added (`lembas run --kb`); an unknown one is a
/// usage error naming those there are.
pub fn known_bases(knowledge: &Knowledge, names: &[String]) -> Result<Vec<String>, Failure> {
    let there: Vec<String> =
        knowledge.list().map_err(|e| Failure::new(exit::FAILED, e.to_string()))?.into_iter().map(|b| b.name).collect();
    match names.iter().find(|n| !there.contains(n)) {
        Some(unknown) if there.is_empty() => {
            Err(Failure::new(exit::USAGE, format!("no knowledge base {unknown}: none is added (lembas kb add)")))
        }
        Some(unknown) => {
            Err(Failure::new(exit::USAGE, format!("no knowledge base {unknown}; there are: {}", there.join(", "))))
        }
        None => Ok(names.to_vec()),
    }
}

/// What an index run did, in a few lines.
fn report(name: &str, report: &IndexReport) -> String {
    let mut lines = vec![format!(
        "{name}: {} files, {} pieces ({} embedded) — {} read anew, {} unchanged, {} gone; {} request{} to the embedding model{}",
        report.files,
        report.pieces,
        report.embedded,
        report.indexed,
        report.unchanged,
        report.removed,
        report.embed_calls,
        if report.embed_calls == 1 { "" } else { "s" },
        if report.split > 0 { format!(", {} pieces cut in two for it", report.split) } else { String::new() }
    )];
    if report.counted_by_model && report.indexed > 0 {
        lines.push("Pieces counted by the embedding model's own tokenizer.".into());
    }
    if report.rebuilt {
        lines.push("The index was damaged: it was set aside and made anew.".into());
    }
    if let Some(down) = &report.embedder_down {
        lines.push(format!(
            "Indexed by words only where embedding stopped ({down}); lembas kb reindex {name} embeds the rest."
        ));
    }
    for (path, why) in report.skipped.iter().take(20) {
        lines.push(format!("  left out: {path} ({why})"));
    }
    if report.skipped.len() > 20 {
        lines.push(format!("  … and {} more left out", report.skipped.len() - 20));
    }
    lines.join("\n")
}

pub async fn kb(action: Option<KbAction>, json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let config = setup::config(&home)?;
    // Not logged in, the bases still work: by words, or on the model `[knowledge] url` names.
    let login = setup::login(&home).ok();
    let kb = Arc::new(knowledge(&home, &config, login.as_ref()));
    let failed = |e: lembas_knowledge::KbError| Failure::new(exit::FAILED, e.to_string());
    match action.unwrap_or(KbAction::List) {
        KbAction::List => {
            let bases = kb.list().map_err(failed)?;
            if json {
                out!("{}", serde_json::to_string(&bases)?);
            } else if bases.is_empty() {
                out!("No knowledge bases yet: lembas kb add NAME FOLDER… makes one.");
            } else {
                for base in bases {
                    let paths: Vec<String> = base.paths.iter().map(|p| p.display().to_string()).collect();
                    out!(
                        "{} — {} files, {} pieces ({} embedded) · {}",
                        base.name,
                        base.files,
                        base.pieces,
                        base.embedded,
                        paths.join(", ")
                    );
                }
                if kb.embedder.is_none() {
                    out!("No embedding model is set ([knowledge] model in config.toml): searches go by words only.");
                }
            }
        }
        KbAction::Add { name, paths } => {
            let done = kb.add(&name, &paths).await.map_err(failed)?;
            say(json, &name, &done)?;
        }
        KbAction::Reindex { name } => {
            let names: Vec<String> = match name {
                Some(name) => vec![name],
                None => kb.bases().map_err(failed)?.into_keys().collect(),
            };
            for name in names {
                let done = kb.reindex(&name).await.map_err(failed)?;
                say(json, &name, &done)?;
            }
        }
        KbAction::Remove { name } => {
            kb.remove(&name).map_err(failed)?;
            out!("Removed the knowledge base {name} (its documents are where they were).");
        }
        KbAction::Search { words, base, limit } => {
            let bases: Vec<String> = base.into_iter().collect();
            let found = kb.search(&words.join(" "), &bases, limit.clamp(1, 50)).await.map_err(failed)?;
            if json {
                out!("{}", serde_json::to_string(&found)?);
                return Ok(exit::OK);
            }
            if let Some(note) = &found.note {
                out!("{note}");
            }
            for hit in &found.hits {
                out!(
                    "\n[{} · {} lines {}-{} · {:?}]\n{}",
                    hit.base,
                    hit.path,
                    hit.line_from,
                    hit.line_to,
                    hit.how,
                    hit.text.trim_end()
                );
            }
            if found.hits.is_empty() {
                out!("Nothing found.");
            }
        }
    }
    Ok(exit::OK)
}

fn say(json: bool, name: &str, done: &IndexReport) -> Result<(), Failure> {
    if json {
        out!("{}", serde_json::json!({ "base": name, "report": done }));
    } else {
        out!("{}", report(name, done));
    }
    Ok(())
}
