//! `lembas` with no arguments: the terminal UI, on the same engine as `lembas run`.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use lembas_core::{OpenSession, Start};

use crate::cli::exit;
use crate::{Failure, resuming, setup};

/// The first time in a project: whether to trust it (its own rules count then). Remembered.
/// Answers what the person typed meanwhile that was no answer — their prompt, for the editor.
fn ask_trust(home: &lembas_config::Home, root: &std::path::Path) -> Result<String, Failure> {
    let mut trust = lembas_config::Trust::load(home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    if trust.answer(root).is_some() {
        return Ok(String::new());
    }
    if trust.standing(root) == lembas_config::Standing::Changed {
        println!("This project's own rules, MCP servers, commands or skills changed since you trusted it.");
    }
    // What trusting turns on, named from what this project holds.
    print!("{}", crate::trusting::question(root));
    let _ = std::io::stdout().flush();
    // One key answers it, as the cards do.
    let (yes, typed) = lembas_tui::yes_or_no().map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    trust.set(root, yes);
    trust.save(home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    Ok(typed.trim().to_owned())
}

pub async fn tui(args: crate::cli::UiArgs) -> Result<u8, Failure> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Failure::new(
            exit::USAGE,
            "lembas without arguments needs a terminal: in a script, use lembas run \"…\"",
        ));
    }
    if let Some(mode) = args.mode.as_deref() {
        setup::choose_mode(Some(mode))?;
    }
    let mut start = setup::Startup::load()?;
    start.take_account_personality().await;
    let (config, login) = (&start.config, &start.login);
    if args.model.is_none() {
        setup::check_config_model(&start.home, config, login)?;
    }
    let cwd = std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
    let root = setup::project_root(&cwd);
    let canonical = setup::real_root(&root);
    let typed = ask_trust(&start.home, &canonical)?;
    let project = start.project(root)?;
    let host = start.host.clone();
    let resume = resuming::resume_id(&host, &project.real, args.continue_last, args.resume.as_deref())?;
    let model = resuming::start_model(&host, login, args.model.as_deref(), resume.as_deref(), config.model.as_deref())?;
    let mode = setup::choose_mode(args.mode.as_deref().or(config.mode.as_deref()))?;
    let effort = resuming::choose_effort(&model, args.effort.clone().or(config.effort.clone()))?;
    // 0: not known (the status bar and /context say so).
    let window = model.context.or(config.context_window).unwrap_or(0);
    let mut app = lembas_tui::App::new(model.display_name(), mode, effort.clone(), window);
    app.models = login.models.clone();
    app.compact_at = config.compact_at();
    if let Some(agents) = config.agents {
        app.agents = (agents.min, agents.max);
    }
    app.notify = config.notify.unwrap_or(true);
    app.personality = config.personality.clone().unwrap_or_default();
    app.personality_custom = config.personality_custom.clone();
    // A newer lembas, at most once a day; looked for in the background, for a later start.
    let now = chrono::Utc::now().timestamp_millis();
    if let Some(newer) = crate::update::mention(&start.home, now) {
        app.finished.push(lembas_tui::Block::Notice(newer));
    }
    crate::update::check_in_background(&start.home, &config.update, now);
    // What the person typed while the trust question was up: their prompt, in the editor unsent.
    if !typed.is_empty() {
        app.input.set(&typed);
    }
    app.files = lembas_tools::project_files(&canonical, &start.walk_private, 50_000);
    app.root = Some(canonical.clone());
    // Custom commands: the person's own, and the project's once it is trusted.
    let builtin: Vec<&str> = lembas_tui::COMMANDS.iter().map(|c| c.name).collect();
    let trusted = project.standing == lembas_config::Standing::Trusted;
    app.customs =
        lembas_tui::custom::load(&start.home.config.join("commands"), trusted.then_some(canonical.as_path()), &builtin);
    let cfg = start.project_session(&project, model, effort, mode);
    let sharing = sharing(&start, &cwd, app.agents);
    let opener = host.clone();
    let root = project.root.clone();
    let tap = sharing.clone();
    let open_cwd = cwd.clone();
    let open: lembas_tui::Open = Box::new(move |id| {
        let start = match id {
            None => Start::New { root: root.clone(), cwd: open_cwd.clone() },
            Some(id) => Start::Resume(id.to_owned()),
        };
        let opened = opener.open(OpenSession { cfg: cfg.clone(), start, attended: true }).map_err(|e| e.to_string())?;
        // Every session goes through the tap that lets `/share` copy it to the server.
        Ok(match &tap {
            Some(sharing) => {
                let running =
                    crate::share::Running { model: cfg.model.clone(), effort: cfg.effort.clone(), mode: cfg.mode };
                sharing.tee(opened, running)
            }
            None => opened,
        })
    });
    // On a LLeMbas login the status bar shows what the month has cost (`GET /v1/usage`).
    let month: Option<lembas_tui::MonthSource> = (login.kind == lembas_config::LoginKind::Llembas).then(|| {
        let login = login.clone();
        let source: lembas_tui::MonthSource = Arc::new(move || {
            let login = login.clone();
            Box::pin(async move { lembas_login::month_usage(&login).await })
        });
        source
    });
    let prompt = args.prompt.join(" ");
    let begin = lembas_tui::Begin {
        resume,
        pick_session: args.resume.as_deref() == Some(""),
        prompt: (!prompt.trim().is_empty()).then_some(prompt),
        save: Some(save_settings(start.home.clone(), start.login.clone())),
        schedules: schedule_source(&start, &cwd),
        share: sharing.clone().map(|sharing| {
            let source: lembas_tui::server::ShareSource =
                Arc::new(move |ask, news| Box::pin(sharing.clone().ask(ask, news)));
            source
        }),
    };
    let left = lembas_tui::run(open, host, app, month, begin).await;
    if let Some(sharing) = &sharing {
        sharing.stop();
    }
    let left = left.map_err(|e| Failure::new(exit::FAILED, format!("the terminal failed: {e}")))?;
    start.finish(Some(&project)).await;
    if let Some(id) = left {
        println!("Go on with this session: lembas --resume {id}");
    }
    Ok(exit::OK)
}

/// `/share`, on a LLeMbas login: the link a share dials, and the host the server's requests on
/// it reach.
fn sharing(start: &setup::Startup, cwd: &std::path::Path, agents: (u32, u32)) -> Option<Arc<crate::share::Sharing>> {
    let login = &start.login;
    let token = login.secret.clone().filter(|_| login.kind == lembas_config::LoginKind::Llembas)?;
    let host: Arc<dyn lembas_client::Host> = crate::serve::acp_host(start).ok()?;
    let plan = crate::share::plan(login, token);
    Some(crate::share::Sharing::new(plan, host, login.models.clone(), agents, cwd.to_path_buf()))
}

/// `/schedule`, on a LLeMbas login: the server's schedules; one made here says what, on this
/// computer, keeps it from running.
fn schedule_source(start: &setup::Startup, cwd: &std::path::Path) -> Option<lembas_tui::server::ScheduleSource> {
    use lembas_protocol::schedules::ScheduleSaid;
    let login = start.login.clone();
    if login.kind != lembas_config::LoginKind::Llembas {
        return None;
    }
    let (home, cwd) = (start.home.clone(), cwd.to_path_buf());
    Some(Arc::new(move |ask| {
        let (login, home, cwd) = (login.clone(), home.clone(), cwd.clone());
        Box::pin(async move {
            let mut said = lembas_login::schedules(&login, ask).await;
            if let ScheduleSaid::Created { note, .. } = &mut said {
                *note = crate::remote::scheduled_here(&home, &cwd);
            }
            said
        })
    }))
}

/// `/settings` keeps its changes in this home's `config.toml`.
fn save_settings(home: lembas_config::Home, login: lembas_config::Login) -> lembas_tui::SaveSettings {
    use lembas_config::Setting;
    use lembas_tui::app::settings::Change;
    Arc::new(move |changes: &[Change]| {
        // On a LLeMbas login the account keeps the personality too, in the background (the
        // UI's own line says where it was kept here; an account that does not keep it is left
        // as it is — nothing is written over the terminal's screen).
        for change in changes {
            if let (Change::Personality(name), lembas_config::LoginKind::Llembas) = (change, login.kind) {
                let (login, name) = (login.clone(), name.clone());
                tokio::spawn(async move {
                    let _ = lembas_login::put_personality(&login, &name).await;
                });
            }
        }
        let settings: Vec<Setting> = changes
            .iter()
            .map(|change| match change {
                Change::Mode(mode) => Setting::Mode(mode.to_string()),
                Change::Model(model) => Setting::Model(model.clone()),
                Change::Effort(level) => Setting::Effort(level.clone()),
                Change::Notify(on) => Setting::Notify(*on),
                Change::Personality(name) => Setting::Personality(name.clone()),
                Change::CompactAt(share) => Setting::CompactAt(*share),
                Change::Agents(min, max) => Setting::Agents { min: *min, max: *max },
            })
            .collect();
        lembas_config::save_settings(&home, &settings)
            .map(|()| home.config_file().display().to_string())
            .map_err(|e| e.to_string())
    })
}
