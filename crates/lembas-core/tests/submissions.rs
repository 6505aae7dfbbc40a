//! Submissions with ids: what a command causes comes back marked with its id, and a prompt sent
//! again under the same id is answered by the turn it already started.

use std::time::Duration;

use lembas_core::{Command, Event, Host, OpenSession, Opened, Said, Start, Submission, SubmissionId};
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

mod common;
use common::*;

/// What the session says until one matches `until` (that one included); fails after ten seconds.
async fn until(events: &mut UnboundedReceiver<Said>, mut until: impl FnMut(&Said) -> bool) -> Vec<Said> {
    let mut seen = Vec::new();
    loop {
        let said = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap_or_else(|_| panic!("waited in vain; saw {seen:#?}"))
            .expect("the session's events ended");
        let done = until(&said);
        seen.push(said);
        if done {
            return seen;
        }
    }
}

fn submit(handle: &lembas_core::SessionHandle, id: &str, command: Command) -> SubmissionId {
    let id = SubmissionId::from(id);
    assert!(handle.submit(Submission { id: id.clone(), command }));
    id
}

fn done_text(said: &Said) -> Option<&str> {
    match &said.event {
        Event::Done { text, .. } => Some(text),
        _ => None,
    }
}

#[tokio::test]
async fn what_a_submission_causes_carries_its_id_and_a_setting_during_a_turn_its_own() {
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})).with_delay_ms(200),
        Scripted::text("Read it."),
    ])
    .await;
    let host = Host::new(h.store.clone());
    let start = Start::New { root: h.root.clone(), cwd: h.root.clone() };
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: h.config(Mode::Edit, 50), start, attended: false }).unwrap();
    let prompt = submit(&handle, "prompt-1", Command::prompt("read the library"));
    until(&mut events, |s| matches!(s.event, Event::Step { n: 1 })).await;
    let mode = submit(&handle, "mode-1", Command::SetMode { mode: Mode::Auto });
    let seen = until(&mut events, |s| s.answers(&prompt) && done_text(s).is_some()).await;
    assert_eq!(done_text(seen.last().unwrap()), Some("Read it."));
    let changed: Vec<&Said> = seen.iter().filter(|s| matches!(s.event, Event::Mode { .. })).collect();
    assert_eq!(changed.len(), 1, "{seen:#?}");
    assert!(changed[0].answers(&mode), "the mode change answers its own submission: {:?}", changed[0]);
    for said in seen.iter().filter(|s| !matches!(s.event, Event::Mode { .. })) {
        assert!(said.answers(&prompt), "the turn's events carry the prompt's id: {said:?}");
    }
    // A change of state nothing else would say is answered too: the team's size.
    let agents = submit(&handle, "agents-1", Command::SetAgents { min: 1, max: 3 });
    let seen = until(&mut events, |s| s.answers(&agents)).await;
    assert_eq!(seen.last().unwrap().event, Event::Agents { min: 1, max: 3 });
    // One that fails is answered by the error, under its id.
    let effort = submit(&handle, "effort-1", Command::SetEffort { level: Some("extreme".into()) });
    let seen = until(&mut events, |s| s.answers(&effort)).await;
    assert!(matches!(&seen.last().unwrap().event, Event::Error { message } if message.contains("extreme")));
    handle.close().await;
    let last = until(&mut events, |s| matches!(s.event, Event::Closed)).await;
    assert_eq!(last.last().unwrap().submission, None, "closing is nobody's answer");
}

#[tokio::test]
async fn a_prompt_sent_again_under_its_id_is_answered_by_the_turn_it_started_even_after_a_resume() {
    let h = Harness::new(vec![
        Scripted::text("The first answer.").with_delay_ms(200),
        Scripted::text("The second answer."),
    ])
    .await;
    let host = Host::new(h.store.clone());
    let start = Start::New { root: h.root.clone(), cwd: h.root.clone() };
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: h.config(Mode::Edit, 50), start, attended: false }).unwrap();
    let run = submit(&handle, "run7", Command::prompt("check the build"));
    // Sent again while its turn runs (a link that dropped and came back): the same turn.
    submit(&handle, "run7", Command::prompt("check the build"));
    let seen = until(&mut events, |s| s.answers(&run) && done_text(s).is_some()).await;
    assert_eq!(done_text(seen.last().unwrap()), Some("The first answer."));
    // Sent again once it ended: its answer again, and no second request to the model.
    submit(&handle, "run7", Command::prompt("check the build"));
    let seen = until(&mut events, |s| done_text(s).is_some()).await;
    assert!(seen.last().unwrap().answers(&run));
    assert_eq!(done_text(seen.last().unwrap()), Some("The first answer."));
    assert!(seen.iter().all(|s| !matches!(s.event, Event::Prompt { .. })), "no second turn: {seen:#?}");
    assert_eq!(h.server.chat_requests().len(), 1);
    // Another id is another turn.
    let next = submit(&handle, "run8", Command::prompt("and again"));
    let seen = until(&mut events, |s| s.answers(&next) && done_text(s).is_some()).await;
    assert_eq!(done_text(seen.last().unwrap()), Some("The second answer."));
    let id = handle.id().to_owned();
    handle.close().await;
    drop(events);

    // Another process (a new host) holding the session: the stored turn still answers its id.
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: h.config(Mode::Edit, 50), start: Start::Resume(id), attended: false }).unwrap();
    submit(&handle, "run7", Command::prompt("check the build"));
    let seen = until(&mut events, |s| done_text(s).is_some()).await;
    assert!(seen.last().unwrap().answers(&run));
    assert_eq!(done_text(seen.last().unwrap()), Some("The first answer."));
    assert_eq!(h.server.chat_requests().len(), 2, "nothing more was asked of the model");
    handle.close().await;
}
