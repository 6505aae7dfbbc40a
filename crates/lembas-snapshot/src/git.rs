//! Running the real `git` on lembas' own store: never the project's `.git`, and never the
//! person's git configuration (a `core.autocrlf`, a filter or a hook of theirs would change what
//! is kept or put back).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::SnapshotError;

/// One project's store: its object store and the project it keeps.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub git_dir: PathBuf,
    pub work_tree: PathBuf,
}

impl Git {
    /// `git` on the store, with `index` as its index file.
    fn command(&self, index: Option<&Path>) -> Command {
        // lembas' one hardened git (`lembas_sys::git`): no system or global configuration, none
        // of the person's `GIT_*` (a hook's GIT_DIR, an editor's GIT_INDEX_FILE), no secrets.
        let mut command: Command = lembas_sys::git::base();
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.symlinks=true",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.untrackedCache=true",
                "-c",
                "core.splitIndex=true",
                "-c",
                "gc.auto=0",
                "-c",
                "advice.addEmbeddedRepo=false",
            ])
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(index) = index {
            command.env("GIT_INDEX_FILE", index);
        }
        command
    }

    /// Runs `git args` (with `input` on its standard input) and answers what it wrote.
    pub fn run(&self, index: Option<&Path>, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, SnapshotError> {
        let mut command = self.command(index);
        command.args(args);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().map_err(SnapshotError::NoGit)?;
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("stdin was piped");
            // A git that exits early closes its end; what it says then is the error.
            let _ = stdin.write_all(input);
        }
        let output = child.wait_with_output().map_err(SnapshotError::NoGit)?;
        if !output.status.success() {
            return Err(SnapshotError::Git {
                args: args.join(" "),
                said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// `run`, its output a line of text (an object id).
    pub fn line(&self, index: Option<&Path>, args: &[&str]) -> Result<String, SnapshotError> {
        Ok(String::from_utf8_lossy(&self.run(index, args, None)?).trim().to_owned())
    }

    /// Whether the store is made (its `HEAD` is written last).
    pub fn made(&self) -> bool {
        self.git_dir.join("HEAD").is_file()
    }

    /// Makes the store if it is not there yet: a bare repository (every command here points it
    /// at the project), laid out as `git init --bare` lays one out — written here because a git
    /// started for it would cost a new project's first turn as much as its snapshot. Made aside
    /// and moved in whole, so two lembas making it at once leave one.
    pub fn init(&self) -> Result<(), SnapshotError> {
        if self.made() {
            return Ok(());
        }
        let parent = self.git_dir.parent().unwrap_or(&self.git_dir);
        std::fs::create_dir_all(parent).map_err(|e| SnapshotError::Io(parent.to_path_buf(), e))?;
        let making = parent.join(format!(".making-{}", std::process::id()));
        let io = |path: &std::path::Path, e| SnapshotError::Io(path.to_path_buf(), e);
        for folder in ["objects/info", "objects/pack", "refs/heads", "refs/tags", "info"] {
            std::fs::create_dir_all(making.join(folder)).map_err(|e| io(&making, e))?;
        }
        let files = [
            ("config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n".to_owned()),
            // Which project this store keeps, for a person looking in the folder.
            ("description", format!("{}\n", self.work_tree.display())),
            ("HEAD", "ref: refs/heads/main\n".to_owned()),
        ];
        for (name, text) in files {
            std::fs::write(making.join(name), text).map_err(|e| io(&making, e))?;
        }
        match std::fs::rename(&making, &self.git_dir) {
            Ok(()) => Ok(()),
            // Another lembas made it first (or an empty folder is in the way).
            Err(e) => {
                let _ = std::fs::remove_dir_all(&making);
                if self.made() { Ok(()) } else { Err(io(&self.git_dir, e)) }
            }
        }
    }
}

/// NUL-separated paths (`-z` output) as strings.
pub(crate) fn paths(bytes: &[u8]) -> Vec<String> {
    bytes.split(|&b| b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect()
}

/// Paths NUL-separated, for `--pathspec-from-file=- --pathspec-file-nul`.
pub(crate) fn nul_joined<'a>(paths: impl IntoIterator<Item = &'a String>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path.as_bytes());
        out.push(0);
    }
    out
}
