//! The judge never lets a command run that the sandbox then has to stop: lines made from fuzzed
//! bytes (the same maker as the test `judge_vs_sandbox`) are judged in plan mode and in edit
//! mode, and those allowed are run in that mode's sandbox in a scratch project; in plan mode a
//! blocked write or a changed project, in edit mode a write to a place kept read-only (git's
//! hooks and configuration, `.mcp.json`) or a key read, is a judgement bug.
#![no_main]

#[path = "../../crates/lembas-core/tests/plan_lines/mod.rs"]
mod plan_lines;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lembas_permissions::{Call, Context, Decision, Judge, Mode};
use lembas_tools::{SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use libfuzzer_sys::fuzz_target;

struct Scratch {
    _dir: tempfile::TempDir,
    base: PathBuf,
    runtime: tokio::runtime::Runtime,
}

fn scratch() -> &'static Scratch {
    static SCRATCH: OnceLock<Scratch> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let dir = tempfile::tempdir_in(".").unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("proj/src")).unwrap();
        std::fs::write(base.join("proj/src/lib.rs"), "fn main() {}\n").unwrap();
        std::fs::write(base.join("proj/notes.txt"), "b\na\n").unwrap();
        std::fs::write(base.join("proj/.mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(base.join("proj/.git/hooks")).unwrap();
        std::fs::write(base.join("proj/.git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(base.join("home/.ssh")).unwrap();
        std::fs::write(base.join("home/.ssh/id_ed25519"), "SECRET-KEY").unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Scratch { _dir: dir, base, runtime }
    })
}

/// The sandbox's launcher: `LEMBAS_SANDBOX_LAUNCHER`, else the workspace's debug build of
/// `lembas-sandbox` (`cargo build -p lembas-tools`); without one, edit mode's check is skipped.
fn launcher() -> Option<PathBuf> {
    let given = std::env::var_os("LEMBAS_SANDBOX_LAUNCHER").map(PathBuf::from);
    given.or_else(|| Some(PathBuf::from("../target/debug/lembas-sandbox"))).filter(|p| p.is_file())
}

fuzz_target!(|data: &[u8]| {
    let s = scratch();
    let root = s.base.join("proj");
    let line = plan_lines::line_from(data);
    let home = s.base.join("home");
    let judge = Judge::with_defaults(Context {
        root: root.clone(),
        home: Some(home.clone()),
        plans_dir: Some(s.base.join("plans")),
        ..Context::default()
    });
    let places = SandboxPlaces {
        root: root.clone(),
        home: Some(home.clone()),
        plans_dir: Some(s.base.join("plans")),
        private_tmp: s.base.join("tmp"),
        credentials: vec![home.join(".ssh")],
        launcher: launcher(),
        ..Default::default()
    };
    let call = Call::new("bash", lembas_spec::RiskClass::Execute, Some(&line), &[]);
    let (ws, _) = Workspace::new(&root, &root);
    let args = serde_json::json!({ "command": line, "timeout": 10 });
    let run = |reach| {
        let sandbox = places.sandbox(reach);
        let out = s.runtime.block_on(run_bash_in(&ws, &args, &tokio_util::sync::CancellationToken::new(), None, &sandbox));
        match out.output {
            ToolOutput::Text(text) | ToolOutput::Error(text) => text,
            _ => String::new(),
        }
    };
    // Plan mode: what it allows writes nothing, so the sandbox never has to stop it.
    if judge.evaluate(Mode::Plan, &call, &root, &Path::to_path_buf) == Decision::Allow {
        let text = run(SandboxReach::Plans);
        assert!(!text.contains("Read-only file system") && !text.contains("Permission denied"), "`{line}`:\n{text}");
        assert!(root.join("src/lib.rs").exists() && !root.join("f").exists(), "`{line}` changed the project");
    }
    // Edit mode: what it allows never meets the places kept read-only inside the project, and
    // never reads a key.
    if places.launcher.is_some() && judge.evaluate(Mode::Edit, &call, &root, &Path::to_path_buf) == Decision::Allow {
        let text = run(SandboxReach::Project);
        assert!(!text.contains("Read-only file system") && !text.contains("SECRET-KEY"), "`{line}`:\n{text}");
        assert_eq!(std::fs::read_to_string(root.join(".mcp.json")).unwrap_or_default(), "{}", "`{line}`");
        assert!(!root.join(".git/hooks/pre-commit").exists(), "`{line}` wrote a hook");
    }
});
