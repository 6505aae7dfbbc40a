//! What a turn's snapshots cost in a large project: a project of 100,000 small files (a
//! thousand folders of a hundred), its first snapshot (every file read), then a turn that
//! changes 10 files — its before and after snapshots — read whole and read through a watch
//! (only what changed), and the store's size. Each turn's after-snapshot includes keeping the
//! store under its cap, as the engine does (the first one packs the first snapshot's loose
//! objects, in the background).
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

    let watch_started = Instant::now();
    let watch = store.watch().unwrap();
    store.take_watched("watched", Some(&watch)).unwrap();
    let watch_ms = watch_started.elapsed().as_secs_f64() * 1000.0;
    let turns = (0..5).map(|turn| one_turn(&store, &project, turn, None)).collect();
    // The first prune started the packing of the first snapshot's objects in the background:
    // the turns after it are what every later turn costs.
    let tidying = std::fs::File::options().write(true).open(store.path().join("lembas-tidy.lock")).unwrap();
    let waited = Instant::now();
    tidying.lock().unwrap();
    drop(tidying);
    let packed_s = waited.elapsed().as_secs_f64();
    let watched = (5..10).map(|turn| one_turn(&store, &project, turn, Some(&watch))).collect();
    let files = FOLDERS * PER_FOLDER;
    println!(
        "snapshot ({files} files): first {first_ms:.0} ms ({} skipped); a turn changing 10 files, before + after: {:.0} ms read whole, {:.1} ms through a watch (median of 5; the watch's start and first read {watch_ms:.0} ms; the first snapshot packed {packed_s:.0} s later, in the background); store {:.1} MB",
        first.skipped.len(),
        median(turns),
        median(watched),
        store.size().unwrap() as f64 / 1e6
    );
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

/// One turn that changes 10 files: its before and after snapshots, in ms.
fn one_turn(store: &Store, project: &std::path::Path, turn: usize, watch: Option<&lembas_snapshot::Watch>) -> f64 {
    let session = if watch.is_some() { "watched" } else { "bench" };
    let started = Instant::now();
    let before = store.take_watched(session, watch).unwrap();
    let before_ms = started.elapsed().as_secs_f64() * 1000.0;
    for file in 0..10 {
        let path = project.join(format!("src/m{:04}/f{file:03}.rs", turn * 7));
        std::fs::write(path, format!("// changed in turn {turn}\n")).unwrap();
    }
    let started = Instant::now();
    let after = store.take_watched(session, watch).unwrap();
    // As the engine does after each turn: the store kept within its cap.
    store.prune(session).unwrap();
    let after_ms = started.elapsed().as_secs_f64() * 1000.0;
    store.keep(session, turn as i64, "before", &before.tree).unwrap();
    store.keep(session, turn as i64, "after", &after.tree).unwrap();
    before_ms + after_ms
}
