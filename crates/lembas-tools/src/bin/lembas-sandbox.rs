//! The sandbox's launcher on its own, for the tests of the crates below the `lembas` binary
//! (which is the launcher people run: `lembas __sandbox …`).

fn main() {
    lembas_tools::sandbox::launcher::run_if_asked();
    eprintln!("lembas-sandbox is started by lembas as `lembas-sandbox __sandbox PLAN -- PROGRAM ARGS…`");
    std::process::exit(2);
}
