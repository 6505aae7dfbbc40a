//! What knowledge bases are searched and embedded with, as the login and the run set it: a
//! conversation limited to some bases (`lembas run --kb`, a LLeMbas chat's `_meta.lembas.library`)
//! names them in the prompt (`knowledge_scope`), searches only them and refuses a base outside
//! them; a login whose server lists an embedding model embeds with it where `config.toml` names
//! none, and never talks to it. By words alone: no embedding model is needed.

mod common;

use common::{Env, stderr};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

fn results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").filter_map(|m| m["content"].as_str()).map(str::to_owned).collect()
}

#[tokio::test]
async fn a_run_limited_to_one_base_searches_only_it_and_names_it_in_the_prompt() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("knowledge_search", json!({ "query": "sourdough starter" })),
        Scripted::tool_call("knowledge_search", json!({ "query": "sourdough starter", "base": "cooking" })),
        Scripted::text("Not in the ops manuals."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    for (name, text) in
        [("cooking", "# Bread\n\nFeed the sourdough starter daily.\n"), ("ops", "# Deploys\n\nDeploy on Fridays.\n")]
    {
        let folder = env._dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("guide.md"), text).unwrap();
        let out = env.run(&["kb", "add", name, folder.to_str().unwrap()]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = env.run(&["run", "--kb", "nosuch", "hello"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no knowledge base nosuch; there are: cooking, ops"), "{}", stderr(&out));

    let out = env.run(&["run", "--kb", "ops", "how do I keep a sourdough starter?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Knowledge searches here cover only: ops. Finding nothing there means nothing is there, not that the library is empty."),
        "{system}"
    );
    let said = results(&requests[2]);
    assert!(said[0].contains("Nothing in the knowledge bases answers"), "only ops was searched: {}", said[0]);
    assert!(said[1].contains("\"cooking\" is not among this conversation's knowledge bases: ops."), "{}", said[1]);
}

#[tokio::test]
async fn the_servers_listed_embedding_model_embeds_the_bases_and_is_never_talked_to() {
    let server = FakeServer::start(vec![Scripted::text("Hi.")]).await;
    server.set_models(json!([
        { "id": "fake-model", "object": "model" },
        { "id": "minilm", "object": "model", "kind": "embedding" },
        { "id": "whisper", "object": "model", "kind": "voice" }
    ]));
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["models"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = common::stdout(&out);
    assert!(listed.contains("fake-model") && !listed.contains("minilm") && !listed.contains("whisper"), "{listed}");

    // The fake server has no /v1/embeddings: the report names the model it tried and where.
    let folder = env._dir.path().join("docs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("guide.md"), "# Guide\n\nHow the shop works, in words.\n").unwrap();
    let out = env.run(&["kb", "add", "guide", folder.to_str().unwrap(), "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said: Value = serde_json::from_str(common::stdout(&out).lines().last().unwrap()).unwrap();
    let down = said["report"]["embedder_down"].as_str().unwrap_or_default().to_owned();
    assert!(down.contains(&format!("{}/v1", server.url())) && down.contains("404"), "{said}");
    let asked: Vec<_> = server.recorded().into_iter().filter(|r| r.path == "/v1/embeddings").collect();
    assert_eq!(asked[0].body["model"], "minilm");
}
