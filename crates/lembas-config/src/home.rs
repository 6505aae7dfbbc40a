//! The folders lembas uses.

use std::path::{Path, PathBuf};

use etcetera::BaseStrategy;

use crate::StoreError;

/// The folders lembas keeps things in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    /// `config.toml`, `credentials.json`, the global `AGENTS.md`.
    pub config: PathBuf,
    /// `sessions.db`.
    pub data: PathBuf,
    /// `learned.json`, logs, job output.
    pub state: PathBuf,
    /// The person's home directory, for naming files `~/…`.
    pub user_home: Option<PathBuf>,
}

impl Home {
    /// From the environment: `LEMBAS_HOME` when set and not empty, else the XDG folders.
    pub fn from_env() -> Result<Home, StoreError> {
        let user_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        if let Some(root) = std::env::var_os("LEMBAS_HOME").filter(|h| !h.is_empty()) {
            return Ok(Home { user_home, ..Home::under(Path::new(&root)) });
        }
        let xdg = etcetera::choose_base_strategy().map_err(|_| StoreError::NoHome)?;
        Ok(Home {
            config: xdg.config_dir().join("lembas"),
            data: xdg.data_dir().join("lembas"),
            state: xdg.state_dir().unwrap_or_else(|| xdg.data_dir()).join("lembas"),
            user_home: Some(xdg.home_dir().to_path_buf()),
        })
    }

    /// Everything under one folder (what `LEMBAS_HOME` means).
    pub fn under(root: &Path) -> Home {
        Home { config: root.join("config"), data: root.join("data"), state: root.join("state"), user_home: None }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    pub fn credentials_file(&self) -> PathBuf {
        self.config.join("credentials.json")
    }

    pub fn global_instructions(&self) -> PathBuf {
        self.config.join("AGENTS.md")
    }

    pub fn sessions_db(&self) -> PathBuf {
        self.data.join("sessions.db")
    }

    pub fn learned_file(&self) -> PathBuf {
        self.state.join("learned.json")
    }

    /// The person's own skills (outside the configuration folder, which no tool may write:
    /// `edit` works on a skill file too).
    pub fn agents_dir(&self) -> PathBuf {
        self.config.join("agents")
    }

    pub fn skills_dir(&self) -> PathBuf {
        self.data.join("skills")
    }

    /// The projects' snapshots, one git store each: data, kept like the sessions they undo.
    pub fn snapshots_dir(&self) -> PathBuf {
        self.data.join("snapshots")
    }

    pub fn jobs_dir(&self) -> PathBuf {
        self.state.join("jobs")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state.join("logs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_root_holds_everything() {
        let home = Home::under(Path::new("/tmp/lh"));
        for path in
            [home.config_file(), home.credentials_file(), home.sessions_db(), home.learned_file(), home.logs_dir()]
        {
            assert!(path.starts_with("/tmp/lh"), "{}", path.display());
        }
    }
}
