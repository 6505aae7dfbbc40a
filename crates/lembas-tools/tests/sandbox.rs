//! The sandbox for real: commands that try to write where their mode does not allow are stopped
//! by the kernel, not by lembas' judgement. The folders stand outside the system's temporary
//! folder (which most modes may write), under the build's own scratch folder.

use std::path::{Path, PathBuf};

use lembas_tools::{Sandbox, SandboxHidden, SandboxPlaces, SandboxReach, ToolOutput, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Places {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    plans: PathBuf,
    outside: PathBuf,
    ws: Workspace,
    /// The read grants kept between commands, as a session keeps them.
    grants: lembas_tools::sandbox::ReadGrants,
}

fn places() -> Places {
    let dir =
        tempfile::tempdir_in(lembas_testkit::outside_temp(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (root, home, plans, outside) = (base.join("app"), base.join("home"), base.join("plans"), base.join("outside"));
    for d in [&root, &home.join(".cargo"), &home.join(".ssh"), &plans, &outside, &home.join(".config/lembas/skills")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let (ws, _) = Workspace::new(&root, &root);
    Places { _dir: dir, root, home, plans, outside, ws, grants: Default::default() }
}

impl Places {
    fn sandbox(&self, reach: SandboxReach) -> Sandbox {
        let mut sandbox = self.places().sandbox(reach);
        self.grants.fill(&mut sandbox);
        sandbox
    }

    fn places(&self) -> SandboxPlaces {
        SandboxPlaces {
            root: self.root.clone(),
            home: Some(self.home.clone()),
            plans_dir: Some(self.plans.clone()),
            private_tmp: self.outside.join("plan-tmp"),
            extra: Vec::new(),
            // lembas' own configuration folder stands in the home folder, as it does for people.
            network: None,
            hidden: SandboxHidden {
                folders: vec![self.home.join(".config/lembas")],
                open: vec![self.home.join(".config/lembas/skills")],
            },
            credentials: [".ssh", ".aws", ".netrc"].iter().map(|c| self.home.join(c)).collect(),
            credentials_readable: false,
            launcher: lembas_testkit::sandbox_launcher(),
        }
    }

    async fn run(&self, command: &str, reach: SandboxReach) -> (String, bool) {
        self.run_in(command, &self.sandbox(reach)).await
    }

    /// Runs `command` in the project inside `sandbox`: what it said, and whether it looks blocked.
    async fn run_in(&self, command: &str, sandbox: &Sandbox) -> (String, bool) {
        let out = run_bash_in(&self.ws, &json!({ "command": command }), &CancellationToken::new(), None, sandbox).await;
        let text = match out.output {
            ToolOutput::Text(t) | ToolOutput::Error(t) => t,
            other => format!("{other:?}"),
        };
        (text, out.maybe_blocked)
    }
}

fn active() -> bool {
    match lembas_tools::sandbox::support() {
        Ok(()) => true,
        // CI's kernel has Landlock, and there the sandbox must be real; elsewhere a machine
        // without it says so rather than failing.
        Err(why) if std::env::var_os("CI").is_some() => panic!("CI must sandbox commands: {why}"),
        Err(why) => {
            eprintln!("no sandbox here: {why}");
            false
        }
    }
}

fn exists(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}

#[tokio::test]
async fn a_command_writes_only_where_its_mode_allows() {
    if !active() {
        return;
    }
    let p = places();
    // Edit and manual: the project, not elsewhere.
    let target = p.outside.join("x");
    let (text, blocked) =
        p.run(&format!("echo in > made.txt && echo out > {}", target.display()), SandboxReach::Project).await;
    assert!(p.root.join("made.txt").exists(), "{text}");
    assert!(!exists(&target), "{text}");
    assert!(text.contains("Permission denied") && blocked, "{text}");
    // Nor the caches, which only auto mode (or an approved command) gets.
    p.run(&format!("touch {}/.cargo/lock", p.home.display()), SandboxReach::Project).await;
    assert!(!exists(&p.home.join(".cargo/lock")));
    p.run(&format!("touch {}/.cargo/lock", p.home.display()), SandboxReach::ProjectAndCaches).await;
    assert!(exists(&p.home.join(".cargo/lock")));
    // Protected places are in no grant, auto's included.
    let (text, _) = p
        .run(
            &format!("echo k >> {}/.ssh/authorized_keys; rm -rf {}", p.home.display(), p.outside.display()),
            SandboxReach::ProjectAndCaches,
        )
        .await;
    assert!(!exists(&p.home.join(".ssh/authorized_keys")), "{text}");
    assert!(exists(&p.outside), "{text}");
    // Reading is not limited (but for lembas' own files); the sinks still work.
    let (text, _) = p.run("cat /etc/hostname >/dev/null && echo read", SandboxReach::Project).await;
    assert!(text.contains("read"), "{text}");
}

#[tokio::test]
async fn plan_mode_commands_write_nothing_but_plans_and_their_own_temp() {
    if !active() {
        return;
    }
    let p = places();
    std::fs::write(p.root.join("keep.txt"), "kept").unwrap();
    let (text, _) =
        p.run("echo x > f; find . -delete; echo y > \"$TMPDIR/scratch\" && echo tmp-ok", SandboxReach::Plans).await;
    assert!(!p.root.join("f").exists(), "{text}");
    assert_eq!(std::fs::read_to_string(p.root.join("keep.txt")).unwrap(), "kept", "{text}");
    assert!(text.contains("tmp-ok"), "{text}");
    let (text, _) = p.run(&format!("echo plan > {}/p.md", p.plans.display()), SandboxReach::Plans).await;
    assert!(p.plans.join("p.md").exists(), "{text}");
}

#[tokio::test]
async fn what_a_command_starts_in_the_background_is_sandboxed_too() {
    if !active() {
        return;
    }
    let p = places();
    let target = p.outside.join("late");
    let (text, _) = p
        .run(
            &format!(
                "(sleep 0.2; echo late > {}) & setsid sh -c 'echo s > {}.s' ; wait",
                target.display(),
                target.display()
            ),
            SandboxReach::Project,
        )
        .await;
    assert!(!exists(&target) && !exists(&p.outside.join("late.s")), "{text}");
}

#[tokio::test]
async fn lembas_variables_do_not_reach_commands() {
    let p = places();
    // CI runs the tests with LEMBAS_TMUX, LEMBAS_ACPX, … set; none of them may pass to a command
    // (an API key would be among them), while LEMBAS=1 says lembas started it.
    let line = "echo \"[${LEMBAS_TMUX:-none}] [${LEMBAS_ACPX:-none}] [${LEMBAS_API_KEY:-none}] [$LEMBAS]\"";
    let out = run_bash_in(&p.ws, &json!({ "command": line }), &CancellationToken::new(), None, &Sandbox::none()).await;
    let ToolOutput::Text(text) = out.output else { panic!("{:?}", out.output) };
    assert!(text.contains("[none] [none] [none] [1]"), "{text}");
}

#[tokio::test]
async fn lembas_own_files_are_not_read_through_a_name_the_judge_never_saw() {
    if !active() {
        return;
    }
    let p = places();
    let config = p.home.join(".config/lembas");
    std::fs::write(config.join("credentials.json"), "SECRET-KEY").unwrap();
    std::fs::write(config.join("skills/s.md"), "a skill").unwrap();
    std::fs::write(p.home.join(".gitconfig"), "[user]").unwrap();
    std::fs::write(p.home.join(".config/other.toml"), "other = 1").unwrap();
    // The judge refuses `cat ~/.config/lembas/credentials.json`; a glob or a `find` names it
    // only when the line runs.
    let home = p.home.display();
    for reach in [SandboxReach::Plans, SandboxReach::Project, SandboxReach::ProjectAndCaches] {
        let (text, _) =
            p.run(&format!("cat {home}/.config/l*/cred*; find {home} -name 'cred*' -exec cat {{}} +"), reach).await;
        assert!(!text.contains("SECRET-KEY"), "{reach:?}: {text}");
        assert!(text.contains("Permission denied"), "{reach:?}: {text}");
        // Everything else reads as before: the home folder's files, its other folders, the
        // open places inside lembas' folder, the system.
        let (text, _) = p
            .run(
                &format!(
                    "cat {home}/.gitconfig {home}/.config/other.toml {home}/.config/lembas/skills/s.md; \
                     ls {home}/.config/lembas; head -c0 /etc/hostname && echo system-ok"
                ),
                reach,
            )
            .await;
        for want in ["[user]", "other = 1", "a skill", "credentials.json", "system-ok"] {
            assert!(text.contains(want), "{reach:?} {want}: {text}");
        }
    }
}

#[tokio::test]
async fn plan_mode_commands_open_no_connections_unless_the_person_says() {
    if !active() {
        return;
    }
    let p = places();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    let line = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let (text, blocked) = p.run(&line, SandboxReach::Plans).await;
    assert!(!text.contains("connected") && blocked, "{text}");
    let (text, _) = p.run(&line, SandboxReach::Project).await;
    assert!(text.contains("connected"), "{text}");
    // `[sandbox] network = false` closes it in every mode; `true` opens it in plan mode too.
    let mut places = p.places();
    places.network = Some(false);
    let run = |sandbox: Sandbox| {
        let line = line.clone();
        let ws = &p.ws;
        async move {
            let out = run_bash_in(ws, &json!({ "command": line }), &CancellationToken::new(), None, &sandbox).await;
            format!("{:?}", out.output)
        }
    };
    assert!(!run(places.sandbox(SandboxReach::ProjectAndCaches)).await.contains("connected"));
    places.network = Some(true);
    assert!(run(places.sandbox(SandboxReach::Plans)).await.contains("connected"));
}

/// Whether this machine can make the mounts (user namespaces); CI's can.
fn sealing() -> bool {
    if !active() {
        return false;
    }
    let Some(launcher) = lembas_testkit::sandbox_launcher() else {
        assert!(std::env::var_os("CI").is_none(), "CI builds the launcher (cargo test --workspace)");
        eprintln!("no sandbox launcher built here: run the workspace's tests");
        return false;
    };
    match lembas_tools::sandbox::state(Some(&launcher)) {
        Ok(()) => true,
        Err(why) if std::env::var_os("CI").is_some() => panic!("CI must seal what commands may not write: {why}"),
        Err(why) => {
            eprintln!("no mounts here: {why}");
            false
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap()
}

#[tokio::test]
async fn code_the_judge_cannot_read_cannot_write_what_runs_later() {
    if !sealing() {
        return;
    }
    let p = places();
    assert!(git(&p.root, &["init", "-q"]).status.success());
    std::fs::write(p.root.join("f.txt"), "one").unwrap();
    for d in [".lembas", ".claude/commands", ".agent/skills", ".agent/plans"] {
        std::fs::create_dir_all(p.root.join(d)).unwrap();
    }
    std::fs::write(p.root.join(".mcp.json"), "{}").unwrap();
    let config_before = std::fs::read_to_string(p.root.join(".git/config")).unwrap();
    let write = |path: &str| format!("python3 -c \"open('{path}', 'w').write('evil')\"; ");
    let line: String = [
        ".git/hooks/pre-commit",
        ".git/config",
        ".mcp.json",
        ".lembas/permissions.json",
        ".claude/commands/x.md",
        ".agent/skills/s.md",
    ]
    .iter()
    .map(|f| write(f))
    .collect();
    for reach in [SandboxReach::Project, SandboxReach::ProjectAndCaches] {
        let (text, blocked) = p.run(&line, reach).await;
        assert!(text.contains("Read-only file system") && blocked, "{text}");
        assert!(!p.root.join(".git/hooks/pre-commit").exists(), "{text}");
        assert_eq!(std::fs::read_to_string(p.root.join(".git/config")).unwrap(), config_before);
        assert_eq!(std::fs::read_to_string(p.root.join(".mcp.json")).unwrap(), "{}");
        for f in [".lembas/permissions.json", ".claude/commands/x.md", ".agent/skills/s.md"] {
            assert!(!p.root.join(f).exists(), "{f}: {text}");
        }
    }
    // The rest of the project, git's own writes and the plans stay writable: a commit works.
    let line = "echo two > f.txt && echo plan > .agent/plans/p.md && git add -A && \
                git -c user.name=a -c user.email=a@b commit -qm one && echo committed";
    let (text, _) = p.run(line, SandboxReach::Project).await;
    assert!(text.contains("committed"), "{text}");
    assert!(git(&p.root, &["log", "--oneline"]).stdout.len() > 1);
}

#[tokio::test]
async fn a_home_folder_in_a_writable_place_is_read_only_but_for_what_the_mode_opens() {
    if !sealing() {
        return;
    }
    // As on a CI machine or in a container: the home folder (and the project in it) lie in a
    // place every command may write, here given as the person's own `[sandbox] writable`.
    let p = places();
    let mut places = p.places();
    let home = p.root.join("home");
    let project = home.join("src/app");
    for d in [&project, &home.join(".cargo"), &home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join("canary"), "alive").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "KEY").unwrap();
    places.root = project.clone();
    places.home = Some(home.clone());
    places.extra = vec![p.root.clone()];
    places.credentials = vec![home.join(".ssh")];
    let (ws, _) = Workspace::new(&project, &project);
    let run = |reach, line: &str| {
        let sandbox = places.sandbox(reach);
        let ws = &ws;
        let line = line.to_owned();
        async move {
            let out = run_bash_in(ws, &json!({ "command": line }), &CancellationToken::new(), None, &sandbox).await;
            match out.output {
                ToolOutput::Text(t) | ToolOutput::Error(t) => t,
                other => format!("{other:?}"),
            }
        }
    };
    let home_s = home.display().to_string();
    let attack = format!(
        "python3 -c \"import shutil; shutil.rmtree('{home_s}', ignore_errors=True)\"; \
         echo k >> {home_s}/.ssh/authorized_keys; echo x >> {home_s}/.bashrc; \
         find {home_s} -name canary -exec rm {{}} +; echo done"
    );
    for reach in [SandboxReach::Project, SandboxReach::ProjectAndCaches] {
        let text = run(reach, &attack).await;
        assert_eq!(std::fs::read_to_string(home.join("canary")).unwrap(), "alive", "{text}");
        assert!(!home.join(".ssh/authorized_keys").exists() && !home.join(".bashrc").exists(), "{text}");
        assert!(project.exists(), "{text}");
    }
    // What the mode opens inside it stays open: the project, and in auto mode the caches.
    let text = run(SandboxReach::ProjectAndCaches, &format!("touch made {home_s}/.cargo/lock && echo ok")).await;
    assert!(text.contains("ok") && project.join("made").exists() && home.join(".cargo/lock").exists(), "{text}");
    // The credentials are neither written nor read, wherever they lie.
    let text = run(SandboxReach::ProjectAndCaches, &format!("cat {home_s}/.ssh/id_ed25519")).await;
    assert!(!text.contains("KEY") && text.contains("Permission denied"), "{text}");
}

#[tokio::test]
async fn credentials_are_read_only_by_the_commands_the_person_named() {
    if !active() {
        return;
    }
    let p = places();
    std::fs::write(p.home.join(".ssh/id_ed25519"), "SSH-KEY").unwrap();
    std::fs::write(p.home.join(".netrc"), "machine x password NETRC").unwrap();
    let home = p.home.display();
    let line = format!("ls {home}/.ssh; cat {home}/.ssh/id_ed25519 {home}/.netrc");
    let run = |places: &SandboxPlaces| {
        let sandbox = places.sandbox(SandboxReach::ProjectAndCaches);
        let (ws, line) = (&p.ws, line.clone());
        async move {
            let out = run_bash_in(ws, &json!({ "command": line }), &CancellationToken::new(), None, &sandbox).await;
            (format!("{:?}", out.output), out.maybe_blocked)
        }
    };
    for launcher in [true, false] {
        let mut places = p.places();
        if !launcher {
            places.launcher = None;
        }
        let (text, blocked) = run(&places).await;
        assert!(!text.contains("SSH-KEY") && !text.contains("NETRC") && blocked, "{text}");
        assert!(text.contains("id_ed25519"), "names can still be listed: {text}");
        places.credentials_readable = true;
        let (text, _) = run(&places).await;
        assert!(text.contains("SSH-KEY") && text.contains("NETRC"), "{text}");
    }
}

#[tokio::test]
async fn a_plan_the_launcher_cannot_be_given_still_leaves_the_command_sandboxed() {
    if !active() {
        return;
    }
    use std::os::unix::ffi::OsStrExt;
    let p = places();
    // A repository: there are places to keep read-only, so the launcher would be used.
    std::fs::create_dir_all(p.root.join(".git/hooks")).unwrap();
    std::fs::write(p.root.join(".git/config"), "[core]\n").unwrap();
    let mut places = p.places();
    // A folder whose name is not UTF-8 cannot be written into the launcher's plan.
    places.extra = vec![p.outside.join(std::ffi::OsStr::from_bytes(b"caf\xe9"))];
    let target = p.outside.join("escaped");
    let out = run_bash_in(
        &p.ws,
        &json!({ "command": format!("echo x > {}", target.display()) }),
        &CancellationToken::new(),
        None,
        &places.sandbox(SandboxReach::Project),
    )
    .await;
    assert!(!exists(&target), "{:?}", out.output);
}

/// The mount namespace a command ran in, as the kernel names it.
async fn namespace_of_a_command(p: &Places, reach: SandboxReach) -> String {
    let (text, _) = p.run("readlink /proc/self/ns/mnt", reach).await;
    assert!(text.starts_with("mnt:["), "{text}");
    text
}

#[tokio::test]
async fn a_session_s_commands_join_one_namespace_made_for_them() {
    if !sealing() {
        return;
    }
    let p = places();
    assert!(git(&p.root, &["init", "-q"]).status.success());
    let first = namespace_of_a_command(&p, SandboxReach::Project).await;
    let second = namespace_of_a_command(&p, SandboxReach::Project).await;
    assert_eq!(first, second, "made once, joined by each command");
    let own = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    assert_ne!(first, own.to_string_lossy(), "not lembas' own");
    // And the command still starts in its folder (joining a namespace leaves a process at `/`).
    let (text, _) = p.run("pwd", SandboxReach::Project).await;
    assert_eq!(text.trim(), p.root.display().to_string());
}

#[tokio::test]
async fn a_sealed_place_made_again_or_made_since_is_sealed_for_the_next_command() {
    if !sealing() {
        return;
    }
    let p = places();
    assert!(git(&p.root, &["init", "-q"]).status.success());
    let hook = "python3 -c \"open('.git/hooks/pre-commit', 'w').write('evil')\"";
    let (text, _) = p.run(hook, SandboxReach::Project).await;
    assert!(text.contains("Read-only file system"), "{text}");
    // Outside the sandbox, the hooks folder is removed and made again: the old one's mount went
    // with it, and a namespace kept as it was would let the new one be written. (Made again at
    // once, the new folder is often given the old one's inode number: the mark holds the old
    // one open so that it cannot be.)
    std::fs::remove_dir_all(p.root.join(".git/hooks")).unwrap();
    std::fs::create_dir(p.root.join(".git/hooks")).unwrap();
    let (text, _) = p.run(hook, SandboxReach::Project).await;
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!p.root.join(".git/hooks/pre-commit").exists(), "{text}");
    // A place that decides what agents may do, made since: sealed as well.
    std::fs::create_dir(p.root.join(".lembas")).unwrap();
    let (text, _) = p.run("echo '{}' > .lembas/permissions.json", SandboxReach::Project).await;
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!p.root.join(".lembas/permissions.json").exists(), "{text}");
}

#[tokio::test]
async fn a_writable_place_made_after_a_command_is_writable_by_the_next() {
    if !active() {
        return;
    }
    let p = places();
    // A place the person allowed, not there yet, in a folder the read grants are not read from.
    let later = p.outside.join("made-later");
    let mut places = p.places();
    places.extra = vec![later.clone()];
    // The grants are kept once the folders they were read from are settled.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let sandbox = || {
        let mut sandbox = places.sandbox(SandboxReach::Project);
        p.grants.fill(&mut sandbox);
        sandbox
    };
    let (text, _) = p.run_in("true && echo ran", &sandbox()).await;
    assert!(text.contains("ran"), "{text}");
    // The rules made for that command held no such place: there was none.
    std::fs::create_dir(&later).unwrap();
    let line = format!("echo x > {}/f && echo wrote", later.display());
    let (text, _) = p.run_in(&line, &sandbox()).await;
    assert!(text.contains("wrote"), "{text}");
    // One removed and made again is the new one that is granted.
    std::fs::remove_dir_all(&later).unwrap();
    std::fs::create_dir(&later).unwrap();
    let (text, _) = p.run_in(&line, &sandbox()).await;
    assert!(text.contains("wrote"), "{text}");
}

#[tokio::test]
async fn a_command_inherits_none_of_the_sandbox_s_descriptors() {
    if !sealing() {
        return;
    }
    let p = places();
    assert!(git(&p.root, &["init", "-q"]).status.success());
    // What a command has open without a sandbox (`ls`'s own folder, and whatever this test was
    // handed itself: a build's job server, say) is all it may have with one.
    let (plain, _) = p.run_in("ls /proc/self/fd", &Sandbox::none()).await;
    // Twice: the second joins the namespace and takes the rules the first left kept.
    for _ in 0..2 {
        let (text, _) = p.run("ls /proc/self/fd", SandboxReach::Project).await;
        assert_eq!(text, plain);
    }
}
