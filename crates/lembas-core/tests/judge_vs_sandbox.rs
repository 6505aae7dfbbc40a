//! The judge and the sandbox agree: a command the judge lets run in plan mode never tries to
//! write anything, so the sandbox (which would stop it) never has to; one it lets run in edit
//! mode never tries to write what the sandbox keeps read-only inside the project (git's hooks
//! and configuration, the trust-bearing files) nor to read a credential. A write attempt the
//! sandbox blocks there is a judgement bug. Lines are made from a fixed sequence of
//! pseudo-random bytes, so a failure repeats; `fuzz/` runs the same check on fuzzed bytes.

mod plan_lines;

use std::path::Path;

use lembas_permissions::{Call, Context, Decision, Judge, Mode};
use lembas_tools::{SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Every file's path and content.
type Snapshot = Vec<(String, Vec<u8>)>;

/// The state of a folder (or one file): every file's path and content.
fn snapshot(root: &Path) -> Snapshot {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(root).hidden(false).git_ignore(false).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push((entry.path().display().to_string(), std::fs::read(entry.path()).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

/// `count` command lines from a fixed sequence of pseudo-random bytes starting at `seed`.
fn lines(mut seed: u64, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            let bytes: Vec<u8> = (0..12)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 33) as u8
                })
                .collect();
            plan_lines::line_from(&bytes)
        })
        .collect()
}

/// What `line` said when run in `sandbox` — if the judge lets `mode` run it at all.
async fn run_if_allowed(
    judge: &Judge,
    mode: Mode,
    ws: &Workspace,
    sandbox: &lembas_tools::Sandbox,
    line: &str,
) -> Option<String> {
    let call = Call::new("bash", lembas_spec::RiskClass::Execute, Some(line), &[]);
    if judge.evaluate(mode, &call, &ws.root, &Path::to_path_buf) != Decision::Allow {
        return None;
    }
    let args = json!({ "command": line, "timeout": 10 });
    Some(match run_bash_in(ws, &args, &CancellationToken::new(), None, sandbox).await.output {
        ToolOutput::Text(t) | ToolOutput::Error(t) => t,
        other => format!("{other:?}"),
    })
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
        credentials: vec![base.join("home/.ssh")],
        credentials_readable: false,
        launcher: lembas_testkit::sandbox_launcher(),
    }
    .sandbox(SandboxReach::Plans);
    let before = snapshot(&root);
    let (mut allowed, mut tried) = (0, 0);
    for line in lines(0x005e_ed1e_4ba5, 600) {
        tried += 1;
        let Some(text) = run_if_allowed(&judge, Mode::Plan, &ws, &sandbox, &line).await else { continue };
        allowed += 1;
        assert!(
            !text.contains("Read-only file system") && !text.contains("Permission denied"),
            "plan mode allowed `{line}`, and the sandbox had to stop it:\n{text}"
        );
        assert_eq!(snapshot(&root), before, "plan mode allowed `{line}`, and it changed the project");
    }
    assert!(allowed > 30 && allowed < tried, "{allowed} of {tried} lines allowed: the generator lost its mix");
}

#[tokio::test]
async fn what_edit_mode_allows_never_meets_the_read_only_places() {
    if lembas_tools::sandbox::support().is_err() && std::env::var_os("CI").is_none() {
        return;
    }
    let Some(launcher) = lembas_testkit::sandbox_launcher() else {
        assert!(std::env::var_os("CI").is_none(), "CI builds the launcher (cargo test --workspace)");
        eprintln!("no sandbox launcher built: run the workspace's tests");
        return;
    };
    let dir = tempfile::tempdir_in(lembas_testkit::outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (root, home) = (base.join("proj"), base.join("home"));
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".lembas")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    for args in [&["init", "-q"][..], &["add", "."]] {
        assert!(std::process::Command::new("git").args(args).current_dir(&root).status().unwrap().success());
    }
    let sealed = [".git/hooks", ".git/config", ".mcp.json", ".lembas"];
    let state = |root: &Path| sealed.iter().map(|s| snapshot(&root.join(s))).collect::<Vec<_>>();
    let before = state(&root);
    let (ws, _) = Workspace::new(&root, &root);
    let judge = Judge::with_defaults(Context { root: root.clone(), home: Some(home.clone()), ..Context::default() });
    let sandbox = SandboxPlaces {
        root: root.clone(),
        home: Some(home.clone()),
        plans_dir: Some(base.join("plans")),
        private_tmp: base.join("tmp"),
        credentials: vec![home.join(".ssh")],
        launcher: Some(launcher),
        ..Default::default()
    }
    .sandbox(SandboxReach::Project);
    assert!(!sandbox.seals.is_empty(), "the project's git folders are sealed");
    let mut allowed = 0;
    for line in lines(0x0ed1_7ed1_7000, 500) {
        let Some(text) = run_if_allowed(&judge, Mode::Edit, &ws, &sandbox, &line).await else { continue };
        allowed += 1;
        assert!(
            !text.contains("Read-only file system"),
            "edit mode allowed `{line}`, and the sandbox had to stop it:\n{text}"
        );
        assert!(!text.contains("SECRET-KEY"), "edit mode allowed `{line}`, and it read a key:\n{text}");
        assert_eq!(state(&root), before, "edit mode allowed `{line}`, and it changed a sealed place");
    }
    assert!(allowed > 30, "{allowed} lines allowed: the generator lost its mix");
}
