//! What a fetched body says, as text a model reads well: HTML as Markdown (htmd) without what
//! only a browser uses — scripts, styles, menus, forms' furniture — JSON laid out, a PDF's text
//! (pdf-extract), any other text as it is. Binary content is not text and is said so.
//!
//! Two halves: [`light`] — text, JSON, what is binary — runs in lembas' own process; [`heavy`] —
//! HTML and PDF — runs in `lembas-reader` ([`crate::Reader`]): their parsers' tables would be
//! loaded into every lembas process at start (a megabyte of memory, whether or not a page is ever
//! fetched), and a hostile document can make a parser panic, loop or swell, which a process of
//! its own survives and a time limit ends.

use std::sync::{Arc, Mutex};

/// A body as text.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Converted {
    /// An HTML page's `<title>`.
    pub title: Option<String>,
    pub text: String,
}

/// Why a body is not given as text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NotText {
    Binary,
    Unreadable(String),
}

/// Elements whose content is not the page's: code, styles, what a browser draws or embeds, and
/// the site's own menus.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav", "button", "select",
    "dialog",
];

/// The text of a body sent as `content_type` (its header, possibly empty); `cut`: the body was
/// cut at the size limit (a PDF cannot be read then). Both halves, in this process.
pub fn convert(content_type: &str, body: &[u8], cut: bool) -> Result<Converted, NotText> {
    match light(content_type, body, cut)? {
        Some(converted) => Ok(converted),
        None => heavy(content_type, body),
    }
}

/// The light half: the text of a body that is text or JSON, `Err` for one that is not text;
/// `None` for HTML and PDF, which [`heavy`] reads.
pub fn light(content_type: &str, body: &[u8], cut: bool) -> Result<Option<Converted>, NotText> {
    match kind(content_type, body) {
        Kind::Json => Ok(Some(Converted { title: None, text: json(&decode(content_type, body)) })),
        Kind::Text => Ok(Some(Converted { title: None, text: decode(content_type, body) })),
        Kind::Pdf if cut => Err(NotText::Unreadable("the PDF is larger than the size limit".into())),
        Kind::Html | Kind::Pdf => Ok(None),
        Kind::Binary => Err(NotText::Binary),
    }
}

/// The heavy half: an HTML page as Markdown, a PDF's text (anything else as [`light`] reads it).
pub fn heavy(content_type: &str, body: &[u8]) -> Result<Converted, NotText> {
    match kind(content_type, body) {
        Kind::Html => Ok(html(&decode(content_type, body))),
        Kind::Pdf => pdf(body).map(|text| Converted { title: None, text }),
        _ => light(content_type, body, false).map(Option::unwrap_or_default),
    }
}

enum Kind {
    Html,
    Json,
    Text,
    Pdf,
    Binary,
}

fn kind(content_type: &str, body: &[u8]) -> Kind {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/json" => Kind::Json,
        e if e.ends_with("+json") => Kind::Json,
        "application/pdf" => Kind::Pdf,
        e if e.starts_with("text/") || e.ends_with("+xml") => Kind::Text,
        "application/xml"
        | "application/javascript"
        | "application/x-yaml"
        | "application/yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql" => Kind::Text,
        // No type, or one that says nothing (`application/octet-stream`): by the bytes.
        "" | "application/octet-stream" | "binary/octet-stream" => sniff(body),
        _ => Kind::Binary,
    }
}

fn sniff(body: &[u8]) -> Kind {
    let start = &body[..body.len().min(1024)];
    if start.starts_with(b"%PDF-") {
        return Kind::Pdf;
    }
    if start.contains(&0) || std::str::from_utf8(start).is_err_and(|e| e.error_len().is_some()) {
        return Kind::Binary;
    }
    let lower = String::from_utf8_lossy(start).to_ascii_lowercase();
    let lower = lower.trim_start();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") { Kind::Html } else { Kind::Text }
}

/// The body as text, in the character set the header names (UTF-8 otherwise, a bad byte
/// replaced).
fn decode(content_type: &str, body: &[u8]) -> String {
    let charset = content_type
        .split(';')
        .skip(1)
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .map(|c| c.trim_matches('"'))
        .next();
    match charset.and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes())) {
        Some(encoding) => encoding.decode(body).0.into_owned(),
        None => String::from_utf8_lossy(body).into_owned(),
    }
}

fn json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

fn html(page: &str) -> Converted {
    let title: Arc<Mutex<Option<String>>> = Arc::default();
    let found = title.clone();
    // The title is kept aside, not in the text: the head's other elements say nothing.
    let keep_title = move |handlers: &dyn htmd::element_handler::Handlers, element: htmd::Element| {
        let text = handlers.walk_children(element.node).content;
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Ok(mut found) = found.lock()
            && found.is_none()
            && !text.is_empty()
        {
            *found = Some(text);
        }
        None
    };
    let converter =
        htmd::HtmlToMarkdown::builder().skip_tags(SKIPPED.to_vec()).add_handler(vec!["title"], keep_title).build();
    let text = converter.convert(page).unwrap_or_default();
    let title = title.lock().ok().and_then(|t| t.clone());
    Converted { title, text: tidy(&text) }
}

/// No run of more than one blank line, no trailing spaces: what a page's layout leaves behind.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// A PDF's text. The reader can panic on a malformed file: that is an unreadable PDF, not a
/// crash.
fn pdf(body: &[u8]) -> Result<String, NotText> {
    let read = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(body));
    match read {
        Ok(Ok(text)) if !text.trim().is_empty() => Ok(tidy(&text)),
        Ok(Ok(_)) => Err(NotText::Unreadable("the PDF has no text (a scan, or images only)".into())),
        Ok(Err(e)) => Err(NotText::Unreadable(format!("not a PDF lembas can read ({e})"))),
        Err(_) => Err(NotText::Unreadable("not a PDF lembas can read".into())),
    }
}
