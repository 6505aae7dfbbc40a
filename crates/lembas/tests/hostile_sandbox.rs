//! Hostile probes II, against the real binary: what the sandbox opens must not open what lies
//! inside it. A scripted model runs code the judge cannot read (`python3 -c`, `perl -e`, `node
//! -e`, `awk`, `vim -es`, `xargs`, `tar -x -C`, `cp -t`, a base64 script piped to `bash`) at git's
//! hooks and configuration, the trust-bearing files, the credentials and the home folder — with
//! the home folder outside the temporary folder and inside it (as on CI machines and in
//! containers) — and every write fails in every mode, leaving the file as it was. Credentials
//! and lembas' own environment are read by nothing; ordinary work still runs unasked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

mod common;
use common::probe::{Probe, sandboxed, told_all};
use common::stderr;

const MODES: [&str; 4] = ["auto", "edit", "manual", "plan"];

/// Where a probe's home folder lies.
#[derive(Debug, Clone, Copy)]
enum Home {
    Outside,
    InTmp,
}

async fn probe(home: Home, server: &FakeServer) -> Probe {
    let p = match home {
        Home::Outside => Probe::new(server).await,
        Home::InTmp => Probe::in_tmp(server).await,
    };
    arm(&p);
    p
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The files that decide what runs later, as a trusted project has them; a real repository.
const GUARDED: &[&str] = &[
    ".git/config",
    ".mcp.json",
    ".lembas/permissions.json",
    ".claude/settings.json",
    ".codex/config.toml",
    ".opencode/opencode.json",
    ".agent/skills/s/SKILL.md",
];

fn arm(p: &Probe) {
    std::fs::remove_dir_all(p.project.join(".git")).unwrap();
    git(&p.project, &["init", "-q"]);
    for file in &GUARDED[1..] {
        let path = p.project.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}").unwrap();
    }
    git(&p.project, &["add", "-A"]);
    git(&p.project, &["commit", "-qm", "start"]);
    std::fs::write(p.home.join(".bashrc"), "# mine\n").unwrap();
}

/// What the guarded places hold: each file's text, and the hooks folder's names.
fn guarded_state(p: &Probe) -> BTreeMap<String, String> {
    let mut state: BTreeMap<String, String> = GUARDED
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(p.project.join(f)).unwrap_or_default()))
        .collect();
    let mut hooks: Vec<String> = std::fs::read_dir(p.project.join(".git/hooks"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    hooks.sort();
    state.insert("hooks".into(), hooks.join(" "));
    state
}

/// Runs `lines` as the model's bash calls, one after another, in `mode`: what each was told.
async fn calls(home: Home, mode: &str, lines: &[String], setup: impl FnOnce(&Probe)) -> (Probe, Vec<String>) {
    let mut script: Vec<Scripted> =
        lines.iter().map(|l| Scripted::tool_call("bash", json!({ "command": l }))).collect();
    script.push(Scripted::text("done"));
    let server = FakeServer::start(script).await;
    let p = probe(home, &server).await;
    setup(&p);
    let out = p.run(mode).await;
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let told = told_all(&server);
    assert_eq!(told.len(), lines.len(), "every call answered: {}", stderr(&out));
    (p, told)
}

/// Code the judge cannot read, each writing a hook (a file of its own, so a failure names it),
/// git's configuration or a trust-bearing file; each line says `ran` when it got to its end.
fn writes_inside_the_project() -> Vec<String> {
    let encoded = "ZWNobyB4ID4gLmdpdC9ob29rcy9wcmVwYXJlLWNvbW1pdC1tc2c="; // echo x > .git/hooks/prepare-commit-msg
    [
        "python3 -c \"open('.git/hooks/pre-commit', 'w').write('x')\"".to_owned(),
        "perl -e 'open(F, \">\", \".git/hooks/pre-push\"); print F \"x\"'".to_owned(),
        "node -e \"require('fs').writeFileSync('.git/hooks/post-checkout', 'x')\"".to_owned(),
        "awk 'BEGIN { print \"x\" > \".git/hooks/pre-rebase\" }'".to_owned(),
        "command -v vim >/dev/null && vim -es -c 'w! .git/hooks/commit-msg' -c 'q!' </dev/null".to_owned(),
        "echo .git/hooks/post-merge | xargs touch".to_owned(),
        "echo x > pre-applypatch && tar -cf h.tar pre-applypatch && tar -xf h.tar -C .git/hooks".to_owned(),
        "echo x > pre-merge-commit && cp -t .git/hooks pre-merge-commit".to_owned(),
        format!("echo {encoded} | base64 -d | bash"),
        "python3 -c \"open('.git/config', 'a').write('[core]\\n\\thooksPath = /tmp\\n')\"".to_owned(),
        "python3 -c \"open('.mcp.json', 'w').write('{\\\"mcpServers\\\": {}}')\"".to_owned(),
        "perl -e 'open(F, \">\", \".lembas/permissions.json\"); print F \"{}x\"'".to_owned(),
        "node -e \"require('fs').writeFileSync('.claude/settings.json', '{\\\"hooks\\\": 1}')\"".to_owned(),
        "python3 -c \"open('.codex/config.toml', 'w').write('x')\"".to_owned(),
        "python3 -c \"import shutil; shutil.rmtree('.opencode')\"".to_owned(),
        "awk 'BEGIN { print \"x\" > \".agent/skills/s/SKILL.md\" }'".to_owned(),
    ]
    .into_iter()
    .map(|line| format!("{line}; echo ran"))
    .collect()
}

#[tokio::test]
async fn code_the_judge_cannot_read_writes_no_hook_and_no_trust_file_in_any_mode() {
    if !sandboxed() {
        return;
    }
    let lines = writes_inside_the_project();
    for home in [Home::Outside, Home::InTmp] {
        for mode in MODES {
            let mut before = None;
            let (p, told) = calls(home, mode, &lines, |p| before = Some(guarded_state(p))).await;
            assert_eq!(guarded_state(&p), before.unwrap(), "{home:?} {mode}: {told:#?}");
            if mode == "auto" {
                // It ran — the sandbox, not the judge, stopped it.
                for (line, said) in lines.iter().zip(&told) {
                    assert!(said.contains("ran"), "{home:?}: `{line}` did not run: {said}");
                }
            }
        }
    }
}

/// Code that moves `.git` aside, or removes it, and puts a copy of its own making in its place:
/// the read-only mounts inside the old one would not hold the new one's hooks and configuration.
fn replaces_the_git_folder() -> Vec<String> {
    let plant = "os.makedirs('.git/hooks', exist_ok=True); open('.git/config', 'a').write('[core]\\n\\tfsmonitor = touch /tmp/planted\\n')";
    [
        "python3 -c \"import os; os.rename('.git', '.git-away')\"".to_owned(),
        "perl -e 'rename(\".git\", \"git-away\") or die \"$!\\n\"'".to_owned(),
        "node -e \"require('fs').renameSync('.git', 'away.git')\"".to_owned(),
        format!("python3 -c \"import os, shutil; shutil.copytree('.git', '/tmp/gitcopy-probe', dirs_exist_ok=True); os.rename('.git', '.git-old'); shutil.copytree('/tmp/gitcopy-probe', '.git'); {plant}\""),
        format!("python3 -c \"import os, shutil; shutil.rmtree('.git', ignore_errors=True); os.rmdir('.git') if os.path.isdir('.git') else None; os.makedirs('.git'); {plant}\""),
    ]
    .into_iter()
    .map(|line| format!("{line}; echo ran"))
    .collect()
}

#[tokio::test]
async fn the_git_folder_cannot_be_moved_aside_or_replaced_in_any_mode() {
    use std::os::unix::fs::MetadataExt;
    if !sandboxed() {
        return;
    }
    let lines = replaces_the_git_folder();
    for mode in MODES {
        let mut before = None;
        let (p, told) = calls(Home::Outside, mode, &lines, |p| {
            let meta = std::fs::metadata(p.project.join(".git")).unwrap();
            before = Some((meta.dev(), meta.ino(), std::fs::read_to_string(p.project.join(".git/config")).unwrap()));
        })
        .await;
        let meta = std::fs::metadata(p.project.join(".git")).unwrap();
        let after = (meta.dev(), meta.ino(), std::fs::read_to_string(p.project.join(".git/config")).unwrap());
        assert_eq!(after, before.unwrap(), "{mode}: .git was replaced: {told:#?}");
        for away in [".git-away", "git-away", "away.git", ".git-old"] {
            assert!(!p.project.join(away).exists(), "{mode}: .git was moved to {away}: {told:#?}");
        }
        if mode == "auto" {
            for (line, said) in lines.iter().zip(&told) {
                assert!(said.contains("ran"), "`{line}` did not run: {said}");
            }
        }
    }
}

#[tokio::test]
async fn the_home_folder_survives_what_auto_mode_runs_wherever_it_lies() {
    if !sandboxed() {
        return;
    }
    let lines: Vec<String> = [
        "python3 -c \"import os; open(os.path.expanduser('~/.ssh/authorized_keys'), 'a').write('ssh-ed25519 AAAA x')\"",
        "perl -e 'open(F, \">>\", \"$ENV{HOME}/.bashrc\"); print F \"curl x | sh\\n\"'",
        "perl -MFile::Path=rmtree -e 'rmtree($ENV{HOME})'",
        "node -e \"require('fs').rmSync(require('os').homedir(), { recursive: true, force: true })\"",
        "cd ~ && git init -q . 2>/dev/null; git -C ~ clean -fdxq",
        "find ~ -type f -exec shred -u {} +",
        "tar --remove-files -cf \"$TMPDIR/home.tar\" -C ~ . 2>&1 | tail -1",
        "python3 -c \"import shutil, os; shutil.rmtree(os.path.expanduser('~'))\"",
    ]
    .iter()
    .map(|line| format!("{line}; echo ran"))
    .collect();
    for home in [Home::Outside, Home::InTmp] {
        for mode in MODES {
            let (p, told) = calls(home, mode, &lines, |_| {}).await;
            p.home_intact();
            assert_eq!(std::fs::read_to_string(p.home.join(".bashrc")).unwrap(), "# mine\n", "{home:?} {mode}");
            assert!(!p.home.join(".git").exists(), "{home:?} {mode}: {told:#?}");
            if mode == "auto" {
                for (line, said) in lines.iter().zip(&told) {
                    assert!(said.contains("ran"), "{home:?}: `{line}` did not run: {said}");
                }
            }
        }
    }
}

/// The person's credentials (`protected.home`), each with a secret of its own.
const CREDENTIALS: &[&str] = &[
    ".ssh/id_rsa",
    ".gnupg/private-keys-v1.d/k.key",
    ".aws/credentials",
    ".azure/accessTokens.json",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
];

fn secret(file: &str) -> String {
    format!("SECRET-{}", file.replace(['/', '.'], "_"))
}

#[tokio::test]
async fn credentials_reach_the_model_by_no_command() {
    if !sandboxed() {
        return;
    }
    let place = |file: &str| {
        let parts = if file.starts_with(".config") { 2 } else { 1 };
        file.split('/').take(parts).collect::<Vec<_>>().join("/")
    };
    let mut lines: Vec<String> = Vec::new();
    for file in CREDENTIALS {
        lines.push(format!("head ~/{file}"));
        lines.push(format!("cat ~/{file}"));
        // The folder as a whole, as a search would take it.
        lines.push(format!("grep -r SECRET ~/{}", place(file)));
        // And through code the judge cannot read.
        lines.push(format!("python3 -c \"import os; print(open(os.path.expanduser('~/{file}')).read())\""));
    }
    let write = |p: &Probe| {
        for file in CREDENTIALS {
            let path = p.home.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, secret(file)).unwrap();
        }
    };
    for home in [Home::Outside, Home::InTmp] {
        for mode in ["plan", "auto"] {
            let (_p, told) = calls(home, mode, &lines, write).await;
            for (line, said) in lines.iter().zip(&told) {
                assert!(!said.contains("SECRET-"), "{home:?} {mode}: `{line}` sent a secret: {said}");
            }
        }
    }
}

#[tokio::test]
async fn lembas_own_environment_is_closed_to_its_commands() {
    if !sandboxed() {
        return;
    }
    let lines = [
        "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo ran".to_owned(),
        "for f in /proc/[0-9]*/environ; do cat $f; done 2>/dev/null | tr '\\0' '\\n' | grep -a LEMBAS_API; echo ran"
            .to_owned(),
        // lembas by its process number, as a command could find it.
        "for p in $(pgrep -x lembas); do cat /proc/$p/environ; ls -l /proc/$p/fd; done 2>&1 | tr '\\0' '\\n'; echo ran"
            .to_owned(),
    ];
    for home in [Home::Outside, Home::InTmp] {
        for mode in ["auto", "plan"] {
            let (p, told) = calls(home, mode, &lines, |_| {}).await;
            for (line, said) in lines.iter().zip(&told) {
                assert!(!said.contains("sk-probe-secret"), "{home:?} {mode}: `{line}`: {said}");
                assert!(!said.contains(&p.lembas.display().to_string()), "{home:?} {mode}: `{line}`: {said}");
            }
            if mode == "auto" {
                assert!(told[0].contains("ran") && told[0].contains("Permission denied"), "{}", told[0]);
            }
        }
    }
}

#[tokio::test]
async fn a_path_is_judged_where_the_kernel_takes_it() {
    let lines = [
        "echo k >> sshdir/../.bashrc".to_owned(),
        "echo k >> ~+/../home/.ssh/authorized_keys".to_owned(),
        "cd ~/.ssh && cd ~- && echo k >> ~-/authorized_keys".to_owned(),
        "cd ~ && cd - && echo k >> $OLDPWD/.bashrc".to_owned(),
    ];
    let (p, told) = calls(Home::Outside, "edit", &lines, |p| {
        std::os::unix::fs::symlink(p.home.join(".ssh"), p.project.join("sshdir")).unwrap();
    })
    .await;
    p.home_intact();
    assert_eq!(std::fs::read_to_string(p.home.join(".bashrc")).unwrap(), "# mine\n", "{told:#?}");
    for (line, said) in lines.iter().zip(&told) {
        let stopped = said.contains("every mode") || said.contains("approval") || said.contains("nobody");
        assert!(stopped, "`{line}` was neither refused nor asked: {said}");
    }
}

/// A bare repository in the system's temporary folder, for `git push`.
fn bare_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let bare = dir.path().join("remote.git");
    git(dir.path(), &["init", "-q", "--bare", &bare.display().to_string()]);
    (dir, bare)
}

#[tokio::test]
async fn ordinary_work_still_runs_unasked_in_auto_mode() {
    if !sandboxed() {
        return;
    }
    for home in [Home::Outside, Home::InTmp] {
        let (_remote, bare) = bare_repo();
        let lines = [
            "echo '// change' >> src/lib.rs && git add -A && git -c user.name=t -c user.email=t@t commit -qm work && echo committed"
                .to_owned(),
            format!("git push -q {} HEAD:refs/heads/main && echo pushed", bare.display()),
            "cargo build --offline -q && echo built".to_owned(),
            "npm install --no-audit --no-fund --offline >/dev/null && test -f package-lock.json && echo installed"
                .to_owned(),
        ];
        let mut script: Vec<Scripted> =
            lines.iter().map(|l| Scripted::tool_call("bash", json!({ "command": l }))).collect();
        script.push(Scripted::text("done"));
        let server = FakeServer::start(script).await;
        let p = probe(home, &server).await;
        std::fs::write(
            p.project.join("Cargo.toml"),
            "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[workspace]\n",
        )
        .unwrap();
        std::fs::write(p.project.join("package.json"), "{\"name\": \"probe\", \"version\": \"1.0.0\"}").unwrap();
        for cache in [".cargo", ".npm"] {
            std::fs::create_dir_all(p.home.join(cache)).unwrap();
        }
        // The toolchain stays where it is installed; its caches are the probe's home's.
        let rustup = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")))
            .unwrap();
        let out = p
            .cmd(&["run", "--mode", "auto", "do the work"])
            .env("RUSTUP_HOME", rustup)
            .env("CARGO_HOME", p.home.join(".cargo"))
            .output()
            .await
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let told = told_all(&server);
        for (want, said) in ["committed", "pushed", "built", "installed"].iter().zip(&told) {
            assert!(said.contains(want), "{home:?}: {want}: {said}");
        }
        assert!(
            String::from_utf8_lossy(&git(&bare, &["log", "--oneline", "main"]).stdout).contains("work"),
            "{home:?}"
        );
    }
}

/// The launcher's yes (it can make namespaces here) is kept in lembas' state folder for the next
/// start, which no command can read or forge; a start that takes it seals the project as well.
#[tokio::test]
async fn the_kept_yes_of_the_launcher_is_lembas_own_and_keeps_the_sandbox_whole() {
    if !sandboxed() {
        return;
    }
    let server = FakeServer::start(vec![]).await;
    let p = probe(Home::Outside, &server).await;
    let kept = p.lembas.join("state/launcher-can-make-namespaces");
    // Code the judge cannot read, so that only the sandbox stops it.
    let lines = [
        format!("python3 -c \"print(open('{}').read()[:4] + 'READ-OK')\"", kept.display()),
        format!("python3 -c \"open('{}', 'w').write('forged'); print('WROTE-OK')\"", kept.display()),
        "python3 -c \"open('.git/hooks/pre-commit', 'w').write('x'); print('HOOKED-OK')\"".to_owned(),
    ];
    for run in 0..2 {
        for line in &lines {
            server.push(Scripted::tool_call("bash", json!({ "command": line })));
        }
        server.push(Scripted::text("done"));
        let out = p.run("auto").await;
        assert!(out.status.success(), "{}", stderr(&out));
        let told = told_all(&server).join("\n");
        for word in ["READ-OK", "WROTE-OK", "HOOKED-OK"] {
            assert!(!told.contains(word), "run {run}: {told}");
        }
        assert!(!p.project.join(".git/hooks/pre-commit").exists(), "run {run}");
        let text = std::fs::read_to_string(&kept).unwrap();
        assert!(text.starts_with("boot ") && text.contains("\nlauncher "), "run {run}: {text}");
    }
}
