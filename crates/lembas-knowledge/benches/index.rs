//! The knowledge index on a generated documentation tree, with the real embedding model of the
//! test kit (`LEMBAS_EMBEDDER_PYTHON`; without it the words-only figures): index 10,000 files
//! (time, pieces, requests to the model), reindex after changing 10 (requests must be theirs
//! only), and 100 searches (p50, p95). `KB_FILES` changes the tree's size.
//!
//! `cargo bench -p lembas-knowledge --bench index`

use std::time::{Duration, Instant};

use lembas_knowledge::{Embedder, Knowledge};
use lembas_testkit::{EMBEDDING_MODEL, EmbeddingServer};

const TOPICS: [&str; 10] =
    ["network", "storage", "billing", "login", "search", "backup", "deploy", "metrics", "email", "cache"];
const WORDS: [&str; 24] = [
    "the",
    "service",
    "retries",
    "requests",
    "when",
    "a",
    "timeout",
    "expires",
    "and",
    "logs",
    "each",
    "failure",
    "with",
    "its",
    "code",
    "so",
    "operators",
    "can",
    "trace",
    "what",
    "happened",
    "during",
    "the",
    "night",
];

/// A page of the generated manual: a heading, a few paragraphs, an identifier of its own.
fn page(i: usize) -> String {
    let topic = TOPICS[i % TOPICS.len()];
    let mut text = format!("# {topic} guide, part {i}\n\n");
    for p in 0..3 {
        let words: Vec<&str> = (0..45).map(|w| WORDS[(i * 7 + p * 13 + w * 3) % WORDS.len()]).collect();
        text.push_str(&words.join(" "));
        text.push_str(&format!(". See ERR_{}_{i} for {topic}.\n\n", topic.to_uppercase()));
    }
    text
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let files: usize = std::env::var("KB_FILES").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let server = EmbeddingServer::start();
    if server.is_none() {
        println!("no embedding model (LEMBAS_EMBEDDER_PYTHON): words only");
    }
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    for i in 0..files {
        let folder = docs.join(TOPICS[i % TOPICS.len()]).join(format!("{:03}", i / 100));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("page-{i}.md")), page(i)).unwrap();
    }
    let embedder = server.as_ref().map(|s| Embedder { url: s.url.clone(), model: EMBEDDING_MODEL.into(), key: None });
    let kb = Knowledge::new(dir.path().join("knowledge"), embedder);

    let started = Instant::now();
    let first = kb.add("manual", std::slice::from_ref(&docs)).await.unwrap();
    println!(
        "index {files} files: {:.1} s, {} pieces, {} embedded, {} requests to the model",
        started.elapsed().as_secs_f64(),
        first.pieces,
        first.embedded,
        first.embed_calls
    );

    let started = Instant::now();
    let unchanged = kb.reindex("manual").await.unwrap();
    println!("reindex, nothing changed: {:.2} s, {} requests", started.elapsed().as_secs_f64(), unchanged.embed_calls);

    for i in 0..10 {
        let path = docs.join(TOPICS[i % TOPICS.len()]).join(format!("{:03}", i / 100)).join(format!("page-{i}.md"));
        std::fs::write(path, format!("{}\nA line added to page {i}: the cache is warmed at start.\n", page(i)))
            .unwrap();
    }
    let started = Instant::now();
    let changed = kb.reindex("manual").await.unwrap();
    println!(
        "reindex after changing 10 files: {:.2} s, {} read anew, {} requests",
        started.elapsed().as_secs_f64(),
        changed.indexed,
        changed.embed_calls
    );

    let mut took = Vec::new();
    for q in 0..100 {
        let query = match q % 2 {
            0 => format!("how are {} failures traced at night", TOPICS[q % TOPICS.len()]),
            _ => format!("ERR_{}_{}", TOPICS[q % TOPICS.len()].to_uppercase(), q * 37 % files),
        };
        let started = Instant::now();
        let found = kb.search(&query, &[], 5).await.unwrap();
        took.push(started.elapsed());
        assert!(!found.hits.is_empty(), "{query}");
    }
    took.sort();
    println!(
        "search, 100 queries: p50 {:.1} ms, p95 {:.1} ms",
        percentile(&took, 0.5).as_secs_f64() * 1000.0,
        percentile(&took, 0.95).as_secs_f64() * 1000.0
    );
}
