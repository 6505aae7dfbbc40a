//! Each tool on a real temporary project.

use std::time::{Duration, Instant};

use lembas_context::FileChange;
use lembas_tools::{ToolOutput, Workspace, run_bash, run_file_tool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    std::fs::create_dir_all(root.join("pkg/web")).unwrap();
    std::fs::write(root.join("README.md"), "# App\nline two\n").unwrap();
    std::fs::write(root.join("pkg/web/index.ts"), "export const x = 1;\n").unwrap();
    // The session started below the root.
    let (ws, _) = Workspace::new(&root, &root.join("pkg/web"));
    (dir, ws)
}

fn text(out: ToolOutput) -> String {
    match out {
        ToolOutput::Text(t) => t,
        other => panic!("expected text, got {other:?}"),
    }
}

fn error(out: ToolOutput) -> String {
    match out {
        ToolOutput::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn relative_paths_are_read_against_the_root_not_the_start() {
    let (_d, ws) = project();
    match run_file_tool(&ws, "read", &json!({"path": "README.md"})) {
        ToolOutput::Read { call_path, file, content, .. } => {
            assert_eq!(call_path, "README.md");
            assert_eq!(file, ws.root.join("README.md"));
            assert_eq!(content, "# App\nline two\n");
        }
        other => panic!("{other:?}"),
    }
    let missing = error(run_file_tool(&ws, "read", &json!({"path": "index.ts"})));
    assert_eq!(missing, format!("No such file or directory: {}", ws.root.join("index.ts").display()));
}

#[test]
fn dot_dot_climbs_by_its_text() {
    let (_d, ws) = project();
    std::fs::write(ws.root.parent().unwrap().join("outside.txt"), "out\n").unwrap();
    match run_file_tool(&ws, "read", &json!({"path": "pkg/../../outside.txt"})) {
        ToolOutput::Read { file, .. } => {
            assert_eq!(file, ws.root.parent().unwrap().join("outside.txt"));
            assert!(!ws.contains(&file), "outside the project: the permission rules' business");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn binary_images_and_directories_are_handled() {
    let (_d, ws) = project();
    std::fs::write(ws.root.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    std::fs::write(ws.root.join("logo.png"), [137u8, 80, 78, 71]).unwrap();
    assert!(error(run_file_tool(&ws, "read", &json!({"path": "blob.bin"}))).contains("binary file"));
    assert!(error(run_file_tool(&ws, "read", &json!({"path": "logo.png"}))).contains("view_image"));
    assert_eq!(text(run_file_tool(&ws, "read", &json!({"path": "pkg"}))), "web/");
    assert!(error(run_file_tool(&ws, "read", &json!({}))).contains("`path` is required"));
}

#[test]
fn writes_and_edits_need_a_read_first_and_notice_changes() {
    let (_d, ws) = project();
    let path = ws.root.join("README.md");
    let refused =
        error(run_file_tool(&ws, "edit", &json!({"path": "README.md", "old_string": "two", "new_string": "2"})));
    assert_eq!(refused, format!("{} exists and has not been read in this session. Read it first.", path.display()));

    run_file_tool(&ws, "read", &json!({"path": "README.md"}));
    // Someone else changes it (a second later, so the modification time moves on every file system).
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, "# App\nline two\nthree\n").unwrap();
    let t = std::fs::File::options().write(true).open(&path).unwrap();
    t.set_modified(std::time::SystemTime::now() + Duration::from_secs(2)).unwrap();
    let changed =
        error(run_file_tool(&ws, "edit", &json!({"path": "README.md", "old_string": "two", "new_string": "2"})));
    assert_eq!(
        changed,
        format!("{} changed since you last read it. Read it again before changing it.", path.display())
    );

    run_file_tool(&ws, "read", &json!({"path": "README.md"}));
    let out = run_file_tool(&ws, "edit", &json!({"path": "README.md", "old_string": "two", "new_string": "2"}));
    assert_eq!(
        out,
        ToolOutput::Changes(vec![FileChange::Changed {
            path: "README.md".into(),
            before: "# App\nline two\nthree\n".into(),
            after: "# App\nline 2\nthree\n".into()
        }])
    );
    // Its own change counts as seen: a second edit needs no new read.
    assert!(
        !run_file_tool(&ws, "edit", &json!({"path": "README.md", "old_string": "three", "new_string": "3"})).is_error()
    );
}

#[test]
fn edit_explains_missing_and_ambiguous_text() {
    let (_d, ws) = project();
    std::fs::write(ws.root.join("a.txt"), "x\nx\n").unwrap();
    run_file_tool(&ws, "read", &json!({"path": "a.txt"}));
    assert!(
        error(run_file_tool(&ws, "edit", &json!({"path": "a.txt", "old_string": "y", "new_string": "z"})))
            .contains("was not found")
    );
    assert!(
        error(run_file_tool(&ws, "edit", &json!({"path": "a.txt", "old_string": "x", "new_string": "z"})))
            .contains("occurs 2 times")
    );
    assert!(
        !run_file_tool(
            &ws,
            "edit",
            &json!({"path": "a.txt", "old_string": "x", "new_string": "z", "replace_all": true})
        )
        .is_error()
    );
    assert_eq!(std::fs::read_to_string(ws.root.join("a.txt")).unwrap(), "z\nz\n");
}

#[test]
fn write_creates_directories_and_new_files_need_no_read() {
    let (_d, ws) = project();
    let out = run_file_tool(&ws, "write", &json!({"path": "docs/new/guide.md", "content": "hi\n"}));
    assert_eq!(
        out,
        ToolOutput::Changes(vec![FileChange::Created { path: "docs/new/guide.md".into(), after: "hi\n".into() }])
    );
    assert!(error(run_file_tool(&ws, "write", &json!({"path": "pkg", "content": ""}))).starts_with("Is a directory: "));
}

#[test]
fn multiedit_is_all_or_nothing() {
    let (_d, ws) = project();
    run_file_tool(&ws, "read", &json!({"path": "README.md"}));
    let bad = run_file_tool(
        &ws,
        "multiedit",
        &json!({"path": "README.md", "edits": [
            {"old_string": "App", "new_string": "Tool"},
            {"old_string": "absent", "new_string": "x"}
        ]}),
    );
    assert!(error(bad).starts_with("Edit 2 of 2"));
    assert_eq!(std::fs::read_to_string(ws.root.join("README.md")).unwrap(), "# App\nline two\n");
}

#[test]
fn a_patch_that_fails_on_its_third_file_changes_nothing() {
    let (_d, ws) = project();
    std::fs::write(ws.root.join("b.txt"), "keep\n").unwrap();
    for p in ["README.md", "b.txt"] {
        run_file_tool(&ws, "read", &json!({"path": p}));
    }
    let patch = "*** Begin Patch\n*** Update File: README.md\n@@\n-line two\n+line 2\n*** Add File: new.txt\n+fresh\n*** Update File: b.txt\n-not there\n+x\n*** End Patch";
    let err = error(run_file_tool(&ws, "apply_patch", &json!({"patch": patch})));
    assert!(err.contains("Hunk 1") && err.contains("Nothing was changed"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.root.join("README.md")).unwrap(), "# App\nline two\n");
    assert!(!ws.root.join("new.txt").exists());
}

#[test]
fn a_patch_adds_updates_moves_and_deletes() {
    let (_d, ws) = project();
    std::fs::write(ws.root.join("old.txt"), "bye\n").unwrap();
    for p in ["README.md", "old.txt", "pkg/web/index.ts"] {
        run_file_tool(&ws, "read", &json!({"path": p}));
    }
    let patch = "*** Begin Patch\n*** Update File: README.md\n # App\n-line two\n+line 2\n*** Add File: notes/n.md\n+note\n*** Delete File: old.txt\n*** Update File: pkg/web/index.ts\n*** Move to: pkg/web/main.ts\n-export const x = 1;\n+export const x = 2;\n*** End Patch\n";
    let ToolOutput::Changes(changes) = run_file_tool(&ws, "apply_patch", &json!({"patch": patch})) else { panic!() };
    assert_eq!(changes.len(), 5);
    assert_eq!(std::fs::read_to_string(ws.root.join("README.md")).unwrap(), "# App\nline 2\n");
    assert_eq!(std::fs::read_to_string(ws.root.join("notes/n.md")).unwrap(), "note\n");
    assert!(!ws.root.join("old.txt").exists() && !ws.root.join("pkg/web/index.ts").exists());
    assert_eq!(std::fs::read_to_string(ws.root.join("pkg/web/main.ts")).unwrap(), "export const x = 2;\n");
}

fn ignored_tree(ws: &Workspace) {
    let root = &ws.root;
    std::fs::write(root.join(".gitignore"), "secret/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("secret")).unwrap();
    std::fs::write(root.join("secret/key.txt"), "TODO hidden\n").unwrap();
    std::fs::write(root.join("debug.log"), "TODO log\n").unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    std::fs::write(root.join("node_modules/dep/i.js"), "TODO dep\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n// TODO real\n").unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
}

#[test]
fn list_draws_the_tree_without_ignored_or_empty_directories() {
    let (_d, ws) = project();
    ignored_tree(&ws);
    let listing = text(run_file_tool(&ws, "list", &json!({})));
    assert_eq!(listing, "pkg/\n  web/\nsrc/\n  main.rs\n.gitignore\nREADME.md");
    let deeper = text(run_file_tool(&ws, "list", &json!({"path": "pkg", "depth": 5})));
    assert_eq!(deeper, "web/\n  index.ts");
    assert_eq!(text(run_file_tool(&ws, "list", &json!({"path": "empty"}))), "(empty)");
    assert!(error(run_file_tool(&ws, "list", &json!({"path": "README.md"}))).starts_with("Not a directory: "));
}

#[test]
fn glob_and_grep_skip_what_is_ignored() {
    let (_d, ws) = project();
    ignored_tree(&ws);
    let found = text(run_file_tool(&ws, "glob", &json!({"pattern": "*.rs"})));
    assert_eq!(found, ws.root.join("src/main.rs").display().to_string());
    let hits = text(run_file_tool(&ws, "grep", &json!({"pattern": "TODO"})));
    assert_eq!(hits, format!("{}:2: // TODO real", ws.root.join("src/main.rs").display()));
    let ctx = text(run_file_tool(
        &ws,
        "grep",
        &json!({"pattern": "todo", "ignore_case": true, "context": 1, "include": "*.rs"}),
    ));
    assert!(ctx.contains("main.rs-1- fn main() {}"), "{ctx}");
    assert!(error(run_file_tool(&ws, "grep", &json!({"pattern": "("}))).contains("not a valid regular expression"));
    assert!(text(run_file_tool(&ws, "glob", &json!({"pattern": "*.none"}))).starts_with("No files match"));
}

#[tokio::test]
async fn bash_merges_output_reports_exit_and_starts_at_the_root() {
    let (_d, ws) = project();
    let out = run_bash(&ws, &json!({"command": "pwd; echo err >&2; exit 3"}), &CancellationToken::new(), None).await;
    let ToolOutput::Text(text) = out else { panic!("{out:?}") };
    assert_eq!(text, format!("{}\nerr\n(exit code 3)", ws.root.display()));
    let sub = run_bash(&ws, &json!({"command": "pwd", "cwd": "pkg"}), &CancellationToken::new(), None).await;
    assert_eq!(sub, ToolOutput::Text(ws.root.join("pkg").display().to_string()));
    let missing = run_bash(&ws, &json!({"command": "pwd", "cwd": "nope"}), &CancellationToken::new(), None).await;
    assert!(missing.is_error());
}

#[tokio::test]
async fn a_command_past_its_timeout_is_stopped_with_its_children() {
    let (_d, ws) = project();
    let marker = ws.root.join("child.pid");
    let command = format!("(sleep 30 & echo $! > {}); sleep 30", marker.display());
    let start = Instant::now();
    let out = run_bash(&ws, &json!({"command": command, "timeout": 1}), &CancellationToken::new(), None).await;
    assert!(start.elapsed() < Duration::from_secs(10));
    let ToolOutput::Text(text) = out else { panic!() };
    assert!(text.contains("stopped after 1 s"), "{text}");
    let pid: i32 = std::fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
    // The background child was in the group and is gone (or a zombie awaiting its reaper).
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(state.is_empty() || state.contains(") Z"), "child still running: {state}");
}

#[tokio::test]
async fn cancelling_stops_a_command() {
    let (_d, ws) = project();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stop.cancel();
    });
    let start = Instant::now();
    let out = run_bash(&ws, &json!({"command": "sleep 20"}), &cancel, None).await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out, ToolOutput::Text("(stopped: the turn was interrupted)".into()));
}

mod jobs {
    use super::*;
    use lembas_tools::{JobState, Jobs};

    #[tokio::test]
    async fn a_command_past_its_timeout_becomes_a_job() {
        let (dir, ws) = project();
        let jobs = Jobs::new(dir.path().join("jobs"));
        let out = run_bash(
            &ws,
            &json!({"command": "echo start; sleep 1.5; echo end", "timeout": 1}),
            &CancellationToken::new(),
            Some(&jobs),
        )
        .await;
        let ToolOutput::Text(text) = out else { panic!("{out:?}") };
        assert!(text.starts_with("start\n(still running after 1 s: it goes on in the background as job1"), "{text}");
        let rest = jobs.output("job1", Duration::from_secs(10)).await.unwrap();
        assert!(rest.starts_with("end\n(job1 exited with 0 after "), "{rest}");
        let ended = jobs.take_ended();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].state, JobState::Exited(0));
        assert!(jobs.take_ended().is_empty());
    }

    #[tokio::test]
    async fn a_background_job_takes_input_and_can_be_stopped() {
        let (dir, ws) = project();
        let jobs = Jobs::new(dir.path().join("jobs"));
        let out = run_bash(
            &ws,
            &json!({"command": "read name; echo hello $name; sleep 30", "background": true}),
            &CancellationToken::new(),
            Some(&jobs),
        )
        .await;
        assert!(matches!(&out, ToolOutput::Text(t) if t.starts_with("Started job1 in the background")), "{out:?}");
        assert_eq!(jobs.send("job1", "ada").await.unwrap(), "Sent 4 bytes to job1.");
        let mut seen = String::new();
        for _ in 0..50 {
            seen = jobs.output("job1", Duration::from_millis(100)).await.unwrap();
            if seen.contains("hello ada") {
                break;
            }
        }
        assert!(seen.starts_with("hello ada\n(job1 is running"), "{seen}");
        assert_eq!(jobs.stop("job1").await.unwrap(), "Stopped job1.");
        assert!(jobs.list().starts_with("job1 was stopped after"));
        assert!(!jobs.any_running());
        assert!(jobs.output("job9", Duration::ZERO).await.unwrap_err().contains("No job job9"));
    }

    #[tokio::test]
    async fn a_huge_output_stays_on_disk_and_is_read_in_parts() {
        let (dir, ws) = project();
        let jobs = Jobs::new(dir.path().join("jobs"));
        run_bash(
            &ws,
            &json!({"command": "head -c 40000000 /dev/zero | tr '\\0' 'x'", "background": true}),
            &CancellationToken::new(),
            Some(&jobs),
        )
        .await;
        let first = jobs.output("job1", Duration::from_secs(30)).await.unwrap();
        // The log keeps the newest part of it (tests/bounds.rs shows the dropping in detail).
        assert!(std::fs::metadata(dir.path().join("jobs/job1.log")).unwrap().len() <= 2 * lembas_tools::JOB_LOG_KEEP);
        assert!(first.len() < 300_000 && first.contains("more bytes: call job_output again"), "{}", first.len());
    }
}

#[test]
fn the_workspaces_private_folders_are_never_walked_and_completion_leaves_them_out() {
    let (_dir, mut ws) = project();
    std::fs::create_dir_all(ws.root.join("keys")).unwrap();
    std::fs::write(ws.root.join("keys/id_ed25519"), "SECRET-KEY\n").unwrap();
    std::fs::write(ws.root.join("notes.md"), "SECRET-KEY is not here\n").unwrap();
    let found = |ws: &Workspace| text(run_file_tool(ws, "grep", &json!({"pattern": "SECRET-KEY"})));
    assert!(found(&ws).contains("id_ed25519"), "walked while not private: {}", found(&ws));
    ws.private = lembas_tools::private_folders([ws.root.join("keys")]);
    let said = found(&ws);
    assert!(!said.contains("id_ed25519") && said.contains("notes.md"), "{said}");
    assert!(!text(run_file_tool(&ws, "glob", &json!({"pattern": "**/*"}))).contains("id_ed25519"));
    assert!(!text(run_file_tool(&ws, "list", &json!({}))).contains("keys"));
    let files = lembas_tools::project_files(&ws.root, &ws.private, 100);
    assert!(files.iter().any(|f| f == "notes.md") && !files.iter().any(|f| f.contains("id_ed25519")), "{files:?}");
}
