//! Running one hook: `sh -c` its command in the project's folder, its input as JSON on its
//! standard input, stopped (its whole process group) at its timeout; what it printed is capped
//! like a command's output.

use std::path::Path;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::Hook;

/// The most of a hook's output, each stream, that is kept.
const OUTPUT_CAP: usize = 10_000;

/// What a hook did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookRun {
    /// Its exit code (`None`: stopped by a signal, or at its timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl HookRun {
    /// Exit code 2: the hook blocks what it was asked about; its stderr says why.
    pub fn blocks(&self) -> bool {
        self.code == Some(2)
    }

    /// Its answer as JSON: it exited 0 and printed one JSON object.
    pub fn json(&self) -> Option<Value> {
        if self.code != Some(0) {
            return None;
        }
        serde_json::from_str::<Value>(self.stdout.trim()).ok().filter(Value::is_object)
    }

    /// A hook that went wrong without blocking (another exit code, a timeout): what the
    /// person is told, the session going on.
    pub fn trouble(&self, hook: &Hook) -> Option<String> {
        let what = format!("The {} hook `{}` ({})", hook.event.name(), hook.command, hook.source);
        if self.timed_out {
            return Some(format!("{what} was stopped after {} s; the session goes on.", hook.timeout.as_secs()));
        }
        match self.code {
            Some(0 | 2) => None,
            code => {
                let said = self.stderr.trim();
                let code = code.map_or("a signal".to_owned(), |c| format!("exit code {c}"));
                Some(format!(
                    "{what} failed ({code}){}",
                    if said.is_empty() { String::new() } else { format!(": {said}") }
                ))
            }
        }
    }
}

/// Runs `hook` with `input` in `cwd`. An error: it could not be started at all.
pub async fn run(hook: &Hook, input: &Value, cwd: &Path) -> Result<HookRun, String> {
    let mut command = tokio::process::Command::new("sh");
    // A project's hooks are its own code: they get the person's environment, never lembas'
    // secrets (the login's key, the keys it reads).
    for name in lembas_sys::child_env::secrets_present() {
        command.env_remove(name);
    }
    command
        .arg("-c")
        .arg(&hook.command)
        .current_dir(cwd)
        // What Claude Code's hooks read their project from, and lembas' own name for it.
        .env("CLAUDE_PROJECT_DIR", cwd)
        .env("LEMBAS_PROJECT_DIR", cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| format!("the hook `{}` could not be started: {e}", hook.command))?;
    let pid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input closes its end: nothing to say of that.
        let _ = stdin.write_all(input.to_string().as_bytes()).await;
    }
    match tokio::time::timeout(hook.timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => Ok(HookRun {
            code: output.status.code(),
            stdout: capped(&output.stdout),
            stderr: capped(&output.stderr),
            timed_out: false,
        }),
        Ok(Err(e)) => Err(format!("the hook `{}` could not be waited for: {e}", hook.command)),
        Err(_) => {
            // The whole group: what the hook started goes with it.
            #[cfg(unix)]
            if let Some(pid) = pid {
                let group = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            }
            Ok(HookRun { timed_out: true, ..Default::default() })
        }
    }
}

fn capped(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(OUTPUT_CAP) {
        Some((cut, _)) => format!("{}\n[… cut at {OUTPUT_CAP} characters]", &text[..cut]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HookEvent, Hooks};

    fn one(command: &str, timeout: u64) -> Hook {
        let text = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}});
        let (hooks, _) = Hooks::from_claude_settings(&text.to_string(), "test").unwrap();
        hooks.at(HookEvent::Stop, None).next().unwrap().clone()
    }

    #[tokio::test]
    async fn a_hook_reads_its_input_and_says_through_its_exit_code_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let hook = one("read input; echo \"$input\" | grep -q '\"x\":1' && echo seen >&2; exit 2", 10);
        let ran = run(&hook, &serde_json::json!({"x": 1}), dir.path()).await.unwrap();
        assert!(ran.blocks());
        assert_eq!(ran.stderr.trim(), "seen");
        let json =
            run(&one("echo '{\"decision\": \"block\", \"reason\": \"more\"}'", 10), &Value::Null, dir.path()).await;
        assert_eq!(json.unwrap().json().unwrap()["reason"], "more");
        let failed = run(&one("echo broken >&2; exit 3", 10), &Value::Null, dir.path()).await.unwrap();
        assert!(failed.trouble(&one("x", 1)).unwrap().contains("exit code 3): broken"));
    }

    #[tokio::test]
    async fn a_hook_that_hangs_is_stopped_at_its_timeout_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("still-here");
        let hook = one(&format!("(sleep 3; touch {}) & sleep 30", marker.display()), 1);
        let started = std::time::Instant::now();
        let ran = run(&hook, &Value::Null, dir.path()).await.unwrap();
        assert!(ran.timed_out && started.elapsed() < std::time::Duration::from_secs(5));
        assert!(ran.trouble(&hook).unwrap().contains("stopped after 1 s"));
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        assert!(!marker.exists(), "what the hook started was stopped with it");
    }
}
