//! Embeds every file under the repository's `spec/` folder that lembas reads at run time.
//!
//! The list is generated rather than written by hand so that a new tool definition or prompt text
//! is picked up by adding the file, with nothing else to keep in step.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let spec = manifest.join("../../spec").canonicalize().expect("spec/ at the repository root");
    println!("cargo:rerun-if-changed={}", spec.display());

    let mut files = Vec::new();
    for sub in ["tools", "prompts", "permission", "models"] {
        collect(&spec.join(sub), &mut files);
    }
    files.push(spec.join("filesystem.json"));
    files.push(spec.join("link.json"));
    files.push(spec.join("quirks.json"));
    files.sort();

    let mut out = String::from(
        "/// Every embedded spec file: its path under `spec/`, and its text.\npub static FILES: &[(&str, &str)] = &[\n",
    );
    for file in &files {
        let rel = file.strip_prefix(&spec).expect("under spec/").to_string_lossy().replace('\\', "/");
        writeln!(out, "    ({rel:?}, include_str!({:?})),", file.display().to_string()).unwrap();
        println!("cargo:rerun-if-changed={}", file.display());
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("spec_files.rs");
    std::fs::write(dest, out).expect("write the generated list");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    println!("cargo:rerun-if-changed={}", dir.display());
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "md")) {
            files.push(path);
        }
    }
}
