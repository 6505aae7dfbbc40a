//! `task`: a subagent works in a session of its own and only its report comes back — checked on
//! the wire against the fake model server (each conversation answered from its own script).

mod common;

use std::sync::Arc;

use common::{Answering, Harness, assert_prefix_kept, tool_results};
use lembas_core::{Approval, DoneReason, Event};
use lembas_model::CancellationToken;
use lembas_models::ModelInfo;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::{Value, json};

/// What marks a subagent's requests: its standing, in its system prompt.
const SUBAGENT: &str = "You work for the main agent";

fn system(request: &Value) -> &str {
    request["messages"][0]["content"].as_str().unwrap()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().map_or_else(Vec::new, |tools| {
        tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
    })
}

fn task(args: Value) -> Scripted {
    Scripted::tool_call("task", args)
}

#[tokio::test]
async fn a_subagent_works_in_its_own_session_and_only_its_report_comes_back() {
    let h = Harness::new(vec![
        task(json!({"description": "find add", "prompt": "Where is add defined? Report the line."})),
        Scripted::text("add is wrong: it subtracts (src/lib.rs:2)."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![
            Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
            Scripted::text("add is defined at src/lib.rs:1 and returns a - b (src/lib.rs:2)."),
        ],
    );
    let mut session = h.start(Mode::Edit);
    let done = session.prompt("Why does add fail?", &CancellationToken::new()).await;
    assert_eq!(done, DoneReason::Answered);

    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 4);
    let (main, sub): (Vec<&Value>, Vec<&Value>) = requests.iter().partition(|r| !system(r).contains(SUBAGENT));
    assert!(tool_names(main[0]).contains(&"task".to_owned()));

    // The subagent's own prompt: its standing in place of the mode, and no task, question or plan.
    let sub_system = system(sub[0]);
    assert!(sub_system.contains("You are the \"find add\" subagent."), "{sub_system}");
    assert!(!sub_system.contains("# Permission mode"));
    let names = tool_names(sub[0]);
    for withheld in ["task", "ask_user", "plan_write", "plan_update", "plan_submit"] {
        assert!(!names.contains(&withheld.to_owned()), "{withheld} offered to a subagent");
    }
    assert!(names.contains(&"read".to_owned()) && names.contains(&"edit".to_owned()));
    let brief = sub[0]["messages"][1]["content"].as_str().unwrap();
    assert!(brief.starts_with("Where is add defined? Report the line."), "{brief}");
    assert!(!brief.contains("Why does add fail?"), "the subagent sees nothing of the conversation");
    assert!(tool_results(sub[1])[0].contains("a - b"), "it read the file itself");

    // The main agent gets the report alone, as the task's result, and its prefix holds.
    let results = tool_results(main[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].starts_with("[#0001]"), "{}", results[0]);
    assert!(results[0].contains("add is defined at src/lib.rs:1"), "{}", results[0]);
    assert!(!results[0].contains("pub fn add"), "the file's text stays in the subagent's context");
    assert_prefix_kept(&[main[0].clone(), main[1].clone()]);

    // The front ends saw the subagent's steps, marked with the task's call.
    let events = session.drain();
    let call_id = events
        .iter()
        .find_map(|e| match e {
            Event::ToolStart { call_id, tool, title, .. } if tool == "task" => {
                assert_eq!(title, "find add");
                Some(call_id.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(events.iter().any(|e| matches!(e,
        Event::Subagent { call_id: c, agent, event, .. } if *c == call_id && agent == "find add"
            && matches!(event.as_ref(), Event::ToolStart { tool, .. } if tool == "read"))));
    assert!(events.iter().any(|e| matches!(e,
        Event::Phase { progress: Some(p) } if matches!(p.phase, lembas_progress::Phase::WaitingForSubagents { running: 1 }))));

    // Its conversation is kept, under the session it worked for, and never listed on its own.
    let children = h.store.children(session.id()).unwrap();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].title, "find add");
    assert_eq!(children[0].messages, 4, "brief, call, result, report");
    assert!(h.store.list(None).unwrap().iter().all(|s| s.id != children[0].id));
}

#[tokio::test]
async fn another_model_only_when_the_person_named_it() {
    let h = Harness::new(vec![
        task(json!({"description": "review", "prompt": "Review src/lib.rs.", "model": "big-coder"})),
        Scripted::text("I will do it myself."),
        task(json!({"description": "review", "prompt": "Review src/lib.rs.", "model": "big-coder"})),
        Scripted::text("Reviewed."),
    ])
    .await;
    h.server.route(SUBAGENT, vec![Scripted::text("The review: add subtracts.")]);
    let mut cfg = h.config(Mode::Edit, 20);
    let own = cfg.model.clone();
    cfg.models = vec![own, ModelInfo { id: "big-coder".into(), name: Some("Big Coder".into()), ..Default::default() }];
    let mut session = h.start_with(cfg);
    let cancel = CancellationToken::new();
    session.prompt("Review the library.", &cancel).await;
    let refused = tool_results(&h.server.chat_requests()[1]);
    assert!(refused[0].ends_with("Use another model for subagents only when the person names it."), "{refused:?}");

    // Named in the person's own words (by its display name): now it may run there.
    session.prompt("Have big coder review it.", &cancel).await;
    session.prompt("Ask Big Coder, then.", &cancel).await;
    let requests = h.server.chat_requests();
    let sub: Vec<&Value> = requests.iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0]["model"], "big-coder");
    let last = requests.iter().rev().find(|r| !system(r).contains(SUBAGENT)).unwrap();
    assert!(tool_results(last).last().unwrap().contains("The review: add subtracts."));
}

#[tokio::test]
async fn a_subagent_has_its_parents_mode_and_asks_the_person_by_name() {
    let h = Harness::new(vec![
        task(json!({"description": "fix add", "prompt": "Make add in src/lib.rs add."})),
        Scripted::text("Fixed."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![
            Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
            Scripted::tool_call("edit", json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})),
            Scripted::tool_call("bash", json!({"command": "rm -rf /"})),
            Scripted::text("Changed a - b to a + b (src/lib.rs:2)."),
        ],
    );
    let approver = Arc::new(Answering::new(Approval::Once));
    let mut cfg = h.config(Mode::Manual, 20);
    cfg.approver = approver.clone();
    let mut session = h.start_with(cfg);
    session.prompt("Fix add.", &CancellationToken::new()).await;

    // Manual mode holds for the subagent: its edit was asked, on a card naming it.
    let asked = approver.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].tool, "edit");
    assert_eq!(asked[0].agent.as_deref(), Some("fix add"));
    let main = h.server.chat_requests().into_iter().rev().find(|r| !system(r).contains(SUBAGENT)).unwrap();
    let task_call = main["messages"][2]["tool_calls"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(asked[0].call_id, task_call, "asked under the task call, the one a client knows");
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a + b"));
    // The floor holds too: never asked, refused.
    let sub: Vec<Value> = h.server.chat_requests().into_iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    let results = tool_results(&sub[3]);
    assert!(results[2].contains("Refused in every mode"), "{results:?}");
}

#[tokio::test]
async fn a_background_subagents_report_wakes_the_session_as_a_job_note() {
    let h = Harness::new(vec![
        task(json!({"description": "count files", "prompt": "Count the files in src.", "background": true})),
        Scripted::text("It runs; I will wait for its report."),
        Scripted::text("The subagent says there is one file."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![Scripted::tool_call("list", json!({"path": "src"})), Scripted::text("One file: src/lib.rs.")],
    );
    let mut session = h.start_with(h.config(Mode::Edit, 20));
    let cancel = CancellationToken::new();
    session.prompt("How many files are in src?", &cancel).await;
    let main: Vec<Value> = h.server.chat_requests().into_iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    let started = tool_results(&main[1]);
    assert!(started[0].contains("Started job1"), "{started:?}");

    // Nobody comes back later: the session waits for its job, and the report wakes it.
    let woke =
        tokio::time::timeout(std::time::Duration::from_secs(20), session.settle(std::time::Duration::from_secs(60)))
            .await
            .unwrap();
    assert_eq!(woke, Some(DoneReason::Answered));
    let requests = h.server.chat_requests();
    let last = requests.iter().rev().find(|r| !system(r).contains(SUBAGENT)).unwrap();
    let note = last["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap();
    assert!(note.starts_with("[A background job you started has finished:]"), "{note}");
    assert!(note.contains("job1 (subagent: count files) ended after"), "{note}");
    assert!(note.contains("One file: src/lib.rs."), "{note}");
    let events = session.drain();
    assert!(events.iter().any(|e| matches!(e, Event::Prompt { machine: true, .. })));
}

#[tokio::test]
async fn a_background_subagent_is_stopped_with_job_stop() {
    let h = Harness::new(vec![
        task(json!({"description": "slow", "prompt": "Take your time.", "background": true})),
        Scripted::tool_call("job_stop", json!({"id": "job1"})),
        Scripted::tool_call("job_list", json!({})),
        Scripted::text("Stopped it."),
    ])
    .await;
    // The subagent's reply is slow enough to be stopped in the middle.
    h.server.route(SUBAGENT, vec![Scripted::text("x ".repeat(400)).with_delay_ms(20)]);
    let mut session = h.start(Mode::Edit);
    session.prompt("Start it, then stop it.", &CancellationToken::new()).await;
    let requests: Vec<Value> = h.server.chat_requests().into_iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    let results = tool_results(requests.last().unwrap());
    assert_eq!(results[1], "[#0002]\nStopped job1.", "{results:?}");
    assert!(results[2].contains("job1 was stopped") && results[2].contains("subagent: slow"), "{results:?}");
}

#[tokio::test]
async fn a_subagent_whose_window_fills_reports_instead_of_compacting() {
    let h = Harness::new(vec![
        task(json!({"description": "read it all", "prompt": "Read everything."})),
        Scripted::text("It ran out of room; here is what it found."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![
            // 90,000 of the window's 100,000 tokens: past where compaction would start.
            Scripted::tool_call("read", json!({"path": "src/lib.rs"})).with_usage(90_000, 10, 0),
            Scripted::text("So far: add subtracts (src/lib.rs:2)."),
        ],
    );
    let mut session = h.start(Mode::Edit);
    session.prompt("Read the project.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let sub: Vec<&Value> = requests.iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    assert_eq!(sub.len(), 2, "no compaction request");
    let last = sub[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap();
    assert!(last.starts_with("The context window for this prompt has been reached"), "{last}");
    let main = requests.iter().rev().find(|r| !system(r).contains(SUBAGENT)).unwrap();
    let report = tool_results(main).pop().unwrap();
    assert!(report.contains("stopped at a limit") && report.contains("So far: add subtracts"), "{report}");
}

#[tokio::test]
async fn tasks_in_one_reply_run_side_by_side() {
    let h = Harness::new(vec![
        Scripted::tool_call("task", json!({"description": "alpha", "prompt": "Look at src."}))
            .with_call("task", &json!({"description": "beta", "prompt": "Look at AGENTS.md."}).to_string()),
        Scripted::text("Both reported."),
    ])
    .await;
    for name in ["alpha", "beta"] {
        h.server.route(
            &format!("You are the \"{name}\" subagent."),
            vec![
                // Slow enough that, run one after the other, the second could not start in time.
                Scripted::tool_call("list", json!({})).with_delay_ms(150),
                Scripted::text(format!("{name} is done.")),
            ],
        );
    }
    let mut session = h.start(Mode::Edit);
    session.prompt("Look at both.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let who = |r: &Value| ["alpha", "beta"].into_iter().find(|n| system(r).contains(&format!("\"{n}\" subagent")));
    let order: Vec<(&str, usize)> =
        requests.iter().filter_map(|r| who(r).map(|n| (n, r["messages"].as_array().unwrap().len()))).collect();
    assert_eq!(order.len(), 4, "{order:?}");
    // Both had asked their first question before either asked its second.
    assert!(order[..2].iter().all(|(_, messages)| *messages == 2), "{order:?}");
    let results = tool_results(requests.last().unwrap());
    assert!(results[0].contains("alpha is done.") && results[1].contains("beta is done."), "{results:?}");
}

#[tokio::test]
async fn stopping_the_turn_stops_its_subagent() {
    let h = Harness::new(vec![task(json!({"description": "slow", "prompt": "Take your time."}))]).await;
    h.server.route(SUBAGENT, vec![Scripted::text("x ".repeat(500)).with_delay_ms(20)]);
    let mut session = h.start(Mode::Edit);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let done = tokio::time::timeout(std::time::Duration::from_secs(5), session.prompt("Go.", &cancel)).await;
    assert_eq!(done.expect("the subagent stops with the turn"), DoneReason::Cancelled);
    // The stored conversation is one a server accepts: the task call has its result.
    let messages = h.store.messages(session.id()).unwrap();
    let last: Value = serde_json::from_str(&messages.last().unwrap().json).unwrap();
    assert_eq!(last["role"], "tool", "{last}");
    assert!(last["content"].as_str().unwrap().contains("was stopped before it finished"), "{last}");
}

#[tokio::test]
async fn an_explore_subagent_only_reads_and_searches() {
    let h = Harness::new(vec![
        task(json!({"description": "survey", "prompt": "What is in src?", "agent": "explore"})),
        task(json!({"description": "survey", "prompt": "What is in src?", "agent": "wizard"})),
        Scripted::text("Surveyed."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![
            // Asked for a tool it does not have, it is told which it has.
            Scripted::tool_call("bash", json!({"command": "touch x"})),
            Scripted::text("src has lib.rs."),
        ],
    );
    let mut session = h.start(Mode::Auto);
    session.prompt("Survey the code.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let sub: Vec<&Value> = requests.iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    // What the definitions say only reads (`risk: read`).
    assert_eq!(
        tool_names(sub[0]),
        [
            "glob",
            "grep",
            "job_list",
            "job_output",
            "list",
            "note_view",
            "notes_search",
            "read",
            "recall",
            "session_search",
            "skill_view",
            "skills_list"
        ]
    );
    assert!(system(sub[0]).contains("none to change anything or run commands"));
    assert!(tool_results(sub[1])[0].contains("There is no tool called bash here"), "{:?}", tool_results(sub[1]));
    assert!(!h.root.join("x").exists());
    let main: Vec<&Value> = requests.iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    let results = tool_results(main.last().unwrap());
    assert!(results[0].contains("src has lib.rs."));
    assert!(results[1].contains("There is no agent called wizard"), "{results:?}");
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test]
async fn subagents_in_worktrees_change_files_on_branches_of_their_own() {
    let h = Harness::new(vec![
        Scripted::tool_call("task", json!({"description": "plus", "prompt": "Make add add.", "worktree": true}))
            .with_call("task", &json!({"description": "look", "prompt": "Read lib.rs.", "worktree": true}).to_string()),
        Scripted::text("Merged nothing yet."),
    ])
    .await;
    git(&h.root, &["init", "-q"]);
    git(&h.root, &["add", "-A"]);
    git(&h.root, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"]);
    h.server.route(
        "You are the \"plus\" subagent.",
        vec![
            Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
            Scripted::tool_call("edit", json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})),
            Scripted::text("add adds now (src/lib.rs:2)."),
        ],
    );
    h.server.route(
        "You are the \"look\" subagent.",
        vec![Scripted::tool_call("read", json!({"path": "src/lib.rs"})), Scripted::text("It subtracts.")],
    );
    let mut session = h.start(Mode::Auto);
    session.prompt("Fix add, and have a look too.", &CancellationToken::new()).await;

    // The project itself is untouched; the change is a commit on the subagent's branch.
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
    let branches = git(&h.root, &["branch", "--list", "lembas/*", "--format=%(refname:short)"]);
    let branches: Vec<&str> = branches.lines().collect();
    assert_eq!(branches.len(), 1, "the one that changed nothing left no branch: {branches:?}");
    assert!(branches[0].starts_with("lembas/plus-"));
    assert!(git(&h.root, &["show", &format!("{}:src/lib.rs", branches[0])]).contains("a + b"));
    assert_eq!(git(&h.root, &["log", "-1", "--format=%s", branches[0]]), "lembas subagent: plus");

    let requests = h.server.chat_requests();
    let main = requests.iter().rev().find(|r| !system(r).contains(SUBAGENT)).unwrap();
    let results = tool_results(main);
    assert!(results[0].contains(&format!("committed on branch {}", branches[0])), "{results:?}");
    assert!(results[0].contains(&format!("git merge {}", branches[0])), "{results:?}");
    assert!(results[1].contains("It changed no file; its worktree was removed."), "{results:?}");
    // Each worked in its own checkout: a read there shows the project's paths, not the checkout's.
    let sub = requests.iter().find(|r| system(r).contains("\"plus\" subagent")).unwrap();
    assert!(system(sub).contains(&format!("on branch {}", branches[0])), "it is told where it works");
    assert!(!system(sub).contains(&h.root.display().to_string()), "the prompt names no machine path");
}

#[tokio::test]
async fn a_worktree_needs_a_git_repository() {
    let h = Harness::new(vec![
        task(json!({"description": "x", "prompt": "Do it.", "worktree": true})),
        Scripted::text("Could not."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    session.prompt("Go.", &CancellationToken::new()).await;
    let results = tool_results(&h.server.chat_requests()[1]);
    assert!(results[0].contains("worktree: true needs a git repository"), "{results:?}");
}

#[tokio::test]
async fn subagents_switched_off_or_impossible_are_not_offered() {
    let h = Harness::new(vec![Scripted::text("Alone."), Scripted::text("Alone again.")]).await;
    let mut off = h.config(Mode::Edit, 5);
    off.subagents = false;
    h.start_with(off).prompt("hi", &CancellationToken::new()).await;
    // A model that serves one request at a time, with no other model to turn to.
    let mut single = h.config(Mode::Edit, 5);
    single.model.capacity = Some(lembas_models::Capacity { group: None, single_session: Some(true), parallel: None });
    h.start_with(single).prompt("hi", &CancellationToken::new()).await;
    for request in h.server.chat_requests() {
        assert!(!tool_names(&request).contains(&"task".to_owned()));
    }
}

#[tokio::test]
async fn for_this_session_on_a_subagents_card_holds_for_the_whole_session() {
    let h = Harness::new(vec![
        task(json!({"description": "make it", "prompt": "Touch made.txt."})),
        Scripted::tool_call("bash", json!({"command": "touch made.txt"})),
        Scripted::text("Touched it again."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![Scripted::tool_call("bash", json!({"command": "touch made.txt"})), Scripted::text("Touched.")],
    );
    let approver = Arc::new(Answering::new(Approval::Always));
    let mut cfg = h.config(Mode::Manual, 20);
    cfg.approver = approver.clone();
    let mut session = h.start_with(cfg);
    session.prompt("Touch it twice.", &CancellationToken::new()).await;
    let asked = approver.asked();
    assert_eq!(asked.len(), 1, "the main agent's own call was allowed by the subagent's answer: {asked:?}");
    assert_eq!(asked[0].agent.as_deref(), Some("make it"));
    let main: Vec<Value> = h.server.chat_requests().into_iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    assert!(!tool_results(main.last().unwrap()).last().unwrap().contains("Not run"));
}

#[tokio::test]
async fn subagent_run_is_tasks_alias() {
    let h = Harness::new(vec![
        Scripted::tool_call(
            "subagent_run",
            json!({"description": "look", "prompt": "Report the first line of src/lib.rs."}),
        ),
        Scripted::text("Reported."),
    ])
    .await;
    h.server.route(SUBAGENT, vec![Scripted::text("pub fn add(a: i32, b: i32) -> i32 {")]);
    let mut session = h.start(Mode::Edit);
    assert_eq!(session.prompt("go", &CancellationToken::new()).await, DoneReason::Answered);
    let main: Vec<Value> = h.server.chat_requests().into_iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    let results = tool_results(main.last().unwrap());
    assert_eq!(results[0].lines().last().unwrap(), "pub fn add(a: i32, b: i32) -> i32 {", "{results:?}");
}

#[tokio::test]
async fn job_send_wakes_a_background_subagent_that_reported() {
    let h = Harness::new(vec![
        task(json!({"description": "count files", "prompt": "Count the files in src.", "background": true})),
        Scripted::text("Waiting for its report."),
        // Woken by the report: ask the finished subagent for more.
        Scripted::tool_call("job_send", json!({"id": "job1", "input": "And how many lines does it have?"})),
        Scripted::text("Asked it again."),
        Scripted::text("It says three lines."),
    ])
    .await;
    h.server
        .route(SUBAGENT, vec![Scripted::text("One file: src/lib.rs."), Scripted::text("src/lib.rs has three lines.")]);
    let mut session = h.start_with(h.config(Mode::Edit, 20));
    let cancel = CancellationToken::new();
    session.prompt("How many files are in src?", &cancel).await;
    let settled =
        tokio::time::timeout(std::time::Duration::from_secs(20), session.settle(std::time::Duration::from_secs(60)))
            .await
            .unwrap();
    assert_eq!(settled, Some(DoneReason::Answered));
    let requests = h.server.chat_requests();
    let sub: Vec<&Value> = requests.iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    assert_eq!(sub.len(), 2, "the subagent was asked twice");
    // Woken with its context intact: its first report is still in its conversation.
    let second = sub[1]["messages"].to_string();
    assert!(second.contains("One file: src/lib.rs.") && second.contains("And how many lines"), "{second}");
    let main: Vec<&Value> = requests.iter().filter(|r| !system(r).contains(SUBAGENT)).collect();
    let sent = tool_results(main[main.len() - 2]);
    assert!(sent.iter().any(|r| r.contains("Woke job1")), "{sent:?}");
    let last = main.last().unwrap()["messages"].to_string();
    assert!(last.contains("three lines"), "the second report reached the session: {last}");
}

#[tokio::test]
async fn a_custom_agent_runs_with_its_instructions_its_tools_and_no_looser_mode() {
    let h = Harness::new(vec![
        task(json!({"description": "review", "prompt": "Review src/lib.rs.", "agent": "reviewer"})),
        Scripted::text("Reviewed."),
    ])
    .await;
    h.server.route(
        SUBAGENT,
        vec![Scripted::tool_call("write", json!({"path": "x.txt", "content": "no"})), Scripted::text("add subtracts.")],
    );
    let mut cfg = h.config(Mode::Auto, 50);
    let text = "---\nname: reviewer\ndescription: Reviews a change. Use it after edits.\ntools: Read, Grep, Write\nmode: manual\nmodel: opus\n---\nName each bug with its line.\n";
    cfg.agent_files = vec![lembas_tools::agents::parse(text).unwrap()].into();
    let mut session = h.start_with(cfg);
    session.prompt("Review the code.", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    // The main agent is offered it, named with its description's first sentence.
    let task_def = requests[0]["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "task").unwrap();
    let agent = &task_def["function"]["parameters"]["properties"]["agent"];
    assert_eq!(agent["enum"], json!(["general", "explore", "reviewer"]));
    assert!(agent["description"].as_str().unwrap().contains("reviewer: Reviews a change."), "{agent}");
    // Its subagent: its instructions, only the tools it names, and manual mode under auto — its
    // write was asked of nobody and refused, not done.
    let sub: Vec<&Value> = requests.iter().filter(|r| system(r).contains(SUBAGENT)).collect();
    assert!(system(sub[0]).contains("Name each bug with its line."), "{}", system(sub[0]));
    assert_eq!(tool_names(sub[0]), ["grep", "read", "write"]);
    assert!(!h.root.join("x.txt").exists());
}

#[tokio::test]
async fn a_subagents_calls_run_the_hooks_too_named_in_their_input() {
    let h = Harness::new(vec![
        task(json!({"description": "look", "prompt": "Read src/lib.rs.", "agent": "explore"})),
        Scripted::text("Looked."),
    ])
    .await;
    h.server.route(SUBAGENT, vec![Scripted::tool_call("read", json!({"path": "src/lib.rs"})), Scripted::text("Read.")]);
    let seen = h.root.join("../hook-inputs");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": format!("cat >> {}; echo >> {}", seen.display(), seen.display())}]}]}});
    let (hooks, _) = lembas_hooks::Hooks::from_claude_settings(&settings.to_string(), "test").unwrap();
    let mut cfg = h.config(Mode::Auto, 50);
    cfg.hooks = Arc::new(hooks);
    let mut session = h.start_with(cfg);
    session.prompt("Have a look.", &CancellationToken::new()).await;
    let inputs = std::fs::read_to_string(&seen).unwrap();
    let input: Value = serde_json::from_str(inputs.lines().next().unwrap()).unwrap();
    assert_eq!((input["agent"].as_str(), input["tool_name"].as_str()), (Some("look"), Some("Read")));
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert!(input["tool_input"]["file_path"].as_str().unwrap().ends_with("src/lib.rs"), "{input}");
}

#[tokio::test]
async fn a_card_that_waits_for_the_person_runs_the_notification_hooks_beside_it() {
    let h = Harness::new(vec![
        Scripted::tool_call("write", json!({"path": "x.txt", "content": "x"})),
        Scripted::text("Wrote it."),
    ])
    .await;
    let told = h.root.join("../told");
    let command = format!("cat > {}", told.display());
    let settings = json!({"hooks": {"Notification": [{"hooks": [{"type": "command", "command": command}]}]}});
    let (hooks, _) = lembas_hooks::Hooks::from_claude_settings(&settings.to_string(), "test").unwrap();
    let approver = Arc::new(Answering::new(Approval::Once));
    let mut cfg = h.config(Mode::Manual, 20);
    cfg.approver = approver.clone();
    cfg.hooks = Arc::new(hooks);
    let mut session = h.start_with(cfg);
    session.prompt("Write x.", &CancellationToken::new()).await;
    assert_eq!(approver.asked().len(), 1);
    let mut input = None;
    for _ in 0..100 {
        if let Some(text) = std::fs::read_to_string(&told).ok().filter(|t| !t.is_empty()) {
            input = serde_json::from_str::<Value>(&text).ok();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let input = input.expect("the hook ran");
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["message"], "lembas needs your permission to use Write");
}
