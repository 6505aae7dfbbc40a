//! `_lembas/jobs`, `_lembas/job/output`, `_lembas/job/stop`, `_lembas/job/send`,
//! `_lembas/job/transcript` (`acp.md`, capability `jobs`): a session's background work as a
//! client of lembas' protocol reads and steers it, through the host's commands as every front
//! end does. The params and results the spec's partial copy does not show are ours
//! (`docs/spec-decisions.md`, *Jobs over the link*).

use lembas_protocol::jobs::{JobAsk, JobSaid};
use lembas_protocol::{Command, Event};
use serde_json::{Value, json};

use crate::{Server, invalid};

/// The answer to one of the jobs' methods, or the error it gets (`-32602` for a job the session
/// does not have, a command job's transcript, words to a job that reads none).
pub(crate) async fn answer(
    server: &Server,
    method: &str,
    params: &Value,
) -> Result<Value, agent_client_protocol::Error> {
    let session = crate::session_id(params)?;
    let slot = server.slot(session).ok_or_else(|| invalid("no such session"))?;
    let id = || {
        params["id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned).ok_or_else(|| invalid("id is required"))
    };
    let ask = match method {
        "_lembas/jobs" => JobAsk::List,
        "_lembas/job/output" => JobAsk::Output {
            id: id()?,
            offset: params["offset"].as_u64().unwrap_or(0),
            limit: params["limit"].as_u64(),
        },
        "_lembas/job/stop" => JobAsk::Stop { id: id()? },
        "_lembas/job/send" => {
            let text = params["text"].as_str().ok_or_else(|| invalid("text is required"))?;
            JobAsk::Send { id: id()?, text: text.to_owned() }
        }
        "_lembas/job/transcript" => JobAsk::Transcript { id: id()? },
        _ => return Err(agent_client_protocol::Error::method_not_found()),
    };
    Ok(match job_said(&slot, ask).await.map_err(|e| invalid(&e))? {
        JobSaid::Listed { jobs } => json!({ "jobs": jobs }),
        JobSaid::Output(read) => json!({
            "id": read.job.id, "offset": read.offset, "text": read.text, "next": read.next, "more": read.more,
            "job": read.job,
        }),
        JobSaid::Stopped { job } => json!({ "stopped": true, "job": job }),
        JobSaid::Sent { job, words } => json!({ "sent": true, "said": words, "job": job }),
        JobSaid::Transcript { job, session } => {
            let events = server.host.transcript(&session).map_err(|e| invalid(&e.to_string()))?;
            json!({ "id": job.id, "state": job.state, "turns": crate::team::turns_of(events) })
        }
    })
}

/// The session's jobs for `_lembas/session/status`, running first; `None` when it cannot say.
pub(crate) async fn listed(slot: &crate::Slot) -> Option<Value> {
    match job_said(slot, JobAsk::List).await.ok()? {
        JobSaid::Listed { jobs } => Some(json!(jobs)),
        _ => None,
    }
}

/// What the session answers `ask` with, or why it could not.
async fn job_said(slot: &crate::Slot, ask: JobAsk) -> Result<JobSaid, String> {
    match slot.reads.ask(&slot.handle, Command::Job { ask }).await?.pop() {
        Some(Event::JobSaid { said }) => Ok(said),
        Some(Event::Error { message }) => Err(message),
        _ => Err("the session did not answer".into()),
    }
}
