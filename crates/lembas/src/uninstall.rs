//! `lembas uninstall [--purge] [--yes]`: lembas and what it installed beside itself (its
//! sandbox's launcher, the shell completions `install.sh` put in place, the service unit) — and
//! with `--purge` its settings, login, sessions, snapshots, logs and jobs' output. What will go
//! is listed first, and asked about unless `--yes`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::cli::exit;
use crate::{Failure, setup};

/// Where `install.sh` puts the shell completions, under the person's home.
pub fn completion_files(user_home: &Path) -> Vec<PathBuf> {
    let data = setup::xdg_folder("XDG_DATA_HOME").unwrap_or_else(|| user_home.join(".local/share"));
    let config = setup::xdg_folder("XDG_CONFIG_HOME").unwrap_or_else(|| user_home.join(".config"));
    vec![
        data.join("bash-completion/completions/lembas"),
        data.join("zsh/site-functions/_lembas"),
        config.join("fish/completions/lembas.fish"),
    ]
}

/// `lembas uninstall`.
pub fn uninstall(purge: bool, yes: bool) -> Result<u8, Failure> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    if let Some(how) = crate::update::managed_elsewhere(&exe) {
        let how = how.replace("update it with", "remove it with");
        return Err(Failure::new(exit::FAILED, how));
    }
    let home = setup::home()?;
    let mut doomed = vec![exe.clone()];
    for helper in ["lembas-sandbox", "lembas-reader"] {
        let helper = exe.with_file_name(helper);
        doomed.extend(helper.exists().then_some(helper));
    }
    if let Some(user_home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        doomed.extend(completion_files(Path::new(&user_home)).into_iter().filter(|f| f.exists()));
    }
    let unit = crate::service::unit_file().ok().filter(|f| f.exists());
    doomed.extend(unit.clone());
    if purge {
        let folders = [&home.config, &home.data, &home.state];
        doomed.extend(folders.into_iter().filter(|f| f.exists()).cloned());
    }
    out!("lembas uninstall deletes:");
    for path in &doomed {
        out!("  {}", path.display());
    }
    if !yes && !asked_yes()? {
        out!("Nothing was deleted.");
        return Ok(exit::OK);
    }
    if unit.is_some() {
        // Stopped before its file goes.
        crate::service::uninstall()?;
    }
    for path in &doomed {
        let removed = if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Failure::new(exit::FAILED, format!("{} could not be deleted: {e}", path.display())));
            }
            _ => {}
        }
    }
    if purge {
        // `LEMBAS_HOME` holds nothing else: it goes too, when empty.
        if let Some(root) = std::env::var_os("LEMBAS_HOME").filter(|h| !h.is_empty()) {
            let _ = std::fs::remove_dir(root);
        }
        out!("lembas is uninstalled, with its settings, login, sessions and logs.");
    } else {
        out!(
            "lembas is uninstalled. Your settings, login and sessions stay ({}, {}); `lembas uninstall --purge` of a lembas installed again removes them.",
            home.config.display(),
            home.data.display()
        );
    }
    Ok(exit::OK)
}

/// "Delete these? [y/N]" at the terminal; without one, `--yes` is how to say it.
fn asked_yes() -> Result<bool, Failure> {
    if !std::io::stdin().is_terminal() {
        return Err(Failure::new(exit::USAGE, "not asked at a terminal: run `lembas uninstall --yes` to delete these"));
    }
    print!("Delete these? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
