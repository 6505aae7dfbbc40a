//! Areas over a session's view of a tree.

use std::path::Path;

use lembas_fsview::{Level, NodeKind, View, instructions};
use serde_json::{Value, json};

use super::{text, unknown_op};

fn paths<'a>(case: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    match case.get(key) {
        None => Ok(Vec::new()),
        Some(v) => v
            .as_array()
            .ok_or(format!("{key:?} is not a list"))?
            .iter()
            .map(|p| p.as_str().ok_or(format!("{key:?} holds a non-string")))
            .collect(),
    }
}

fn levels<'a>(case: &'a Value, key: &str) -> Result<Option<Vec<(&'a str, Level)>>, String> {
    let Some(map) = case.get(key) else { return Ok(None) };
    let map = map.as_object().ok_or(format!("{key:?} is not an object"))?;
    map.iter()
        .map(|(path, level)| {
            let word = level.as_str().unwrap_or_default();
            Level::parse(word).map(|l| (path.as_str(), l)).ok_or(format!("unknown level {word:?}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn view(case: &Value, tree_key: &str) -> Result<View, String> {
    // No grants at all: everything is readable (the instruction cases' default).
    let grants = levels(case, "grants")?.unwrap_or_else(|| vec![("/", Level::Commit)]);
    Ok(View::new(paths(case, tree_key)?, paths(case, "mounts")?, grants, levels(case, "floor")?.unwrap_or_default()))
}

pub(crate) fn instructions(case: &Value) -> Result<Value, String> {
    let view = view(case, "files")?;
    let readable = |path: &str| view.kind(path) == Some(NodeKind::File) && view.is_visible(path);
    Ok(json!(instructions::chain(text(case, "boundary")?, text(case, "start")?, readable)))
}

pub(crate) fn fs_access(case: &Value) -> Result<Value, String> {
    let mut view_case = case.clone();
    if case.get("grants").is_none() {
        // In this area, no grant means none.
        view_case["grants"] = json!({});
    }
    let view = view(&view_case, "tree")?;
    let cwd = case.get("cwd").and_then(Value::as_str).unwrap_or("/");
    let path = lembas_paths::resolve(Path::new(cwd), text(case, "path")?).to_string_lossy().into_owned();
    let ok = |r: Result<(), lembas_fsview::FsError>| match r {
        Ok(()) => json!({ "ok": true }),
        Err(e) => json!({ "error": e.to_string() }),
    };
    Ok(match text(case, "op")? {
        "level" => json!({ "level": view.level(&path).as_str(), "passage": view.is_passage(&path) }),
        "list" => match view.list(&path) {
            Ok(entries) => json!({ "entries": entries }),
            Err(e) => json!({ "error": e.to_string() }),
        },
        "read" => ok(view.read(&path).map(|_| ())),
        "write" => ok(view.write(&path)),
        "mkdir" => ok(view.mkdir(&path)),
        "rm" => ok(view.rm(&path)),
        "commit" => ok(view.commit(&path)),
        op => return Err(unknown_op(op)),
    })
}
