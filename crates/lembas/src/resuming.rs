//! Which session and model a command starts with: a resumed one (the project's latest, or one by
//! a unique start of its id) and its model while the login still offers it.

use lembas_config::Login;
use lembas_models::ModelInfo;

use crate::Failure;
use crate::cli::exit;
use crate::setup::choose_model;

/// The session to go on with: this project's most recent (`--continue`), or one by its id or a
/// unique start of it (`--resume ID`); `None` for a new one.
pub fn resume_id(
    host: &lembas_core::Host,
    root: &std::path::Path,
    continue_last: bool,
    resume: Option<&str>,
) -> Result<Option<String>, Failure> {
    if continue_last {
        let latest = host.latest_session(&root.display().to_string())?;
        return Ok(Some(
            latest.ok_or_else(|| Failure::new(exit::USAGE, "no earlier session in this project to continue"))?,
        ));
    }
    resume.filter(|id| !id.is_empty()).map(|id| find_session(host, id)).transpose()
}

/// The model a session starts on: the one named, else a resumed session's own (while the login
/// still offers it), else the configured one.
pub fn start_model(
    host: &lembas_core::Host,
    login: &Login,
    named: Option<&str>,
    resume: Option<&str>,
    configured: Option<&str>,
) -> Result<ModelInfo, Failure> {
    let stored = match resume {
        Some(id) => host.session_model(id)?.filter(|m| login.model(m).is_some()),
        None => None,
    };
    choose_model(login, named.or(stored.as_deref()).or(configured))
}

/// The effort level to start with (named, else configured), when the model has it.
pub fn choose_effort(model: &ModelInfo, wanted: Option<String>) -> Result<Option<String>, Failure> {
    match wanted {
        Some(level) if !model.levels().contains(&level) => Err(Failure::new(
            exit::USAGE,
            format!("{} has no effort level {level}; its levels: {}", model.id, model.levels().join(", ")),
        )),
        wanted => Ok(wanted),
    }
}

/// The one session `prefix` names, or why not: none starts so, or several do (listed, so the
/// person can give more of the id).
pub fn find_session(host: &lembas_core::Host, prefix: &str) -> Result<String, Failure> {
    let ids = host.ids_starting(prefix, 6).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    match ids.as_slice() {
        [] => Err(Failure::new(exit::USAGE, format!("no session {prefix}"))),
        [one] => Ok(one.clone()),
        several => {
            let shown: Vec<String> = several
                .iter()
                .take(5)
                .map(|id| {
                    let title = host.session(id).ok().flatten().map(|r| r.title).unwrap_or_default();
                    format!("  {id}  {title}")
                })
                .collect();
            let more = if several.len() > 5 { "\n  …" } else { "" };
            Err(Failure::new(
                exit::USAGE,
                format!("{prefix} starts more than one session; give more of its id:\n{}{more}", shown.join("\n")),
            ))
        }
    }
}
