//! What the sandbox costs a command: `true` run through the bash tool without a sandbox, in
//! plan mode's and in auto mode's, median of many runs each. The figure that matters is the
//! difference (the command itself is the same); it also covers the mark scan of /proc that
//! ends what a command left running.

use std::time::Instant;

use lembas_tools::{Sandbox, SandboxPlaces, SandboxReach, Workspace, run_bash_in};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn median_ms(runtime: &tokio::runtime::Runtime, ws: &Workspace, sandbox: &Sandbox, runs: usize) -> f64 {
    let args = json!({ "command": "true" });
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            runtime.block_on(run_bash_in(ws, &args, &CancellationToken::new(), None, sandbox));
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (ws, _) = Workspace::new(dir.path(), dir.path());
    let places = SandboxPlaces {
        root: ws.root.clone(),
        home: std::env::var_os("HOME").map(Into::into),
        plans_dir: Some(dir.path().join("plans")),
        private_tmp: dir.path().join("tmp"),
        extra: Vec::new(),
        // Where lembas keeps its files for a person: three folders in the home folder.
        network: None,
        hidden: lembas_tools::SandboxHidden {
            folders: std::env::var_os("HOME")
                .map(|h| {
                    let h = std::path::PathBuf::from(h);
                    vec![h.join(".config/lembas"), h.join(".local/state/lembas"), h.join(".local/share/lembas")]
                })
                .unwrap_or_default(),
            open: vec![ws.root.clone()],
        },
    };
    if let Err(why) = lembas_tools::sandbox::support() {
        println!("no sandbox on this machine: {why}");
    }
    let runs = 200;
    let _ = median_ms(&runtime, &ws, &Sandbox::none(), 20); // warm up
    let plain = median_ms(&runtime, &ws, &Sandbox::none(), runs);
    let plan = median_ms(&runtime, &ws, &places.sandbox(SandboxReach::Plans), runs);
    let auto = median_ms(&runtime, &ws, &places.sandbox(SandboxReach::ProjectAndCaches), runs);
    println!(
        "bash `true`, median of {runs}: {plain:.2} ms without a sandbox, {plan:.2} ms in plan mode's, {auto:.2} ms in auto mode's"
    );
    println!("the sandbox costs {:.2} ms a command (auto mode's)", auto - plain);
    let mut scans: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            lembas_tools::reaper::end_marked("0-0", false);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    scans.sort_by(f64::total_cmp);
    let processes = std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok()).count())
        .unwrap_or(0);
    println!(
        "the scan for what a command left running: {:.2} ms with {processes} processes (included above)",
        scans[runs / 2]
    );
}
