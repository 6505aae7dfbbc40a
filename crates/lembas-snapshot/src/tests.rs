use std::path::Path;

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path)).ok()
}

/// A project (not a git repository) and a store for it.
fn project() -> (tempfile::TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    let store = Store::open(&dir.path().join("snapshots"), &root, Limits::default());
    (dir, root, store)
}

#[test]
fn a_turn_that_rewrote_deleted_and_made_files_is_taken_back_whole() {
    let (_dir, root, store) = project();
    write(&root, "src/main.rs", "fn main() {}\n");
    write(&root, "notes.txt", "keep me\n");
    let before = store.take("s1").unwrap();
    // What a formatter, an `rm` and a generator do.
    write(&root, "src/main.rs", "fn main() { }\n");
    std::fs::remove_file(root.join("notes.txt")).unwrap();
    write(&root, "gen/deep/out.rs", "// made\n");
    let after = store.take("s1").unwrap();
    assert_ne!(before.tree, after.tree);

    let restored = store.restore("s1", &before.tree, Some(&after.tree)).unwrap();
    assert_eq!(restored.put_back, ["notes.txt", "src/main.rs"]);
    assert_eq!(restored.removed, ["gen/deep/out.rs"]);
    assert!(restored.kept.is_empty());
    assert_eq!(read(&root, "src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(read(&root, "notes.txt").as_deref(), Some("keep me\n"));
    assert!(!root.join("gen").exists(), "the folders the turn made for its file go with it");
}

#[test]
fn a_file_the_person_changed_after_the_turn_is_kept_and_named() {
    let (_dir, root, store) = project();
    write(&root, "a.txt", "one\n");
    write(&root, "b.txt", "two\n");
    let before = store.take("s").unwrap();
    write(&root, "a.txt", "one by the model\n");
    write(&root, "b.txt", "two by the model\n");
    let after = store.take("s").unwrap();
    // The person edits one of them before the undo.
    write(&root, "a.txt", "one by the person\n");
    let restored = store.restore("s", &before.tree, Some(&after.tree)).unwrap();
    assert_eq!(restored.kept, ["a.txt"]);
    assert_eq!(restored.put_back, ["b.txt"]);
    assert_eq!(read(&root, "a.txt").as_deref(), Some("one by the person\n"));
    assert_eq!(read(&root, "b.txt").as_deref(), Some("two\n"));
}

#[test]
fn a_turn_that_never_ended_is_taken_back_as_the_files_are_now() {
    let (_dir, root, store) = project();
    write(&root, "a.txt", "one\n");
    let before = store.take("s").unwrap();
    write(&root, "a.txt", "changed\n");
    let restored = store.restore("s", &before.tree, None).unwrap();
    assert_eq!(restored.put_back, ["a.txt"]);
    assert_eq!(read(&root, "a.txt").as_deref(), Some("one\n"));
}

#[test]
fn the_projects_own_git_is_never_touched_and_what_it_ignores_is_not_kept() {
    let (_dir, root, store) = project();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(&root).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    write(&root, ".gitignore", "target/\n*.log\n");
    write(&root, "lib.rs", "x\n");
    write(&root, "target/big.o", "object\n");
    git(&["add", "-A"]);
    let status_before = git(&["status", "--porcelain"]);
    let index_before = std::fs::read(root.join(".git/index")).unwrap();

    let before = store.take("s").unwrap();
    write(&root, "lib.rs", "y\n");
    write(&root, "run.log", "noise\n");
    write(&root, "target/big.o", "rebuilt\n");
    let after = store.take("s").unwrap();
    let restored = store.restore("s", &before.tree, Some(&after.tree)).unwrap();
    assert_eq!(restored.put_back, ["lib.rs"]);
    assert!(restored.removed.is_empty(), "ignored files are not the snapshot's: {restored:?}");
    assert_eq!(read(&root, "target/big.o").as_deref(), Some("rebuilt\n"));
    assert_eq!(read(&root, "run.log").as_deref(), Some("noise\n"));
    // The project's repository: same index, no refs or stash of ours.
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index_before);
    assert_eq!(git(&["status", "--porcelain"]), status_before);
    assert_eq!(git(&["for-each-ref"]), "");
}

#[test]
fn files_over_the_limits_are_left_out_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    let limits = Limits { file_bytes: 100, snapshot_bytes: 150, store_bytes: u64::MAX };
    let store = Store::open(&dir.path().join("snapshots"), &root, limits);
    write(&root, "small.txt", "small\n");
    write(&root, "big.bin", &"x".repeat(500));
    let taken = store.take("s").unwrap();
    assert_eq!(taken.skipped, ["big.bin"]);
    // A kept file that grows past the limit leaves the snapshot; one that shrinks comes back.
    write(&root, "small.txt", &"y".repeat(200));
    write(&root, "big.bin", "now small\n");
    let taken = store.take("s").unwrap();
    assert_eq!(taken.skipped, ["small.txt"]);
    let listed = store.git.run(None, &["ls-tree", "--name-only", &taken.tree], None).unwrap();
    assert_eq!(String::from_utf8_lossy(&listed), "big.bin\n");
    // Past what one snapshot may add: the rest waits.
    write(&root, "small.txt", "small\n");
    for name in ["c1", "c2", "c3", "c4"] {
        write(&root, name, &"z".repeat(60));
    }
    let taken = store.take("s").unwrap();
    assert_eq!(taken.skipped.len(), 2, "{:?}", taken.skipped);
}

#[test]
fn modes_and_links_come_back_as_they_were() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root, store) = project();
    write(&root, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("run.sh", root.join("link")).unwrap();
    let before = store.take("s").unwrap();
    std::fs::remove_file(root.join("run.sh")).unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    let after = store.take("s").unwrap();
    store.restore("s", &before.tree, Some(&after.tree)).unwrap();
    let mode = std::fs::metadata(root.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "still executable");
    assert_eq!(std::fs::read_link(root.join("link")).unwrap(), Path::new("run.sh"));
}

#[test]
fn turns_are_kept_by_ref_forgotten_with_their_session_and_pruned_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    let snapshots = dir.path().join("snapshots");
    let store = Store::open(&snapshots, &root, Limits::default());
    // Content that does not compress to nothing, so the store has a size to prune.
    let noise = |seed: u64| {
        (0..20_000u64).map(|i| format!("{:x}", (i + seed).wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect::<String>()
    };
    for (session, turn) in [("old", 1), ("old", 5), ("new", 2), ("new", 7)] {
        write(&root, "data.txt", &noise(turn as u64 * 7 + session.len() as u64));
        let before = store.take(session).unwrap();
        store.keep(session, turn, "before", &before.tree).unwrap();
        write(&root, "data.txt", &noise(turn as u64 * 13 + 1));
        store.keep(session, turn, "after", &store.take(session).unwrap().tree).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let turns: Vec<i64> = store.turns("old").unwrap().iter().map(|t| t.turn).collect();
    assert_eq!(turns, [1, 5]);
    assert!(store.turns("old").unwrap().iter().all(|t| t.after.is_some()));
    store.drop_from("new", 7).unwrap();
    assert_eq!(store.turns("new").unwrap().iter().map(|t| t.turn).collect::<Vec<_>>(), [2]);

    // Over a cap it cannot meet: everything but the session at work's latest turn goes.
    let tight = Store::open(&snapshots, &root, Limits { store_bytes: 1, ..Limits::default() });
    let size = tight.size().unwrap();
    assert!(size > 100_000, "{size}");
    let pruned = tight.prune("new").unwrap();
    assert_eq!(pruned.dropped, 2);
    assert_eq!(pruned.bytes, tight.size().unwrap());
    assert!(tight.turns("old").unwrap().is_empty());
    assert_eq!(tight.turns("new").unwrap().iter().map(|t| t.turn).collect::<Vec<_>>(), [2]);
    assert!(tight.size().unwrap() < size, "gc gave the space back");

    tight.forget("new").unwrap();
    assert!(tight.turns("new").unwrap().is_empty());
}

#[test]
fn a_path_is_a_pattern_that_matches_only_itself() {
    assert_eq!(escape_pattern("a*b?[c]!#"), "a\\*b\\?\\[c\\]\\!\\#");
    assert_eq!(escape_pattern("trailing  "), "trailing\\ \\ ");
    assert_eq!(safe("0192-ab/c"), "0192-ab_c");
}

#[test]
fn each_turn_names_the_files_it_changed_and_a_copy_has_the_same_turns() {
    let (_dir, root, store) = project();
    write(&root, "a.txt", "one\n");
    let mut trees = Vec::new();
    for (turn, (path, text)) in [("a.txt", "two\n"), ("b c.txt", "new\n"), ("a.txt", "two\n")].into_iter().enumerate() {
        let before = store.take("s").unwrap().tree;
        write(&root, path, text);
        let after = store.take("s").unwrap().tree;
        store.keep("s", turn as i64 + 1, "before", &before).unwrap();
        store.keep("s", turn as i64 + 1, "after", &after).unwrap();
        trees.push((before, after));
    }
    // A fourth that never ended.
    store.keep("s", 4, "before", &store.take("s").unwrap().tree).unwrap();
    let turns = store.turns("s").unwrap();
    let changed = store.changed_by(&turns).unwrap();
    assert_eq!(changed, vec![vec!["a.txt".to_owned()], vec!["b c.txt".to_owned()], vec![], vec![]]);

    store.copy_session("s", "fork").unwrap();
    assert_eq!(store.turns("fork").unwrap(), turns);
    store.drop_from("fork", 2).unwrap();
    assert_eq!(store.turns("fork").unwrap().len(), 1);
    assert_eq!(store.turns("s").unwrap().len(), 4, "the original keeps its own");
}

#[test]
fn what_an_undo_left_is_overwritten_when_the_person_says_so() {
    let (_dir, root, store) = project();
    write(&root, "a.txt", "one\n");
    let before = store.take("s").unwrap();
    write(&root, "a.txt", "one by the model\n");
    write(&root, "new.txt", "made by the model\n");
    let after = store.take("s").unwrap();
    write(&root, "a.txt", "one by the person\n");
    write(&root, "new.txt", "then by the person\n");
    let restored = store.restore("s", &before.tree, Some(&after.tree)).unwrap();
    assert_eq!(restored.kept, ["a.txt", "new.txt"]);
    let overwritten = store.overwrite("s", &before.tree, &restored.kept).unwrap();
    assert_eq!((overwritten.put_back, overwritten.removed), (vec!["a.txt".to_owned()], vec!["new.txt".to_owned()]));
    assert_eq!(read(&root, "a.txt").as_deref(), Some("one\n"));
    assert!(!root.join("new.txt").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn a_watched_snapshot_reads_only_what_changed_and_keeps_what_a_full_read_keeps() {
    let (_dir, root, store) = project();
    write(&root, ".gitignore", "*.log\n");
    write(&root, "src/a.rs", "a\n");
    write(&root, "src/deep/b.rs", "b\n");
    write(&root, "docs/c.md", "c\n");
    let watch = store.watch().unwrap();
    let small = Store::open(store.path().parent().unwrap(), &root, Limits { file_bytes: 32, ..Limits::default() });
    // `whole`: whether every file had to be looked at.
    let same = |step: &str, whole: bool| {
        let watched = small.take_watched("watched", Some(&watch)).unwrap();
        let full = small.take("full").unwrap();
        assert_eq!((&watched.tree, &watched.skipped), (&full.tree, &full.skipped), "after {step}");
        assert_eq!(watched.whole, whole, "after {step}");
        watched
    };
    same("the first read", true);
    same("nothing", false);
    write(&root, "src/a.rs", "a, changed\n");
    write(&root, "src/new.rs", "new\n");
    std::fs::remove_file(root.join("docs/c.md")).unwrap();
    write(&root, "debug.log", "ignored\n");
    same("a change, a new file, a removal, an ignored file", false);
    write(&root, "gen/out/x.rs", "made in a new folder\n");
    same("a new folder", true);
    write(&root, "gen/out/y.rs", "then another file in it\n");
    same("a file in the folder made since", false);
    std::fs::rename(root.join("src/deep"), root.join("moved-out-of-sight")).unwrap();
    std::fs::rename(root.join("moved-out-of-sight"), root.join("../elsewhere")).unwrap();
    same("a folder moved away", false);
    write(&root, "big.bin", &"more than thirty-two bytes, ".repeat(3));
    assert_eq!(same("a file over the limit", false).skipped, ["big.bin"]);
    write(&root, "big.bin", "small\n");
    assert!(same("the same file under it again", false).skipped.is_empty());
    write(&root, ".gitignore", "*.log\n*.md\n");
    write(&root, "docs/d.md", "now ignored\n");
    same("the ignore file changed", true);
}

#[cfg(target_os = "linux")]
#[test]
fn two_watches_of_one_project_keep_their_marks_apart() {
    let (_dir, root, store) = project();
    write(&root, "a.txt", "a\n");
    let (first, second) = (store.watch().unwrap(), store.watch().unwrap());
    store.take_watched("one", Some(&first)).unwrap();
    store.take_watched("two", Some(&second)).unwrap();
    for round in 0..20 {
        write(&root, "a.txt", &format!("round {round}\n"));
        let one = store.take_watched("one", Some(&first)).unwrap();
        write(&root, "b.txt", &format!("round {round}\n"));
        let two = store.take_watched("two", Some(&second)).unwrap();
        assert!(!one.whole && !two.whole);
        assert_eq!(two.tree, store.take("whole").unwrap().tree, "round {round}");
    }
}
