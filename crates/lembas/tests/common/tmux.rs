//! The real binary in tmux against the test kit's fake server. `.ci/run` makes sure tmux is
//! there and sets `LEMBAS_TMUX`; elsewhere a test runs when tmux is installed and says so when
//! it is not.

use std::process::Command;
use std::time::{Duration, Instant};

use lembas_testkit::FakeServer;

/// One test's tmux: a server of its own (`-L`, its own socket) holding one session. A shared
/// server exits when its last session is killed, and a test that starts a session just then is
/// told "server exited unexpectedly" — so no test shares one.
pub struct Tmux {
    pub name: String,
}

impl Tmux {
    /// `tmux` talking to this test's own server.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.name]);
        command
    }

    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        assert!(self.command().args(&args).status().unwrap().success());
    }

    /// The window made `width`×`height`, as a person resizing their terminal.
    pub fn resize(&self, width: u16, height: u16) {
        let (width, height) = (width.to_string(), height.to_string());
        let args = ["resize-window", "-t", &self.name, "-x", &width, "-y", &height];
        assert!(self.command().args(args).status().unwrap().success());
    }

    /// Everything the program writes to the terminal from now on, as it writes it, appended to
    /// `file` (`pipe-pane`).
    pub fn record_output(&self, file: &std::path::Path) {
        let to = format!("cat >> '{}'", file.display());
        assert!(self.command().args(["pipe-pane", "-o", "-t", &self.name, &to]).status().unwrap().success());
    }

    /// The pane with rows the terminal wrapped joined back into their lines (`capture-pane -J`).
    pub fn joined(&self) -> String {
        let out = self.command().args(["capture-pane", "-p", "-J", "-S", "-", "-t", &self.name]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        // The whole pane, its scrollback included.
        let out = self.command().args(["capture-pane", "-p", "-S", "-", "-t", &self.name]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub async fn wait_for(&self, text: &str) -> String {
        self.wait_for_all(&[text]).await
    }

    /// The screen once it shows every one of `texts` and has settled: tmux may be captured while
    /// lembas is halfway through drawing a frame (the card's top drawn, the lines under it not
    /// yet), so a screen is taken only when a second capture a moment later is the same.
    pub async fn wait_for_all(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if texts.iter().all(|text| screen.contains(text)) {
                tokio::time::sleep(Duration::from_millis(40)).await;
                if self.screen() == screen {
                    return screen;
                }
            }
            assert!(start.elapsed() < Duration::from_secs(20), "never saw {texts:?}; the screen:\n{screen}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// A project holding `files` (in manual mode, logged in to `server`), and the real binary opened
/// in it inside a tmux session of its own, 100×30.
pub async fn open_ui(
    name: &str,
    server: &FakeServer,
    files: &[(&str, &str)],
) -> (Tmux, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = make_project(dir.path(), server, files).await;
    let tmux = launch(name, &home, &project, "", (100, 30));
    (tmux, dir, project)
}

/// A project under `dir` holding `files`, and a home logged in to `server` (manual mode, a
/// known window): (home, project).
pub async fn make_project(
    dir: &std::path::Path,
    server: &FakeServer,
    files: &[(&str, &str)],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let project = std::fs::canonicalize(dir).unwrap().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    for (path, text) in files {
        let path = project.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("config")).unwrap();
    // No looking for a newer lembas on the network from a test.
    let config = "mode = \"manual\"\ncontext_window = 32768\n\n[update]\ncheck = false\n";
    std::fs::write(home.join("config/config.toml"), config).unwrap();
    super::log_in(&home, server).await;
    (home, project)
}

/// The real binary, with `args`, opened in `project` in a tmux session of its own of `size`;
/// when it exits the pane says `LEMBAS-EXITED-<status>`.
pub fn launch(name: &str, home: &std::path::Path, project: &std::path::Path, args: &str, size: (u16, u16)) -> Tmux {
    let tmux = Tmux { name: format!("lembas-test-{name}-{}", std::process::id()) };
    let command = format!(
        "sleep 0.3; LEMBAS_HOME={} {} {args}; echo LEMBAS-EXITED-$?; sleep 60",
        home.display(),
        env!("CARGO_BIN_EXE_lembas")
    );
    let started = tmux
        .command()
        .args(["new-session", "-d", "-s", &tmux.name, "-x", &size.0.to_string(), "-y", &size.1.to_string(), "-c"])
        .arg(project)
        .arg(&command)
        .status()
        .unwrap();
    assert!(started.success());
    tmux
}

pub fn tmux_available() -> bool {
    let present = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    assert!(present || std::env::var_os("LEMBAS_TMUX").is_none(), "LEMBAS_TMUX is set but tmux is missing");
    present
}
