//! The knowledge bases' handlers: a search by meaning and by words, and a document's lines —
//! beside the step's other calls (the search asks the embedding model over the network).

use futures::FutureExt;
use futures::future::BoxFuture;
use lembas_tools::ToolOutput;
use serde_json::Value;

use super::runs::{Call, CallTools};

/// How many passages a search gives when the call does not say.
pub(crate) const DEFAULT_PASSAGES: u64 = 5;
/// How much of a passage a search shows (the whole is `knowledge_get`'s).
const PASSAGE_CHARS: usize = 1200;

fn bases(args: &Value) -> Vec<String> {
    match args.get("base") {
        Some(Value::String(one)) if !one.trim().is_empty() => vec![one.trim().to_owned()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The bases a call may read, held to the conversation's scope: those it names (each one of the
/// scope's), else the whole scope (none: every base).
fn within_scope(asked: Vec<String>, scope: Option<&[String]>) -> Result<Vec<String>, String> {
    let Some(scope) = scope else { return Ok(asked) };
    if asked.is_empty() {
        return Ok(scope.to_vec());
    }
    match asked.iter().find(|b| !scope.contains(b)) {
        Some(outside) => {
            Err(format!("{outside:?} is not among this conversation's knowledge bases: {}.", scope.join(", ")))
        }
        None => Ok(asked),
    }
}

pub(super) fn knowledge_search<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let Some(knowledge) = &tools.knowledge else {
            return ToolOutput::Error("No knowledge base is set up here.".to_owned());
        };
        let Some(query) = call.args.get("query").and_then(Value::as_str).map(str::trim).filter(|q| !q.is_empty())
        else {
            return ToolOutput::Error("`query` is required: what to look for.".to_owned());
        };
        let limit = super::limit(&call.args, DEFAULT_PASSAGES);
        let bases = match within_scope(bases(&call.args), tools.knowledge_scope.as_deref()) {
            Ok(bases) => bases,
            Err(why) => return ToolOutput::Error(why),
        };
        match knowledge.search(query, &bases, limit).await {
            Ok(found) => ToolOutput::Text(said(query, &found)),
            Err(e) => ToolOutput::Error(e.to_string()),
        }
    }
    .boxed()
}

/// The bases, a line each, as `/kb` shows them.
pub(crate) fn listing(bases: &[lembas_knowledge::BaseInfo]) -> String {
    if bases.is_empty() {
        return "No knowledge bases yet: lembas kb add NAME FOLDER… makes one; /kb WORDS searches them.".into();
    }
    let mut lines = vec!["Knowledge bases (/kb WORDS searches them):".to_owned()];
    for base in bases {
        let paths: Vec<String> = base.paths.iter().map(|p| p.display().to_string()).collect();
        lines.push(format!(
            "- {} — {} files, {} pieces ({} embedded) · {}",
            base.name,
            base.files,
            base.pieces,
            base.embedded,
            paths.join(", ")
        ));
    }
    lines.join("\n")
}

/// What a search found, as the model reads it: each passage under its base, file and lines.
pub(crate) fn said(query: &str, found: &lembas_knowledge::Found) -> String {
    let mut out = Vec::new();
    if let Some(note) = &found.note {
        out.push(note.clone());
    }
    if found.hits.is_empty() {
        out.push(format!("Nothing in the knowledge bases answers {query:?}."));
    }
    for hit in &found.hits {
        let text: String = hit.text.chars().take(PASSAGE_CHARS).collect();
        let cut = if text.len() < hit.text.len() { " …" } else { "" };
        out.push(format!("[{} · {} lines {}-{}]\n{text}{cut}", hit.base, hit.path, hit.line_from, hit.line_to));
    }
    out.join("\n\n")
}

pub(super) fn knowledge_get<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let Some(knowledge) = tools.knowledge.clone() else {
            return ToolOutput::Error("No knowledge base is set up here.".to_owned());
        };
        let text = |key: &str| call.args.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(base), Some(path)) = (text("base"), text("path")) else {
            return ToolOutput::Error("`base` and `path` are required, as knowledge_search gave them.".to_owned());
        };
        if let Err(why) = within_scope(vec![base.clone()], tools.knowledge_scope.as_deref()) {
            return ToolOutput::Error(why);
        }
        let line = |key: &str| call.args.get(key).and_then(Value::as_u64).map(|n| n as usize);
        let (from, to) = (line("from"), line("to"));
        let got = tokio::task::spawn_blocking(move || knowledge.get(&base, &path, from, to)).await;
        match got {
            Ok(Ok(text)) => ToolOutput::Text(text),
            Ok(Err(e)) => ToolOutput::Error(e.to_string()),
            Err(e) => ToolOutput::Error(format!("The tool failed: {e}")),
        }
    }
    .boxed()
}
