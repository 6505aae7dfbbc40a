//! `lembas service install|uninstall|status`: the link kept up by the system — a systemd user
//! unit on Linux, a launchd agent on macOS — running `lembas service` with the person's
//! `LEMBAS_HOME`, restarted when it fails, not when the link stopped for good (exit status 4: a
//! protocol to update, a login to make again).

use std::path::{Path, PathBuf};

use crate::cli::exit;
use crate::{Failure, setup};

/// The unit's (or agent's) name.
const NAME: &str = "lembas";

/// Where the unit file goes: systemd's user folder (`$XDG_CONFIG_HOME/systemd/user`), or
/// launchd's (`~/Library/LaunchAgents`).
pub(crate) fn unit_file() -> Result<PathBuf, Failure> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let none = || Failure::new(exit::FAILED, "no home folder: set HOME");
    if cfg!(target_os = "macos") {
        return Ok(home.ok_or_else(none)?.join("Library/LaunchAgents").join(format!("org.{NAME}.service.plist")));
    }
    let config =
        crate::setup::xdg_folder("XDG_CONFIG_HOME").or_else(|| home.map(|h| h.join(".config"))).ok_or_else(none)?;
    Ok(config.join("systemd/user").join(format!("{NAME}.service")))
}

/// The unit: `lembas service` by this binary's path, with `LEMBAS_HOME` when it is set.
fn unit_text(binary: &Path, lembas_home: Option<&Path>) -> String {
    let binary = binary.display();
    if cfg!(target_os = "macos") {
        let home = lembas_home.map_or_else(String::new, |h| {
            format!(
                "  <key>EnvironmentVariables</key>\n  <dict><key>LEMBAS_HOME</key><string>{}</string></dict>\n",
                h.display()
            )
        });
        return format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<dict>\n  <key>Label</key><string>org.{NAME}.service</string>\n  <key>ProgramArguments</key>\n  <array><string>{binary}</string><string>service</string></array>\n{home}  <key>RunAtLoad</key><true/>\n  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n</dict>\n</plist>\n"
        );
    }
    let home = lembas_home.map_or_else(String::new, |h| format!("Environment=\"LEMBAS_HOME={}\"\n", h.display()));
    format!(
        "[Unit]\nDescription=lembas: this computer linked to its LLeMbas server\nAfter=network-online.target\nWants=network-online.target\n\n[Service]\nExecStart={binary} service\n{home}Restart=on-failure\nRestartSec=10\n# 3: not logged in; 4: the link stopped for good (update lembas or the server).\nRestartPreventExitStatus=3 4\n\n[Install]\nWantedBy=default.target\n"
    )
}

/// Runs the system's service manager, answering what went wrong, if anything.
fn manager(args: &[&str]) -> Result<(), String> {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("launchctl", args.to_vec())
    } else {
        ("systemctl", [&["--user"], args].concat())
    };
    match std::process::Command::new(program).args(&args).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim())),
        Err(e) => Err(format!("{program}: {e}")),
    }
}

pub fn install() -> Result<u8, Failure> {
    let home = setup::home()?;
    // Linking needs a LLeMbas login: say so now rather than in the unit's log.
    crate::remote::llembas_login(&home)?;
    let binary = std::env::current_exe().map_err(|e| Failure::new(exit::FAILED, format!("where lembas is: {e}")))?;
    let lembas_home = std::env::var_os("LEMBAS_HOME").map(PathBuf::from);
    let file = unit_file()?;
    let folder = file.parent().expect("a unit file has a folder");
    std::fs::create_dir_all(folder).map_err(|e| Failure::new(exit::FAILED, format!("{}: {e}", folder.display())))?;
    std::fs::write(&file, unit_text(&binary, lembas_home.as_deref()))
        .map_err(|e| Failure::new(exit::FAILED, format!("{}: {e}", file.display())))?;
    out!("Wrote {}.", file.display());
    let started = if cfg!(target_os = "macos") {
        manager(&["load", "-w", &file.display().to_string()])
    } else {
        manager(&["daemon-reload"]).and_then(|()| manager(&["enable", "--now", &format!("{NAME}.service")]))
    };
    match started {
        Ok(()) => out!("The link starts now and with every login; lembas remote list says how it stands."),
        Err(why) => eprintln!(
            "lembas: the service could not be started ({why}); start it yourself: {}",
            if cfg!(target_os = "macos") { "launchctl load -w FILE" } else { "systemctl --user enable --now lembas" }
        ),
    }
    Ok(exit::OK)
}

pub fn uninstall() -> Result<u8, Failure> {
    let file = unit_file()?;
    if !file.exists() {
        out!("No lembas service is installed ({} is not there).", file.display());
        return Ok(exit::OK);
    }
    let stopped = if cfg!(target_os = "macos") {
        manager(&["unload", "-w", &file.display().to_string()])
    } else {
        manager(&["disable", "--now", &format!("{NAME}.service")])
    };
    if let Err(why) = stopped {
        eprintln!("lembas: {why}");
    }
    std::fs::remove_file(&file).map_err(|e| Failure::new(exit::FAILED, format!("{}: {e}", file.display())))?;
    if !cfg!(target_os = "macos") {
        let _ = manager(&["daemon-reload"]);
    }
    out!("Removed {}; this computer is no longer linked at login.", file.display());
    Ok(exit::OK)
}

pub fn status() -> Result<u8, Failure> {
    let home = setup::home()?;
    let file = unit_file()?;
    match file.exists() {
        true => out!("installed  {}", file.display()),
        false => out!("installed  no (lembas service install)"),
    }
    let (state, said) = crate::remote::link_state(&home);
    match said {
        Some(said) => out!("link       {state}: {said}"),
        None => out!("link       {state}"),
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_unit_runs_the_service_with_the_home_and_does_not_restart_a_link_stopped_for_good() {
        let unit = unit_text(Path::new("/opt/lembas/bin/lembas"), Some(Path::new("/srv/lembas")));
        assert!(unit.contains("ExecStart=/opt/lembas/bin/lembas service\n"), "{unit}");
        assert!(unit.contains("Environment=\"LEMBAS_HOME=/srv/lembas\"\n"));
        assert!(unit.contains("RestartPreventExitStatus=3 4\n") && unit.contains("WantedBy=default.target"));
        assert!(!unit_text(Path::new("/l"), None).contains("LEMBAS_HOME"));
    }
}
