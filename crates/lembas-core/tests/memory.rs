//! The person's memory from a front end (`/memory`): listed as the instance renders it, one entry
//! changed or forgotten by its number through the instance's tool, and the session's first prompt
//! made with the memory as it then stands.

use std::sync::Arc;
use std::time::Duration;

use lembas_core::{Command, Event, Host, OpenSession, Opened, Start};
use lembas_permissions::Mode;
use lembas_protocol::notes::{MemoryChange, NotesAsk, NotesSaid};
use lembas_testkit::{Llembas, MemoryRecords, Scripted};
use tokio::sync::mpsc::UnboundedReceiver;

mod common;
use common::*;

/// What the session says to `ask`, passing by anything else it says meanwhile.
async fn asked(
    handle: &lembas_core::SessionHandle,
    events: &mut UnboundedReceiver<lembas_core::Said>,
    ask: NotesAsk,
) -> NotesSaid {
    handle.send(Command::ReportNotes { ask }).expect("the session is open");
    loop {
        let said =
            tokio::time::timeout(Duration::from_secs(10), events.recv()).await.expect("an answer").expect("events");
        if let Event::Notes { said } = said.event {
            return said;
        }
    }
}

fn text(said: NotesSaid) -> String {
    match said {
        NotesSaid::Text { text } => text,
        other => panic!("not a text: {other:?}"),
    }
}

#[tokio::test]
async fn the_person_lists_changes_and_forgets_entries_and_the_first_prompt_has_the_memory_as_it_stands() {
    let h = Harness::new(vec![Scripted::text("Hi.")]).await;
    h.server.set_llembas(Llembas::default());
    let records = MemoryRecords { memory: vec!["Builds with make.".into()], user: vec!["Is Ada.".into()] };
    h.server.set_memory(None, records);
    let host = Host::new(h.store.clone());
    let mut cfg = h.config(Mode::Edit, 10);
    cfg.memory = Some(Arc::new(lembas_core::InstanceMcp::new(&h.server.url(), "lmb_test_token")));
    let start = Start::New { root: h.root.clone(), cwd: h.root.clone() };
    let Opened { handle, mut events } = host.open(OpenSession { cfg, start, attended: false }).unwrap();

    let listed = text(asked(&handle, &mut events, NotesAsk::Memory { change: None }).await);
    assert!(listed.contains("  1. Builds with make.\nAbout the person\n  2. Is Ada."), "{listed}");
    assert!(listed.contains("Instruction files this session reads (yours to edit): AGENTS.md"), "{listed}");

    let forgot =
        text(asked(&handle, &mut events, NotesAsk::Memory { change: Some(MemoryChange::Forget { entry: 2 }) }).await);
    assert!(forgot.starts_with("Forgotten.") && !forgot.contains("Is Ada."), "{forgot}");
    assert!(h.server.memory(None).user.is_empty());
    let change = MemoryChange::Change { entry: 1, text: "Builds with just.".into() };
    let changed = text(asked(&handle, &mut events, NotesAsk::Memory { change: Some(change) }).await);
    assert!(changed.starts_with("Changed.") && changed.contains("  1. Builds with just."), "{changed}");
    assert_eq!(h.server.memory(None).memory, ["Builds with just."]);
    let wrong = asked(&handle, &mut events, NotesAsk::Memory { change: Some(MemoryChange::Forget { entry: 9 }) }).await;
    assert_eq!(wrong, NotesSaid::Failed { reason: "There is no entry 9: /memory lists them.".into() });

    handle.send(Command::prompt("hello"));
    loop {
        let said = tokio::time::timeout(Duration::from_secs(10), events.recv()).await.unwrap().unwrap();
        if matches!(said.event, Event::Done { .. }) {
            break;
        }
    }
    let request = &h.server.chat_requests()[0];
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("# Memory\n") && system.contains("\n\nBuilds with just."), "{system}");
    assert!(!request.to_string().contains("The person changed what is remembered"), "the prompt has it: no note");
}

#[tokio::test]
async fn without_a_memory_the_person_is_told_why() {
    let h = Harness::new(vec![]).await;
    let host = Host::new(h.store.clone());
    let start = Start::New { root: h.root.clone(), cwd: h.root.clone() };
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: h.config(Mode::Edit, 10), start, attended: false }).unwrap();
    match asked(&handle, &mut events, NotesAsk::Memory { change: None }).await {
        NotesSaid::Failed { reason } => assert!(reason.starts_with("There is no memory here"), "{reason}"),
        other => panic!("{other:?}"),
    }
}
