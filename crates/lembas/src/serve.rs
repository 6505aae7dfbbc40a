//! `lembas serve --stdio`: lembas as an ACP agent for editors, on the same engine.

use std::sync::Arc;

use crate::cli::exit;
use crate::{Failure, setup};

pub async fn serve() -> Result<u8, Failure> {
    let home = setup::home()?;
    let config = setup::config(&home)?;
    let login = setup::login(&home)?;
    let model = setup::choose_model(&login, config.model.as_deref())?;
    let mode = setup::choose_mode(config.mode.as_deref())?;
    let store = setup::store(&home)?;
    let client = setup::client(&home, &login, &config)?;
    // Each session's project is the client's; its own rules are not read here (the editor is
    // where trust will be asked).
    let rules = setup::rules(&home, &config, None)?;
    let (home_for_mcp, config_for_mcp) = (home.clone(), config.clone());
    let mut template =
        setup::session_config(&home, &config, store, client.clone(), model, config.effort.clone(), mode, rules);
    template.models = login.models.clone();
    // Each session connects the MCP servers configured for its project (and the client's own).
    // Where each session's project stands is read when it opens (a trust file that cannot be
    // read leaves it untrusted).
    let mcp_of: lembas_acp::McpOf = Arc::new(move |root| {
        let standing = setup::standing(&home_for_mcp, root).unwrap_or(lembas_config::Standing::Untrusted);
        setup::mcp_entries(&config_for_mcp, root, standing)
    });
    let (home_for_skills, config_for_skills) = (home.clone(), config.clone());
    let skills_of: lembas_acp::SkillsOf = Arc::new(move |root| {
        let standing = setup::standing(&home_for_skills, root).unwrap_or(lembas_config::Standing::Untrusted);
        setup::skill_places(&home_for_skills, &config_for_skills, root, standing)
    });
    let result =
        lembas_acp::serve_stdio(template, lembas_acp::Setup { root_of: setup::project_root, mcp_of, skills_of }).await;
    setup::save_learned(&home, &client);
    result.map(|()| exit::OK).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}
