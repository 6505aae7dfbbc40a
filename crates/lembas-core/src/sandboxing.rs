//! Commands in the sandbox: how far each may write (its mode, and whether the person approved
//! it), and the way out of the sandbox — only with the person's approval, never in plan mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lembas_permissions::Mode;
use lembas_tools::{Jobs, Sandbox, SandboxHidden, SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::session::Session;
use crate::{Approval, ApprovalRequest, Approver, SessionConfig};

/// How far a command may write in `mode`, and whether the person approved it.
pub(crate) fn reach(mode: Mode, approved: bool) -> SandboxReach {
    match mode {
        Mode::Plan => SandboxReach::Plans,
        Mode::Auto => SandboxReach::ProjectAndCaches,
        _ if approved => SandboxReach::ProjectAndCaches,
        _ => SandboxReach::Project,
    }
}

/// Where `command`, run in the project at `root` with `cfg`, may write (`reach`) and read — no
/// sandbox at all when the person switched it off.
pub(crate) fn command_sandbox(
    cfg: &SessionConfig,
    root: &Path,
    private_tmp: PathBuf,
    reach: SandboxReach,
    command: &str,
) -> Sandbox {
    let Some(places) = sandbox_places(cfg, root, private_tmp, command) else { return Sandbox::none() };
    let mut sandbox = places.sandbox(reach);
    cfg.read_grants.fill(&mut sandbox);
    sandbox
}

/// The places a command's sandbox is made from; `None` when the person switched it off.
fn sandbox_places(cfg: &SessionConfig, root: &Path, private_tmp: PathBuf, command: &str) -> Option<SandboxPlaces> {
    if !cfg.sandbox {
        return None;
    }
    let plans_dir = crate::session::plans_dir(root);
    Some(SandboxPlaces {
        root: root.to_path_buf(),
        home: cfg.user_home.clone(),
        plans_dir: Some(plans_dir.clone()),
        private_tmp,
        extra: cfg.sandbox_writable.clone(),
        credentials: cfg.credential_places(),
        credentials_readable: !cfg.sandbox_credentials.is_empty()
            && lembas_permissions::every_part_matches(command, &cfg.sandbox_credentials),
        launcher: cfg.sandbox_launcher.clone(),
        hidden: SandboxHidden {
            folders: cfg.own_folders().cloned().collect(),
            open: [Some(root.to_path_buf()), Some(plans_dir), cfg.skills.own.clone()].into_iter().flatten().collect(),
        },
        network: cfg.sandbox_network,
    })
}

/// One command's run: its sandbox and who may let it out.
pub(crate) struct CommandRunner {
    sandbox: Sandbox,
    approver: Arc<dyn Approver>,
    /// Whether it may be run again outside the sandbox once the person says so.
    may_leave: bool,
    call_id: String,
}

impl Session {
    /// The temporary folder of this session's plan-mode commands.
    pub(crate) fn private_tmp(&self) -> PathBuf {
        std::env::temp_dir().join(format!("lembas-{}", self.id))
    }

    /// Where `command` may write and what it may read in this session's mode.
    pub(crate) fn sandbox_for(&self, approved: bool, command: &str) -> Sandbox {
        command_sandbox(&self.cfg, &self.ws.root, self.private_tmp(), reach(self.state.mode, approved), command)
    }

    /// What makes ready, on a thread of its own, what this turn's commands need in the
    /// session's mode (the namespace they join, their rules, the read grants) — once a turn,
    /// started when the model's reply begins, so that it takes nothing from the request: a
    /// session's first command would otherwise wait ~2 ms for them. Cheap when they are ready.
    pub(crate) fn sandbox_preparation(&mut self) -> Option<impl FnOnce() + Send + 'static> {
        if !std::mem::take(&mut self.sandbox_unprepared) {
            return None;
        }
        let places = sandbox_places(&self.cfg, &self.ws.root, self.private_tmp(), "")?;
        let (reach, grants) = (reach(self.state.mode, false), self.cfg.read_grants.clone());
        Some(move || {
            tokio::task::spawn_blocking(move || {
                let mut sandbox = places.sandbox(reach);
                grants.fill(&mut sandbox);
                lembas_tools::sandbox::prepare(&sandbox);
            });
        })
    }

    /// Whether commands run sandboxed, as the session's announcement says it.
    pub(crate) fn sandbox_state(&self) -> String {
        match (self.cfg.sandbox, lembas_tools::sandbox::state(self.cfg.sandbox_launcher.as_deref())) {
            (false, _) => "off".to_owned(),
            (true, Ok(())) => "active".to_owned(),
            (true, Err(shortfall)) => shortfall.to_string(),
        }
    }

    pub(crate) fn command_runner(&self, approved: bool, call_id: &str, command: &str) -> CommandRunner {
        CommandRunner {
            sandbox: self.sandbox_for(approved, command),
            approver: self.cfg.approver.clone(),
            may_leave: self.state.mode != Mode::Plan,
            call_id: call_id.to_owned(),
        }
    }
}

impl CommandRunner {
    pub(crate) async fn run(self, ws: &Workspace, args: &Value, cancel: &CancellationToken, jobs: &Jobs) -> ToolOutput {
        let out = run_bash_in(ws, args, cancel, Some(jobs), &self.sandbox).await;
        if !out.maybe_blocked {
            return out.output;
        }
        let ToolOutput::Text(text) = out.output else { return out.output };
        let allowed = match &self.sandbox.writable {
            Some(places) => places.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
            None => String::new(),
        };
        let offline = if self.sandbox.network { "" } else { ", and may not open network connections" };
        let said =
            format!("(The sandbox may have stopped this: commands here may write only under {allowed}{offline}.");
        if !self.may_leave {
            return ToolOutput::Text(format!("{text}\n{said} Plan mode changes nothing but the plan.)"));
        }
        if !self.approver.present() {
            return ToolOutput::Text(format!(
                "{text}\n{said} Running it outside the sandbox needs the person's approval, and nobody is here to give it.)"
            ));
        }
        let command = args.get("command").and_then(Value::as_str).unwrap_or_default();
        // Outside, it reads what the sandbox kept from it: the card says which.
        let reads = match lembas_permissions::credentials_used(command).as_slice() {
            [] => String::new(),
            kinds => format!(" (reads your {})", kinds.join(" and ")),
        };
        let request = ApprovalRequest {
            job: None,
            call_id: self.call_id.clone(),
            tool: "bash".to_owned(),
            title: format!("again outside the sandbox{reads}: {command}"),
            reaches: Vec::new(),
            agent: None,
            once_only: true,
            preview: Some(command.to_owned()),
            runs_command: true,
            session_allows: None,
            subagent: None,
            reason: "It failed in the sandbox; running a command outside it is asked every time.".to_owned(),
        };
        match self.approver.ask(request).await {
            Approval::Deny { feedback } => {
                let words =
                    feedback.filter(|w| !w.trim().is_empty()).map(|w| format!(" They said: {w}")).unwrap_or_default();
                ToolOutput::Text(format!("{text}\n{said} The person declined running it outside the sandbox.{words})"))
            }
            _ => {
                let again = run_bash_in(ws, args, cancel, Some(jobs), &Sandbox::none()).await.output;
                match again {
                    ToolOutput::Text(t) => ToolOutput::Text(format!(
                        "(It failed in the sandbox; the person let it run again outside it.)\n{t}"
                    )),
                    other => other,
                }
            }
        }
    }
}
