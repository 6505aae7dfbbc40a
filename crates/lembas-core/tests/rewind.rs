//! Rewind: back to before an earlier turn — its files and every later turn's put back, those
//! turns out of the conversation — and the next request's prefix as it was then.

mod common;

use common::{Driven, Harness};
use lembas_core::{Command, Event};
use lembas_model::CancellationToken;
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::{Value, json};

async fn listed(session: &mut Driven) -> Vec<lembas_protocol::TurnPoint> {
    let said = session.carry(Command::ReportTurns, &CancellationToken::new()).await;
    said.into_iter()
        .find_map(|e| match e {
            Event::Turns { turns } => Some(turns),
            _ => None,
        })
        .expect("the turns")
}

/// Five turns, turn N writing `tN.txt` and changing `src/lib.rs`'s comment to N.
async fn five_turns() -> (Harness, Driven) {
    let mut script = Vec::new();
    for n in 1..=5 {
        script
            .push(Scripted::tool_call("write", json!({"path": format!("t{n}.txt"), "content": format!("turn {n}\n")})));
        script.push(Scripted::text(format!("Wrote t{n}.txt.")));
    }
    script.push(Scripted::text("Again, from turn 2."));
    let h = Harness::new(script).await;
    let mut session = h.start(Mode::Auto);
    for n in 1..=5 {
        session.prompt(&format!("write file {n}"), &CancellationToken::new()).await;
    }
    (h, session)
}

#[tokio::test]
async fn rewinding_to_the_second_of_five_turns_takes_back_its_files_and_conversation() {
    let (h, mut session) = five_turns().await;
    let turns = listed(&mut session).await;
    let words: Vec<&str> = turns.iter().map(|t| t.words.as_str()).collect();
    assert_eq!(words, ["write file 1", "write file 2", "write file 3", "write file 4", "write file 5"]);
    // Each with its number, when it began, and the file it changed: what a picker shows.
    for (i, turn) in turns.iter().enumerate() {
        assert_eq!((turn.number, turn.files.clone()), (i as u32 + 1, vec![format!("t{}.txt", i + 1)]));
        // Its prompt's submission id is kept with it (a prompt sent again is recognised).
        assert!(turn.at_ms.is_some_and(|at| at > 0) && turn.submission.is_some());
    }

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
    let (h, mut session) = five_turns().await;
    // Each turn that kept snapshots says how big the project's store is, for /usage.
    let sizes: Vec<(u64, u64)> = session
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::SnapshotStore { bytes, cap } => Some((bytes, cap)),
            _ => None,
        })
        .collect();
    assert_eq!(sizes.len(), 5);
    assert!(sizes.iter().all(|&(bytes, cap)| bytes > 0 && cap == 1 << 30), "{sizes:?}");
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
    assert!(matches!(session.rewind(3, true, true).await, Err(m) if m.contains("turns 1 to 2")));
}

#[tokio::test]
async fn a_fork_starts_a_new_session_from_before_a_turn_and_leaves_the_old_one_whole() {
    let (h, mut session) = five_turns().await;
    let (old_messages, old_marks) =
        (h.store.messages(session.id()).unwrap(), h.store.checkpoints(session.id()).unwrap());
    let fork = session.fork(2, true).await.unwrap();
    assert_ne!(fork, session.id());
    let said = session.drain();
    let forked = said.iter().find_map(|e| match e {
        Event::Forked { id, prompt, files } => Some((id.clone(), prompt.clone(), files.removed.clone())),
        _ => None,
    });
    assert_eq!(
        forked,
        Some((
            fork.clone(),
            "write file 2".to_owned(),
            vec!["t2.txt".into(), "t3.txt".into(), "t4.txt".into(), "t5.txt".into()]
        ))
    );
    assert!(h.root.join("t1.txt").exists() && !h.root.join("t2.txt").exists());

    // The old session: every message and turn as it was, and it goes on.
    assert_eq!(h.store.messages(session.id()).unwrap(), old_messages);
    assert_eq!(h.store.checkpoints(session.id()).unwrap(), old_marks);
    assert_eq!(listed(&mut session).await.len(), 5);
    // The fork: turn 1 alone, its title saying what it is, and its next request the second
    // turn's first request byte for byte but for the new words.
    assert_eq!(h.store.checkpoints(&fork).unwrap().len(), 1);
    assert!(h.store.session(&fork).unwrap().unwrap().title.ends_with("(fork)"));
    let mut forked = h.resume(h.config(Mode::Auto, 50), &fork);
    assert_eq!(listed(&mut forked).await.len(), 1);
    forked.prompt("write file 2 another way", &CancellationToken::new()).await;
    let requests = h.server.chat_requests();
    let (then, now) = (&requests[2], requests.last().unwrap());
    let (before, after) = (then["messages"].as_array().unwrap(), now["messages"].as_array().unwrap());
    assert_eq!(before[..before.len() - 1], after[..after.len() - 1]);
    assert_eq!(then["tools"], now["tools"]);
    // The fork's own undo goes back to its own turns: the one just made, then turn 1.
    assert_eq!(forked.undo().await.unwrap().prompt.as_deref(), Some("write file 2 another way"));
    assert_eq!(forked.undo().await.unwrap().prompt.as_deref(), Some("write file 1"));
    assert!(!h.root.join("t1.txt").exists(), "turn 1's snapshots came with the fork");
    assert_eq!(h.store.messages(session.id()).unwrap(), old_messages, "the old one is still whole");
}

#[tokio::test]
async fn a_fork_that_leaves_the_files_touches_none_and_a_turn_out_of_range_is_refused() {
    let (h, mut session) = five_turns().await;
    let fork = session.fork(3, false).await.unwrap();
    for n in 1..=5 {
        assert!(h.root.join(format!("t{n}.txt")).exists());
    }
    assert_eq!(h.store.checkpoints(&fork).unwrap().len(), 2);
    assert!(matches!(session.fork(9, false).await, Err(m) if m.contains("turns 1 to 5")));
}
