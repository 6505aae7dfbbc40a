//! `lembas serve --stdio`: lembas as an ACP agent for editors, on the same engine.

use std::sync::Arc;

use crate::cli::exit;
use crate::{Failure, setup};

pub async fn serve() -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let model = setup::choose_model(&start.login, start.config.model.as_deref())?;
    let mode = setup::choose_mode(start.config.mode.as_deref())?;
    // Each session's project is the client's; its own rules are not read here (the editor is
    // where trust will be asked).
    let rules = setup::rules(&start.home, &start.config, None)?;
    let template = start.session_config(model, start.config.effort.clone(), mode, rules);
    // Each session connects the MCP servers configured for its project (and the client's own)
    // and finds skills there, as where the project stands allows — read when the session opens
    // (a trust file that cannot be read leaves it untrusted).
    let (home, config) = (start.home.clone(), start.config.clone());
    let project_of: lembas_core::ProjectOf = Arc::new(move |root| {
        let root = &setup::real_root(root);
        let standing = setup::standing(&home, root).unwrap_or(lembas_config::Standing::Untrusted);
        lembas_core::ProjectSetup {
            mcp: setup::mcp_entries(&config, root, standing),
            skills: setup::skill_places(&home, &config, root, standing),
        }
    });
    let opener = lembas_core::Opener::new(start.host.clone(), template, setup::project_root, project_of);
    let result = lembas_acp::serve_stdio(Arc::new(opener)).await;
    start.finish(None).await;
    result.map(|()| exit::OK).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}
