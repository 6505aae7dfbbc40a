//! `lembas-conformance [PATH...]`: runs case files (default `spec/conformance`), prints one line
//! per file and a total, and exits non-zero when any case fails or any area has no runner.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.iter().any(|p| p == "-h" || p == "--help") {
        println!(
            "usage: lembas-conformance [PATH...]\n\nRuns conformance case files (a file, or a folder of *.json), default spec/conformance and spec/conformance/lembas.\nAreas with a runner: {}",
            lembas_conformance::areas().collect::<Vec<_>>().join(", ")
        );
        return ExitCode::SUCCESS;
    }
    if paths.is_empty() {
        // The spec's cases, then lembas' own for rules the reference copy gives no cases for.
        let here = PathBuf::from("spec/conformance");
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/conformance");
        let base = if here.is_dir() { here } else { repo };
        paths.push(base.join("lembas"));
        paths.insert(0, base);
    }
    let reports = match lembas_conformance::run_paths(&paths) {
        Ok(reports) => reports,
        Err(why) => {
            eprintln!("lembas-conformance: {why}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for report in &reports {
        println!("{report}");
        passed += report.passed();
        failed += report.failed();
    }
    println!("{passed} passed, {failed} failed");
    if reports.iter().any(|r| r.is_bad()) { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
