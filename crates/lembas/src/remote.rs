//! `lembas service` and `lembas remote`: this computer as a LLeMbas server's device — the link
//! held in the foreground, and the person's `[remote]` settings (what the server may do here).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lembas_config::{Home, Login, LoginKind, RemoteChange, RemoteSettings};
use lembas_permissions::Mode;
use serde_json::json;

use crate::cli::{RemoteAction, RootsAction, ServiceAction, Switch, exit};
use crate::{Failure, setup};

/// What the service last said of the link, for `lembas remote list` (never the token).
const STATE_FILE: &str = "link.json";
/// Held while a service links this computer: one link per login.
const LOCK_FILE: &str = "link.lock";
/// The service's log, in the logs folder; set aside as `.1` once it passes this size.
const LOG_FILE: &str = "link.log";
const LOG_LIMIT: u64 = 1 << 20;

pub async fn service(action: Option<ServiceAction>) -> Result<u8, Failure> {
    match action {
        None => hold_link().await,
        Some(ServiceAction::Scheduled { switch }) => change(RemoteChange::Scheduled(switch == Switch::On)),
        Some(ServiceAction::Install) => crate::service::install(),
        Some(ServiceAction::Uninstall) => crate::service::uninstall(),
        Some(ServiceAction::Status) => crate::service::status(),
    }
}

pub fn remote(action: RemoteAction) -> Result<u8, Failure> {
    match action {
        RemoteAction::List { json } => list(json),
        RemoteAction::Enable => change(RemoteChange::Enabled(true)),
        RemoteAction::Disable => change(RemoteChange::Enabled(false)),
        RemoteAction::Scheduled { switch } => change(RemoteChange::Scheduled(switch == Switch::On)),
        RemoteAction::Roots { action: RootsAction::Add { dir } } => {
            let real = std::fs::canonicalize(&dir)
                .map_err(|e| Failure::new(exit::USAGE, format!("{}: {e}", dir.display())))?;
            if !real.is_dir() {
                return Err(Failure::new(exit::USAGE, format!("{} is not a folder", dir.display())));
            }
            change(RemoteChange::AddRoot(real.display().to_string()))
        }
        RemoteAction::Roots { action: RootsAction::Remove { dir } } => {
            // A root is taken out as it was written, or as its folder really is.
            let home = setup::home()?;
            let settings = setup::config(&home)?.remote;
            let real = std::fs::canonicalize(&dir).ok();
            let written = settings.roots.iter().find(|r| {
                Path::new(r) == dir || real.as_deref().is_some_and(|real| expand(r, &home).as_deref() == Some(real))
            });
            match written {
                Some(root) => change(RemoteChange::RemoveRoot(root.clone())),
                None => Err(Failure::new(exit::USAGE, format!("{} is not one of the remote roots", dir.display()))),
            }
        }
    }
}

/// Writes one change to `[remote]` and says what it is now.
fn change(change: RemoteChange) -> Result<u8, Failure> {
    let home = setup::home()?;
    let changed = lembas_config::save_remote(&home, &change).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    let said = match &change {
        RemoteChange::Enabled(true) => "Remote work is on".to_owned(),
        RemoteChange::Enabled(false) => "Remote work is off".to_owned(),
        RemoteChange::Scheduled(true) => "This computer accepts scheduled work".to_owned(),
        RemoteChange::Scheduled(false) => "This computer does not accept scheduled work".to_owned(),
        RemoteChange::AddRoot(root) => format!("Remote sessions may open {root}"),
        RemoteChange::RemoveRoot(root) => format!("Remote sessions may no longer open {root}"),
    };
    let tail = if changed { "" } else { " (it already was)" };
    out!("{said}{tail}. A running service tells the server when nothing runs there.");
    Ok(exit::OK)
}

/// A root as written (`~/` the home folder), made absolute; `None` for one that is not.
fn expand(root: &str, home: &Home) -> Option<PathBuf> {
    let path = match root.strip_prefix("~/") {
        Some(rest) => home.user_home.as_ref()?.join(rest),
        None if root == "~" => home.user_home.clone()?,
        None => PathBuf::from(root),
    };
    path.is_absolute().then_some(path)
}

/// What keeps a schedule made for `cwd` from running on this computer, as the commands that
/// would change it (`None`: the settings let it; the service must still be running).
pub(crate) fn scheduled_here(home: &Home, cwd: &Path) -> Option<String> {
    let settings = lembas_config::Config::load(home).ok()?.remote;
    let mut missing = Vec::new();
    if !settings.enabled {
        missing.push("lembas remote enable".to_owned());
    }
    if !settings.scheduled {
        missing.push("lembas service scheduled on".to_owned());
    }
    let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let inside = settings
        .roots
        .iter()
        .filter_map(|r| expand(r, home))
        .any(|root| real.starts_with(std::fs::canonicalize(&root).unwrap_or(root)));
    if !inside {
        missing.push(format!("lembas remote roots add {}", cwd.display()));
    }
    let project = setup::real_root(&setup::project_root(&real));
    if settings.require_trust && !setup::standing(home, &project).is_ok_and(|s| s == lembas_config::Standing::Trusted) {
        missing.push(format!("lembas trust {}", project.display()));
    }
    (!missing.is_empty()).then(|| {
        format!(
            "It runs here only once this computer takes it: {}; and with lembas service running.",
            missing.join(", ")
        )
    })
}

/// The limits the server is told of and held to, from `[remote]`.
fn limits(settings: &RemoteSettings, home: &Home) -> Result<lembas_acp::Limits, Failure> {
    let max_mode = Mode::parse(&settings.max_mode).ok_or_else(|| {
        Failure::new(
            exit::USAGE,
            format!(
                "{}: remote.max_mode = {:?} is not a mode: use manual, edit or auto",
                home.config_file().display(),
                settings.max_mode
            ),
        )
    })?;
    Ok(lembas_acp::Limits {
        enabled: settings.enabled,
        roots: settings.roots.iter().filter_map(|r| expand(r, home)).collect(),
        max_mode,
        require_trust: settings.require_trust,
        scheduled: settings.scheduled,
    })
}

/// This computer as `_lembas/hello` names it.
pub(crate) fn this_device() -> lembas_link::Device {
    lembas_link::Device {
        host: nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default(),
        platform: std::env::consts::OS.to_owned(),
    }
}

/// The LLeMbas login the link needs, or why there is none.
pub(crate) fn llembas_login(home: &Home) -> Result<(Login, String), Failure> {
    let login = setup::login(home)?;
    match (&login.kind, login.secret.clone()) {
        (LoginKind::Llembas, Some(token)) => Ok((login, token)),
        _ => Err(Failure::new(
            exit::LOGIN,
            format!(
                "the login is to {}, a plain model server: lembas service links this computer to a LLeMbas server (lembas login URL)",
                login.server
            ),
        )),
    }
}

/// `lembas service`: holds the link in the foreground until Ctrl-C or a stop for good.
async fn hold_link() -> Result<u8, Failure> {
    let start = setup::Startup::load()?;
    let (login, token) = llembas_login(&start.home)?;
    let state_dir = start.home.state.clone();
    std::fs::create_dir_all(&state_dir)
        .map_err(|e| Failure::new(exit::FAILED, format!("{}: {e}", state_dir.display())))?;
    let lock = std::fs::File::create(state_dir.join(LOCK_FILE))
        .map_err(|e| Failure::new(exit::FAILED, format!("{}: {e}", state_dir.display())))?;
    if lock.try_lock().is_err() {
        return Err(Failure::new(
            exit::FAILED,
            "this computer is already linked: another lembas service holds the link",
        ));
    }
    let home = start.home.clone();
    let trusted = move |real: &Path| {
        let root = setup::real_root(&setup::project_root(real));
        setup::standing(&home, &root).is_ok_and(|s| s == lembas_config::Standing::Trusted)
    };
    let remote = lembas_acp::Remote {
        limits: limits(&start.config.remote, &start.home)?,
        connection: login.connection.clone(),
        trusted: Arc::new(trusted),
        approval_timeout: std::time::Duration::from_secs(start.config.remote.approval_timeout.max(1)),
    };
    let plan = lembas_link::LinkPlan { root: login.server.clone(), token, remote, device: this_device(), shares: None };
    let opener = crate::serve::acp_host(&start)?;
    let log = Log::open(&start.home.logs_dir(), &state_dir, &login.server);
    log.say("dialling", &format!("linking to {} (lembas {})", login.server, env!("CARGO_PKG_VERSION")));
    let say = |state: lembas_link::LinkState, line: &str| {
        log.say(if state == lembas_link::LinkState::Linked { "linked" } else { "dialling" }, line);
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let on_interrupt = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let limits = watch_limits(start.home.clone(), plan.remote.limits.clone());
    let held = lembas_link::hold(&plan, opener, &say, &stop, limits).await;
    start.finish(None).await;
    match held {
        Ok(()) => {
            log.say("stopped", "stopped");
            Ok(exit::OK)
        }
        Err(why) => {
            log.say("stopped", &format!("stopped: {why}"));
            Err(Failure::new(exit::LINK_STOPPED, why.to_string()))
        }
    }
}

/// The limits as `[remote]` says them, read again every two seconds: a change the person makes
/// (`lembas remote …`, or the file by hand) reaches the link. A file that cannot be read now
/// changes nothing.
fn watch_limits(home: Home, now: lembas_acp::Limits) -> tokio::sync::watch::Receiver<lembas_acp::Limits> {
    let (tell, told) = tokio::sync::watch::channel(now);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            if tell.is_closed() {
                return;
            }
            let read = lembas_config::Config::load(&home).ok().and_then(|c| limits(&c.remote, &home).ok());
            if let Some(read) = read {
                tell.send_if_modified(|limits| {
                    let changed = *limits != read;
                    *limits = read;
                    changed
                });
            }
        }
    });
    told
}

/// The service's log: lines with their time, in the logs folder and on stderr; the last one is
/// kept in the state folder for `lembas remote list`.
struct Log {
    file: Mutex<Option<std::fs::File>>,
    state: PathBuf,
    server: String,
}

impl Log {
    fn open(logs: &Path, state: &Path, server: &str) -> Log {
        let path = logs.join(LOG_FILE);
        let _ = std::fs::create_dir_all(logs);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_LIMIT) {
            let _ = std::fs::rename(&path, logs.join(format!("{LOG_FILE}.1")));
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path).ok();
        Log { file: Mutex::new(file), state: state.join(STATE_FILE), server: server.to_owned() }
    }

    /// `line`, with where the link stands now: `linked`, `dialling` or `stopped`.
    fn say(&self, state: &str, line: &str) {
        let now = chrono::Local::now().format("%Y-%m-%d %H:%M:%S");
        eprintln!("lembas service: {line}");
        if let Some(file) = self.file.lock().expect("log").as_mut() {
            let _ = writeln!(file, "{now} {line}");
        }
        let said = json!({ "server": self.server, "state": state, "said": line, "at": now.to_string(), "pid": std::process::id() });
        let _ = lembas_config::write_atomic(&self.state, said.to_string().as_bytes(), 0o600);
    }
}

/// `lembas remote list [--json]`: the server, the link's state, and the settings.
fn list(as_json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let settings = setup::config(&home)?.remote;
    let limits = limits(&settings, &home)?;
    let login = Login::load(&home).ok().flatten().filter(|l| l.kind == LoginKind::Llembas);
    let (state, _) = link_state(&home);
    let roots: Vec<String> = limits.roots.iter().map(|r| r.display().to_string()).collect();
    if as_json {
        let said = json!({
            "server": login.as_ref().map(|l| &l.server),
            "state": state,
            "enabled": settings.enabled,
            "roots": roots,
            "max_mode": limits.max_mode,
            "require_trust": settings.require_trust,
            "approval_timeout": settings.approval_timeout,
            "scheduled": settings.scheduled,
        });
        out!("{said}");
        return Ok(exit::OK);
    }
    match &login {
        Some(login) => out!("server     {} ({state})", login.server),
        None => out!("server     none: log in to a LLeMbas server first (lembas login URL)"),
    }
    out!("remote     {}", if settings.enabled { "on" } else { "off" });
    out!(
        "roots      {}",
        if roots.is_empty() { "none (lembas remote roots add DIR)".to_owned() } else { roots.join(", ") }
    );
    out!("max mode   {}", limits.max_mode);
    out!("trust      {}", if settings.require_trust { "required" } else { "not required" });
    out!("scheduled  {}", if settings.scheduled { "accepted" } else { "not accepted" });
    Ok(exit::OK)
}

/// Whether a service holds the link now — `linked`, `dialling`, or `off` — and the last thing a
/// service said (a stopped one's reason too).
pub(crate) fn link_state(home: &Home) -> (String, Option<String>) {
    let lock = std::fs::File::options().read(true).write(true).open(home.state.join(LOCK_FILE));
    let running = lock.is_ok_and(|file| file.try_lock().is_err());
    let said: serde_json::Value = std::fs::read_to_string(home.state.join(STATE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let last = said["said"].as_str().map(|s| format!("{s} ({})", said["at"].as_str().unwrap_or("?")));
    if !running {
        return ("off".into(), last);
    }
    (said["state"].as_str().unwrap_or("dialling").to_owned(), last)
}
