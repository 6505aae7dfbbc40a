//! A release build of `lembas` on Linux places the functions a run uses side by side
//! (`layout/hot.ld`, made by `scripts/layout.sh`): the kernel maps a program's code 64 KB at a
//! time as it is first touched, so code spread over the whole binary is held whole in memory,
//! and code kept together is not (docs/performance.md). Where the C library can read them, its
//! relocations are packed too.

fn main() {
    println!("cargo:rerun-if-changed=layout/hot.ld");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if !(release && linux) {
        return;
    }
    let script =
        std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("layout/hot.ld");
    // (`-Wl,` splits at commas: a checkout whose path has one is built without the layout.)
    if script.is_file() && !script.to_string_lossy().contains(',') {
        println!("cargo:rustc-link-arg-bin=lembas=-Wl,-T,{}", script.display());
    }
    if packed_relocations_run_here() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a program built here may pack its relative relocations (`DT_RELR`): ~30,000 of them
/// in 24 bytes each become a bitmap of a few kilobytes that the loader reads at every start
/// (0.7 MB less to read and keep). Only glibc 2.36 and later read it, so only a build for the
/// machine it runs on, whose C library is that new, packs them.
fn packed_relocations_run_here() -> bool {
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    let native = std::env::var("HOST").ok() == std::env::var("TARGET").ok();
    if !(gnu && native) {
        return false;
    }
    let Ok(out) = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let said = String::from_utf8_lossy(&out.stdout);
    let version = said.trim().strip_prefix("glibc ").unwrap_or_default();
    let mut parts = version.split('.').map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    out.status.success() && (major, minor) >= (2, 36)
}
