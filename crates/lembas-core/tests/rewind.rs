//! Rewind: back to before an earlier turn — its files and every later turn's put back, those
//! turns out of the conversation — and the next request's prefix as it was then.

mod common;

use common::Harness;
use lembas_core::{EngineError, Event};
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::{Value, json};

/// Five turns, turn N writing `tN.txt` and changing `src/lib.rs`'s comment to N.
async fn five_turns() -> (Harness, lembas_core::Session, tokio::sync::mpsc::UnboundedReceiver<lembas_core::Said>) {
    let mut script = Vec::new();
    for n in 1..=5 {
        script
            .push(Scripted::tool_call("write", json!({"path": format!("t{n}.txt"), "content": format!("turn {n}\n")})));
        script.push(Scripted::text(format!("Wrote t{n}.txt.")));
    }
    script.push(Scripted::text("Again, from turn 2."));
    let h = Harness::new(script).await;
    let (mut session, rx) = h.start(Mode::Auto);
    for n in 1..=5 {
        session.prompt(&format!("write file {n}"), &CancellationToken::new()).await;
    }
    (h, session, rx)
}

#[tokio::test]
async fn rewinding_to_the_second_of_five_turns_takes_back_its_files_and_conversation() {
    let (h, mut session, mut rx) = five_turns().await;
    session.report_turns().unwrap();
    let turns = loop {
        if let Event::Turns { turns } = rx.recv().await.unwrap().event {
            break turns;
        }
    };
    assert_eq!(turns, ["write file 1", "write file 2", "write file 3", "write file 4", "write file 5"]);

    let back = session.rewind(2, true, true).await.unwrap();
    assert_eq!(back.prompt.as_deref(), Some("write file 2"));
    assert_eq!(back.files.removed, ["t2.txt", "t3.txt", "t4.txt", "t5.txt"]);
    assert!(h.root.join("t1.txt").exists());
    for n in 2..=5 {
        assert!(!h.root.join(format!("t{n}.txt")).exists());
    }

    // The next request: everything before turn 2 byte for byte as turn 2's first request sent it.
    session.prompt("write file 2 again", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let (then, now) = (&requests[2], requests.last().unwrap());
    let before: &Vec<Value> = then["messages"].as_array().unwrap();
    let after: &Vec<Value> = now["messages"].as_array().unwrap();
    assert_eq!(before.len(), after.len());
    assert_eq!(before[..before.len() - 1], after[..after.len() - 1]);
    assert_eq!(then["tools"], now["tools"]);
    assert!(after.last().unwrap()["content"].as_str().unwrap().starts_with("write file 2 again"));
}

#[tokio::test]
async fn files_alone_or_the_conversation_alone() {
    let (h, mut session, _rx) = five_turns().await;
    let stored = h.store.messages(session.id()).unwrap().len();
    // The files of turns 4 and 5 back; the conversation stays.
    let back = session.rewind(4, true, false).await.unwrap();
    assert_eq!((back.prompt, back.files.removed), (None, vec!["t4.txt".to_owned(), "t5.txt".to_owned()]));
    assert_eq!(h.store.messages(session.id()).unwrap().len(), stored);
    // Turns 3 on out of the conversation; what they changed on disk stays.
    let back = session.rewind(3, false, true).await.unwrap();
    assert_eq!(back.prompt.as_deref(), Some("write file 3"));
    assert!(back.files.not_back.is_some());
    assert!(h.root.join("t3.txt").exists());
    assert!(h.store.messages(session.id()).unwrap().len() < stored);
    // Only turns 1 and 2 are left to go back to.
    assert!(matches!(session.rewind(3, true, true).await, Err(EngineError::Undo(m)) if m.contains("turns 1 to 2")));
}
