//! The server's schedules (`acp.md` *Schedules*), through the `/api/v2/schedules` routes that
//! take the device's token: what `/schedule` lists, makes, pauses, resumes, runs now and shows
//! the runs of. A schedule made here runs on this computer (`runs_on.device: "this"`), in the
//! project it was made in.

use lembas_config::{Login, LoginKind};
use lembas_protocol::Mode;
use lembas_protocol::schedules::{Compiled, Schedule, ScheduleAsk, ScheduleRun, ScheduleSaid};
use serde_json::{Value, json};

/// How long a scheduled run's approval waits for the person, in minutes, for a schedule made
/// here (the person may change it on the server).
pub const APPROVAL_WAIT_MINUTES: u32 = 30;

/// Asks the server; every failure is a sentence for the person.
pub async fn schedules(login: &Login, ask: ScheduleAsk) -> ScheduleSaid {
    match answer(login, ask).await {
        Ok(said) => said,
        Err(reason) => ScheduleSaid::Failed { reason },
    }
}

async fn answer(login: &Login, ask: ScheduleAsk) -> Result<ScheduleSaid, String> {
    if login.kind != LoginKind::Llembas {
        return Err("Schedules live on a LLeMbas server: log in to one (lembas login URL) to make them.".into());
    }
    let api = Api { login };
    Ok(match ask {
        ScheduleAsk::List => ScheduleSaid::Listed(read(api.call("GET", "", None).await?, "schedules")?),
        ScheduleAsk::Create { words, cwd, mode } => {
            let compiled: Compiled = one(api.call("POST", "/compile", Some(json!({ "text": words }))).await?)?;
            if !compiled.ok {
                let reason = compiled.reason.unwrap_or_else(|| "the server could not read it as a schedule".into());
                return Ok(ScheduleSaid::NotUnderstood { reason });
            }
            let body = made_from(&compiled, &words, &cwd, mode);
            let schedule: Schedule = one(api.call("POST", "", Some(body)).await?)?;
            ScheduleSaid::Created { schedule: Box::new(schedule), compiled: Box::new(compiled), note: None }
        }
        ScheduleAsk::Pause { id } => done("Paused", api.call("POST", &format!("/{id}/pause"), None).await?),
        ScheduleAsk::Resume { id } => done("Resumed", api.call("POST", &format!("/{id}/resume"), None).await?),
        ScheduleAsk::Run { id } => {
            api.call("POST", &format!("/{id}/run"), None).await?;
            let schedule: Schedule = one(api.call("GET", &format!("/{id}"), None).await?)?;
            ScheduleSaid::Done { what: "Started", title: schedule.title }
        }
        ScheduleAsk::Delete { id } => {
            let schedule: Schedule = one(api.call("GET", &format!("/{id}"), None).await?)?;
            api.call("DELETE", &format!("/{id}"), None).await?;
            ScheduleSaid::Done { what: "Deleted", title: schedule.title }
        }
        ScheduleAsk::Runs { id } => {
            let schedule: Schedule = one(api.call("GET", &format!("/{id}"), None).await?)?;
            let runs: Vec<ScheduleRun> = read(api.call("GET", &format!("/{id}/runs"), None).await?, "runs")?;
            ScheduleSaid::Runs { title: schedule.title, runs }
        }
    })
}

/// What makes a schedule from what the server compiled: its own reading of the words, to run on
/// this computer in `cwd`. A schedule never runs in plan mode (`acp.md` refuses it), so a plan
/// session's schedule runs in edit mode, which asks before every change.
fn made_from(compiled: &Compiled, words: &str, cwd: &str, mode: Mode) -> Value {
    let mode = if mode == Mode::Plan { Mode::Edit } else { mode };
    json!({
        "title": compiled.title,
        "instruction": compiled.instruction.clone().unwrap_or_else(|| words.to_owned()),
        "description": compiled.description,
        "rule": compiled.rule,
        "timezone": compiled.timezone,
        "enabled": true,
        "runs_on": { "device": "this", "cwd": cwd, "mode": mode, "approval_wait_minutes": APPROVAL_WAIT_MINUTES },
    })
}

fn done(what: &'static str, answer: Value) -> ScheduleSaid {
    let title = answer.get("title").and_then(Value::as_str).unwrap_or("the schedule").to_owned();
    ScheduleSaid::Done { what, title }
}

/// A list the server answers, bare or under `key`.
fn read<T: serde::de::DeserializeOwned>(answer: Value, key: &str) -> Result<Vec<T>, String> {
    let list = match answer {
        Value::Object(mut fields) if fields.contains_key(key) => fields.remove(key).unwrap_or_default(),
        other => other,
    };
    serde_json::from_value(list).map_err(|e| format!("The server's answer is not a list of {key}: {e}"))
}

fn one<T: serde::de::DeserializeOwned>(answer: Value) -> Result<T, String> {
    serde_json::from_value(answer).map_err(|e| format!("The server's answer could not be read: {e}"))
}

struct Api<'a> {
    login: &'a Login,
}

impl Api<'_> {
    /// `method` on `/api/v2/schedules{path}` with the device's token; the answer's JSON (null
    /// when it has none).
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let root = self.login.server.trim_end_matches('/');
        let url = format!("{root}/api/v2/schedules{path}");
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let mut request = lembas_model::catalog::http().request(method, &url);
        if let Some(token) = &self.login.secret {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| format!("Cannot reach {root}: {e}"))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        match status.as_u16() {
            200..=299 if text.trim().is_empty() => Ok(Value::Null),
            200..=299 => serde_json::from_str(&text).map_err(|_| format!("{root} answered something that is not JSON")),
            401 | 403 => Err(format!(
                "{root} does not take this computer's token for schedules: the server is older than LLeMbas 3.5, or the login lacks the link scope (lembas login again)"
            )),
            404 => Err("There is no such schedule on the server (list them again with /schedule).".into()),
            code => {
                let said: String = text.chars().take(300).collect();
                Err(format!("{root} answered {code}: {}", said.trim()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_made_here_runs_here_and_never_in_plan_mode() {
        let compiled = Compiled {
            ok: true,
            title: Some("Build".into()),
            instruction: Some("check the build".into()),
            rule: Some(json!({"freq": "daily"})),
            ..Compiled::default()
        };
        let body = made_from(&compiled, "every day check the build", "/w/app", Mode::Plan);
        assert_eq!(body["runs_on"]["device"], "this");
        assert_eq!(body["runs_on"]["cwd"], "/w/app");
        assert_eq!(body["runs_on"]["mode"], "edit");
        assert_eq!(body["instruction"], "check the build");
        assert_eq!(body["rule"]["freq"], "daily");
    }

    #[test]
    fn a_list_is_read_bare_or_under_its_name() {
        let bare: Vec<Schedule> = read(json!([{ "id": "a", "title": "A" }]), "schedules").unwrap();
        let named: Vec<Schedule> = read(json!({ "schedules": [{ "id": "b" }] }), "schedules").unwrap();
        assert_eq!((bare[0].id.as_str(), named[0].id.as_str()), ("a", "b"));
        assert!(read::<Schedule>(json!({ "error": "x" }), "schedules").is_err());
    }
}
