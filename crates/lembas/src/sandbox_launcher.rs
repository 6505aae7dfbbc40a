//! `lembas-sandbox`: the sandbox's launcher on its own. lembas starts it for each sandboxed
//! command as `lembas-sandbox __sandbox PLAN -- PROGRAM ARGS…`; it makes the mounts, restricts
//! itself and becomes the command. A program this small starts in a third of lembas' time, and
//! it is paid for every command; lembas itself does the same work when this one is missing.

fn main() {
    lembas_tools::sandbox::launcher::run_if_asked();
    eprintln!("lembas-sandbox is started by lembas, as `lembas-sandbox __sandbox PLAN -- PROGRAM ARGS…`");
    std::process::exit(2);
}
