//! A LLeMbas server's schedules (`/api/v2/schedules`), kept in memory: list, make, read, change,
//! delete, pause, resume, run now, the runs, and a small reading of words into a schedule
//! (`compile`: "every day at 09:00 check the build"). With the device's token only; a server
//! set as older answers 403.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::server::{Shared, bearer_ok, record};

/// The schedules a test's server holds.
#[derive(Debug, Default)]
pub(crate) struct Schedules {
    pub(crate) list: Vec<Value>,
    pub(crate) runs: Vec<(String, Value)>,
    /// An older server: the device's token is refused here.
    pub(crate) older: bool,
    made: u32,
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/api/v2/schedules", get(list).post(create))
        .route("/api/v2/schedules/compile", post(compile))
        .route("/api/v2/schedules/{id}", get(read).patch(change).delete(delete))
        .route("/api/v2/schedules/{id}/{action}", post(act).get(runs))
}

/// The device's token on a server that has the routes: else the answer to give.
fn refused(shared: &Shared, method: &str, path: &str, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
    record(shared, method, path, headers, body);
    let token = shared.llembas.lock().unwrap().as_ref().map(|l| l.token.clone());
    let ok = token.is_some_and(|t| bearer_ok(headers, &t));
    if !ok || shared.schedules.lock().unwrap().older {
        return Some((StatusCode::FORBIDDEN, axum::Json(json!({ "error": "forbidden" }))).into_response());
    }
    None
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, axum::Json(json!({ "error": "no such schedule" }))).into_response()
}

async fn list(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(no) = refused(&shared, "GET", "/api/v2/schedules", &headers, b"") {
        return no;
    }
    axum::Json(json!({ "schedules": shared.schedules.lock().unwrap().list })).into_response()
}

/// "every day at HH:MM WORDS" (or "every hour WORDS"): a schedule with those words as its
/// instruction; anything else is not understood.
async fn compile(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(no) = refused(&shared, "POST", "/api/v2/schedules/compile", &headers, &body) {
        return no;
    }
    let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
    let text = asked["text"].as_str().unwrap_or_default().trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    let (rule, description, rest) = match words.as_slice() {
        ["every", "day", "at", time, rest @ ..] if time.contains(':') => {
            (json!({ "freq": "daily", "at": time }), format!("Every day at {time}"), rest)
        }
        ["every", "hour", rest @ ..] => (json!({ "freq": "hourly" }), "Every hour".to_owned(), rest),
        _ => {
            return axum::Json(json!({ "ok": false, "reason": "I could not tell when it should run." }))
                .into_response();
        }
    };
    let instruction = rest.join(" ");
    let title: String = instruction.chars().take(40).collect();
    axum::Json(json!({
        "ok": true, "reason": null, "title": title, "instruction": instruction, "rule": rule,
        "description": description, "next_runs": ["2026-12-06T09:00:00Z", "2026-12-07T09:00:00Z"],
        "timezone": "UTC",
    }))
    .into_response()
}

async fn create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(no) = refused(&shared, "POST", "/api/v2/schedules", &headers, &body) {
        return no;
    }
    let mut made: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut schedules = shared.schedules.lock().unwrap();
    schedules.made += 1;
    made["id"] = format!("sch_{}", schedules.made).into();
    made["running"] = false.into();
    made["next_run"] = "2026-12-06T09:00:00Z".into();
    made["last_run"] = Value::Null;
    if made["runs_on"]["device"] == "this" {
        made["runs_on"]["device"] = "dev_test".into();
        made["runs_on"]["device_name"] = "this computer".into();
    }
    schedules.list.push(made.clone());
    (StatusCode::CREATED, axum::Json(made)).into_response()
}

async fn read(State(shared): State<Arc<Shared>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(no) = refused(&shared, "GET", &format!("/api/v2/schedules/{id}"), &headers, b"") {
        return no;
    }
    let schedules = shared.schedules.lock().unwrap();
    match schedules.list.iter().find(|s| s["id"] == id.as_str()) {
        Some(schedule) => axum::Json(schedule.clone()).into_response(),
        None => not_found(),
    }
}

async fn change(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(no) = refused(&shared, "PATCH", &format!("/api/v2/schedules/{id}"), &headers, &body) {
        return no;
    }
    let changes: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut schedules = shared.schedules.lock().unwrap();
    let Some(schedule) = schedules.list.iter_mut().find(|s| s["id"] == id.as_str()) else { return not_found() };
    for (key, value) in changes.as_object().into_iter().flatten() {
        schedule[key] = value.clone();
    }
    axum::Json(schedule.clone()).into_response()
}

async fn delete(State(shared): State<Arc<Shared>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(no) = refused(&shared, "DELETE", &format!("/api/v2/schedules/{id}"), &headers, b"") {
        return no;
    }
    let mut schedules = shared.schedules.lock().unwrap();
    let before = schedules.list.len();
    schedules.list.retain(|s| s["id"] != id.as_str());
    if schedules.list.len() == before { not_found() } else { StatusCode::NO_CONTENT.into_response() }
}

/// `pause`, `resume`, `run`.
async fn act(
    State(shared): State<Arc<Shared>>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(no) = refused(&shared, "POST", &format!("/api/v2/schedules/{id}/{action}"), &headers, b"") {
        return no;
    }
    let mut schedules = shared.schedules.lock().unwrap();
    let run_id = format!("run_{}", schedules.runs.len() + 1);
    let Some(schedule) = schedules.list.iter_mut().find(|s| s["id"] == id.as_str()) else { return not_found() };
    match action.as_str() {
        "pause" => schedule["enabled"] = false.into(),
        "resume" => schedule["enabled"] = true.into(),
        "run" => {
            let run = json!({ "id": run_id, "status": "ok", "due_at": "2026-12-05T10:00:00Z",
                "started_at": "2026-12-05T10:00:01Z", "finished_at": "2026-12-05T10:00:09Z",
                "model": { "name": "fake-model" }, "preview": "The build passes.", "error": null });
            schedule["last_run"] = run.clone();
            schedules.runs.push((id, run.clone()));
            return axum::Json(run).into_response();
        }
        _ => return not_found(),
    }
    axum::Json(schedule.clone()).into_response()
}

/// `GET …/{id}/runs`.
async fn runs(
    State(shared): State<Arc<Shared>>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(no) = refused(&shared, "GET", &format!("/api/v2/schedules/{id}/{action}"), &headers, b"") {
        return no;
    }
    let schedules = shared.schedules.lock().unwrap();
    if action != "runs" || !schedules.list.iter().any(|s| s["id"] == id.as_str()) {
        return not_found();
    }
    let runs: Vec<&Value> = schedules.runs.iter().filter(|(of, _)| *of == id).map(|(_, run)| run).collect();
    axum::Json(json!({ "runs": runs })).into_response()
}
