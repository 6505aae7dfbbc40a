//! The runner as people use it: the spec's cases pass, and what goes wrong is reported.

use std::path::{Path, PathBuf};
use std::process::Command;

fn spec_cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/conformance")
}

fn run_bin(args: &[&Path]) -> (String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_lembas-conformance")).args(args).output().expect("run the runner");
    (String::from_utf8(out.stdout).unwrap(), out.status.success())
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_case_in_spec_conformance_passes() {
    let reports = lembas_conformance::run_paths(&[spec_cases()]).unwrap();
    assert!(reports.len() >= 10, "the areas this issue covers are all there");
    for report in &reports {
        assert!(!report.is_bad(), "{report}");
    }
    let (stdout, ok) = run_bin(&[&spec_cases()]);
    assert!(ok, "{stdout}");
    let total: usize = reports.iter().map(|r| r.passed()).sum();
    assert_eq!(stdout.lines().last().unwrap(), format!("{total} passed, 0 failed"));
}

#[test]
fn lembas_own_cases_pass() {
    let own = spec_cases().join("lembas");
    let reports = lembas_conformance::run_paths(&[own]).unwrap();
    assert!(reports.len() >= 3);
    for report in &reports {
        assert!(!report.is_bad(), "{report}");
    }
}

#[test]
fn an_area_without_a_runner_is_reported_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "teleport.json", r#"{"about": "x", "cases": [{"expect": 1}]}"#);
    let (stdout, ok) = run_bin(&[&file]);
    assert!(!ok);
    assert_eq!(stdout.lines().next().unwrap(), "teleport: no runner");
    assert_eq!(stdout.lines().last().unwrap(), "0 passed, 0 failed");
}

#[test]
fn a_failing_case_shows_its_about_what_was_expected_and_what_came() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "paths.json",
        r#"{"cases": [
            {"about": "right", "op": "resolve", "root": "/r", "started": "/r", "path": "a", "expect": "/r/a"},
            {"about": "deliberately wrong", "op": "resolve", "root": "/r", "started": "/r", "path": "a", "expect": "/elsewhere/a"},
            {"op": "teleport", "root": "/r", "expect": null}
        ]}"#,
    );
    let (stdout, ok) = run_bin(&[dir.path()]);
    assert!(!ok);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "paths: 1 passed, 2 failed");
    assert_eq!(lines[1], "  deliberately wrong");
    assert_eq!(lines[2], "    expected: \"/elsewhere/a\"");
    assert_eq!(lines[3], "    got:      \"/r/a\"");
    assert_eq!(lines[4], "  case 3", "a case without about is named by its place");
    assert!(lines[6].contains("no rule for op \"teleport\""));
    assert_eq!(*lines.last().unwrap(), "1 passed, 2 failed");
}

#[test]
fn cases_never_seen_run_by_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "context.json",
        r##"{"cases": [{"steps": [
            {"op": "read", "id": "#0001", "path": "src/x.rs", "content": "a\nb\nc\n"},
            {"op": "read", "id": "#0002", "path": "./src/x.rs", "content": "a\nb\nc\n", "offset": 2},
            {"op": "output", "id": "#0003", "tool": "grep", "args": {"pattern": "a", "path": "src"}, "text": "src/x.rs:1: a"},
            {"op": "output", "id": "#0004", "tool": "grep", "args": {"path": "src", "pattern": "a"}, "text": "src/x.rs:1: a"},
            {"op": "recall", "id": "#0005", "target": "0003"}
        ], "expect": [
            "[#0001 src/x.rs lines 1-3 of 3 sha 880553fc]\n1: a\n2: b\n3: c",
            "[#0002 ./src/x.rs lines 2-3 of 3 sha 880553fc] Unchanged since #0001, which already shows lines 1-3.",
            "[#0003]\nsrc/x.rs:1: a",
            "[#0004] Same result as #0003.",
            "[#0005 recall #0003 lines 1-1 of 1]\nsrc/x.rs:1: a"
        ]}]}"##,
    );
    let report = lembas_conformance::run_file(&file);
    assert!(!report.is_bad(), "{report}");
}

#[test]
fn a_file_that_is_not_a_case_file_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "paths.json", "not json");
    let (stdout, ok) = run_bin(&[&file]);
    assert!(!ok);
    assert!(stdout.starts_with("paths: cannot read"), "{stdout}");
}
