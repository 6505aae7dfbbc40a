//! A small web site on a loopback port for the web tools' tests: pages of each kind a fetch
//! meets (HTML, text in another character set, JSON, a PDF, an image), redirects on the site and
//! to another, a loop of them, a slow answer, a huge body, an error page — and a fake search
//! provider (SearXNG's JSON API, Brave's) that records what it was asked.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// The site, serving until dropped.
#[derive(Debug)]
pub struct WebSite {
    port: u16,
    searches: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WebSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The HTML page at `/page.html`: a title, a menu, a script and a style that are not its
/// content, and content of each common kind.
pub const PAGE: &str = r#"<!doctype html>
<html><head><title>The  Lembas
 Guide</title><style>body { color: red }</style><script>var secret = "in a script";</script></head>
<body><nav><a href="/">Home</a> <a href="/menu">Menu item</a></nav>
<h1>Baking lembas</h1>
<p>Lembas is <strong>waybread</strong>; see <a href="https://example.org/recipe">the recipe</a>.</p>
<ul><li>flour</li><li>honey</li></ul>
<pre><code>bake --at 180</code></pre>
<script>document.write("also a script")</script>
</body></html>"#;

#[derive(Clone)]
struct Site {
    port: u16,
    searches: Arc<Mutex<Vec<Value>>>,
}

impl WebSite {
    pub async fn start() -> WebSite {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let searches: Arc<Mutex<Vec<Value>>> = Arc::default();
        let site = Site { port, searches: searches.clone() };
        let app = Router::new()
            .route("/page.html", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }))
            .route("/plain.txt", get(|| async { "just text\nsecond line\n" }))
            .route(
                "/latin1.txt",
                get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=iso-8859-1")], b"caf\xe9".to_vec()) }),
            )
            .route(
                "/data.json",
                get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"a":1,"b":[true]}"#) }),
            )
            .route("/doc.pdf", get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], pdf("Hello from a PDF")) }))
            .route("/image.png", get(|| async { ([(header::CONTENT_TYPE, "image/png")], PNG.to_vec()) }))
            .route(
                "/missing",
                get(|| async { (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/html")], "<p>Not here</p>") }),
            )
            .route("/redirect", get(|| async { redirect("/page.html") }))
            .route("/loop", get(|| async { redirect("/loop") }))
            // A redirect to wherever `to` says: what a hostile page sends a fetch to.
            .route("/go", get(go))
            .route("/public/go", get(go))
            .route("/public/page.html", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }))
            .route("/private/key.txt", get(|| async { "PRIVATE-KEY-MATERIAL" }))
            .route(
                "/elsewhere",
                get(|State(site): State<Site>| async move {
                    redirect(&format!("http://localhost:{}/page.html", site.port))
                }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    "finally"
                }),
            )
            .route("/huge", get(|| async { huge() }))
            .route("/search", get(searxng))
            .route("/brave", get(brave))
            .with_state(site);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        WebSite { port, searches, task }
    }

    /// The port the site listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address of `path` on the site (`/page.html`), by its loopback address.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The same, by the name `localhost`: another site, as a browser counts them.
    pub fn by_name(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.port)
    }

    /// What the fake search providers were asked: `{ api, q, format | key }`, in order.
    pub fn searches(&self) -> Vec<Value> {
        self.searches.lock().expect("the searches").clone()
    }
}

async fn go(Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    redirect(q.get("to").map_or("/", String::as_str))
}

fn redirect(to: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to_owned())]).into_response()
}

/// Twelve megabytes of text, more than a fetch reads by default.
fn huge() -> Response {
    let line = "a line of a very long page\n";
    let chunks = (0..12).map(move |_| Ok::<_, std::io::Error>(line.repeat(1024 * 1024 / line.len() + 1)));
    ([(header::CONTENT_TYPE, "text/plain")], Body::from_stream(futures::stream::iter(chunks))).into_response()
}

async fn searxng(State(site): State<Site>, Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    let query = q.get("q").cloned().unwrap_or_default();
    site.searches
        .lock()
        .expect("the searches")
        .push(json!({ "api": "searxng", "q": query, "format": q.get("format") }));
    let results: Vec<Value> = (1..=3)
        .map(|n| {
            json!({
                "title": format!("Result {n} for {query}"),
                "url": format!("https://example.org/{n}"),
                "content": format!("Snippet <b>{n}</b>")
            })
        })
        .collect();
    axum::Json(json!({ "query": query, "results": results })).into_response()
}

async fn brave(
    State(site): State<Site>,
    headers: HeaderMap,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let key = headers.get("x-subscription-token").and_then(|v| v.to_str().ok()).unwrap_or_default();
    site.searches.lock().expect("the searches").push(json!({ "api": "brave", "q": q.get("q"), "key": key }));
    if key.is_empty() {
        return (StatusCode::UNAUTHORIZED, "no key").into_response();
    }
    axum::Json(json!({ "web": { "results": [
        { "title": "Brave result", "url": "https://example.org/brave", "description": "from brave" }
    ] } }))
    .into_response()
}

/// A one-pixel PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A one-page PDF that says `text` in Helvetica, its cross-reference table laid out to the byte.
pub fn pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 24 Tf 72 700 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
    ];
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{body}\nendobj\n", n + 1));
    }
    let xref = out.len();
    out.push_str(&format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1));
    for offset in offsets {
        out.push_str(&format!("{offset:010} 00000 n \n"));
    }
    out.push_str(&format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1));
    out.into_bytes()
}
