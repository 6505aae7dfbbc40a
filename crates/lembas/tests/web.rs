//! The web tools through the real binary, configured as a person does in `config.toml`: a
//! SearXNG instance for `web_search`, a rule that lets `web_fetch` reach a server on this
//! computer; without the rule that server is refused, and a provider whose key is missing is said
//! once and not offered.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted, WebSite};
use serde_json::{Value, json};

fn offered(request: &Value) -> Vec<&str> {
    request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect()
}

fn last_result(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_configured_search_and_a_fetch_a_rule_allows_work_and_the_rule_is_what_opens_this_computer() {
    let site = WebSite::start().await;
    let server = FakeServer::start(vec![
        Scripted::tool_call("web_search", json!({"query": "lembas"})),
        Scripted::tool_call("web_fetch", json!({"url": site.url("/doc.pdf")})),
        Scripted::text("The PDF says hello."),
        Scripted::tool_call("web_fetch", json!({"url": site.url("/doc.pdf")})),
        Scripted::text("Refused."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let config = env.home.join("config/config.toml");
    let search = format!("[web.search]\nprovider = \"searxng\"\nurl = \"{}\"\n", site.url(""));
    let rule = format!("[permissions.web_fetch]\n\"{}/*\" = \"allow\"\n", site.url(""));
    std::fs::write(&config, format!("{search}{rule}")).unwrap();
    let out = env.run(&["run", "--mode", "auto", "what does the PDF say?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The PDF says hello.\n");
    let requests = server.chat_requests();
    assert!(offered(&requests[0]).contains(&"web_search") && offered(&requests[0]).contains(&"web_fetch"));
    assert!(last_result(&requests[1]).contains("1. Result 1 for lembas"), "{}", last_result(&requests[1]));
    assert!(last_result(&requests[2]).contains("Hello from a PDF"), "{}", last_result(&requests[2]));

    // Without the rule, the same fetch is refused even in auto mode; a search provider whose key
    // is not in the environment is said, and not offered.
    std::fs::write(&config, "[web.search]\nprovider = \"brave\"\nkey_env = \"LEMBAS_TEST_NO_SUCH_KEY\"\n").unwrap();
    let out = env.run(&["run", "--mode", "auto", "again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("web_search is not offered: web search provider brave needs its key in $LEMBAS_TEST_NO_SUCH_KEY"),
        "{}",
        stderr(&out)
    );
    let requests = server.chat_requests();
    assert!(!offered(&requests[3]).contains(&"web_search"));
    assert!(
        last_result(&requests[4]).contains("Refused: 127.0.0.1 is on this computer"),
        "{}",
        last_result(&requests[4])
    );
}
