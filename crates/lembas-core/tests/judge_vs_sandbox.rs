//! The judge and the sandbox agree: a command the judge lets run in plan mode never tries to
//! write anything, so the sandbox (which would stop it) never has to. A write attempt the
//! sandbox blocks in plan mode is a judgement bug. Lines are made from a fixed sequence of
//! pseudo-random bytes, so a failure repeats; `fuzz/` runs the same check on fuzzed bytes.

mod plan_lines;

use std::path::Path;

use lembas_permissions::{Call, Context, Decision, Judge, Mode};
use lembas_tools::{SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The state of a folder: every file's path and content.
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(root).hidden(false).git_ignore(false).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push((entry.path().display().to_string(), std::fs::read(entry.path()).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn what_plan_mode_allows_never_needs_the_sandbox() {
    if lembas_tools::sandbox::support().is_err() && std::env::var_os("CI").is_none() {
        return;
    }
    let dir = tempfile::tempdir_in(lembas_testkit::outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("notes.txt"), "b\na\nb\n").unwrap();
    // A repository of its own: git run here must not find the clone around the build folder,
    // whose history may say anything ("Permission denied" included).
    for args in
        [&["init", "-q"][..], &["add", "."], &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"]]
    {
        let done = std::process::Command::new("git").args(args).current_dir(&root).status().unwrap();
        assert!(done.success(), "git {args:?}");
    }
    let (ws, _) = Workspace::new(&root, &root);
    let judge = Judge::with_defaults(Context {
        root: root.clone(),
        home: Some(base.join("home")),
        plans_dir: Some(base.join("plans")),
        ..Context::default()
    });
    let sandbox = SandboxPlaces {
        root: root.clone(),
        home: Some(base.join("home")),
        plans_dir: Some(base.join("plans")),
        private_tmp: base.join("tmp"),
        extra: Vec::new(),
        hidden: Default::default(),
        network: None,
    }
    .sandbox(SandboxReach::Plans);
    let before = snapshot(&root);
    let mut seed: u64 = 0x005e_ed1e_4ba5;
    let (mut allowed, mut tried) = (0, 0);
    for _ in 0..600 {
        let bytes: Vec<u8> = (0..12)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        let line = plan_lines::line_from(&bytes);
        tried += 1;
        let call = Call { tool: "bash", risk: lembas_spec::RiskClass::Execute, command: Some(&line), paths: &[] };
        if judge.evaluate(Mode::Plan, &call, &root, &Path::to_path_buf) != Decision::Allow {
            continue;
        }
        allowed += 1;
        let out =
            run_bash_in(&ws, &json!({ "command": line, "timeout": 10 }), &CancellationToken::new(), None, &sandbox)
                .await;
        let text = match out.output {
            ToolOutput::Text(t) | ToolOutput::Error(t) => t,
            other => format!("{other:?}"),
        };
        assert!(
            !text.contains("Read-only file system") && !text.contains("Permission denied"),
            "plan mode allowed `{line}`, and the sandbox had to stop it:\n{text}"
        );
        assert_eq!(snapshot(&root), before, "plan mode allowed `{line}`, and it changed the project");
    }
    assert!(allowed > 30 && allowed < tried, "{allowed} of {tried} lines allowed: the generator lost its mix");
}
