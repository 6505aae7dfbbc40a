//! The engine against the test kit's fake server, over real HTTP: the exact requests it sends.

use std::sync::Arc;

use lembas_core::{Command, DoneReason, Event};
use lembas_model::CancellationToken;
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::json;

mod common;
use common::*;

#[tokio::test]
async fn a_turn_reads_edits_runs_a_command_and_answers_keeping_the_prefix() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})).with_reasoning("Look at the code first."),
        Scripted::tool_call("edit", json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})),
        Scripted::tool_call("bash", json!({"command": "grep -c 'a + b' src/lib.rs"})),
        Scripted::text("Fixed: add now adds.").with_usage(900, 12, 850),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    let done = session.prompt("fix add", &CancellationToken::new()).await;
    assert_eq!(done, DoneReason::Answered);
    assert_eq!(
        std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap(),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );

    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert_prefix_kept(&requests);
    let first = &requests[0];
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Project: app (paths are relative to its root)"));
    assert!(system.contains("Run cargo test before you finish."));
    assert!(!system.contains(&h.root.display().to_string()), "no absolute path in the prompt");
    assert_eq!(
        first["messages"][1]["content"],
        "fix add\n\n<session-note>\nToday is 2026-12-02.\n\nThe team may have 1 to 4 agents, you included.\n</session-note>"
    );
    let names: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    // Every device tool a bare terminal can offer (the library's too, with nothing in it yet),
    // in the definitions' order; the fake model says
    // nothing of its capacity, so it may serve subagents itself (`task` and the team's tools, but
    // not those only a subagent has), and it does not see (no `view_image`).
    assert_eq!(
        names,
        [
            "apply_patch",
            "ask_user",
            "bash",
            "decisions",
            "edit",
            "glob",
            "grep",
            "job_list",
            "job_output",
            "job_send",
            "job_stop",
            "list",
            "multiedit",
            "note_manage",
            "note_view",
            "notes_search",
            "plan_submit",
            "plan_update",
            "plan_write",
            "read",
            "recall",
            "session_search",
            "skill_manage",
            "skill_view",
            "skills_list",
            "task",
            "tasks",
            "team_add",
            "team_assign",
            "team_decide",
            "team_findings",
            "team_read",
            "team_replace",
            "team_send",
            "team_stop",
            "team_whoami",
            "web_fetch",
            "write",
        ]
    );

    let results = tool_results(&requests[3]);
    assert!(results[0].starts_with("[#0001 src/lib.rs lines 1-3 of 3 sha "), "{}", results[0]);
    assert!(
        results[1].starts_with("[#0002 src/lib.rs sha ") && results[1].contains("\n-    a - b\n+    a + b"),
        "{}",
        results[1]
    );
    assert_eq!(results[2], "[#0003]\n1");
    // The turn's reasoning goes back with its assistant message.
    assert_eq!(requests[1]["messages"][2]["reasoning_content"], "Look at the code first.");

    let events = session.drain();
    assert!(events.iter().any(|e| matches!(e, Event::Usage { cached: Some(850), .. })));
    assert!(
        matches!(events.last(), Some(Event::Done { reason: DoneReason::Answered, text, steps: 4, .. }) if text == "Fixed: add now adds.")
    );
    assert!(events.iter().any(|e| matches!(e, Event::Phase { progress: Some(p) } if p.phase.name() == "running_tool")));

    // After the counted request: the window's use by category, adding up to the server's count.
    let Some(Event::Context { window, shares, .. }) = events.iter().rev().find(|e| matches!(e, Event::Context { .. }))
    else {
        panic!("no context event")
    };
    assert_eq!(*window, 100_000);
    let names: Vec<&str> = shares.iter().map(|s| s.category.as_str()).collect();
    assert_eq!(names, ["system prompt", "tool definitions", "your messages", "replies", "tool results"]);
    let total: u64 = shares.iter().map(|s| s.tokens).sum();
    assert!((895..=900).contains(&total), "{shares:?}");
    let tokens = |name: &str| shares.iter().find(|s| s.category == name).unwrap().tokens;
    assert!(tokens("tool definitions") > tokens("your messages"), "{shares:?}");
}

#[tokio::test]
async fn reasoning_is_sent_back_only_in_its_turn_and_notes_follow_the_date() {
    let h = Harness::new(vec![
        Scripted::text("One.").with_reasoning("First thoughts."),
        Scripted::tool_call("list", json!({})).with_reasoning("Second thoughts."),
        Scripted::text("Two."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("first", &CancellationToken::new()).await;
    *h.today.lock().unwrap() = "2026-12-03".into();
    session.prompt("second", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let second_turn = &requests[2]["messages"];
    assert!(second_turn[2].get("reasoning_content").is_none(), "an earlier turn carries none");
    assert_eq!(second_turn[4]["reasoning_content"], "Second thoughts.");
    assert_eq!(second_turn[3]["content"], "second\n\n<session-note>\nToday is 2026-12-03.\n</session-note>");
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn unchanged_rereads_are_stubs_and_parallel_calls_answer_in_order() {
    let h = Harness::new(vec![
        Scripted::text("").with_call("read", r#"{"path": "src/lib.rs"}"#).with_call("read", r#"{"path": "AGENTS.md"}"#),
        Scripted::tool_call("read", json!({"path": "./src/lib.rs", "offset": 2, "limit": 1})),
        Scripted::text("Done."),
    ])
    .await;
    let mut session = h.start(Mode::Manual);
    session.prompt("look", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[2]);
    assert!(results[0].starts_with("[#0001 src/lib.rs"));
    assert!(results[1].starts_with("[#0002 AGENTS.md"));
    assert!(
        results[2].starts_with("[#0003 ./src/lib.rs lines 2-2 of 3 sha ")
            && results[2].ends_with("Unchanged since #0001, which already shows lines 1-3.")
    );
}

#[tokio::test]
async fn bad_calls_are_answered_as_errors_and_the_turn_goes_on() {
    let h = Harness::new(vec![
        Scripted::text("")
            .with_call("edit", "{\"path\": oops")
            .with_call("teleport", "{}")
            .with_call("read", r#"{"path": "missing.rs"}"#),
        Scripted::text("Sorry."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    assert_eq!(session.prompt("go", &CancellationToken::new()).await, DoneReason::Answered);
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].starts_with("[#0001]\nThe arguments of this call are not valid JSON"));
    assert!(results[1].starts_with("[#0002]\nThere is no tool called teleport here."));
    assert_eq!(results[2], format!("[#0003]\nNo such file or directory: {}", h.root.join("missing.rs").display()));
}

#[tokio::test]
async fn with_nobody_to_ask_what_would_be_asked_is_refused_and_the_model_told() {
    let h = Harness::new(vec![
        Scripted::text("")
            .with_call("bash", r#"{"command": "touch hacked"}"#)
            .with_call("write", r#"{"path": "new.txt", "content": "x"}"#),
        Scripted::text("I could not."),
    ])
    .await;
    let mut session = h.start(Mode::Manual);
    session.prompt("try", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(requests[0]["messages"][0]["content"].as_str().unwrap().contains("Nobody is watching this session"));
    let results = tool_results(&requests[1]);
    assert!(results[0].contains("needs the person's approval, and nobody is here to give it"));
    assert!(results[1].contains("needs the person's approval"));
    assert!(!h.root.join("hacked").exists() && !h.root.join("new.txt").exists());
    assert_eq!(session.drain().iter().filter(|e| matches!(e, Event::ToolDenied { .. })).count(), 2);
}

#[tokio::test]
async fn plan_mode_refuses_an_edit_with_the_spec_text() {
    let h = Harness::new(vec![
        Scripted::tool_call("write", json!({"path": "x.md", "content": "x"})),
        Scripted::text("Planned."),
    ])
    .await;
    let mut session = h.start(Mode::Plan);
    session.prompt("plan it", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[1]);
    assert_eq!(results[0], format!("[#0001]\n{}", lembas_spec::modes().modes["plan"].refused.clone().unwrap()));
}

#[tokio::test]
async fn the_step_backstop_ends_with_the_wrap_up_and_runs_no_call_from_it() {
    let h = Harness::new(vec![
        Scripted::tool_call("list", json!({})),
        Scripted::tool_call("list", json!({"depth": 1})),
        Scripted::tool_call("write", json!({"path": "late.txt", "content": "no"})).with_call("list", "{}"),
    ])
    .await;
    h.server.push(Scripted::text("Listed twice; nothing else done."));
    let mut session = h.start_with(h.config(Mode::Auto, 2));
    // Replace the third scripted reply: the wrap-up answers with text (its calls would not run).
    assert_eq!(session.prompt("list things", &CancellationToken::new()).await, DoneReason::Limit);
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    let wrap = &requests[2];
    assert_eq!(wrap["tools"], requests[0]["tools"], "the tools stay listed");
    let last = wrap["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"],
        "The step limit for this prompt has been reached and the tools have been withdrawn. Answer now from what you have: what is done, what is not, and what would come next."
    );
    assert!(!h.root.join("late.txt").exists());
    assert!(session.drain().iter().any(|e| matches!(e, Event::Done { reason: DoneReason::Limit, .. })));
}

#[tokio::test]
async fn a_resumed_session_sends_its_stored_prefix_unchanged() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
        Scripted::text("It subtracts."),
        Scripted::text("Still subtracts."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("what does add do?", &CancellationToken::new()).await;
    let id = session.id().to_owned();
    drop(session);
    // The instructions change on disk; the resumed session's prompt does not.
    std::fs::write(h.root.join("AGENTS.md"), "Something else.\n").unwrap();
    let mut resumed = h.resume(h.config(Mode::Edit, 50), &id);
    resumed.prompt("and now?", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert_prefix_kept(&requests);
    assert_eq!(requests[2]["messages"].as_array().unwrap().len(), 6);
    // Same day, same mode: the note says only what the person changed on disk meanwhile.
    assert_eq!(
        requests[2]["messages"][5]["content"],
        "and now?\n\n<session-note>\nAGENTS.md changed; it now reads:\nSomething else.\n</session-note>"
    );
}

#[tokio::test]
async fn compaction_asks_in_the_same_conversation_then_starts_afresh_with_the_table() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
        Scripted::text("Read it."),
        Scripted::text("The person asked about add; src/lib.rs subtracts."),
        Scripted::text("Next."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("read lib", &CancellationToken::new()).await;
    session.compact(&CancellationToken::new()).await.unwrap();
    session.prompt("go on", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let ask = &requests[2];
    assert_eq!(ask["messages"][0], requests[1]["messages"][0], "the same system prompt");
    assert_eq!(ask["tools"], requests[1]["tools"]);
    assert_eq!(&ask["messages"].as_array().unwrap()[..4], &requests[1]["messages"].as_array().unwrap()[..4]);
    assert_eq!(ask["messages"][4]["content"], "Read it.");
    let asked = ask["messages"][5]["content"].as_str().unwrap();
    assert!(
        asked.starts_with("Summarise the conversation below") && asked.ends_with("stay under 600 words."),
        "{asked}"
    );
    let after = &requests[3]["messages"];
    let summary = after[1]["content"].as_str().unwrap();
    assert!(summary.contains("The person asked about add"));
    assert!(summary.contains("## Files read before this summary") && summary.contains("| src/lib.rs | 1-3 of 3 |"));
    assert!(session.drain().iter().any(|e| matches!(e, Event::Compacted { .. })));
    // Read back, the session is the whole conversation: what the summary took over from, where
    // it did, and what came after.
    let said = lembas_core::stored_transcript(&h.store, session.id()).unwrap();
    let at = |wanted: &dyn Fn(&Event) -> bool| said.iter().position(wanted).unwrap_or_else(|| panic!("{said:?}"));
    let first = at(&|e| matches!(e, Event::Prompt { text, .. } if text == "read lib"));
    let compacted =
        at(&|e| matches!(e, Event::Compacted { summary, .. } if summary.contains("The person asked about add")));
    let then = at(&|e| matches!(e, Event::Prompt { text, .. } if text == "go on"));
    assert!(first < compacted && compacted < then, "{said:?}");
}

#[tokio::test]
async fn recall_shows_a_capped_output_in_full() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "seq 1 1000"})),
        Scripted::tool_call("recall", json!({"id": "#0001", "offset": 500, "limit": 2})),
        Scripted::text("ok"),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    session.prompt("count", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[2]);
    assert!(results[0].contains("[700 lines elided, full output #0001]"), "{}", &results[0][..200]);
    assert_eq!(results[1], "[#0002 recall #0001 lines 500-501 of 1000]\n500\n501");
}

#[tokio::test]
async fn a_failed_model_ends_the_prompt_with_the_servers_words() {
    let h = Harness::new(vec![Scripted::status(400, r#"{"error":{"message":"model not loaded"}}"#)]).await;
    let mut session = h.start(Mode::Edit);
    assert_eq!(session.prompt("hi", &CancellationToken::new()).await, DoneReason::Failed);
    let events = session.drain();
    assert!(events.iter().any(|e| matches!(e, Event::Error { message } if message.contains("model not loaded"))));
    assert!(events.iter().any(|e| matches!(e, Event::Phase { progress: Some(p) } if p.phase.name() == "failed")));
}

/// Adding a tool is its definition and its implementation: every tool offered is one the
/// engine runs (a call with no arguments is refused for them, never "no such tool").
#[tokio::test]
async fn every_offered_tool_has_an_implementation() {
    let mut cfg_model = ModelInfo { id: "fake-model".into(), context: Some(100_000), ..Default::default() };
    cfg_model.vision = Some(true);
    let offered: Vec<&str> = lembas_spec::tools()
        .iter()
        .filter(|t| t.on_device() && t.requires.iter().all(|r| r == "plan"))
        .map(|t| t.name.as_str())
        .collect();
    let mut reply = Scripted::tool_call(offered[0], json!({}));
    for name in &offered[1..] {
        reply = reply.with_call(name, "{}");
    }
    let h = Harness::new(vec![reply, Scripted::text("Tried them all.")]).await;
    let mut cfg = h.config(Mode::Auto, 5);
    cfg.model = cfg_model;
    let mut session = h.start_with(cfg);
    session.prompt("try every tool", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let results = tool_results(requests.last().unwrap());
    assert_eq!(results.len(), offered.len());
    for (name, result) in offered.iter().zip(&results) {
        assert!(!result.contains("There is no tool called"), "{name}: {result}");
    }
}

#[tokio::test]
async fn an_approval_for_the_session_covers_what_its_arity_says() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "git status -s"})),
        Scripted::tool_call("bash", json!({"command": "touch a.txt"})),
        Scripted::tool_call("bash", json!({"command": "touch b.txt"})),
        Scripted::tool_call("bash", json!({"command": "mkdir c"})),
        Scripted::text("done"),
    ])
    .await;
    let approver = Arc::new(Answering::new(lembas_core::Approval::Always));
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.approver = approver.clone();
    let mut session = h.start_with(cfg);
    session.prompt("go", &CancellationToken::new()).await;
    // git status is allowed by the default rules; `touch a.txt` is asked once, and then `touch *`
    // is covered — but not `mkdir`, which is asked again.
    assert_eq!(approver.asked().len(), 2);
    assert!(h.root.join("a.txt").exists() && h.root.join("b.txt").exists() && h.root.join("c").is_dir());
}

#[tokio::test]
async fn a_call_that_would_fail_is_answered_at_once_without_a_card() {
    // src/lib.rs exists and was not read in this session: the write would fail.
    let h = Harness::new(vec![
        Scripted::tool_call("write", json!({"path": "src/lib.rs", "content": "pub fn x() {}\n"})),
        Scripted::text("ok"),
    ])
    .await;
    let approver = Arc::new(Answering::new(lembas_core::Approval::Once));
    let mut cfg = h.config(Mode::Manual, 50);
    cfg.approver = approver.clone();
    h.start_with(cfg).prompt("rewrite it", &CancellationToken::new()).await;
    assert!(approver.asked().is_empty(), "{:?}", approver.asked());
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("has not been read"), "{results:?}");
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
}

#[tokio::test]
async fn a_declined_call_tells_the_model_the_persons_words() {
    let h =
        Harness::new(vec![Scripted::tool_call("bash", json!({"command": "make deploy"})), Scripted::text("ok")]).await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.approver = Arc::new(Answering::new(lembas_core::Approval::Deny { feedback: Some("not on a Friday".into()) }));
    let mut session = h.start_with(cfg);
    session.prompt("ship it", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[1]);
    assert_eq!(results[0], "[#0001]\nThe person declined this call; it was not run. They said: not on a Friday");
}

#[tokio::test]
async fn auto_mode_still_refuses_the_hardline_and_protected_paths() {
    let h = Harness::new(vec![
        Scripted::text("")
            .with_call("bash", r#"{"command": "sudo rm -rf ~"}"#)
            .with_call("write", r#"{"path": "keys/authorized_keys", "content": "x"}"#),
        Scripted::text("refused"),
    ])
    .await;
    let home = h.root.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(home.join(".ssh"), h.root.join("keys")).unwrap();
    let mut cfg = h.config(Mode::Auto, 50);
    cfg.user_home = Some(home.clone());
    let mut session = h.start_with(cfg);
    session.prompt("clean up", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("Refused in every mode"), "{}", results[0]);
    #[cfg(unix)]
    {
        assert!(results[1].contains("is protected (SSH keys)"), "{}", results[1]);
        assert!(!home.join(".ssh/authorized_keys").exists());
    }
}

#[tokio::test]
async fn a_job_that_ends_mid_turn_is_delivered_at_the_next_step() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "sleep 0.2; echo built", "background": true}))
            .with_reasoning("Build in the background."),
        Scripted::tool_call("bash", json!({"command": "sleep 0.6"})),
        Scripted::text("Built."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    session.prompt("build it", &CancellationToken::new()).await;
    let last = h.server.chat_requests()[2]["messages"].as_array().unwrap().clone();
    let note = last.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned();
    assert!(
        note.starts_with(
            "[A background job you started has finished:]\njob1 (sleep 0.2; echo built) exited with 0 after "
        ),
        "{note}"
    );
    // A delivery does not start a turn: the first reply keeps its reasoning.
    assert_eq!(last[2]["reasoning_content"], "Build in the background.");
}

#[tokio::test]
async fn settling_waits_for_jobs_and_wakes_the_session_with_their_note() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "sleep 0.3", "background": true})),
        Scripted::text("Started the job."),
        Scripted::text("The job finished."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    let cancel = CancellationToken::new();
    assert_eq!(session.prompt("start it", &cancel).await, DoneReason::Answered);
    // The job's end wakes the session with its note, nobody asking.
    let woke = session.until(std::time::Duration::from_secs(60), |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(woke.last(), Some(Event::Done { reason: DoneReason::Answered, .. })));
    let woke = &h.server.chat_requests()[2]["messages"];
    let last = woke.as_array().unwrap().last().unwrap();
    assert!(last["content"].as_str().unwrap().starts_with("[A background job you started has finished:]"));
    assert!(session.drain().iter().any(|e| matches!(e, Event::Prompt { machine: true, .. })));
}

#[tokio::test]
async fn a_job_that_ends_between_turns_wakes_an_open_session() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "sleep 0.3", "background": true})),
        Scripted::text("Started."),
        Scripted::text("It finished."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    let wait = std::time::Duration::from_millis(100);
    assert_eq!(session.said_within(wait).await, None, "no job runs: nothing wakes it");
    let cancel = CancellationToken::new();
    assert_eq!(session.prompt("start it", &cancel).await, DoneReason::Answered);
    assert!(session.drain().iter().any(|e| matches!(e, Event::Jobs { running: 1, .. })));

    let woke = session.until(std::time::Duration::from_secs(10), |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(woke.last(), Some(Event::Done { reason: DoneReason::Answered, .. })));
    let events = session.drain();
    assert!(events.iter().any(|e| matches!(e, Event::Jobs { running: 0, .. })));
    assert!(events.iter().any(|e| matches!(e, Event::Prompt { machine: true, .. })));
    let woke = h.server.chat_requests()[2]["messages"].as_array().unwrap().clone();
    assert!(
        woke.last().unwrap()["content"].as_str().unwrap().starts_with("[A background job you started has finished:]")
    );
    assert_eq!(session.said_within(std::time::Duration::from_millis(500)).await, None, "each note is delivered once");
}

struct PlanApprover;

impl lembas_core::Approver for PlanApprover {
    fn present(&self) -> bool {
        true
    }
    fn ask(
        &self,
        _: lembas_core::ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = lembas_core::Approval> + Send + '_>> {
        Box::pin(async { lembas_core::Approval::Once })
    }
    fn question(
        &self,
        q: lembas_core::Question,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = lembas_core::Reply> + Send + '_>> {
        let words = q.options.first().cloned().unwrap_or_default();
        Box::pin(async move { lembas_core::Reply::Answered { words } })
    }
    fn approve_plan(
        &self,
        _: String,
        _: String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = lembas_core::PlanVerdict> + Send + '_>> {
        Box::pin(async { lembas_core::PlanVerdict::Approved { mode: None } })
    }
}

#[tokio::test]
async fn the_plan_is_written_with_ids_and_submitted_only_in_plan_mode() {
    let h = Harness::new(vec![
        Scripted::tool_call(
            "todo",
            json!({"todos": [{"content": "read", "status": "completed"}, {"content": "fix", "status": "pending"}]}),
        ),
        Scripted::tool_call("plan_update", json!({"tasks": [{"id": "1.2", "status": "doing"}]})),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::text("Planned."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    session.prompt("plan", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[3]);
    assert_eq!(results[0], "[#0001]\nPlan: Work\n\n1. Work\n   [x] 1.1 read\n   [ ] 1.2 fix");
    assert_eq!(results[1], "[#0002]\nPlan: Work\n\n1. Work\n   [x] 1.1 read\n   [~] 1.2 fix");
    assert_eq!(
        results[2],
        "[#0003]\nNot in plan mode: plan_submit is how a plan made in plan mode is put to the person for approval. Carry on with the work; keep the plan current with plan_update."
    );
    assert_eq!(session.drain().iter().filter(|e| matches!(e, Event::Plan { .. })).count(), 2);
}

#[tokio::test]
async fn an_approved_plan_ends_plan_mode_and_questions_reach_the_person() {
    let h = Harness::new(vec![
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::tool_call(
            "plan_write",
            json!({"title": "Store", "phases": [{"title": "Do", "tasks": [{"text": "add sqlite"}]}]}),
        ),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::text("Approved; starting."),
        Scripted::text("Next."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.approver = Arc::new(PlanApprover);
    let mut session = h.start_with(cfg);
    session.carry(Command::SetMode { mode: Mode::Plan }, &CancellationToken::new()).await;
    session.prompt("design storage", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let results = tool_results(&requests[3]);
    assert_eq!(results[0], "[#0001]\nThe person answered: sqlite");
    assert!(results[2].contains("Plan mode has ended: the permission mode is now edit."));
    assert!(requests[0]["messages"][1]["content"].as_str().unwrap().contains("The permission mode is now plan:"));
    session.prompt("go on", &CancellationToken::new()).await;
    let next = h.server.chat_requests()[4]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(next["content"], "go on", "the model's own approval needs no note");
    assert!(
        session.drain().iter().any(|e| matches!(e, Event::Mode { mode } if *mode == lembas_permissions::Mode::Edit))
    );
}

#[tokio::test]
async fn job_tools_follow_a_background_command() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "echo working; sleep 0.2; echo finished", "background": true})),
        Scripted::tool_call("job_output", json!({"id": "job1", "wait": 5})),
        Scripted::text("").with_call("job_list", "{}").with_call("job_stop", r#"{"id": "job9"}"#),
        Scripted::text("ok"),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    session.prompt("run it", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[3]);
    assert!(results[0].starts_with("[#0001]\nStarted job1 in the background."));
    assert!(results[1].starts_with("[#0002]\nworking\nfinished\n(job1 exited with 0 after"), "{}", results[1]);
    assert!(results[2].starts_with("[#0003]\njob1 exited with 0"), "{}", results[2]);
    assert_eq!(results[3], "[#0004]\nNo job job9 in this session.");
}

#[tokio::test]
async fn a_move_to_another_model_makes_the_prompt_again_and_keeps_the_date() {
    let h = Harness::new(vec![Scripted::text("one"), Scripted::text("two")]).await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.models = vec![cfg.model.clone(), ModelInfo { id: "other-model".into(), ..Default::default() }];
    let mut session = h.start_with(cfg);
    session.prompt("first", &CancellationToken::new()).await;
    std::fs::write(h.root.join("AGENTS.md"), "New rules.\n").unwrap();
    let moved = session.carry(Command::SetModel { model: "other-model".into() }, &CancellationToken::new()).await;
    assert!(!moved.iter().any(|e| matches!(e, Event::Error { .. })), "{moved:?}");
    session.prompt("second", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert_eq!(requests[1]["model"], "other-model");
    assert!(requests[1]["messages"][0]["content"].as_str().unwrap().contains("New rules."), "the prompt is made again");
    assert_eq!(requests[1]["messages"][3]["content"], "second", "the date said before still holds");
    assert!(session.drain().iter().any(|e| matches!(e, Event::Model { model, .. } if model == "other-model")));
}

#[tokio::test]
async fn nearby_instructions_reach_the_model_once_with_the_first_read_below_them() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "web/ui/app.ts"})),
        Scripted::tool_call("read", json!({"path": "web/ui/other.ts"})),
        Scripted::text("ok"),
    ])
    .await;
    std::fs::create_dir_all(h.root.join("web/ui")).unwrap();
    std::fs::write(h.root.join("web/AGENTS.md"), "Use strict TypeScript.\n").unwrap();
    std::fs::write(h.root.join("web/ui/app.ts"), "export {};\n").unwrap();
    std::fs::write(h.root.join("web/ui/other.ts"), "export {};\n").unwrap();
    let mut session = h.start(Mode::Edit);
    session.prompt("look at the ui", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(
        !requests[0]["messages"][0]["content"].as_str().unwrap().contains("strict TypeScript"),
        "not in the prompt: it is below the start"
    );
    let results = tool_results(&requests[2]);
    assert!(
        results[0].ends_with("\n\n<instructions path=\"web/AGENTS.md\">\nUse strict TypeScript.\n</instructions>"),
        "{}",
        results[0]
    );
    assert!(!results[1].contains("<instructions"), "handed over once");
}

#[tokio::test]
async fn words_added_while_a_turn_runs_arrive_at_the_next_step() {
    let h = Harness::new(vec![Scripted::tool_call("list", json!({})).with_delay_ms(300), Scripted::text("ok")]).await;
    let mut session = h.start(Mode::Edit);
    // Sent while the first request is answered: taken up at the step boundary after it.
    let handle = session.handle();
    let steer = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        handle.send(Command::Steer { text: "also check the tests".into() });
    });
    session.prompt("look around", &CancellationToken::new()).await;
    steer.await.unwrap();
    let requests = h.server.chat_requests();
    let content = |n: usize| -> Vec<String> {
        requests[n]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(!content(0).iter().any(|c| c.contains("also check the tests")));
    let second = content(1);
    assert!(second.iter().any(|c| c == "also check the tests"), "delivered at the step boundary: {second:?}");
    assert!(
        !second.iter().any(|c| c.starts_with("also check the tests\n\n<session-note>")),
        "a delivery carries no note"
    );
}

#[tokio::test]
async fn a_token_budget_ends_the_prompt_with_the_wrap_up_naming_it() {
    let h = Harness::new(vec![
        Scripted::tool_call("list", json!({})).with_usage(600, 10, 0),
        Scripted::tool_call("list", json!({"depth": 1})).with_usage(700, 10, 0),
        Scripted::text("Out of budget: listed twice."),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.budget_tokens = Some(1000);
    let mut session = h.start_with(cfg);
    assert_eq!(session.prompt("list", &CancellationToken::new()).await, DoneReason::Limit);
    let wrap = h.server.chat_requests()[2]["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(wrap["content"].as_str().unwrap().starts_with("The token budget for this prompt has been reached"));
    // The stop names the budget, never the step limit: the progress phase and the notice.
    let events = session.drain();
    let budget = lembas_progress::Phase::Stopped { reason: Some(lembas_progress::StopReason::Budget) };
    assert!(events.iter().any(|e| matches!(e, Event::Phase { progress: Some(p) } if p.phase == budget)), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("token budget"))));
}

#[tokio::test]
async fn a_model_that_sees_gets_view_image_and_the_image_after_the_results() {
    let h = Harness::new(vec![
        Scripted::tool_call("view_image", json!({"path": "shot.png"})),
        Scripted::text("A red dot."),
    ])
    .await;
    std::fs::write(h.root.join("shot.png"), [137u8, 80, 78, 71, 13, 10, 26, 10]).unwrap();
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.model.vision = Some(true);
    let mut session = h.start_with(cfg);
    session.prompt("what is in the screenshot?", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    assert!(requests[0]["tools"].as_array().unwrap().iter().any(|t| t["function"]["name"] == "view_image"));
    let messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"], "[#0001]\nshot.png: image/png, 8 bytes. The image follows this result.");
    assert_eq!(messages[4]["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=");
}

#[tokio::test]
async fn a_corrected_command_runs_once_but_never_past_the_floor() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "make build"})),
        Scripted::tool_call("bash", json!({"command": "make clean"})),
        Scripted::text("ok"),
    ])
    .await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.approver = Arc::new(Answering::new(lembas_core::Approval::Edited { command: "echo corrected".into() }));
    let mut session = h.start_with(cfg);
    session.prompt("build", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[2]);
    assert_eq!(results[0], "[#0001]\n(The person changed the command to: echo corrected)\ncorrected");

    let h =
        Harness::new(vec![Scripted::tool_call("bash", json!({"command": "make build"})), Scripted::text("ok")]).await;
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.approver = Arc::new(Answering::new(lembas_core::Approval::Edited { command: "rm -rf /".into() }));
    let mut session = h.start_with(cfg);
    session.prompt("build", &CancellationToken::new()).await;
    assert!(tool_results(&h.server.chat_requests()[1])[0].contains("Refused in every mode"));
}

#[tokio::test]
async fn calls_run_together_at_most_four_at_once_and_calls_on_one_file_in_order() {
    let mut reply = Scripted::text("");
    for n in 0..6 {
        reply = reply.with_call(
            "bash",
            &json!({"command": format!("date +%s%N > s{n}; sleep 0.4; date +%s%N > e{n}")}).to_string(),
        );
    }
    let same_file = Scripted::text("")
        .with_call("read", r#"{"path": "src/lib.rs"}"#)
        .with_call("edit", r#"{"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}"#)
        .with_call("edit", r#"{"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"}"#);
    let h = Harness::new(vec![reply, same_file, Scripted::text("done")]).await;
    let mut session = h.start(Mode::Auto);
    session.prompt("go", &CancellationToken::new()).await;
    let stamp = |name: String| -> u128 { std::fs::read_to_string(h.root.join(name)).unwrap().trim().parse().unwrap() };
    let spans: Vec<(u128, u128)> = (0..6).map(|n| (stamp(format!("s{n}")), stamp(format!("e{n}")))).collect();
    let most = spans.iter().map(|(s, _)| spans.iter().filter(|(s2, e2)| s2 <= s && s < e2).count()).max().unwrap();
    assert!((2..=4).contains(&most), "{most} ran at once");
    assert_eq!(
        std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap(),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a * b\n}\n"
    );
}

#[tokio::test]
async fn an_instruction_file_the_person_edits_is_noted_once_and_one_the_model_edits_is_not() {
    let h = Harness::new(vec![
        Scripted::text("First."),
        Scripted::text("Second."),
        Scripted::tool_call("read", json!({"path": "AGENTS.md"})),
        Scripted::tool_call(
            "edit",
            json!({"path": "AGENTS.md", "old_string": "nextest", "new_string": "nextest --all"}),
        ),
        Scripted::text("Third."),
        Scripted::text("Fourth."),
    ])
    .await;
    let mut session = h.start(Mode::Edit);
    let none = CancellationToken::new();
    session.prompt("one", &none).await;
    std::fs::write(h.root.join("AGENTS.md"), "Run cargo nextest before you finish.\n").unwrap();
    session.prompt("two", &none).await;
    session.prompt("three: widen the test run", &none).await;
    session.prompt("four", &none).await;

    let requests = h.server.chat_requests();
    let last_user = |r: &serde_json::Value| {
        r["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Run cargo test before you finish."));
    assert!(!last_user(&requests[0]).contains("changed;"), "the prompt already has it");
    assert!(
        last_user(&requests[1])
            .ends_with("AGENTS.md changed; it now reads:\nRun cargo nextest before you finish.\n</session-note>"),
        "{}",
        last_user(&requests[1])
    );
    assert!(!last_user(&requests[2]).contains("changed;"), "said once");
    // The model's own edit (requests 2–4 are the third prompt's steps) is not noted after.
    assert_eq!(
        std::fs::read_to_string(h.root.join("AGENTS.md")).unwrap(),
        "Run cargo nextest --all before you finish.\n"
    );
    assert!(!last_user(&requests[5]).contains("changed;"), "{}", last_user(&requests[5]));
    assert_eq!(requests[0]["messages"][0], requests[5]["messages"][0], "the system prompt is never remade for it");
}

#[tokio::test]
async fn the_temporary_folder_of_plan_mode_goes_with_its_session() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "echo \"$TMPDIR\""})),
        Scripted::text("Planned."),
    ])
    .await;
    let mut session = h.start(Mode::Plan);
    let id = session.id().to_owned();
    session.prompt("plan it", &CancellationToken::new()).await;
    let folder = std::env::temp_dir().join(format!("lembas-{id}"));
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains(&*folder.to_string_lossy()), "the command's TMPDIR: {}", results[0]);
    assert!(folder.is_dir());
    session.close().await;
    assert!(!folder.exists(), "{} is left behind", folder.display());
}
