//! `_lembas/monitor` (`acp.md` *Monitor mode*, capability `scheduled`): a schedule's watch
//! command, refused as any scheduled request is when the device takes no scheduled work, in a
//! folder the device accepts, in the schedule's mode lowered to the device's widest — and run
//! by the host only when that mode allows it without asking.

use std::path::PathBuf;
use std::time::Duration;

use lembas_client::{WatchRefused, WatchRequest};
use serde_json::{Value, json};

use crate::{Server, invalid, refused, scheduled};

pub(crate) async fn answer(server: &Server, params: &Value) -> Result<Value, agent_client_protocol::Error> {
    let word = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let run = scheduled::Run {
        schedule_id: word("schedule_id").unwrap_or_default(),
        run_id: word("run_id").unwrap_or_default(),
        mode: word("mode"),
        approval_wait_s: None,
    };
    let limits = server.limits();
    let admitted = scheduled::admit(run, limits.as_ref())?;
    let (Some(remote), Some(limits)) = (server.remote.as_ref(), limits) else {
        return Err(invalid("no remote work here"));
    };
    let cwd = PathBuf::from(word("cwd").ok_or_else(|| invalid("cwd is required"))?);
    let cwd = limits.admit(&cwd, remote.trusted.as_ref()).map_err(|why| refused(&why, "folder"))?;
    let command = word("command").filter(|c| !c.trim().is_empty()).ok_or_else(|| invalid("command is required"))?;
    let spec = &lembas_spec::loop_spec().scheduled;
    // Whole seconds: a fraction is cut, and the spec's range holds.
    let asked = params.get("timeout_s").and_then(Value::as_f64).filter(|s| s.is_finite() && *s >= 0.0);
    let timeout = Duration::from_secs(spec.monitor.timeout_seconds.clamp(asked.map(|s| s.trunc() as u64)));
    let request = WatchRequest { cwd, command, mode: admitted.mode, timeout };
    match server.host.watch(request).await {
        Ok(watched) => Ok(json!({
            "hash": watched.hash,
            "exit": watched.exit,
            "timed_out": watched.timed_out,
            "excerpt": watched.excerpt,
            "truncated": watched.truncated,
            "bytes": watched.bytes,
            "duration_ms": watched.duration_ms,
        })),
        Err(WatchRefused::Asks(reason)) => {
            let mode = admitted.mode.to_string();
            let text = lembas_spec::render(&spec.texts["monitor_asks"], &[("mode", &mode), ("reason", &reason)]);
            Err(refused(&text, "permission"))
        }
        Err(WatchRefused::Denied(reason)) => {
            let text = lembas_spec::render(&spec.texts["monitor_denied"], &[("reason", &reason)]);
            Err(refused(&text, "permission"))
        }
        Err(WatchRefused::Failed(why)) => {
            Err(agent_client_protocol::Error::internal_error().data(json!({ "reason": why })))
        }
    }
}
