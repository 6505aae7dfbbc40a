//! What a turn's snapshots cost in a large project: a project of 100,000 small files (a
//! thousand folders of a hundred), its first snapshot (every file read), then a turn that
//! changes 10 files — its before and after snapshots — and the store's size.
//!
//! `cargo bench -p lembas-snapshot --bench snapshot`

use std::time::Instant;

use lembas_snapshot::{Limits, Store};

const FOLDERS: usize = 1_000;
const PER_FOLDER: usize = 100;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    for folder in 0..FOLDERS {
        let path = project.join(format!("src/m{folder:04}"));
        std::fs::create_dir_all(&path).unwrap();
        for file in 0..PER_FOLDER {
            std::fs::write(path.join(format!("f{file:03}.rs")), format!("// {folder} {file}\npub fn f() {{}}\n"))
                .unwrap();
        }
    }
    let store = Store::open(&dir.path().join("snapshots"), &project, Limits::default());

    let started = Instant::now();
    let first = store.take("bench").unwrap();
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;

    let mut turns = Vec::new();
    for turn in 0..5 {
        let started = Instant::now();
        let before = store.take("bench").unwrap();
        let before_ms = started.elapsed().as_secs_f64() * 1000.0;
        for file in 0..10 {
            let path = project.join(format!("src/m{:04}/f{file:03}.rs", turn * 7));
            std::fs::write(path, format!("// changed in turn {turn}\n")).unwrap();
        }
        let started = Instant::now();
        let after = store.take("bench").unwrap();
        let after_ms = started.elapsed().as_secs_f64() * 1000.0;
        store.keep("bench", turn, "before", &before.tree).unwrap();
        store.keep("bench", turn, "after", &after.tree).unwrap();
        turns.push(before_ms + after_ms);
    }
    turns.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let files = FOLDERS * PER_FOLDER;
    println!(
        "snapshot ({files} files): first {first_ms:.0} ms ({} skipped); a turn changing 10 files, before + after: {:.0} ms (median of 5); store {:.1} MB",
        first.skipped.len(),
        turns[turns.len() / 2],
        store.size().unwrap() as f64 / 1e6
    );
}
