//! Set-up shared by the tests that drive the real `lembas` binary.

use std::path::Path;

use lembas_testkit::FakeServer;

/// Logs the binary in to the fake server, with its state in `home`.
pub async fn log_in(home: &Path, server: &FakeServer) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(["login", &server.url()])
        .env("LEMBAS_HOME", home)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
