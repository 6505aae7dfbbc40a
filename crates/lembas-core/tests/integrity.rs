//! A turn that cannot go on as it is: an empty or cut-off reply is nudged once, as loop.json
//! says, and a second one ends the turn as failed rather than as answered.

mod common;

use common::Harness;
use lembas_core::DoneReason;
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;

fn last_user(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_empty_or_reasoning_only_reply_is_nudged_once_then_answered() {
    let h = Harness::new(vec![Scripted::text("").with_reasoning("hmm, thinking"), Scripted::text("Here it is.")]).await;
    let mut session = h.start(Mode::Edit);
    let reason = session.prompt("answer me", &CancellationToken::new()).await;
    assert_eq!(reason, DoneReason::Answered);
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_user(&requests[1]), lembas_spec::loop_spec().nudges.empty_reply);
}

#[tokio::test]
async fn a_cut_off_reply_is_asked_to_continue_once() {
    let h = Harness::new(vec![
        Scripted::text("The first half of a long").with_finish_reason("length"),
        Scripted::text("answer, finished.").with_finish_reason("length"),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    let reason = session.prompt("write it all", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert_eq!(last_user(&requests[1]), lembas_spec::loop_spec().nudges.cut_off);
    // Cut off again after the nudge: the turn ends unfinished, not answered.
    assert_eq!(reason, DoneReason::Failed);
    assert_eq!(requests.len(), 2);
}

#[tokio::test]
async fn empty_twice_ends_the_turn_as_failed() {
    let h = Harness::new(vec![Scripted::text(""), Scripted::text("  "), Scripted::text("never asked")]).await;
    let mut session = h.start(Mode::Edit);
    assert_eq!(session.prompt("hello?", &CancellationToken::new()).await, DoneReason::Failed);
    assert_eq!(h.server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_window_nobody_stated_is_unknown_and_learned_from_a_refusal_for_length() {
    let h = Harness::new(vec![
        Scripted::status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens."}}"#,
        ),
        Scripted::text("## Summary\nThe person asked for a greeting."),
        Scripted::text("Hello."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 10);
    cfg.model.context = None;
    cfg.context_window = None;
    let mut session = h.start_with(cfg);
    session.carry(lembas_core::Command::ReportContext, &CancellationToken::new()).await;
    let reason = session.prompt("say hello", &CancellationToken::new()).await;
    assert_eq!(reason, DoneReason::Answered);
    let requests = h.server.chat_requests();
    // Refused, compacted (the compaction ask is the last user message), then asked once more.
    assert_eq!(requests.len(), 3);
    let events = session.drain();
    let windows: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            lembas_core::Event::Context { window, .. } => Some(*window),
            _ => None,
        })
        .collect();
    assert_eq!(windows.first(), Some(&0), "unknown at first: {windows:?}");
    assert_eq!(windows.last(), Some(&4096), "learned from the refusal: {windows:?}");
    assert!(events.iter().any(|e| matches!(e, lembas_core::Event::Compacted { .. })));
}

#[tokio::test]
async fn a_project_without_agents_md_gets_the_task_to_make_one_once() {
    let h = Harness::new(vec![Scripted::text("One."), Scripted::text("Two.")]).await;
    std::fs::remove_file(h.root.join("AGENTS.md")).unwrap();
    let mut session = h.start(Mode::Edit);
    session.prompt("first", &CancellationToken::new()).await;
    session.prompt("second", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let first = last_user(&requests[0]);
    assert!(first.starts_with("first\n\n"), "{first}");
    assert!(first.contains("## AGENTS.md\nThis project has no AGENTS.md yet."), "{first}");
    assert!(first.contains("in one call: \"How should git be used in this project?\""), "{first}");
    assert!(!first.contains("{{"), "{first}");
    assert!(!last_user(&requests[1]).contains("## AGENTS.md"));
    // The prefix is kept: the first message is sent again as it was.
    assert_eq!(requests[1]["messages"][1]["content"].as_str().unwrap(), first);
}

#[tokio::test]
async fn a_project_with_agents_md_gets_no_such_task() {
    let h = Harness::new(vec![Scripted::text("One.")]).await;
    let mut session = h.start(Mode::Edit);
    session.prompt("first", &CancellationToken::new()).await;
    assert!(!last_user(&h.server.chat_requests()[0]).contains("## AGENTS.md"));
}

#[tokio::test]
async fn a_refused_effort_narrows_the_sessions_levels_and_keeps_off() {
    let h = Harness::new(vec![
        Scripted::status(
            400,
            r#"{"error":{"message":"reasoning_effort 'high' is unexpected; expected one of: low, medium"}}"#,
        ),
        Scripted::text("Done without it."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 10);
    cfg.model.efforts = Some(vec!["low".into(), "medium".into(), "high".into()]);
    cfg.model.thinking_switch = Some(true);
    cfg.effort = Some("high".into());
    let mut session = h.start_with(cfg);
    assert_eq!(session.prompt("go", &CancellationToken::new()).await, DoneReason::Answered);
    let told = session.drain().into_iter().find_map(|e| match e {
        lembas_core::Event::Levels { levels } => Some(levels),
        _ => None,
    });
    assert_eq!(told.as_deref(), Some(&["off".to_owned(), "low".to_owned(), "medium".to_owned()][..]));
}

/// The notices of `events`.
fn notices(events: &[lembas_core::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            lembas_core::Event::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_cache_miss_is_explained_with_where_the_prefix_changed() {
    // The server caches (the first answer says so), then reads the whole prefix again though
    // nothing lembas sent changed; after a compaction, a miss is put down to it.
    let h = Harness::new(vec![
        Scripted::text("").with_call("read", r#"{"path": "src/lib.rs"}"#).with_usage(6500, 10, 5000),
        Scripted::text("Read it.").with_usage(6600, 5, 0),
        Scripted::text("## What we are doing\nReading src/lib.rs.").with_usage(6700, 20, 6600),
        Scripted::text("Still here.").with_usage(6500, 5, 100),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("read src/lib.rs", &CancellationToken::new()).await;
    let said = notices(&session.drain());
    let miss: Vec<&String> = said.iter().filter(|n| n.starts_with("The server read about")).collect();
    assert_eq!(miss.len(), 1, "{said:?}");
    assert!(miss[0].contains("(0 cached of about"), "{}", miss[0]);
    assert!(miss[0].ends_with("nothing lembas sent changed: the server no longer had it cached (another conversation took its slot, or it was evicted)."), "{}", miss[0]);
    // /context says it too.
    let events = session.carry(lembas_core::Command::ReportContext, &CancellationToken::new()).await;
    let said_in_context =
        events.iter().any(|e| matches!(e, lembas_core::Event::Context { cache_miss: Some(m), .. } if m == miss[0]));
    assert!(said_in_context, "{events:?}");

    session.carry(lembas_core::Command::Compact, &CancellationToken::new()).await;
    session.prompt("go on", &CancellationToken::new()).await;
    let said = notices(&session.drain());
    // The compaction asked with the same prefix and got it from the cache; the request after it
    // shares only the instructions and tools, and the miss is put down to the compaction.
    let miss: Vec<&String> = said.iter().filter(|n| n.starts_with("The server read about")).collect();
    assert_eq!(miss.len(), 1, "{said:?}");
    assert!(miss[0].ends_with("message 1 (user) is not the one sent before (a compaction)."), "{}", miss[0]);
}

#[tokio::test]
async fn a_prefix_cached_as_the_server_counted_it_is_no_miss() {
    // A chat template that renders no tool list: the server reads far fewer tokens than the
    // bytes sent (the tools alone are thousands by a guess from bytes), and caches all it read.
    let h = Harness::new(vec![
        Scripted::text("").with_call("read", r#"{"path": "src/lib.rs"}"#).with_usage(1200, 10, 0),
        Scripted::text("Read it.").with_usage(1300, 5, 1190),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("read src/lib.rs", &CancellationToken::new()).await;
    let said = notices(&session.drain());
    assert!(!said.iter().any(|n| n.starts_with("The server read about")), "{said:?}");
}

#[tokio::test]
async fn a_server_that_keeps_little_is_said_once_until_it_caches_well_again() {
    let h = Harness::new(vec![
        Scripted::text("").with_call("read", r#"{"path": "src/lib.rs"}"#).with_usage(6500, 10, 5000),
        Scripted::text("").with_call("glob", r#"{"pattern": "*.rs"}"#).with_usage(6600, 10, 0),
        Scripted::text("").with_call("list", r#"{}"#).with_usage(6700, 10, 0),
        Scripted::text("").with_call("grep", r#"{"pattern": "add"}"#).with_usage(6800, 10, 6700),
        Scripted::text("Looked.").with_usage(6900, 5, 0),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("look around", &CancellationToken::new()).await;
    let said = notices(&session.drain());
    let misses = said.iter().filter(|n| n.starts_with("The server read about")).count();
    // The second request's miss is said, the third's (the same news) is not; the fourth was
    // cached well, so the fifth's miss is news again.
    assert_eq!(misses, 2, "{said:?}");
}

#[tokio::test]
async fn a_summary_ask_refused_for_its_length_is_asked_again_from_a_shorter_transcript() {
    let h = Harness::new(vec![
        Scripted::text("Hello."),
        Scripted::status(
            400,
            r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
        ),
        Scripted::text("## What we are doing\nGreeting the person."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("say hello", &CancellationToken::new()).await;
    let events = session.carry(lembas_core::Command::Compact, &CancellationToken::new()).await;
    assert!(events.iter().any(|e| matches!(e, lembas_core::Event::Compacted { .. })), "{events:?}");
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    // Asked again in the transcript form, without tools, within the window the refusal stated.
    let retry = requests[2]["messages"].as_array().unwrap();
    assert_eq!(retry.len(), 2, "{retry:?}");
    let ask = retry[1]["content"].as_str().unwrap();
    assert!(ask.contains("The conversation:") && ask.contains("[user]\nsay hello"), "{ask}");
    assert!(requests[2].get("tools").is_none());
    assert!(requests[2]["max_tokens"].as_u64().is_some_and(|m| m < 4096), "{}", requests[2]["max_tokens"]);
}
