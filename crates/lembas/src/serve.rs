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
    // Each session connects the MCP servers configured for its project (and the client's own).
    // Where each session's project stands is read when it opens (a trust file that cannot be
    // read leaves it untrusted).
    let (home_for_mcp, config_for_mcp) = (start.home.clone(), start.config.clone());
    let mcp_of: lembas_acp::McpOf = Arc::new(move |root| {
        let standing = setup::standing(&home_for_mcp, root).unwrap_or(lembas_config::Standing::Untrusted);
        setup::mcp_entries(&config_for_mcp, root, standing)
    });
    let (home_for_skills, config_for_skills) = (start.home.clone(), start.config.clone());
    let skills_of: lembas_acp::SkillsOf = Arc::new(move |root| {
        let standing = setup::standing(&home_for_skills, root).unwrap_or(lembas_config::Standing::Untrusted);
        setup::skill_places(&home_for_skills, &config_for_skills, root, standing)
    });
    let setup = lembas_acp::Setup { root_of: setup::project_root, mcp_of, skills_of };
    let result = lembas_acp::serve_stdio(start.host.clone(), template, setup).await;
    start.finish(None).await;
    result.map(|()| exit::OK).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}
