//! `lembas serve --stdio`: lembas as an ACP agent for editors, on the same engine.

use std::sync::Arc;

use crate::cli::exit;
use crate::{Failure, setup};

/// The host every ACP client's sessions open on — an editor's on stdio, a LLeMbas server's over
/// the link: the person's configured model, mode and global rules; each session's project, MCP
/// servers and skills read where the client opens it.
pub fn acp_host(start: &setup::Startup) -> Result<Arc<lembas_core::Opener>, Failure> {
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
            agent_files: setup::agent_files(&home, root, standing),
            // A hook file that cannot be read: its project's sessions run none of it (said).
            hooks: setup::hooks(&config, root, standing).unwrap_or_else(|e| {
                eprintln!("lembas: {e}");
                Default::default()
            }),
            notes: setup::notes(&home, Some(root)),
        }
    });
    Ok(Arc::new(lembas_core::Opener::new(start.host.clone(), template, setup::project_root, project_of)))
}

pub async fn serve() -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let opener = acp_host(&start)?;
    let result = lembas_acp::serve_stdio(opener).await;
    start.finish(None).await;
    result.map(|()| exit::OK).map_err(|e| Failure::new(exit::FAILED, e.to_string()))
}
