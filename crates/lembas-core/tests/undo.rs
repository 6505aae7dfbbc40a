//! Undo: the last turn the person started is taken back — its file changes put back, its
//! messages out of the conversation — and the next request keeps everything before it.

mod common;

use common::{Harness, tool_results};
use lembas_core::Event;
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::{Value, json};

fn edit(old: &str, new: &str) -> Scripted {
    Scripted::tool_call("edit", json!({"path": "src/lib.rs", "old_string": old, "new_string": new}))
}

#[tokio::test]
async fn undo_puts_the_files_back_and_takes_the_turn_out_of_the_conversation() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
        edit("a - b", "a + b"),
        Scripted::text("Fixed add."),
        edit("a + b", "a * b"),
        Scripted::tool_call("write", json!({"path": "src/extra.rs", "content": "pub fn extra() {}\n"})),
        Scripted::text("Made it multiply, and added extra."),
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
        Scripted::text("It adds."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    let cancel = CancellationToken::new();
    session.prompt("fix add", &cancel).await;
    session.prompt("make it multiply", &cancel).await;
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a * b"));
    assert!(h.root.join("src/extra.rs").exists());
    let stored_before = h.store.messages(session.id()).unwrap().len();

    let undone = session.undo().await.unwrap();
    assert_eq!(undone.prompt.as_deref(), Some("make it multiply"));
    assert_eq!(undone.files.put_back, ["src/lib.rs"]);
    assert_eq!(undone.files.removed, ["src/extra.rs"]);
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a + b"), "as the first turn left it");
    assert!(!h.root.join("src/extra.rs").exists(), "made in the undone turn: gone");
    assert_eq!(h.store.messages(session.id()).unwrap().len(), stored_before - 6, "the turn's six messages");
    for event in session.drain() {
        if let Event::Undone { prompt, .. } = event {
            assert_eq!(prompt.as_deref(), Some("make it multiply"));
        }
    }

    // The next request: the first turn as it was sent, then the new words.
    session.prompt("what does add do now?", &cancel).await;
    let requests = h.server.chat_requests();
    let (first_turn_last, after) = (&requests[2], &requests[6]);
    let before: &Vec<Value> = first_turn_last["messages"].as_array().unwrap();
    let now: &Vec<Value> = after["messages"].as_array().unwrap();
    assert_eq!(now[..before.len() + 1][..before.len()], before[..], "nothing before the undone turn changed");
    assert!(now[before.len() + 1]["content"].as_str().unwrap().starts_with("what does add do now?"));
    // Ids are never reused: the undone turn had #0003 and #0004.
    let results = tool_results(&requests[7]);
    assert!(results.last().unwrap().starts_with("[#0005 src/lib.rs"), "{results:?}");

    // A second undo takes back the turn just made; a third the first turn; then nothing is left.
    session.undo().await.unwrap();
    assert_eq!(session.undo().await.unwrap().prompt.as_deref(), Some("fix add"));
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
    assert!(matches!(session.undo().await, Err(m) if m.contains("nothing to undo")));
}

#[tokio::test]
async fn a_subagents_changes_are_undone_with_the_turn_that_started_it() {
    let h = Harness::new(vec![
        Scripted::tool_call("task", json!({"description": "fix", "prompt": "Make add add."})),
        Scripted::text("Done."),
    ])
    .await;
    h.server.route(
        "You work for the main agent",
        vec![
            Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
            edit("a - b", "a + b"),
            Scripted::tool_call("bash", json!({"command": "echo hi"})),
            Scripted::text("Fixed."),
        ],
    );
    let mut session = h.start(Mode::Auto);
    session.prompt("fix add with a subagent", &CancellationToken::new()).await;
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a + b"));
    let undone = session.undo().await.unwrap();
    assert_eq!(undone.files.put_back, ["src/lib.rs"]);
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
}

#[tokio::test]
async fn what_a_command_changed_is_undone_too_and_the_persons_later_edit_is_kept() {
    let h = Harness::new(vec![
        Scripted::tool_call(
            "bash",
            json!({"command": "sed -i 's/a - b/a + b/' src/lib.rs && rm AGENTS.md && mkdir -p gen && echo made > gen/out.txt && echo x > notes.txt"}),
        ),
        Scripted::text("Ran it."),
    ])
    .await;
    std::fs::write(h.root.join("notes.txt"), "mine\n").unwrap();
    let mut session = h.start(Mode::Auto);
    session.prompt("rewrite things with a command", &CancellationToken::new()).await;
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a + b"));
    assert!(!h.root.join("AGENTS.md").exists());
    // The person changes one of the files the turn changed, before the undo.
    std::fs::write(h.root.join("notes.txt"), "mine, edited again\n").unwrap();

    let undone = session.undo().await.unwrap();
    assert_eq!(undone.files.put_back, ["AGENTS.md", "src/lib.rs"]);
    assert_eq!(undone.files.removed, ["gen/out.txt"]);
    assert_eq!(undone.files.kept, ["notes.txt"]);
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
    assert_eq!(std::fs::read_to_string(h.root.join("AGENTS.md")).unwrap(), "Run cargo test before you finish.\n");
    assert!(!h.root.join("gen").exists());
    assert_eq!(std::fs::read_to_string(h.root.join("notes.txt")).unwrap(), "mine, edited again\n", "never overwritten");
    // Unless the person says so: then it is as it was before the turn.
    let overwritten = session.overwrite_kept().await.unwrap();
    assert_eq!((overwritten.prompt, overwritten.files.put_back), (None, vec!["notes.txt".to_owned()]));
    assert_eq!(std::fs::read_to_string(h.root.join("notes.txt")).unwrap(), "mine\n");
    assert!(matches!(session.overwrite_kept().await, Err(m) if m.contains("No file")));
}

#[tokio::test]
async fn past_a_compaction_the_files_still_come_back_and_the_conversation_stands() {
    let h = Harness::new(vec![
        Scripted::tool_call("bash", json!({"command": "touch made-by-bash"})),
        Scripted::text("Ran it."),
        Scripted::text("Summary: a command ran."),
    ])
    .await;
    let mut session = h.start(Mode::Auto);
    let cancel = CancellationToken::new();
    session.prompt("run it", &cancel).await;
    assert!(h.root.join("made-by-bash").exists());
    session.compact(&cancel).await.unwrap();
    let stored = h.store.messages(session.id()).unwrap().len();
    let undone = session.undo().await.unwrap();
    assert_eq!(undone.prompt, None, "the conversation is behind the summary");
    assert_eq!(undone.files.removed, ["made-by-bash"]);
    assert!(!h.root.join("made-by-bash").exists());
    assert_eq!(h.store.messages(session.id()).unwrap().len(), stored);
    // Its snapshots went with the undo: nothing is left to take back.
    assert!(matches!(session.undo().await, Err(m) if m.contains("nothing to undo")));
}

#[tokio::test]
async fn a_turn_that_only_read_takes_no_snapshot() {
    let h =
        Harness::new(vec![Scripted::tool_call("read", json!({"path": "src/lib.rs"})), Scripted::text("Read.")]).await;
    let mut session = h.start(Mode::Auto);
    session.prompt("read it", &CancellationToken::new()).await;
    let undone = session.undo().await.unwrap();
    assert_eq!(undone.files, Default::default());
    // Its files were read as it opened, and not kept: it changed nothing.
    let stores: Vec<_> = std::fs::read_dir(h._dir.path().join("snapshots"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "git"))
        .collect();
    assert_eq!(stores.len(), 1);
    assert!(!stores[0].path().join("refs/lembas").exists(), "no snapshot is kept for a turn that only read");
}

#[tokio::test]
async fn a_turn_that_never_got_its_message_in_does_not_block_the_undo_before_it() {
    let h = Harness::new(vec![edit_after_read().0, edit_after_read().1, Scripted::text("Fixed.")]).await;
    let mut session = h.start(Mode::Auto);
    session.prompt("fix add", &CancellationToken::new()).await;
    // As a turn whose first message failed to be written leaves it: a checkpoint and nothing after.
    let kept = h.store.messages(session.id()).unwrap().len();
    h.store.checkpoint(session.id(), kept, &serde_json::json!({}), &Default::default()).unwrap();
    let undone = session.undo().await.unwrap();
    assert_eq!(undone.prompt.as_deref(), Some("fix add"));
    assert!(std::fs::read_to_string(h.root.join("src/lib.rs")).unwrap().contains("a - b"));
}

fn edit_after_read() -> (Scripted, Scripted) {
    (Scripted::tool_call("read", json!({"path": "src/lib.rs"})), edit("a - b", "a + b"))
}

#[tokio::test]
async fn undo_gives_back_the_words_typed_not_the_files_attached() {
    let h = Harness::new(vec![Scripted::text("It subtracts.")]).await;
    let mut session = h.start(Mode::Edit);
    let file = lembas_core::Attachment::File { path: "src/lib.rs".into() };
    session.prompt_with("what does @src/lib.rs do?", &[file], &CancellationToken::new()).await;
    let sent = h.server.chat_requests()[0]["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(sent.contains("a - b"), "the file went with the words: {sent}");
    assert_eq!(session.undo().await.unwrap().prompt.as_deref(), Some("what does @src/lib.rs do?"));
}

#[tokio::test]
async fn an_undone_turn_is_not_found_by_a_search() {
    let h = Harness::new(vec![Scripted::text("Noted the pelican."), Scripted::text("Noted the zebra.")]).await;
    let mut session = h.start(Mode::Edit);
    session.prompt("remember the pelican", &CancellationToken::new()).await;
    session.prompt("remember the zebra", &CancellationToken::new()).await;
    assert_eq!(h.store.search("zebra").unwrap().len(), 1);
    session.undo().await.unwrap();
    assert!(h.store.search("zebra").unwrap().is_empty(), "the undone turn's words left the search");
    assert_eq!(h.store.search("pelican").unwrap().len(), 1, "the turn before is still found");
}
