//! The way a command takes into its sandbox where joining a kept namespace fails: the launcher,
//! started for each command, makes the mounts and becomes the command. A test binary of its own:
//! choosing that way holds for the whole process.

use lembas_tools::{SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn through_the_launcher_each_command_gets_the_mounts_in_a_namespace_of_its_own() {
    let Some(launcher) = lembas_testkit::sandbox_launcher() else {
        assert!(std::env::var_os("CI").is_none(), "CI builds the launcher (cargo test --workspace)");
        return;
    };
    if let Err(why) = lembas_tools::sandbox::state(Some(&launcher)) {
        assert!(std::env::var_os("CI").is_none(), "CI must seal what commands may not write: {why}");
        return;
    }
    lembas_tools::sandbox::start_each_through_the_launcher();
    let dir =
        tempfile::tempdir_in(lembas_testkit::outside_temp(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert!(std::process::Command::new("git").arg("-C").arg(&root).args(["init", "-q"]).status().unwrap().success());
    let (ws, _) = Workspace::new(&root, &root);
    let places = SandboxPlaces { root: root.clone(), launcher: Some(launcher), ..Default::default() };
    let run = |command: &str| {
        let sandbox = places.sandbox(SandboxReach::Project);
        let args = json!({ "command": command });
        let ws = &ws;
        async move {
            match run_bash_in(ws, &args, &CancellationToken::new(), None, &sandbox).await.output {
                ToolOutput::Text(t) | ToolOutput::Error(t) => t,
                other => format!("{other:?}"),
            }
        }
    };
    let text = run("python3 -c \"open('.git/hooks/pre-commit', 'w').write('evil')\"").await;
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!root.join(".git/hooks/pre-commit").exists());
    let text = run("echo made > f.txt && cat f.txt && pwd").await;
    assert!(text.contains("made") && text.contains(&root.display().to_string()), "{text}");
    let first = run("readlink /proc/self/ns/mnt").await;
    let second = run("readlink /proc/self/ns/mnt").await;
    assert!(first.starts_with("mnt:[") && first != second, "a namespace of its own each: {first} {second}");
}
