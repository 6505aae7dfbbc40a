//! A release source for `lembas update`: files served as given — a manifest, archives — and a
//! download cut off midway, as a dropped connection leaves one.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;

/// How a path is answered.
#[derive(Debug, Clone)]
enum Served {
    Whole(Vec<u8>),
    /// The whole length promised, `.1` bytes sent, then the connection dropped.
    Cut(Vec<u8>, usize),
}

type Files = Arc<Mutex<HashMap<String, Served>>>;

/// A server of release files on a loopback port.
#[derive(Debug)]
pub struct ReleaseServer {
    addr: SocketAddr,
    files: Files,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ReleaseServer {
    /// Starts serving nothing (every path 404) until files are given. Needs a tokio runtime.
    pub async fn start() -> ReleaseServer {
        let files = Files::default();
        let app = Router::new().fallback(any(serve)).with_state(files.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        ReleaseServer { addr, files, task }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves `body` at `path` (`/manifest.json`).
    pub fn serve(&self, path: &str, body: impl Into<Vec<u8>>) {
        self.files.lock().unwrap().insert(path.to_owned(), Served::Whole(body.into()));
    }

    /// Serves `body` at `path` promising all of it, but drops the connection after `sent` bytes.
    pub fn serve_cut(&self, path: &str, body: impl Into<Vec<u8>>, sent: usize) {
        self.files.lock().unwrap().insert(path.to_owned(), Served::Cut(body.into(), sent));
    }
}

/// A `.tar.gz` holding `files` (name, contents, Unix mode) at its root, as a release archive.
pub fn tar_gz(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, contents, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(contents.len() as u64);
        header.set_mode(*mode);
        header.set_cksum();
        builder.append_data(&mut header, name, *contents).expect("a file into the archive");
    }
    builder.into_inner().and_then(|gz| gz.finish()).expect("the archive")
}

async fn serve(State(files): State<Files>, uri: Uri) -> Response {
    let served = files.lock().unwrap().get(uri.path()).cloned();
    match served {
        None => StatusCode::NOT_FOUND.into_response(),
        Some(Served::Whole(body)) => body.into_response(),
        Some(Served::Cut(body, sent)) => {
            let whole = body.len();
            let part = bytes::Bytes::from(body[..sent.min(whole)].to_vec());
            // The first part goes out with the headers; a moment later the connection drops.
            let cut = futures::stream::once(async {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut off"))
            });
            let body = futures::StreamExt::chain(futures::stream::once(async move { Ok(part) }), cut);
            Response::builder().header(header::CONTENT_LENGTH, whole).body(Body::from_stream(body)).expect("a response")
        }
    }
}
