//! A client that speaks lembas' protocol (`acp.md`, `_meta.lembas`): the subagent tree and the
//! team's methods, approvals naming a subagent, the chat's Subagents setting sent down, the
//! person's earlier words, and where a session stands for a client that reattaches.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, NewSessionRequest, PromptRequest};
use lembas_core::Mode;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

mod acp_common;

use acp_common::*;

/// The fake model for a main agent that adds "scout", which lists the project and reports;
/// the report wakes the main agent once.
async fn scout_at_work() -> FakeServer {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "team_add",
            json!({"name": "scout", "role": "looks around", "task": "List the project.", "goal": "know it"}),
        ),
        Scripted::text("scout is on it."),
        Scripted::text("scout reported."),
    ])
    .await;
    server.route("You are \"scout\" (s1)", vec![Scripted::text("One file: notes.txt.")]);
    server
}

#[tokio::test]
async fn a_client_of_lembas_protocol_sees_the_team_tree() {
    let server = scout_at_work().await;
    let (_dir, root) = project();
    let root2 = root.clone();
    with_client(template(&server, Mode::Auto), true, async move |cx, _seen, _asked| {
        let mut meta = serde_json::Map::new();
        meta.insert("lembas".into(), json!({"protocol": 3}));
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let id = session.session_id.0.to_string();
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("look around with a helper")))
            .block_task()
            .await?;
        // The report wakes the main agent after the prompt answered; the tree follows it.
        let mut states = Vec::new();
        for _ in 0..100 {
            states = LEMBAS_EVENTS
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p["sessionId"] == id.as_str() && p["event"]["type"] == "team")
                .filter_map(|p| {
                    let agents = p["event"]["tree"]["agents"].as_array()?.clone();
                    agents
                        .iter()
                        .find(|a| a["name"] == "scout")
                        .map(|a| a["state"].as_str().unwrap_or_default().to_owned())
                })
                .collect();
            if states.last().is_some_and(|s| s == "finished") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(states.first().is_some_and(|s| s == "working"), "{states:?}");
        assert_eq!(states.last().map(String::as_str), Some("finished"), "{states:?}");
        // The main agent's progress comes as the `phase` event (capability `progress`): its phases
        // while its turns run, and nothing once they ended.
        let phases = || -> Vec<serde_json::Value> {
            LEMBAS_EVENTS
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p["sessionId"] == id.as_str() && p["event"]["type"] == "phase")
                .map(|p| p["event"]["progress"].clone())
                .collect()
        };
        for _ in 0..100 {
            if phases().last().is_some_and(|p| p.is_null()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let phases = phases();
        assert!(phases.iter().any(|p| p["phase"].is_string()), "{phases:?}");
        assert!(phases.last().is_some_and(|p| p.is_null()), "{phases:?}");

        // On request: the tree and the whole room, a subagent's transcript and findings, a stop.
        let ask = |method: &str, params: serde_json::Value| {
            cx.send_request(agent_client_protocol::UntypedMessage::new(method, params).unwrap()).block_task()
        };
        let team = ask("_lembas/team", json!({"sessionId": id})).await?;
        assert_eq!(team["tree"]["agents"][1]["name"], "scout", "{team}");
        assert_eq!(team["room"][0]["kind"], "report", "{team}");
        assert_eq!(team["room"][0]["text"], "One file: notes.txt.", "{team}");
        let transcript = ask("_lembas/team/transcript", json!({"sessionId": id, "id": "s1"})).await?;
        assert_eq!(transcript["state"], "finished");
        assert_eq!(transcript["turns"][0]["prompt"], "List the project.", "{transcript}");
        assert!(transcript["turns"][0]["events"].to_string().contains("notes.txt"), "{transcript}");
        let findings = ask("_lembas/team/findings", json!({"sessionId": id, "id": "s1"})).await?;
        assert_eq!(findings, json!({"id": "s1", "findings": []}));
        assert!(ask("_lembas/team/findings", json!({"sessionId": id, "id": "s9"})).await.is_err());
        let stopped = ask("_lembas/team/stop", json!({"sessionId": id, "id": "s1"})).await?;
        assert_eq!(stopped, json!({"stopped": ["s1"]}));
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn a_subagents_call_nobody_in_the_tree_may_allow_is_put_to_the_editor_naming_it() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "team_add",
            json!({"name": "builder", "role": "runs the build", "task": "Run the build.", "goal": "a build"}),
        ),
        Scripted::text("builder is on it."),
        Scripted::text("builder reported."),
    ])
    .await;
    server.route(
        "You are \"builder\" (s1)",
        vec![Scripted::tool_call("bash", json!({"command": "make built-by-builder"})), Scripted::text("Built.")],
    );
    let (_dir, root) = project();
    let root2 = root.clone();
    // An all-Edit tree: a command is the person's to allow, for the subagent as for the main agent.
    with_client(template(&server, Mode::Edit), true, async move |cx, _seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("build it with a helper")))
            .block_task()
            .await?;
        let mut found = None;
        for _ in 0..100 {
            found = PERMISSION_META
                .lock()
                .unwrap()
                .iter()
                .find(|(title, _)| title.contains("make built-by-builder"))
                .map(|(title, meta)| (title.clone(), meta.clone()));
            if found.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (title, meta) = found.expect("the subagent's command was put to the editor");
        assert!(title.starts_with("builder (runs the build): bash"), "{title}");
        assert_eq!(meta["lembas"]["subagent"], json!({"id": "s1", "name": "builder", "position": "runs the build"}));
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn a_llembas_client_sends_the_chats_subagents_setting_with_the_session_and_every_prompt() {
    let server = FakeServer::start(vec![Scripted::text("Noted."), Scripted::text("Noted again.")]).await;
    let (_dir, root) = project();
    with_client(template(&server, Mode::Edit), true, async move |cx, _seen, _asked| {
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        let hello = cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta(json!({"lembas": {"protocol": 3}}))))
            .block_task()
            .await?;
        let capabilities = &hello.meta.unwrap()["lembas"]["capabilities"];
        for promised in ["agents", "progress", "tree"] {
            assert!(capabilities.as_array().unwrap().contains(&json!(promised)), "{capabilities}");
        }
        let session = cx
            .send_request(
                NewSessionRequest::new(root.clone()).meta(meta(json!({"lembas": {"agents": {"min": 1, "max": 2}}}))),
            )
            .block_task()
            .await?;
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("hello"))).block_task().await?;
        // The person moved the chat's setting between turns: it comes with the next prompt.
        let moved = PromptRequest::new(session.session_id.clone(), text("and now"))
            .meta(meta(json!({"lembas": {"agents": {"min": 1, "max": 3}}})));
        cx.send_request(moved).block_task().await?;
        let wrong = PromptRequest::new(session.session_id.clone(), text("again"))
            .meta(meta(json!({"lembas": {"agents": {"min": 0, "max": 3}}})));
        assert!(cx.send_request(wrong).block_task().await.is_err(), "a pair outside the bounds is refused");
        Ok(())
    })
    .await;
    let said: Vec<String> = server
        .chat_requests()
        .iter()
        .map(|r| {
            r["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap()["content"].to_string()
        })
        .collect();
    assert!(said[0].contains("The team may have 1 to 2 agents, you included."), "{said:?}");
    assert!(said[1].contains("The team may have 1 to 3 agents, you included."), "{said:?}");
}

#[tokio::test]
async fn a_chat_carried_on_here_brings_the_models_the_person_named_in_it() {
    let task = || {
        Scripted::tool_call("task", json!({"description": "read", "prompt": "Read notes.txt.", "model": "other-model"}))
    };
    let server = FakeServer::start(vec![
        task(),
        Scripted::text("It says old line."),
        Scripted::text("Done."),
        task(),
        Scripted::text("Not here."),
    ])
    .await;
    let (_dir, root) = project();
    let mut cfg = template(&server, Mode::Edit);
    let mut other = cfg.model.clone();
    other.id = "other-model".into();
    cfg.models = vec![cfg.model.clone(), other];
    with_client(cfg, true, async move |cx, _seen, _asked| {
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta(json!({"lembas": {"protocol": 3}}))))
            .block_task()
            .await?;
        // The person asked for other-model earlier in the chat, on another device.
        let carried = NewSessionRequest::new(root.clone())
            .meta(meta(json!({"lembas": {"said": ["Let other-model do the reading.", 7]}})));
        let session = cx.send_request(carried).block_task().await?;
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("go on"))).block_task().await?;
        // A chat that never named it.
        let fresh = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        cx.send_request(PromptRequest::new(fresh.session_id.clone(), text("go on"))).block_task().await?;
        Ok(())
    })
    .await;
    let requests = server.chat_requests();
    assert_eq!(requests[1]["model"], "other-model", "the subagent ran on the model the person named");
    let refused = requests.last().unwrap()["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(!refused.contains("It says"), "{refused}");
    assert_eq!(requests.len(), 5, "the second chat's subagent never ran");
}

#[tokio::test]
async fn a_reattaching_client_reads_where_a_session_stands_and_the_tree_it_kept() {
    let server = scout_at_work().await;
    let (_dir, root) = project();
    let cfg = template(&server, Mode::Auto);
    let opened = Arc::new(Mutex::new(String::new()));
    let (first, id_out) = (cfg.clone(), opened.clone());
    let hello = || {
        let mut meta = serde_json::Map::new();
        meta.insert("lembas".into(), json!({"protocol": 3}));
        InitializeRequest::new(ProtocolVersion::V1).meta(meta)
    };
    with_client(first, true, async move |cx, _seen, _asked| {
        cx.send_request(hello()).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let id = session.session_id.0.to_string();
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("look around with a helper")))
            .block_task()
            .await?;
        let status = |id: &str| {
            let params = json!({ "sessionId": id });
            cx.send_request(agent_client_protocol::UntypedMessage::new("_lembas/session/status", params).unwrap())
                .block_task()
        };
        // Held here; once scout's report has been answered, nothing runs.
        let mut now = json!(null);
        for _ in 0..100 {
            now = status(&id).await?;
            if now["tree"]["agents"][1]["state"] == "finished" && now["busy"] == false {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!((now["exists"].clone(), now["held"].clone()), (json!(true), json!("here")), "{now}");
        assert_eq!((now["busy"].clone(), now["progress"].clone()), (json!(false), json!(null)), "{now}");
        assert_eq!(now["title"], "look around with a helper", "{now}");
        assert_eq!(now["tree"]["agents"][1]["state"], "finished", "{now}");
        *id_out.lock().unwrap() = id;
        Ok(())
    })
    .await;
    // Another client, after the first went: the session is stored, held by nobody, its tree kept.
    let id = opened.lock().unwrap().clone();
    with_client(cfg, true, async move |cx, _seen, _asked| {
        cx.send_request(hello()).block_task().await?;
        let ask = |params: serde_json::Value| {
            cx.send_request(agent_client_protocol::UntypedMessage::new("_lembas/session/status", params).unwrap())
                .block_task()
        };
        let stored = ask(json!({ "sessionId": id })).await?;
        assert_eq!((stored["exists"].clone(), stored["held"].clone()), (json!(true), json!("none")), "{stored}");
        assert_eq!(stored["tree"]["agents"][1]["name"], "scout", "{stored}");
        let unknown = ask(json!({ "sessionId": "nope" })).await?;
        assert_eq!((unknown["exists"].clone(), unknown["tree"].clone()), (json!(false), json!(null)), "{unknown}");
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn a_prompt_sent_again_under_its_turn_id_gets_the_same_turns_answer() {
    let server = FakeServer::start(vec![Scripted::text("Built.").with_delay_ms(150), Scripted::text("Other.")]).await;
    let (_dir, root) = project();
    with_client(template(&server, Mode::Edit), true, async move |cx, _seen, _asked| {
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta(json!({"lembas": {"protocol": 3}}))))
            .block_task()
            .await?;
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let run = || {
            PromptRequest::new(session.session_id.clone(), text("check the build"))
                .meta(meta(json!({"lembas": {"turnId": "run7"}})))
        };
        // Sent twice while it runs (a link that dropped and re-sent it), and once after.
        let first = cx.send_request(run());
        let again = cx.send_request(run());
        for answer in [first.block_task().await?, again.block_task().await?, cx.send_request(run()).block_task().await?]
        {
            assert_eq!(answer.meta.unwrap()["lembas"]["turnId"], json!("run7"));
        }
        let other = cx.send_request(PromptRequest::new(session.session_id.clone(), text("other"))).block_task().await?;
        assert!(other.meta.is_none(), "a prompt without a turnId is answered without one");
        Ok(())
    })
    .await;
    assert_eq!(server.chat_requests().len(), 2, "one turn for run7, one for the other prompt");
}

#[tokio::test]
async fn a_client_rewinds_the_conversation_by_turn_id_and_the_files_stay_unless_asked() {
    let mut script = Vec::new();
    for name in ["a", "b", "c"] {
        script.push(Scripted::tool_call("write", json!({"path": format!("{name}.txt"), "content": "made\n"})));
        script.push(Scripted::text("Made."));
    }
    let server = FakeServer::start(script).await;
    let (_dir, root) = project();
    let files = root.clone();
    with_client(template(&server, Mode::Auto), true, async move |cx, seen, _asked| {
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        let hello = cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta(json!({"lembas": {"protocol": 3}}))))
            .block_task()
            .await?;
        let capabilities = hello.meta.unwrap()["lembas"]["capabilities"].clone();
        assert!(capabilities.as_array().unwrap().contains(&json!("rewind")), "{capabilities}");
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        for name in ["a", "b", "c"] {
            let prompt = PromptRequest::new(session.session_id.clone(), text(&format!("make {name}")))
                .meta(meta(json!({"lembas": {"turnId": format!("turn-{name}")}})));
            cx.send_request(prompt).block_task().await?;
        }
        let id = session.session_id.0.to_string();
        let rewind = |params: serde_json::Value| {
            cx.send_request(agent_client_protocol::UntypedMessage::new("_lembas/session/rewind", params).unwrap())
                .block_task()
        };
        // As the spec has it: the conversation goes back, the files stay, named for the client.
        let back = rewind(json!({ "sessionId": id, "turnId": "turn-b" })).await?;
        assert_eq!(
            (back["turn"].clone(), back["prompt"].clone(), back["later"].clone()),
            (json!(2), json!("make b"), json!(1)),
            "{back}"
        );
        assert_eq!(back["files"], json!({ "left": ["b.txt", "c.txt"] }), "{back}");
        assert!(files.join("b.txt").exists() && files.join("c.txt").exists());
        // `/rewind` typed in the editor lists what is left.
        seen.lock().unwrap().clear();
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("/rewind"))).block_task().await?;
        let said = format!("{:?}", seen.lock().unwrap());
        assert!(said.contains("1  make a") && !said.contains("make b"), "{said}");
        // A turn gone is refused by id; lembas' own opt-in puts the files back.
        assert!(rewind(json!({ "sessionId": id, "turnId": "turn-c" })).await.is_err());
        let back = rewind(json!({ "sessionId": id, "turn": 1, "_meta": { "lembas": { "files": true } } })).await?;
        assert_eq!(back["files"]["removed"], json!(["a.txt"]), "{back}");
        assert!(!files.join("a.txt").exists(), "b.txt and c.txt stay: they were left when their turns went");
        assert!(files.join("b.txt").exists());
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn a_client_forks_a_session_from_before_a_turn_and_both_go_on() {
    let server = FakeServer::start(vec![Scripted::text("One."), Scripted::text("Two.")]).await;
    let (_dir, root) = project();
    with_client(template(&server, Mode::Auto), true, async move |cx, _seen, _asked| {
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1).meta(meta(json!({"lembas": {"protocol": 3}}))))
            .block_task()
            .await?;
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        for words in ["first", "second"] {
            cx.send_request(PromptRequest::new(session.session_id.clone(), text(words))).block_task().await?;
        }
        let id = session.session_id.0.to_string();
        let params = json!({ "sessionId": id, "turn": 2, "_meta": { "lembas": { "fork": true } } });
        let forked = cx
            .send_request(agent_client_protocol::UntypedMessage::new("_lembas/session/rewind", params).unwrap())
            .block_task()
            .await?;
        assert_eq!((forked["forkedFrom"].clone(), forked["prompt"].clone()), (json!(id), json!("second")), "{forked}");
        let fork = forked["sessionId"].as_str().unwrap().to_owned();
        assert_ne!(fork, id);
        let history = |id: String| {
            cx.send_request(
                agent_client_protocol::UntypedMessage::new("_lembas/session/history", json!({ "sessionId": id }))
                    .unwrap(),
            )
            .block_task()
        };
        assert_eq!(history(id).await?["turns"].as_array().unwrap().len(), 2, "the old one is whole");
        assert_eq!(history(fork).await?["turns"].as_array().unwrap().len(), 1);
        Ok(())
    })
    .await;
}
