//! Knowledge bases with a real embedding model (all-MiniLM-L6-v2, served by the test kit):
//! found by meaning with no word in common, found by an exact identifier that meaning blurs, a
//! reindex that embeds only what changed, a binary file and a piece too long for the model, a
//! model that is down, and a damaged index — nothing lost.

use std::path::Path;

use lembas_knowledge::{Embedder, How, Knowledge};
use lembas_testkit::{EMBEDDING_MODEL, EmbeddingServer};

const BREAD: &str = "# Baking\n\nKnead the dough with yeast and flour, then let it prove somewhere warm before baking it in a hot oven.\n";
const ERRORS: &str = "# Errors\n\nThe service answers ERR_QUOTA_7731 once the monthly allowance is used up; ERR_AUTH_12 means the token expired.\n";
const NETWORK: &str =
    "# Networking\n\nTCP retransmits a segment when no acknowledgement arrives before the timer expires.\n";

fn docs(dir: &Path) -> std::path::PathBuf {
    let docs = dir.join("docs");
    std::fs::create_dir_all(docs.join("more")).unwrap();
    std::fs::write(docs.join("bread.md"), BREAD).unwrap();
    std::fs::write(docs.join("errors.md"), ERRORS).unwrap();
    std::fs::write(docs.join("more/network.md"), NETWORK).unwrap();
    std::fs::write(docs.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    // Dashes: the byte estimate counts about half the tokens the model's word pieces make, so
    // a piece of this cut by the estimate is too long for the model and has to be cut again.
    std::fs::write(docs.join("dashes.txt"), "a-b-c-d-e-f-g-h-".repeat(120)).unwrap();
    docs
}

fn embedder(server: &EmbeddingServer) -> Embedder {
    Embedder { url: server.url.clone(), model: EMBEDDING_MODEL.into(), key: None }
}

fn top(found: &lembas_knowledge::Found) -> (&str, How) {
    let hit = &found.hits[0];
    (Path::new(&hit.path).file_name().unwrap().to_str().unwrap(), hit.how)
}

#[tokio::test]
async fn a_base_is_found_by_meaning_and_by_exact_words_and_reindexed_only_where_it_changed() {
    let Some(server) = EmbeddingServer::start() else {
        eprintln!("no embedding model (LEMBAS_EMBEDDER_PYTHON): the knowledge test runs in CI");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docs = docs(dir.path());
    let kb = Knowledge::new(dir.path().join("data/knowledge"), Some(embedder(&server)));
    let report = kb.add("manuals", std::slice::from_ref(&docs)).await.unwrap();
    assert_eq!(report.indexed, 4, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "the image is left out: {report:?}");
    assert!(report.skipped[0].0.ends_with("logo.png") && report.skipped[0].1 == "not text");
    // Counted by the model's own tokenizer (its server's /tokenize), each piece fits it.
    assert!(report.counted_by_model, "{report:?}");
    assert_eq!(report.split, 0, "no piece is too long for the model: {report:?}");
    assert_eq!(report.embedded, report.pieces, "every piece has its vector: {report:?}");
    assert!(report.embedder_down.is_none());

    // No word of the question is in the passage: meaning finds it.
    let found = kb.search("what to do when my bread will not rise", &[], 3).await.unwrap();
    assert!(found.by_meaning && found.note.is_none());
    assert_eq!(top(&found), ("bread.md", How::Meaning), "{found:#?}");
    // An identifier: the words find it.
    let found = kb.search("ERR_QUOTA_7731", &[], 3).await.unwrap();
    assert_eq!(top(&found).0, "errors.md", "{found:#?}");
    assert!(matches!(top(&found).1, How::Words | How::Both));
    assert_eq!((found.hits[0].line_from, found.hits[0].line_to), (1, 3));

    // Nothing changed: nothing embedded. One file changed: only its pieces.
    let again = kb.reindex("manuals").await.unwrap();
    assert_eq!((again.indexed, again.unchanged, again.embed_calls), (0, 4, 0), "{again:?}");
    std::fs::write(docs.join("more/network.md"), format!("{NETWORK}\nUDP sends datagrams and never retransmits.\n"))
        .unwrap();
    std::fs::remove_file(docs.join("errors.md")).unwrap();
    let changed = kb.reindex("manuals").await.unwrap();
    assert_eq!((changed.indexed, changed.unchanged, changed.removed, changed.embed_calls), (1, 2, 1, 1), "{changed:?}");
    assert!(kb.search("ERR_QUOTA_7731", &[], 3).await.unwrap().hits.iter().all(|h| !h.path.ends_with("errors.md")));

    let listed = kb.list().unwrap();
    assert_eq!((listed[0].name.as_str(), listed[0].files), ("manuals", 3));
    let text = kb.get("manuals", &docs.join("bread.md").display().to_string(), Some(3), None).unwrap();
    assert!(text.starts_with("Knead the dough"), "{text}");
    assert!(
        kb.get("manuals", "/etc/passwd", None, None).unwrap_err().to_string().contains("is not in the knowledge base")
    );
    assert!(
        kb.search("bread", &["recipes".into()], 3)
            .await
            .unwrap_err()
            .to_string()
            .contains("no knowledge base \"recipes\"")
    );
}

#[tokio::test]
async fn a_model_that_is_down_or_a_damaged_index_loses_nothing() {
    // A server that does not say how it counts: pieces cut by the byte estimate.
    let Some(server) = EmbeddingServer::start_without_tokenizer() else {
        eprintln!("no embedding model (LEMBAS_EMBEDDER_PYTHON): the knowledge test runs in CI");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docs = docs(dir.path());
    let store = dir.path().join("data/knowledge");
    let down = Embedder { url: "http://127.0.0.1:9/v1".into(), model: EMBEDDING_MODEL.into(), key: None };
    let kb = Knowledge::new(store.clone(), Some(down));
    let report = kb.add("manuals", std::slice::from_ref(&docs)).await.unwrap();
    assert!(report.embedder_down.as_deref().is_some_and(|w| w.contains("did not answer")), "{report:?}");
    assert!(report.pieces > 0 && report.embedded == 0, "{report:?}");
    // Still found, by words, and said so.
    let found = kb.search("yeast", &[], 3).await.unwrap();
    assert_eq!(top(&found).0, "bread.md");
    assert!(!found.by_meaning && found.note.as_deref().is_some_and(|n| n.contains("by words only")));

    // The model is back: the next reindex embeds what was left, re-reading nothing else.
    let kb = Knowledge::new(store.clone(), Some(embedder(&server)));
    let report = kb.reindex("manuals").await.unwrap();
    assert_eq!(report.embedded, report.pieces, "{report:?}");
    assert!(!report.counted_by_model && report.split >= 1, "a piece too long for the model was cut: {report:?}");
    assert_eq!(kb.search("what to do when my bread will not rise", &[], 3).await.unwrap().hits[0].how, How::Meaning);

    // A damaged index is set aside and made anew; the base is still there to fill it again.
    std::fs::write(store.join("index.db"), b"this is not a database at all, not even close to one").unwrap();
    let _ = std::fs::remove_file(store.join("index.db-wal"));
    let found = kb.search("yeast", &[], 3).await.unwrap();
    assert!(found.hits.is_empty() && found.note.as_deref().is_some_and(|n| n.contains("made anew")), "{found:?}");
    let report = kb.reindex("manuals").await.unwrap();
    assert_eq!(report.indexed, 4, "{report:?}");
    assert_eq!(top(&kb.search("yeast", &[], 3).await.unwrap()).0, "bread.md");
    assert!(store.join("index.db.damaged").exists());
}

#[tokio::test]
async fn with_no_embedding_model_search_is_by_words_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let docs = docs(dir.path());
    let kb = Knowledge::new(dir.path().join("k"), None);
    let report = kb.add("manuals", &[docs]).await.unwrap();
    assert_eq!((report.indexed, report.embed_calls, report.embedded), (4, 0, 0));
    let found = kb.search("ERR_AUTH_12 token", &[], 5).await.unwrap();
    assert_eq!(top(&found), ("errors.md", How::Words));
    assert!(found.note.as_deref().is_some_and(|n| n.contains("No embedding model is set")));
    assert!(
        kb.add("bad name!", &[dir.path().to_path_buf()]).await.unwrap_err().to_string().contains("not a base name")
    );
    kb.remove("manuals").unwrap();
    assert!(!kb.any());
}
