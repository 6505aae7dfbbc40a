//! The web tools in a session: offered as configured, judged by the permission rules (a URL on
//! this computer refused unless a rule names it, asked where the mode asks, refused in plan mode),
//! and what they bring back is what the model reads — a long page capped, its rest recallable.

mod common;

use std::sync::Arc;

use common::{Answering, Harness, offered, tool_results};
use lembas_core::{Approval, Event, WebSetup};
use lembas_model::CancellationToken;
use lembas_permissions::{Action, Mode, Source};
use lembas_testkit::{Scripted, WebSite};
use serde_json::json;

/// A session's configuration with pages and PDFs read in this process (`lembas-reader` is the
/// binary's).
fn config(h: &Harness, mode: Mode, steps: u32) -> lembas_core::SessionConfig {
    let mut cfg = h.config(mode, steps);
    cfg.web.reader = lembas_web::Reader::Inline(lembas_web::convert);
    cfg
}

#[tokio::test]
async fn a_page_on_this_computer_is_refused_until_a_rule_names_it_then_read_as_markdown() {
    let site = WebSite::start().await;
    let h = Harness::new(vec![
        Scripted::tool_call("web_fetch", json!({"url": site.url("/page.html")})),
        Scripted::text("Refused."),
        Scripted::tool_call("web_fetch", json!({"url": site.url("/page.html")})),
        Scripted::text("Read it."),
    ])
    .await;
    let mut session = h.start_with(config(&h, Mode::Auto, 10));
    session.prompt("read the guide", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let refused = tool_results(&requests[1]);
    assert!(refused[0].contains("Refused: 127.0.0.1 is on this computer or its private network"), "{refused:?}");
    assert!(offered(&requests[0]).contains(&"web_fetch".to_owned()));
    assert!(!offered(&requests[0]).contains(&"web_search".to_owned()), "no provider: no web_search");
    session.drain();

    let mut cfg = config(&h, Mode::Auto, 10);
    cfg.rules.add("web_fetch", Some(&format!("{}/*", site.url(""))), Action::Allow, Source::Global);
    let mut session = h.start_with(cfg);
    session.prompt("read the guide", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let page = tool_results(&requests[3]);
    assert!(page[0].contains("# The Lembas Guide\nSource: http://127.0.0.1:"), "{page:?}");
    assert!(page[0].contains("Lembas is **waybread**") && !page[0].contains("secret"), "{page:?}");
}

#[tokio::test]
async fn a_fetch_is_asked_in_edit_mode_with_its_host_for_the_session_and_refused_in_plan_mode() {
    let site = WebSite::start().await;
    let url = site.url("/plain.txt");
    let h = Harness::new(vec![
        Scripted::tool_call("web_fetch", json!({"url": url})),
        Scripted::tool_call("web_fetch", json!({"url": url})),
        Scripted::text("Done."),
        Scripted::tool_call("web_fetch", json!({"url": url})),
        Scripted::text("Planned."),
    ])
    .await;
    let mut cfg = config(&h, Mode::Edit, 10);
    // Named, so the private address is asked about rather than refused.
    cfg.rules.add("web_fetch", Some("127.0.0.1"), Action::Ask, Source::Global);
    let approver = Arc::new(Answering::new(Approval::Always));
    cfg.approver = approver.clone();
    let mut session = h.start_with(cfg);
    session.prompt("fetch twice", &CancellationToken::new()).await;
    let asked = approver.asked();
    assert_eq!(asked.len(), 1, "asked once, then allowed for the session: {asked:?}");
    assert_eq!(asked[0].title, url.trim_start_matches("http://"));
    assert_eq!(asked[0].session_allows.as_deref(), Some("web_fetch calls to 127.0.0.1"));
    let requests = h.server.chat_requests();
    let fetched = tool_results(&requests[2]);
    assert!(fetched.iter().all(|r| r.ends_with("just text\nsecond line\n")), "{fetched:?}");

    let mut cfg = config(&h, Mode::Plan, 10);
    cfg.rules.add("web_fetch", Some(&format!("{}/*", site.url(""))), Action::Ask, Source::Global);
    let mut session = h.start_with(cfg);
    session.prompt("plan it", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(tool_results(&requests[4])[0].contains("\nPlan mode: nothing changes"), "{:?}", tool_results(&requests[4]));
}

#[tokio::test]
async fn a_search_goes_through_the_configured_provider_and_a_long_page_is_capped_and_recallable() {
    let site = WebSite::start().await;
    let h = Harness::new(vec![
        Scripted::tool_call("web_search", json!({"query": "lembas recipe", "limit": 2})),
        Scripted::tool_call("web_fetch", json!({"url": site.url("/huge")})),
        Scripted::text("Found it."),
    ])
    .await;
    let mut cfg = config(&h, Mode::Auto, 10);
    cfg.rules.add("web_fetch", Some(&format!("{}/*", site.url(""))), Action::Allow, Source::Global);
    cfg.web = WebSetup {
        limits: lembas_web::Limits { max_bytes: 200_000, ..Default::default() },
        search: Some(Arc::new(lembas_web::SearchProvider::new("searxng", Some(&site.url("")), None).unwrap())),
        reader: cfg.web.reader.clone(),
    };
    let mut session = h.start_with(cfg);
    session.prompt("find the recipe", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(offered(&requests[0]).contains(&"web_search".to_owned()));
    let results = tool_results(&requests[1]);
    assert!(
        results[0].contains("1. Result 1 for lembas recipe\n   https://example.org/1\n   Snippet 1"),
        "{results:?}"
    );
    assert!(!results[0].contains("Result 3"), "{results:?}");
    assert_eq!(site.searches()[0]["q"], "lembas recipe");
    let page = tool_results(&requests[2]).pop().unwrap();
    assert!(page.len() < 60_000, "capped: {} characters", page.len());
    assert!(page.contains(" lines elided, full output #0002]"), "the rest is recallable: {page}");
    let ends: Vec<String> = session
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolEnd { tool, outcome, .. } => Some(format!("{tool}: {}", outcome.summary)),
            _ => None,
        })
        .collect();
    assert_eq!(ends[0], "web_search: 2 results");
    assert_eq!(ends[1], "web_fetch: Read text/plain, the first 195 KB, the rest not read");
}
