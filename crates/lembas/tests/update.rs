//! `lembas update` against a release source in the test kit, `lembas uninstall`, and
//! `install.sh`: each on a copy of the binary in a folder of its own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use lembas_testkit::{ReleaseServer, tar_gz};
use serde_json::json;
use sha2::Digest;

/// A program that says it is lembas 99.0.0 (what a newer release carries, in these tests).
const NEWER: &[u8] = b"#!/bin/sh\necho lembas 99.0.0 \"$@\"\n";

/// This platform as a manifest names it.
fn platform() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

/// A copy of the built lembas (and its launcher and reader) in `dir/bin`.
fn installed(dir: &Path, bin: &str) -> PathBuf {
    let folder = dir.join(bin);
    std::fs::create_dir_all(&folder).unwrap();
    let exe = folder.join("lembas");
    std::fs::copy(env!("CARGO_BIN_EXE_lembas"), &exe).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_lembas-sandbox"), folder.join("lembas-sandbox")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_lembas-reader"), folder.join("lembas-reader")).unwrap();
    exe
}

async fn run(exe: &Path, home: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(exe)
        .args(args)
        .env("LEMBAS_HOME", home)
        .env_remove("LEMBAS_UPDATE_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A release of 99.0.0 with `archive` as this platform's, whose manifest says `sha256`.
fn release(server: &ReleaseServer, archive: &[u8], sha256: &str) {
    let manifest = json!({
        "version": "99.0.0",
        "notes": "- Faster snapshots.",
        "archives": { platform(): { "url": "lembas-99.0.0.tar.gz", "sha256": sha256 } }
    });
    server.serve("/manifest.json", manifest.to_string());
    server.serve("/lembas-99.0.0.tar.gz", archive.to_vec());
}

fn newer_archive() -> (Vec<u8>, String) {
    let archive =
        tar_gz(&[("lembas", NEWER, 0o755), ("lembas-sandbox", b"#!/bin/sh\n", 0o755), ("README.md", b"x", 0o644)]);
    let sum = hex::encode(sha2::Sha256::digest(&archive));
    (archive, sum)
}

#[tokio::test]
async fn a_newer_release_is_checked_verified_and_put_in_place() {
    let server = ReleaseServer::start().await;
    let (archive, sum) = newer_archive();
    release(&server, &archive, &sum);
    let dir = tempfile::tempdir().unwrap();
    let exe = installed(dir.path(), "bin");
    let home = dir.path().join("home");
    let url = format!("{}/manifest.json", server.url());

    let out = run(&exe, &home, &["update", "--check", "--url", &url]).await;
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("lembas 99.0.0 is out"), "{}", said(&out));
    assert_eq!(
        std::fs::read(&exe).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_lembas")).unwrap(),
        "--check changes nothing"
    );

    // From config.toml's [update] url this time.
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(home.join("config/config.toml"), format!("[update]\nurl = \"{url}\"\n")).unwrap();
    let out = run(&exe, &home, &["update"]).await;
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("→ 99.0.0") && said(&out).contains("Faster snapshots"), "{}", said(&out));
    assert_eq!(std::fs::read(&exe).unwrap(), NEWER);
    assert_eq!(std::fs::metadata(&exe).unwrap().permissions().mode() & 0o111, 0o111);
    assert_eq!(std::fs::read(exe.with_file_name("lembas-sandbox")).unwrap(), b"#!/bin/sh\n");
    let ran = std::process::Command::new(&exe).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "lembas 99.0.0 --version\n");
    // Only the programs came out of the archive, and nothing was left half-written.
    let left: Vec<String> = std::fs::read_dir(exe.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");
}

#[tokio::test]
async fn a_release_with_no_build_for_this_platform_is_not_said_to_install() {
    let server = ReleaseServer::start().await;
    let manifest =
        json!({ "version": "99.0.0", "archives": { "riscv64-plan9": { "url": "x.tar.gz", "sha256": "00" } } });
    server.serve("/manifest.json", manifest.to_string());
    let dir = tempfile::tempdir().unwrap();
    let exe = installed(dir.path(), "bin");
    let url = format!("{}/manifest.json", server.url());
    let out = run(&exe, &dir.path().join("home"), &["update", "--check", "--url", &url]).await;
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains(&format!("has no build for {}", platform())), "{}", said(&out));
    assert!(!said(&out).contains("`lembas update` installs it"), "{}", said(&out));
}

#[tokio::test]
async fn a_bad_checksum_or_a_cut_download_leaves_the_old_lembas_working() {
    let server = ReleaseServer::start().await;
    let (archive, sum) = newer_archive();
    let dir = tempfile::tempdir().unwrap();
    let exe = installed(dir.path(), "bin");
    let home = dir.path().join("home");
    let url = format!("{}/manifest.json", server.url());
    let original = std::fs::read(&exe).unwrap();
    let still_works = |exe: &Path| {
        let out = std::process::Command::new(exe).arg("--version").output().unwrap();
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("lembas 0."));
    };

    release(&server, &archive, &"0".repeat(64));
    let out = run(&exe, &home, &["update", "--url", &url]).await;
    assert!(!out.status.success());
    assert!(said(&out).contains("SHA-256") && said(&out).contains("is unchanged"), "{}", said(&out));
    assert_eq!(std::fs::read(&exe).unwrap(), original);
    still_works(&exe);

    release(&server, &archive, &sum);
    server.serve_cut("/lembas-99.0.0.tar.gz", archive.clone(), archive.len() / 2);
    let out = run(&exe, &home, &["update", "--url", &url]).await;
    assert!(!out.status.success());
    assert!(said(&out).contains("cut off") && said(&out).contains("is unchanged"), "{}", said(&out));
    assert_eq!(std::fs::read(&exe).unwrap(), original);
    still_works(&exe);
    let left = std::fs::read_dir(exe.parent().unwrap()).unwrap().count();
    assert_eq!(left, 3, "no partial file is left beside it");

    // The same version: nothing to do.
    let manifest = json!({ "version": env!("CARGO_PKG_VERSION"), "archives": {} });
    server.serve("/manifest.json", manifest.to_string());
    let out = run(&exe, &home, &["update", "--url", &url]).await;
    assert!(out.status.success() && said(&out).contains("is the newest"), "{}", said(&out));
}

#[tokio::test]
async fn an_install_by_cargo_is_left_to_cargo() {
    let server = ReleaseServer::start().await;
    let (archive, sum) = newer_archive();
    release(&server, &archive, &sum);
    let dir = tempfile::tempdir().unwrap();
    let exe = installed(dir.path(), ".cargo/bin");
    let out =
        run(&exe, &dir.path().join("home"), &["update", "--url", &format!("{}/manifest.json", server.url())]).await;
    assert!(!out.status.success());
    assert!(said(&out).contains("installed with cargo"), "{}", said(&out));
    assert_eq!(std::fs::read(&exe).unwrap(), std::fs::read(env!("CARGO_BIN_EXE_lembas")).unwrap());
}

#[tokio::test]
async fn uninstall_purge_removes_exactly_what_it_listed() {
    let dir = tempfile::tempdir().unwrap();
    let exe = installed(dir.path(), "bin");
    let home = dir.path().join("lembas-home");
    for folder in ["config", "data/snapshots", "state/logs"] {
        std::fs::create_dir_all(home.join(folder)).unwrap();
    }
    std::fs::write(home.join("config/config.toml"), "mode = \"edit\"\n").unwrap();
    let user = dir.path().join("user");
    let completion = user.join(".local/share/bash-completion/completions/lembas");
    std::fs::create_dir_all(completion.parent().unwrap()).unwrap();
    std::fs::write(&completion, "complete -F _lembas lembas\n").unwrap();
    let theirs = user.join(".local/share/bash-completion/completions/git");
    std::fs::write(&theirs, "complete git\n").unwrap();
    let keep = dir.path().join("bin/notes.txt");
    std::fs::write(&keep, "mine\n").unwrap();

    let uninstall = |args: &[&str]| {
        std::process::Command::new(&exe)
            .args(args)
            .env("LEMBAS_HOME", &home)
            .env("HOME", &user)
            .env("XDG_CONFIG_HOME", user.join(".config"))
            .env_remove("XDG_DATA_HOME")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // Not at a terminal and without --yes: listed, nothing deleted.
    let out = uninstall(&["uninstall", "--purge"]);
    assert!(!out.status.success());
    assert!(exe.exists() && home.join("config").exists());

    let out = uninstall(&["uninstall", "--purge", "--yes"]);
    assert!(out.status.success(), "{}", said(&out));
    let listed: Vec<&str> =
        std::str::from_utf8(&out.stdout).unwrap().lines().filter_map(|l| l.strip_prefix("  ")).collect();
    let expected = [
        exe.clone(),
        exe.with_file_name("lembas-sandbox"),
        exe.with_file_name("lembas-reader"),
        completion.clone(),
        home.join("config"),
        home.join("data"),
        home.join("state"),
    ];
    assert_eq!(listed, expected.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>());
    for path in &expected {
        assert!(!path.exists(), "{} is gone", path.display());
    }
    assert!(!home.exists(), "the empty LEMBAS_HOME went too");
    assert!(theirs.exists() && keep.exists(), "nothing it did not list");
}

#[tokio::test]
async fn install_sh_installs_the_release_with_completions_and_says_to_log_in() {
    let server = ReleaseServer::start().await;
    // A release whose lembas answers `completions SHELL` as the real one would.
    let program: &[u8] =
        b"#!/bin/sh\nif [ \"$1\" = completions ]; then echo \"complete for $2\"; else echo lembas 99.0.0; fi\n";
    let archive = tar_gz(&[
        ("lembas-99.0.0/lembas", program, 0o755),
        ("lembas-99.0.0/lembas-sandbox", b"#!/bin/sh\n", 0o755),
        ("lembas-99.0.0/lembas-reader", b"#!/bin/sh\n", 0o755),
    ]);
    release(&server, &archive, &hex::encode(sha2::Sha256::digest(&archive)));
    let dir = tempfile::tempdir().unwrap();
    let (user, bin) = (dir.path().join("user"), dir.path().join("user/bin"));
    std::fs::create_dir_all(&user).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../install.sh");
    // Waited for without blocking the runtime the release server answers on.
    let install = |url: String| {
        tokio::process::Command::new("sh")
            .args([script, "--url", &url, "--bin-dir", bin.to_str().unwrap()])
            .env("HOME", &user)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
    };
    let out = install(format!("{}/manifest.json", server.url())).await.unwrap();
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).trim_end().ends_with("Now run: lembas login"), "{}", said(&out));
    assert_eq!(std::fs::read(bin.join("lembas")).unwrap(), program);
    assert!(bin.join("lembas-sandbox").exists() && bin.join("lembas-reader").exists());
    let completion = std::fs::read_to_string(user.join(".local/share/bash-completion/completions/lembas")).unwrap();
    assert_eq!(completion, "complete for bash\n");
    let profile = std::fs::read_to_string(user.join(".profile")).unwrap();
    assert!(profile.contains(&format!("export PATH=\"{}:$PATH\"", bin.display())), "{profile}");

    // A checksum that does not match: refused, nothing replaced.
    release(&server, &archive, &"0".repeat(64));
    std::fs::write(bin.join("lembas"), "old\n").unwrap();
    let out = install(format!("{}/manifest.json", server.url())).await.unwrap();
    assert!(!out.status.success());
    assert!(said(&out).contains("SHA-256"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(bin.join("lembas")).unwrap(), "old\n");
}
