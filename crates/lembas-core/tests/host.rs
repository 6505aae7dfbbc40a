//! The session host: commands in, events out, the same rules whichever front end sends them.

use lembas_protocol::team::{AgentState, TeamTree};
use std::time::Duration;

use lembas_core::{Answer, Approval, Ask, Command, DoneReason, Event, Host, OpenSession, Opened, SessionConfig, Start};
use lembas_permissions::Mode;
use lembas_testkit::Scripted;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

mod common;
use common::*;

fn open(h: &Harness, host: &Host, cfg: SessionConfig, attended: bool) -> Opened {
    host.open(OpenSession { cfg, start: Start::New { root: h.root.clone(), cwd: h.root.clone() }, attended }).unwrap()
}

/// The team's tree as the session says it when asked, as every front end asks (`None`: it has
/// had no subagent); what else it says meanwhile is passed by.
async fn team_tree(
    handle: &lembas_core::SessionHandle,
    events: &mut UnboundedReceiver<lembas_core::Said>,
) -> Option<TeamTree> {
    let asked = handle.send(Command::ReportTeam { since: 0 }).expect("the session is open");
    let mut tree = None;
    loop {
        let said = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("the team was reported")
            .expect("the session's events ended");
        match said.event {
            Event::Team { tree: told } if said.submission.as_ref() == Some(&asked) => tree = Some(told),
            Event::Room { .. } if said.submission.as_ref() == Some(&asked) => return tree,
            _ => {}
        }
    }
}

/// Events until one matches `until` (that one included); fails after ten seconds between two
/// events. (A wait for an event that came before the one waited for first is in vain: order
/// only what the engine orders.)
async fn until(events: &mut UnboundedReceiver<lembas_core::Said>, mut until: impl FnMut(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap_or_else(|_| panic!("waited in vain; saw {seen:#?}"))
            .expect("the session's events ended")
            .event;
        let done = until(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn a_mode_change_during_a_turn_takes_effect_at_its_next_step() {
    let h = Harness::new(vec![
        // Slow enough that the change arrives while this request runs.
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})).with_delay_ms(150),
        Scripted::tool_call("write", json!({"path": "made.txt", "content": "made\n"})),
        Scripted::text("Written."),
    ])
    .await;
    let host = Host::new(h.store.clone());
    // Nobody there: in manual mode the write would be refused.
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Manual, 50), false);
    handle.send(Command::prompt("write it"));
    until(&mut events, |e| matches!(e, Event::Step { n: 1 })).await;
    handle.send(Command::SetMode { mode: Mode::Auto });
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(seen.last(), Some(Event::Done { reason: DoneReason::Answered, .. })));
    let changed = seen.iter().position(|e| matches!(e, Event::Mode { mode: Mode::Auto })).expect("a mode event");
    let second = seen.iter().position(|e| matches!(e, Event::Step { n: 2 })).expect("a second step");
    assert!(changed < second, "the change applies at the step boundary: {seen:#?}");
    assert_eq!(std::fs::read_to_string(h.root.join("made.txt")).unwrap(), "made\n");
    // The model is told of the change on the next message that starts a turn, not mid-turn.
    let requests = h.server.chat_requests();
    assert_prefix_kept(&requests);
}

#[tokio::test]
async fn every_change_of_state_is_answered_by_an_event() {
    let h = Harness::new(vec![Scripted::text("Hello.")]).await;
    let host = Host::new(h.store.clone());
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.model.efforts = Some(vec!["low".into(), "high".into()]);
    let Opened { handle, mut events } = open(&h, &host, cfg, false);
    handle.send(Command::prompt("say hello please"));
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(seen.iter().any(|e| matches!(e, Event::Title { title } if title == "say hello please")), "{seen:#?}");
    handle.send(Command::Rename { title: "greetings".into() });
    until(&mut events, |e| matches!(e, Event::Title { title } if title == "greetings")).await;
    handle.send(Command::SetEffort { level: Some("high".into()) });
    until(&mut events, |e| matches!(e, Event::Model { effort: Some(level), .. } if level == "high")).await;
    handle.send(Command::SetEffort { level: Some("extreme".into()) });
    until(&mut events, |e| matches!(e, Event::Error { message } if message.contains("no effort level extreme"))).await;
    handle.send(Command::SetMode { mode: Mode::Plan });
    until(&mut events, |e| matches!(e, Event::Mode { mode: Mode::Plan })).await;
    handle.send(Command::SetModel { model: "no-such-model".into() });
    until(&mut events, |e| matches!(e, Event::Error { message } if message.contains("no model no-such-model"))).await;
    assert_eq!(h.store.session(handle.id()).unwrap().unwrap().title, "greetings");
    handle.close().await;
    until(&mut events, |e| matches!(e, Event::Closed)).await;
}

#[tokio::test]
async fn what_the_session_asks_is_an_event_and_the_answer_a_command() {
    let h = Harness::new(vec![
        Scripted::tool_call("write", json!({"path": "one.txt", "content": "1\n"})),
        Scripted::tool_call("write", json!({"path": "two.txt", "content": "2\n"})),
        Scripted::text("Done."),
    ])
    .await;
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Manual, 50), true);
    handle.send(Command::prompt("write two files"));
    let mut asked = Vec::new();
    for answer in [Approval::Once, Approval::Deny { feedback: Some("not that one".into()) }] {
        let seen = until(&mut events, |e| matches!(e, Event::Ask { .. })).await;
        let Some(Event::Ask { id, ask: Ask::Approval(request) }) = seen.last() else { panic!("{seen:#?}") };
        asked.push(request.title.clone());
        handle.send(Command::Answer { id: *id, answer: Answer::Approval(answer) });
        let id = *id;
        until(&mut events, |e| matches!(e, Event::Answered { id: answered } if *answered == id)).await;
    }
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(asked[0].contains("one.txt") && asked[1].contains("two.txt"), "{asked:?}");
    assert!(h.root.join("one.txt").exists() && !h.root.join("two.txt").exists());
    let requests = h.server.chat_requests();
    assert!(tool_results(requests.last().unwrap()).iter().any(|r| r.contains("not that one")));
}

#[tokio::test]
async fn a_turn_cancelled_while_it_asks_takes_its_card_back() {
    let h = Harness::new(vec![Scripted::tool_call("write", json!({"path": "x.txt", "content": "x"}))]).await;
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Manual, 50), true);
    handle.send(Command::prompt("write"));
    let seen = until(&mut events, |e| matches!(e, Event::Ask { .. })).await;
    let Some(Event::Ask { id, .. }) = seen.last() else { unreachable!() };
    let id = *id;
    handle.send(Command::Cancel);
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(seen.iter().any(|e| matches!(e, Event::Answered { id: gone } if *gone == id)), "{seen:#?}");
    assert!(matches!(seen.last(), Some(Event::Done { reason: DoneReason::Cancelled, .. })));
    assert!(!h.root.join("x.txt").exists());
}

#[tokio::test]
async fn cancelling_a_turn_leaves_a_background_subagents_card() {
    let h = Harness::new(vec![
        Scripted::tool_call(
            "task",
            json!({"description": "note it", "prompt": "Write notes.txt.", "background": true}),
        ),
        Scripted::text("It works in the background."),
        Scripted::tool_call("write", json!({"path": "main.txt", "content": "main"})),
    ])
    .await;
    h.server.route(
        "You work for the main agent",
        vec![
            Scripted::tool_call("write", json!({"path": "notes.txt", "content": "notes\n"})),
            Scripted::text("Wrote notes.txt."),
        ],
    );
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Manual, 50), true);
    handle.send(Command::prompt("take notes in the background"));
    // The subagent's card may come before or after its parent's turn ends.
    let mut seen = until(&mut events, |e| matches!(e, Event::Ask { .. })).await;
    if !seen.iter().any(|e| matches!(e, Event::Done { .. })) {
        seen.extend(until(&mut events, |e| matches!(e, Event::Done { .. })).await);
    }
    let background = seen
        .iter()
        .find_map(|e| match e {
            Event::Ask { id, ask: Ask::Approval(request) } if request.agent.is_some() => Some(*id),
            _ => None,
        })
        .expect("the subagent's card");
    handle.send(Command::prompt("now write main.txt"));
    let seen = until(&mut events, |e| matches!(e, Event::Ask { ask: Ask::Approval(r), .. } if r.agent.is_none())).await;
    let Some(Event::Ask { id: own, .. }) = seen.last() else { unreachable!() };
    let own = *own;
    handle.send(Command::Cancel);
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(seen.iter().any(|e| matches!(e, Event::Answered { id } if *id == own)), "{seen:#?}");
    assert!(!seen.iter().any(|e| matches!(e, Event::Answered { id } if *id == background)), "{seen:#?}");
    // Still asked, and answered later: the subagent goes on.
    handle.send(Command::Answer { id: background, answer: Answer::Approval(Approval::Once) });
    until(&mut events, |e| matches!(e, Event::Answered { id } if *id == background)).await;
    for _ in 0..100 {
        if h.root.join("notes.txt").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(h.root.join("notes.txt")).unwrap(), "notes\n");
    assert!(!h.root.join("main.txt").exists());
}

#[tokio::test]
async fn commands_sent_during_a_turn_wait_for_it_in_order() {
    let h =
        Harness::new(vec![Scripted::text("first answer").with_delay_ms(100), Scripted::text("second answer")]).await;
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Edit, 50), false);
    handle.send(Command::prompt("one"));
    handle.send(Command::prompt("two"));
    handle.send(Command::ReportContext);
    handle.send(Command::Close { wait_for_jobs: None });
    let seen = until(&mut events, |e| matches!(e, Event::Closed)).await;
    let order: Vec<&str> = seen
        .iter()
        .filter_map(|e| match e {
            Event::Prompt { text, .. } => Some(text.as_str()),
            Event::Done { text, .. } => Some(text.as_str()),
            Event::Context { .. } => Some("context"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["one", "first answer", "two", "second answer", "context"]);
}

#[tokio::test]
async fn a_stored_session_replays_with_the_titles_it_ran_with() {
    let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-    a - b\n+    a + b\n*** End Patch";
    let h = Harness::new(vec![
        Scripted::tool_call("read", json!({"path": "src/lib.rs"})),
        Scripted::tool_call("apply_patch", json!({"patch": patch})),
        Scripted::tool_call("bash", json!({"command": "echo ok", "description": "Say ok"})),
        Scripted::tool_call("grep", json!({"pattern": "add", "path": "src"})),
        Scripted::text("Fixed."),
    ])
    .await;
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Auto, 50), false);
    handle.send(Command::prompt("fix it"));
    let live = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    let starts = |events: &[Event]| -> Vec<(String, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::ToolStart { tool, title, .. } => Some((tool.clone(), title.clone())),
                _ => None,
            })
            .collect()
    };
    let replayed = host.transcript(handle.id()).unwrap();
    assert_eq!(starts(&replayed), starts(&live));
    assert_eq!(starts(&live).len(), 4);
}

fn first_user_message(request: &serde_json::Value) -> serde_json::Value {
    request["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap().clone()
}

#[tokio::test]
async fn an_attached_file_is_a_read_of_record_and_an_image_reaches_a_model_that_sees() {
    let h =
        Harness::new(vec![Scripted::tool_call("read", json!({"path": "src/lib.rs"})), Scripted::text("Seen.")]).await;
    let host = Host::new(h.store.clone());
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.model.vision = Some(true);
    let Opened { handle, mut events } = open(&h, &host, cfg, false);
    handle.send(Command::Prompt {
        text: "what is wrong here?".into(),
        attachments: vec![
            lembas_core::Attachment::File { path: "src/lib.rs".into() },
            lembas_core::Attachment::Image {
                mime: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
                name: Some("shot.png".into()),
            },
            lembas_core::Attachment::Text { name: "untitled:notes".into(), text: "remember the overflow".into() },
        ],
        machine: false,
    });
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    let requests = h.server.chat_requests();
    let first = first_user_message(&requests[0]);
    let parts = first["content"].as_array().expect("words and a picture");
    let words = parts[0]["text"].as_str().unwrap();
    assert!(words.starts_with("what is wrong here?\n\n"), "{words}");
    assert!(words.contains("a - b") && words.contains("remember the overflow"), "{words}");
    assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=");
    // The model's own read of the same file is answered by a stub: the attachment was a read.
    let results = tool_results(&requests[1]);
    assert!(!results[0].contains("a - b"), "{results:?}");
}

#[tokio::test]
async fn a_model_that_does_not_see_is_told_the_image_was_left_out_and_rules_still_hold() {
    let h = Harness::new(vec![Scripted::text("Noted.")]).await;
    std::fs::write(h.root.join("secret.txt"), "the key\n").unwrap();
    let host = Host::new(h.store.clone());
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.rules.add("read", Some("secret.txt"), lembas_permissions::Action::Deny, lembas_permissions::Source::Session);
    let Opened { handle, mut events } = open(&h, &host, cfg, false);
    handle.send(Command::Prompt {
        text: "look".into(),
        attachments: vec![
            lembas_core::Attachment::Image {
                mime: "image/png".into(),
                data: "AA==".into(),
                name: Some("shot.png".into()),
            },
            lembas_core::Attachment::File { path: "secret.txt".into() },
        ],
        machine: false,
    });
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(seen.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("shot.png was not sent"))));
    assert!(
        seen.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("secret.txt was not attached")))
    );
    let first = first_user_message(&h.server.chat_requests()[0]);
    let words = first["content"].as_str().expect("words alone");
    assert!(words.contains("(Image shot.png not sent: this model does not take images.)"), "{words}");
    assert!(words.contains("(secret.txt not attached:") && !words.contains("the key"), "{words}");
}

#[tokio::test]
async fn a_command_the_person_runs_is_judged_shown_and_handed_to_the_next_prompt() {
    let h = Harness::new(vec![Scripted::text("I saw it.")]).await;
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Manual, 50), true);
    // A slow command; words sent while it runs are a prompt of their own afterwards.
    handle.send(Command::Shell { line: "sleep 0.3; echo person-ran-this".into() });
    until(&mut events, |e| matches!(e, Event::ToolStart { call_id, .. } if call_id.starts_with("person-"))).await;
    handle.send(Command::Steer { text: "what did it print?".into() });
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    let printed = seen.iter().find_map(|e| match e {
        Event::ToolEnd { call_id, text, is_error: false, .. } if call_id.starts_with("person-") => Some(text.clone()),
        _ => None,
    });
    assert!(printed.is_some_and(|t| t.contains("person-ran-this")), "{seen:#?}");
    assert!(seen.iter().any(|e| matches!(e, Event::Prompt { text, .. } if text == "what did it print?")));
    let requests = h.server.chat_requests();
    let user = requests[0]["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap().clone();
    assert!(user["content"].as_str().unwrap().contains("person-ran-this"), "the output went with the prompt: {user}");
    // The hardline still refuses what the person types.
    handle.send(Command::Shell { line: "rm -rf ~".into() });
    let refused = until(&mut events, |e| matches!(e, Event::ToolDenied { .. })).await;
    assert!(matches!(refused.last(), Some(Event::ToolDenied { call_id, .. }) if call_id.starts_with("person-")));
}

#[tokio::test]
async fn a_subagent_the_person_stops_stops_at_once_while_the_main_agent_works() {
    let h = Harness::new(vec![
        Scripted::tool_call("team_add", json!({"name": "w", "role": "works", "task": "Work long.", "goal": "g"})),
        // The main agent's next step takes its time: the stop must not wait for it.
        Scripted::text("Still thinking about it all, at length.").with_delay_ms(400),
    ])
    .await;
    h.server.route("You are \"w\" (s1)", vec![Scripted::text("working ".repeat(200)).with_delay_ms(50)]);
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Auto, 50), false);
    handle.send(Command::prompt("start a helper"));
    until(&mut events, |e| matches!(e, Event::Step { n: 2 })).await;
    handle.send(Command::StopSubagent { name: "w".into() });
    let stopped = until(&mut events, |e| matches!(e, Event::SubagentsStopped { .. } | Event::Done { .. })).await;
    assert!(
        matches!(stopped.last(), Some(Event::SubagentsStopped { ids }) if ids == &["s1"]),
        "stopped while the main agent's step still ran: {stopped:#?}"
    );
    let tree = team_tree(&handle, &mut events).await.expect("a tree");
    assert_eq!(tree.ended.first().map(|a| a.state), Some(AgentState::Stopped));
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(seen.last(), Some(Event::Done { reason: DoneReason::Answered, .. })));
}

#[tokio::test]
async fn a_main_agent_moved_to_another_model_takes_that_models_slots() {
    let add = |name: &str| json!({"name": name, "role": "works", "task": "Work long.", "goal": "g"});
    let h = Harness::new(vec![
        Scripted::text("").with_call("team_add", &add("a").to_string()).with_call("team_add", &add("b").to_string()),
        Scripted::text("Both are at work."),
        Scripted::text("On the big model, at once."),
    ])
    .await;
    for name in ["a", "b"] {
        let id = if name == "a" { "s1" } else { "s2" };
        h.server.route(&format!("You are \"{name}\" ({id})"), vec![Scripted::text("done").with_delay_ms(2000)]);
    }
    let mut cfg = h.config(Mode::Auto, 50);
    let two = lembas_models::Capacity { parallel: Some(2), ..Default::default() };
    cfg.model.capacity = Some(two);
    cfg.models = vec![cfg.model.clone(), lembas_models::ModelInfo { id: "big-model".into(), ..Default::default() }];
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, cfg, false);
    handle.send(Command::prompt("start two helpers"));
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    // Both subagents now hold fake-model's two slots; on it the main agent would wait for one.
    handle.send(Command::SetModel { model: "big-model".into() });
    handle.send(Command::prompt("go on"));
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(!seen.iter().any(|e| matches!(e, Event::Phase { .. }) && format!("{e:?}").contains("WaitingForModel")));
    let tree = team_tree(&handle, &mut events).await.expect("a tree");
    assert_eq!(tree.agents[0].model, "big-model");
    let states: Vec<AgentState> = tree.agents[1..].iter().map(|a| a.state).collect();
    assert_eq!(states, [AgentState::Working; 2], "the main agent's turn ended before either subagent's");
}

#[tokio::test]
async fn a_session_closed_while_its_subagent_works_reopens_at_once_with_its_team() {
    let h = Harness::new(vec![
        Scripted::tool_call("team_add", json!({"name": "w", "role": "works", "task": "Work long.", "goal": "g"})),
        Scripted::text("w is at work."),
        Scripted::text("w is back."),
    ])
    .await;
    // w's command runs when the session closes: stopping it takes a moment.
    h.server.route(
        "You are \"w\" (s1)",
        vec![
            Scripted::tool_call("bash", json!({"command": "sleep 5", "description": "wait"})),
            Scripted::text("Done at last."),
        ],
    );
    // A store on disk: sessions are held under locks there, the subagent's too.
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(lembas_store::Store::open(&dir.path().join("sessions.db")).unwrap());
    let config = || {
        let mut cfg = h.config(Mode::Auto, 50);
        cfg.store = store.clone();
        cfg
    };
    let host = Host::new(store.clone());
    let Opened { handle, mut events } = open(&h, &host, config(), false);
    let id = handle.id().to_owned();
    handle.send(Command::prompt("start a helper"));
    // The lead's turn ends and w's command starts, in either order (the turn's end waits for
    // its last snapshot; w goes on meanwhile).
    let (mut done, mut started) = (false, false);
    until(&mut events, |e| {
        done |= matches!(e, Event::Done { .. });
        started |= matches!(e, Event::Subagent { event, .. } if matches!(**event, Event::ToolStart { .. }));
        done && started
    })
    .await;
    // Closed while w's command runs; opened again straight after, in the same process.
    handle.close().await;
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: config(), start: Start::Resume(id), attended: false }).unwrap();
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(!seen.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("could not be reopened"))));
    let tree = team_tree(&handle, &mut events).await.expect("its tree, kept");
    assert_eq!(tree.agents[1].name, "w", "{tree:?}");
    assert_eq!(tree.agents[1].state, AgentState::Finished, "it went on, and its report woke the main agent");
}

#[tokio::test]
async fn a_kept_team_that_cannot_be_read_is_said_and_the_session_opens_all_the_same() {
    let h = Harness::new(vec![
        Scripted::tool_call("team_add", json!({"name": "w", "role": "works", "task": "Work.", "goal": "g"})),
        Scripted::text("w is at work."),
        Scripted::text("w reported."),
        Scripted::text("Still here."),
    ])
    .await;
    h.server.route("You are \"w\" (s1)", vec![Scripted::text("done")]);
    let host = Host::new(h.store.clone());
    let Opened { handle, mut events } = open(&h, &host, h.config(Mode::Auto, 50), false);
    let id = handle.id().to_owned();
    handle.send(Command::prompt("start a helper"));
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    handle.close().await;
    // What the store keeps of the team is damaged (by hand, a bad disk, a later lembas).
    h.store.save_team(&id, "{\"team\": 7").unwrap();
    let Opened { handle, mut events } =
        host.open(OpenSession { cfg: h.config(Mode::Auto, 50), start: Start::Resume(id), attended: false }).unwrap();
    handle.send(Command::prompt("are you there?"));
    let seen = until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        seen.iter().any(
            |e| matches!(e, Event::Notice { message } if message.starts_with("The session's team could not be read"))
        ),
        "{seen:#?}"
    );
    assert!(matches!(seen.last(), Some(Event::Done { reason: DoneReason::Answered, .. })));
    assert!(team_tree(&handle, &mut events).await.is_none(), "it starts with no subagents");
}

#[tokio::test]
async fn a_personality_is_in_the_prompt_and_a_change_is_its_note_on_the_next_message() {
    let h = Harness::new(vec![Scripted::text("Done."), Scripted::text("Done again.")]).await;
    let host = Host::new(h.store.clone());
    let mut cfg = h.config(Mode::Edit, 50);
    cfg.personality = lembas_protocol::personality_text("concise", None).unwrap();
    let Opened { handle, mut events } = open(&h, &host, cfg, false);
    handle.send(Command::prompt("first"));
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    handle.send(Command::SetPersonality { text: Some("Speak like a ship's captain.".into()) });
    until(&mut events, |e| matches!(e, Event::Personality { text: Some(_) })).await;
    handle.send(Command::prompt("second"));
    until(&mut events, |e| matches!(e, Event::Done { .. })).await;
    let requests = h.server.chat_requests();
    let system = requests[0]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("\n\n# Personality\nBe terse."), "{system}");
    assert_eq!(requests[1]["messages"][0], requests[0]["messages"][0], "the prompt never changes under a session");
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(last.contains("The person chose a different personality:\\nSpeak like a ship's captain."), "{last}");
}
