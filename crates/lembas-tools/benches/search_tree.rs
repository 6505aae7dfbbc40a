//! `glob` and `grep` on a generated tree of 100,000 files, against ripgrep on the same tree.
//!
//! `scripts/bench-search.sh` installs ripgrep when it is missing and runs this; the ratio is
//! lembas' time over ripgrep's (best of three each).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use lembas_tools::{ToolOutput, Workspace, run_file_tool};
use serde_json::json;

const DIRS: usize = 500;
const FILES_PER_DIR: usize = 200;

fn make_tree(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("pkg{:03}/src/mod{}", d, d % 7));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let ext = if f.is_multiple_of(4) { "rs" } else { "txt" };
            let needle = if (d * FILES_PER_DIR + f).is_multiple_of(997) { "\nlet needle_value = 42;" } else { "" };
            std::fs::write(dir.join(format!("file{f}.{ext}")), format!("// file {d}/{f}\nfn body() {{}}{needle}\n"))
                .unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        best = best.min(start.elapsed().as_secs_f64());
        last = Some(out);
    }
    (best * 1000.0, last.unwrap())
}

fn lines(out: &ToolOutput) -> usize {
    match out {
        ToolOutput::Text(t) => t.lines().count(),
        other => panic!("{other:?}"),
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    make_tree(&root);
    let (ws, _) = Workspace::new(&root, &root);
    let rg = |args: &[&str]| {
        let out = Command::new("rg")
            .args(args)
            .current_dir(&root)
            .output()
            .expect("ripgrep is installed (scripts/bench-search.sh)");
        String::from_utf8_lossy(&out.stdout).lines().count()
    };

    let (glob_ms, glob_out) = best_of(3, || run_file_tool(&ws, "glob", &json!({"pattern": "**/*.rs"})));
    let (rg_files_ms, rg_files) = best_of(3, || rg(&["--files", "-g", "*.rs"]));
    // The same list in glob's order, newest first: ripgrep reads each file's time too, and sorts.
    let (rg_newest_ms, _) = best_of(3, || rg(&["--files", "-g", "*.rs", "--sortr", "modified"]));
    let (grep_ms, grep_out) = best_of(3, || run_file_tool(&ws, "grep", &json!({"pattern": "needle_value"})));
    let (rg_grep_ms, rg_hits) = best_of(3, || rg(&["-n", "needle_value"]));
    println!(
        "search_tree ({} files): glob {glob_ms:.0} ms vs rg --files {rg_files_ms:.0} ms (x{:.1}; {} of {rg_files} files listed, capped at 200), vs rg --files --sortr modified (glob's order, newest first) {rg_newest_ms:.0} ms (x{:.2}); grep {grep_ms:.0} ms vs rg {rg_grep_ms:.0} ms (x{:.1}; {} vs {rg_hits} matches)",
        DIRS * FILES_PER_DIR,
        glob_ms / rg_files_ms,
        lines(&glob_out).min(200),
        glob_ms / rg_newest_ms,
        grep_ms / rg_grep_ms,
        lines(&grep_out),
    );
}
