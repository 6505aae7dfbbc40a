//! Knowledge bases through the real binary, on a real embedding model: `lembas kb add` indexes a
//! folder, the agent's `knowledge_search` finds a passage by meaning in a `lembas run`, and the
//! person lists, searches and removes the base — the tools offered only while a base is there.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{EMBEDDING_MODEL, EmbeddingServer, FakeServer, Scripted};
use serde_json::{Value, json};

/// The tools the request offered, by name.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_folder_added_as_a_base_is_searched_by_the_agent_by_meaning() {
    let Some(embedder) = EmbeddingServer::start() else {
        eprintln!("no embedding model (LEMBAS_EMBEDDER_PYTHON): the knowledge test runs in CI");
        return;
    };
    let server = FakeServer::start(vec![
        Scripted::text("No base yet."),
        Scripted::tool_call("knowledge_search", json!({"query": "what to do when my bread will not rise"})),
        Scripted::text("Let the dough prove somewhere warm."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let docs = env.project.parent().unwrap().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("bread.md"), "# Baking\n\nKnead the dough with yeast and flour, then let it prove somewhere warm before baking it in a hot oven.\n").unwrap();
    std::fs::write(
        docs.join("network.md"),
        "# Networking\n\nTCP retransmits a segment when no acknowledgement arrives before the timer expires.\n",
    )
    .unwrap();
    let config = env.home.join("config/config.toml");
    let before = std::fs::read_to_string(&config).unwrap_or_default();
    std::fs::write(
        &config,
        format!("{before}\n[knowledge]\nmodel = \"{EMBEDDING_MODEL}\"\nurl = \"{}\"\n", embedder.url),
    )
    .unwrap();

    let out = env.run(&["run", "anything in the docs?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!offered(&server.chat_requests()[0]).contains(&"knowledge_search".to_owned()), "no base, no tool");

    let out = env.run(&["kb", "add", "cooking", docs.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("cooking: 2 files, 2 pieces (2 embedded) — 2 read anew"), "{}", stdout(&out));

    let out = env.run(&["run", "my bread will not rise"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    assert!(offered(&requests[1]).contains(&"knowledge_search".to_owned()));
    let result =
        requests[2]["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
    let first = result.split("\n\n[").next().unwrap();
    assert!(first.contains("bread.md lines 1-3]") && first.contains("let it prove somewhere warm"), "{result}");

    let listed: Value = serde_json::from_str(&stdout(&env.run(&["kb", "list", "--json"]).await)).unwrap();
    assert_eq!(
        (listed[0]["name"].clone(), listed[0]["files"].clone(), listed[0]["embedded"].clone()),
        (json!("cooking"), json!(2), json!(2))
    );
    let again = env.run(&["kb", "reindex"]).await;
    assert!(stdout(&again).contains("0 read anew, 2 unchanged, 0 gone; 0 requests"), "{}", stdout(&again));
    let found = stdout(&env.run(&["kb", "search", "acknowledgement", "timer"]).await);
    assert!(found.contains("network.md lines 1-3"), "{found}");
    assert!(stdout(&env.run(&["kb", "remove", "cooking"]).await).starts_with("Removed the knowledge base cooking"));
    assert!(stdout(&env.run(&["kb"]).await).starts_with("No knowledge bases yet"));
}
