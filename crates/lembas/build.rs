//! A release build of `lembas` on Linux places the functions a run uses side by side
//! (`layout/hot.ld`, made by `scripts/layout.sh`): the kernel maps a program's code 64 KB at a
//! time as it is first touched, so code spread over the whole binary is held whole in memory,
//! and code kept together is not (docs/performance.md).

fn main() {
    println!("cargo:rerun-if-changed=layout/hot.ld");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if release && linux {
        let script =
            std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("layout/hot.ld");
        // (`-Wl,` splits at commas: a checkout whose path has one is built without the layout.)
        if script.is_file() && !script.to_string_lossy().contains(',') {
            println!("cargo:rustc-link-arg-bin=lembas=-Wl,-T,{}", script.display());
        }
    }
}
