//! `lembas serve --stdio`: lembas as an ACP agent for editors, on the same engine.

use std::sync::Arc;

use lembas_core::Nobody;
use lembas_permissions::Mode;

use crate::cli::exit;
use crate::{Failure, setup};

pub async fn serve() -> Result<u8, Failure> {
    let home = setup::home()?;
    let config = setup::config(&home)?;
    let login = setup::login(&home)?;
    let model = match config.model.as_deref() {
        Some(name) => login
            .model(name)
            .cloned()
            .ok_or_else(|| Failure::new(exit::USAGE, format!("no model {name} in the login")))?,
        None => {
            login.default_model().cloned().ok_or_else(|| Failure::new(exit::LOGIN, "the server offered no models"))?
        }
    };
    let mode_word = config.mode.clone().unwrap_or_else(|| "edit".into());
    let mode = Mode::parse(&mode_word).ok_or_else(|| Failure::new(exit::USAGE, format!("no mode {mode_word}")))?;
    let store = setup::store(&home)?;
    let client = setup::client(&home, &login)?;
    // Each session's project is the client's; its own rules are not read here (the editor is
    // where trust will be asked).
    let rules = setup::rules(&home, &config, None)?;
    // The approver is replaced by the editor's for every session.
    let template = setup::session_config(
        &home,
        &config,
        store,
        client.clone(),
        model,
        config.effort.clone(),
        mode,
        Arc::new(Nobody),
        rules,
    );
    let result = lembas_acp::serve_stdio(template, setup::project_root).await;
    setup::save_learned(&home, &client);
    result.map(|()| exit::OK).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}
