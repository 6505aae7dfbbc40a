//! `lembas-fake-model SCRIPT.json [PROPS.json]`: the test kit's fake server as a process, for end-to-end tests
//! that drive the real `lembas` binary (in tmux, say). SCRIPT is a JSON list of scripted replies;
//! the first line printed is the server's base URL. It runs until killed. With
//! `LEMBAS_FAKE_LEAN=1` it keeps no request bodies and reads of each only what it answers by, so
//! a measurement through it does not count a whole parse of every growing request. With
//! `LEMBAS_FAKE_LLEMBAS=1` it plays a LLeMbas instance as well (token `lmb_test_token`).

use lembas_testkit::{FakeServer, Scripted};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: lembas-fake-model SCRIPT.json");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("lembas-fake-model: {path}: {e}");
        std::process::exit(2)
    });
    let script: Vec<Scripted> = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("lembas-fake-model: {path} is not a script: {e}");
        std::process::exit(2)
    });
    let server = FakeServer::start(script).await;
    if std::env::var_os("LEMBAS_FAKE_LEAN").is_some_and(|v| v == "1") {
        server.keep_bodies(false);
    }
    // Playing a LLeMbas instance too (discovery, token login, schedules, the link), to try the
    // terminal's server commands by hand.
    if std::env::var_os("LEMBAS_FAKE_LLEMBAS").is_some_and(|v| v == "1") {
        server.set_llembas(lembas_testkit::Llembas::default());
    }
    // A second file, when given: llama.cpp's `/props` (a window, slots) to answer with.
    if let Some(props) = std::env::args().nth(2) {
        let text = std::fs::read_to_string(&props).unwrap_or_else(|e| {
            eprintln!("lembas-fake-model: {props}: {e}");
            std::process::exit(2)
        });
        server.set_props(serde_json::from_str(&text).unwrap_or_else(|e| {
            eprintln!("lembas-fake-model: {props} is not JSON: {e}");
            std::process::exit(2)
        }));
    }
    println!("{}", server.base_url());
    std::future::pending::<()>().await;
}
