//! What the sandbox costs a command: `true` run through the bash tool without a sandbox, in
//! plan mode's, in auto mode's with Landlock alone and with the mount namespace too (through
//! the launcher), median of many runs each. The figure that matters is the
//! difference (the command itself is the same); it also covers the mark scan of /proc that
//! ends what a command left running.

use std::time::Instant;

use lembas_tools::sandbox::ReadGrants;
use lembas_tools::{Sandbox, SandboxPlaces, SandboxReach, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn median_ms(runtime: &tokio::runtime::Runtime, ws: &Workspace, sandbox: &Sandbox, runs: usize) -> f64 {
    median_kept_ms(runtime, ws, sandbox, None, runs)
}

/// The same, the read grants kept between commands as a session keeps them (`grants`).
fn median_kept_ms(
    runtime: &tokio::runtime::Runtime,
    ws: &Workspace,
    sandbox: &Sandbox,
    grants: Option<&ReadGrants>,
    runs: usize,
) -> f64 {
    let args = json!({ "command": "true" });
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let mut sandbox = sandbox.clone();
            if let Some(grants) = grants {
                grants.fill(&mut sandbox);
            }
            runtime.block_on(run_bash_in(ws, &args, &CancellationToken::new(), None, &sandbox));
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A repository, so the project has places to keep read-only (its hooks and configuration).
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    let (ws, _) = Workspace::new(dir.path(), dir.path());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut places = SandboxPlaces {
        root: ws.root.clone(),
        home: home.clone(),
        plans_dir: Some(dir.path().join("plans")),
        private_tmp: dir.path().join("tmp"),
        // Where lembas keeps its files for a person: three folders in the home folder.
        hidden: lembas_tools::SandboxHidden {
            folders: home
                .as_ref()
                .map(|h| vec![h.join(".config/lembas"), h.join(".local/state/lembas"), h.join(".local/share/lembas")])
                .unwrap_or_default(),
            open: vec![ws.root.clone()],
        },
        credentials: home.as_ref().map(|h| lembas_permissions_free_credentials(h)).unwrap_or_default(),
        launcher: None,
        ..Default::default()
    };
    if let Err(why) = lembas_tools::sandbox::support() {
        println!("no sandbox on this machine: {why}");
    }
    let runs = 200;
    let _ = median_ms(&runtime, &ws, &Sandbox::none(), 20); // warm up
    let plain = median_ms(&runtime, &ws, &Sandbox::none(), runs);
    let plan = median_ms(&runtime, &ws, &places.sandbox(SandboxReach::Plans), runs);
    let landlock = median_ms(&runtime, &ws, &places.sandbox(SandboxReach::ProjectAndCaches), runs);
    // The launcher people run, `lembas-sandbox` beside lembas (`cargo build --release -p lembas`
    // makes it), or another one named by `LEMBAS_LAUNCHER` (lembas itself, say).
    places.launcher = std::env::var_os("LEMBAS_LAUNCHER").map(Into::into).or_else(lembas_testkit::sandbox_launcher);
    if places.launcher.is_none() {
        println!("no launcher: build it first with `cargo build --release -p lembas`");
    }
    let sealed = places.sandbox(SandboxReach::ProjectAndCaches);
    let whole = median_ms(&runtime, &ws, &sealed, runs);
    // As a session runs them: the read grants kept between its commands.
    let grants = ReadGrants::default();
    let auto = places.sandbox(SandboxReach::ProjectAndCaches);
    let landlock_kept = {
        let mut alone = auto.clone();
        alone.launcher = None;
        alone.seals.clear();
        median_kept_ms(&runtime, &ws, &alone, Some(&grants), runs)
    };
    let whole_kept = median_kept_ms(&runtime, &ws, &auto, Some(&grants), runs);
    println!(
        "bash `true`, median of {runs}: {plain:.2} ms without a sandbox, {plan:.2} ms in plan mode's, \
         {landlock:.2} ms in auto mode's with Landlock alone, {whole:.2} ms with the namespace too ({} mounts)",
        sealed.seals.len()
    );
    println!(
        "with the read grants kept between commands, as a session keeps them: {landlock_kept:.2} ms with Landlock \
         alone, {whole_kept:.2} ms with the namespace too"
    );
    // What a session works out for each command before it starts: the places, the mounts, the
    // read grants (kept).
    let making = {
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let mut sandbox = places.sandbox(SandboxReach::ProjectAndCaches);
                grants.fill(&mut sandbox);
                std::hint::black_box(&sandbox);
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    };
    println!("making a command's sandbox (its places, mounts and kept read grants): {making:.3} ms");
    match lembas_tools::sandbox::state(sealed.launcher.as_deref()) {
        Ok(()) => println!(
            "the sandbox costs {:.2} ms a command (auto mode's: Landlock {:.2} ms, the namespace and its mounts {:.2} ms more)",
            whole - plain,
            landlock - plain,
            whole - landlock
        ),
        Err(why) => println!("the sandbox costs {:.2} ms a command ({why})", landlock - plain),
    }
    // A mark that says nothing of where ids stood reads every process; a new one (as each
    // command gets) only those made since, here a `true` run after it.
    let scan = |mark: &dyn Fn() -> String| {
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let mark = mark();
                let _ = std::process::Command::new("true").status();
                let start = Instant::now();
                lembas_tools::reaper::end_marked(&mark, false);
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    };
    let (every, since) = (scan(&|| "0-0".to_owned()), scan(&lembas_tools::reaper::new_mark));
    let processes = std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok()).count())
        .unwrap_or(0);
    println!(
        "the scan for what a command left running (included above): {since:.2} ms reading the processes made since its mark, {every:.2} ms reading all {processes}"
    );
}

/// The person's credentials as lembas names them (`protected.home`), written out here so the
/// bench needs nothing but this crate.
fn lembas_permissions_free_credentials(home: &std::path::Path) -> Vec<std::path::PathBuf> {
    [".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc", ".git-credentials"]
        .iter()
        .map(|c| home.join(c))
        .collect()
}
