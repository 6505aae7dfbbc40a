//! A schedule's watch command run for a front end (`acp.md` *Monitor mode*): judged as `bash`
//! would be in its folder and mode with the person's rules, run only when that allows it without
//! asking, in the sandbox a command of that mode gets; its output hashed as it streams and kept
//! only up to the spec's bound.

use std::path::Path;
use std::sync::{Arc, Mutex};

use lembas_client::{WatchRefused, WatchRequest, Watched};
use lembas_permissions::{Call, Decision, Judge};
use lembas_scheduled::MonitorHasher;

use crate::opener::Opener;

/// What the output came to while it streamed.
#[derive(Debug, Default)]
struct Collected {
    hasher: MonitorHasher,
    head: Vec<u8>,
    bytes: u64,
}

impl Opener {
    pub(crate) async fn run_watch(&self, request: WatchRequest) -> Result<Watched, WatchRefused> {
        let cfg = self.template();
        let root = self.root_of(&request.cwd);
        let judge = Judge { rules: cfg.rules.clone(), ctx: crate::judging::judge_context(cfg, &root) };
        let call = Call::new("bash", lembas_spec::RiskClass::Execute, Some(&request.command), &[]);
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        match judge.evaluate(request.mode, &call, &request.cwd, &real) {
            Decision::Allow => {}
            Decision::Ask => {
                return Err(WatchRefused::Asks(format!(
                    "`{}` is not among the commands it runs without asking",
                    request.command.trim()
                )));
            }
            Decision::Refuse(why) => return Err(WatchRefused::Denied(why.trim_end_matches('.').to_owned())),
        }
        let private_tmp = std::env::temp_dir().join(format!("lembas-watch-{}", std::process::id()));
        let reach = crate::sandboxing::reach(request.mode, false);
        let sandbox = crate::sandboxing::command_sandbox(cfg, &root, private_tmp, reach, &request.command);
        let spec = &lembas_spec::loop_spec().scheduled.monitor;
        let keep = spec.output_max_bytes;
        let collected = Arc::new(Mutex::new(Collected::default()));
        let into = collected.clone();
        let end = lembas_tools::watch(&request.command, &request.cwd, request.timeout, &sandbox, move |chunk| {
            let mut into = into.lock().expect("watch output");
            into.hasher.update(chunk);
            into.bytes += chunk.len() as u64;
            let room = keep.saturating_sub(into.head.len());
            into.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
        })
        .await
        .map_err(WatchRefused::Failed)?;
        let Collected { hasher, head, bytes } = std::mem::take(&mut *collected.lock().expect("watch output"));
        let text = String::from_utf8_lossy(&head);
        let excerpt: String = text.chars().take(spec.excerpt_chars).collect();
        let truncated = excerpt.len() < text.len() || bytes > head.len() as u64;
        // A command a signal ended is hashed with the shell's status for it (128 + the signal).
        let status = end.exit.or(end.signal.map(|s| 128 + s));
        Ok(Watched {
            hash: (!end.timed_out).then(|| hasher.finish(status.unwrap_or(-1))),
            exit: end.exit,
            timed_out: end.timed_out,
            excerpt,
            truncated,
            bytes,
            duration_ms: u64::try_from(end.duration.as_millis()).unwrap_or(u64::MAX),
        })
    }
}
