//! The judge never lets plan mode run a command that the sandbox then has to stop: lines made
//! from fuzzed bytes (the same maker as the test `judge_vs_sandbox`) are judged in plan mode,
//! and those allowed are run in plan mode's sandbox in a scratch project; a blocked write or a
//! changed project is a judgement bug.
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
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Scratch { _dir: dir, base, runtime }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = scratch();
    let root = s.base.join("proj");
    let line = plan_lines::line_from(data);
    let judge = Judge::with_defaults(Context {
        root: root.clone(),
        home: Some(s.base.join("home")),
        plans_dir: Some(s.base.join("plans")),
        ..Context::default()
    });
    let call = Call { tool: "bash", risk: lembas_spec::RiskClass::Execute, command: Some(&line), paths: &[] };
    if judge.evaluate(Mode::Plan, &call, &root, &Path::to_path_buf) != Decision::Allow {
        return;
    }
    let sandbox = SandboxPlaces {
        root: root.clone(),
        home: Some(s.base.join("home")),
        plans_dir: Some(s.base.join("plans")),
        private_tmp: s.base.join("tmp"),
        extra: Vec::new(),
        hidden: Default::default(),
        network: None,
    }
    .sandbox(SandboxReach::Plans);
    let (ws, _) = Workspace::new(&root, &root);
    let args = serde_json::json!({ "command": line, "timeout": 10 });
    let out = s.runtime.block_on(run_bash_in(&ws, &args, &tokio_util::sync::CancellationToken::new(), None, &sandbox));
    if let ToolOutput::Text(text) = out.output {
        assert!(!text.contains("Read-only file system") && !text.contains("Permission denied"), "`{line}`:\n{text}");
    }
    assert!(root.join("src/lib.rs").exists() && !root.join("f").exists(), "`{line}` changed the project");
});
