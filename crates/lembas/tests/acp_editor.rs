//! The ACP server driven by the `agent-client-protocol` crate's own client side, over an
//! in-memory pipe, against the test kit's fake model.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, ImageContent, InitializeRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, SessionConfigOptionValue, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason, TextContent, ToolCallStatus,
};
use lembas_core::Mode;
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

mod acp_common;

use acp_common::*;

#[tokio::test]
async fn a_prompt_streams_text_and_tool_calls_and_asks_before_an_edit() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::tool_call("edit", json!({"path": "notes.txt", "old_string": "old line", "new_string": "new line"})),
        Scripted::text("Changed the note."),
    ])
    .await;
    let (_dir, root) = project();
    let cfg = template(&server, Mode::Manual);
    let root2 = root.clone();
    with_client(cfg, true, async move |cx, seen, asked| {
        let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        assert!(init.agent_capabilities.load_session);
        assert_eq!(init.agent_info.unwrap().name, "LLeMbas CLI");
        assert_eq!(init.meta.as_ref().unwrap()["lembas"]["protocol"], 3);
        assert!(init.meta.as_ref().unwrap()["lembas"]["limits"].is_null());
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        assert_eq!(&*session.modes.unwrap().current_mode_id.0, "manual");
        let done =
            cx.send_request(PromptRequest::new(session.session_id.clone(), text("fix the note"))).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(*asked.lock().unwrap(), 1, "the edit was put to the client");
        let seen = seen.lock().unwrap();
        assert!(seen.iter().any(|u| matches!(u, SessionUpdate::AgentMessageChunk(_))));
        assert!(seen.iter().filter(|u| matches!(u, SessionUpdate::ToolCall(_))).count() == 2);
        assert!(seen.iter().any(
            |u| matches!(u, SessionUpdate::ToolCallUpdate(t) if t.fields.status == Some(ToolCallStatus::Completed))
        ));
        Ok(())
    })
    .await;
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "new line\n");
}

#[tokio::test]
async fn a_rejected_edit_is_not_made_and_modes_can_change() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("write", json!({"path": "new.txt", "content": "x"})),
        Scripted::text("Not allowed."),
    ])
    .await;
    let (_dir, root) = project();
    let root2 = root.clone();
    with_client(template(&server, Mode::Manual), false, async move |cx, _seen, asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        cx.send_request(PromptRequest::new(session.session_id.clone(), text("write a file"))).block_task().await?;
        assert_eq!(*asked.lock().unwrap(), 1);
        cx.send_request(SetSessionModeRequest::new(session.session_id.clone(), "plan")).block_task().await?;
        let bad = cx.send_request(SetSessionModeRequest::new(session.session_id.clone(), "yolo")).block_task().await;
        assert!(bad.is_err());
        let unknown = cx.send_request(PromptRequest::new("no-such-session", text("hi"))).block_task().await;
        assert!(unknown.is_err(), "a prompt for an unknown session is an error, and the server goes on");
        Ok(())
    })
    .await;
    assert!(!root.join("new.txt").exists());
}

#[tokio::test]
async fn a_mode_change_during_a_turn_takes_effect_at_its_next_step() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})).with_delay_ms(150),
        Scripted::tool_call("write", json!({"path": "made.txt", "content": "made\n"})),
        Scripted::text("Written."),
    ])
    .await;
    let (_dir, root) = project();
    let root2 = root.clone();
    // The client rejects every approval: only auto mode writes the file.
    with_client(template(&server, Mode::Manual), false, async move |cx, seen, asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let id = session.session_id.clone();
        let prompt = cx.send_request(PromptRequest::new(id.clone(), text("write it")));
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Taken during the turn, as the terminal takes it — not refused until the turn ends.
        cx.send_request(SetSessionModeRequest::new(id.clone(), "auto")).block_task().await?;
        assert_eq!(prompt.block_task().await?.stop_reason, StopReason::EndTurn);
        assert_eq!(*asked.lock().unwrap(), 0, "nothing was put to the client");
        assert!(
            seen.lock()
                .unwrap()
                .iter()
                .any(|u| matches!(u, SessionUpdate::CurrentModeUpdate(m) if &*m.current_mode_id.0 == "auto"))
        );
        Ok(())
    })
    .await;
    assert_eq!(std::fs::read_to_string(root.join("made.txt")).unwrap(), "made\n");
}

#[tokio::test]
async fn a_plan_and_a_question_are_put_to_the_editor() {
    let plan = json!({"title": "Store notes", "phases": [{"title": "Do", "tasks": [{"text": "add sqlite"}]}]});
    let server = FakeServer::start(vec![
        Scripted::tool_call("plan_write", plan),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::tool_call("ask_user", json!({"question": "Anything else?"})),
        Scripted::text("Going ahead."),
    ])
    .await;
    let (_dir, root) = project();
    let root2 = root.clone();
    with_client(template(&server, Mode::Plan), true, async move |cx, seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let id = session.session_id.clone();
        let done = cx.send_request(PromptRequest::new(id, text("plan the store"))).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        // The client picks the first option offered: approve the plan, then edit mode.
        assert!(
            seen.lock()
                .unwrap()
                .iter()
                .any(|u| matches!(u, SessionUpdate::CurrentModeUpdate(m) if &*m.current_mode_id.0 == "edit"))
        );
        Ok(())
    })
    .await;
    let asks = PERMISSION_ASKS.lock().unwrap().clone();
    assert!(
        asks.iter().any(|(_, title)| title == "Plan: Plan: Store notes" || title.starts_with("Plan: ")),
        "{asks:?}"
    );
    assert!(asks.iter().any(|(_, title)| title == "Which database?"), "{asks:?}");
    let requests = server.chat_requests();
    let results: Vec<String> = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(results.iter().any(|r| r.contains("approved the plan") && r.contains("now edit")), "{results:?}");
    assert!(results.iter().any(|r| r.contains("The person answered: sqlite")), "{results:?}");
    // A free-text question cannot be put as a permission request: the model is told so.
    assert!(results.iter().any(|r| r.contains("could not be put to the person here")), "{results:?}");
}

#[tokio::test]
async fn a_new_sessions_meta_chooses_its_mode_model_and_effort() {
    let server = FakeServer::start(vec![]).await;
    let (_dir, root) = project();
    let mut cfg = template(&server, Mode::Edit);
    cfg.model.efforts = Some(vec!["low".into(), "high".into()]);
    let mut other = cfg.model.clone();
    other.id = "other-model".into();
    cfg.models = vec![cfg.model.clone(), other];
    with_client(cfg, true, async move |cx, _seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let meta = |v: serde_json::Value| v.as_object().unwrap().clone();
        let opened = cx
            .send_request(
                NewSessionRequest::new(root.clone())
                    .meta(meta(json!({"mode": "plan", "model": "other-model", "effort": "high"}))),
            )
            .block_task()
            .await?;
        assert_eq!(&*opened.modes.unwrap().current_mode_id.0, "plan");
        let said = &opened.meta.unwrap()["lembas"];
        assert_eq!(
            (said["model"].as_str(), said["mode"].as_str(), said["effort"].as_str()),
            (Some("other-model"), Some("plan"), Some("high"))
        );
        // A level the model does not offer is read as its start level; the answer says which.
        let opened = cx
            .send_request(NewSessionRequest::new(root.clone()).meta(meta(json!({"effort": "extreme"}))))
            .block_task()
            .await?;
        assert_eq!(opened.meta.unwrap()["lembas"]["effort"], "low");
        let unknown = cx
            .send_request(NewSessionRequest::new(root.clone()).meta(meta(json!({"model": "nope"}))))
            .block_task()
            .await;
        assert!(unknown.is_err(), "a model the device does not know is refused");
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn lembas_commands_are_offered_and_run_from_the_editor() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("write", json!({"path": "made.txt", "content": "x"})),
        Scripted::text("Made it."),
    ])
    .await;
    let (_dir, root) = project();
    let root2 = root.clone();
    with_client(template(&server, Mode::Auto), true, async move |cx, seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let id = session.session_id.clone();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let offered: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::AvailableCommandsUpdate(c) => {
                    Some(c.available_commands.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
                }
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(offered, ["compact", "undo", "overwrite", "rewind", "context", "mcp", "plan"]);
        cx.send_request(PromptRequest::new(id.clone(), text("make a file"))).block_task().await?;
        assert!(root2.join("made.txt").exists());
        seen.lock().unwrap().clear();
        let undone = cx.send_request(PromptRequest::new(id.clone(), text("/undo"))).block_task().await?;
        assert_eq!(undone.stop_reason, StopReason::EndTurn);
        assert!(!root2.join("made.txt").exists(), "the undo took the file back");
        let context = cx.send_request(PromptRequest::new(id, text("/context"))).block_task().await?;
        assert_eq!(context.stop_reason, StopReason::EndTurn);
        let said = agent_words(&seen.lock().unwrap());
        assert!(
            said.contains("Undone: \"make a file\" is out of the conversation") && said.contains("made.txt"),
            "{said}"
        );
        assert!(said.contains("Context: ") && said.contains("system prompt"), "{said}");
        Ok(())
    })
    .await;
    assert_eq!(server.chat_requests().len(), 2, "no command reached the model");
}

#[tokio::test]
async fn cancel_stops_a_turn_and_a_stored_session_loads() {
    let server = FakeServer::start(vec![
        Scripted::text("slow ".repeat(40)).with_delay_ms(50),
        Scripted::text("Loaded and answering."),
    ])
    .await;
    let (_dir, root) = project();
    let cfg = template(&server, Mode::Edit);
    let root2 = root.clone();
    with_client(cfg, true, async move |cx, seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let id = session.session_id.clone();
        let prompt = cx.send_request(PromptRequest::new(id.clone(), text("tell a long story")));
        tokio::time::sleep(Duration::from_millis(300)).await;
        cx.send_notification(CancelNotification::new(id.clone()))?;
        let done = prompt.block_task().await?;
        assert_eq!(done.stop_reason, StopReason::Cancelled);
        assert!(seen.lock().unwrap().iter().any(|u| matches!(u, SessionUpdate::AgentMessageChunk(_))));
        // The stored session opens again, its conversation replayed first.
        seen.lock().unwrap().clear();
        cx.send_request(LoadSessionRequest::new(id.clone(), root2.clone())).block_task().await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            matches!(seen.lock().unwrap().first(), Some(SessionUpdate::UserMessageChunk(_))),
            "the person's words come back as user message chunks"
        );
        let again = cx.send_request(PromptRequest::new(id, text("go on"))).block_task().await?;
        assert_eq!(again.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn an_editor_that_offers_its_files_is_read_and_written_through() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::tool_call(
            "edit",
            json!({"path": "notes.txt", "old_string": "unsaved", "new_string": "saved by lembas"}),
        ),
        Scripted::text("Done."),
    ])
    .await;
    let (_dir, root) = project();
    let buffers: Arc<Mutex<HashMap<PathBuf, String>>> = Arc::default();
    buffers.lock().unwrap().insert(root.join("notes.txt"), "unsaved buffer text\n".into());
    let (root2, buffers2) = (root.clone(), buffers.clone());
    with_editor(template(&server, Mode::Edit), true, buffers.clone(), async move |cx, _seen, _asked| {
        let fs = FileSystemCapabilities::new().read_text_file(true).write_text_file(true);
        cx.send_request(
            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(ClientCapabilities::new().fs(fs)),
        )
        .block_task()
        .await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        cx.send_request(PromptRequest::new(session.session_id, text("edit the note"))).block_task().await?;
        assert_eq!(buffers2.lock().unwrap()[&root2.join("notes.txt")], "saved by lembas buffer text\n");
        Ok(())
    })
    .await;
    let requests = server.chat_requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let read = messages.iter().find(|m| m["role"] == "tool").unwrap()["content"].as_str().unwrap().to_owned();
    assert!(read.ends_with("1: unsaved buffer text"), "the agent read the editor's buffer: {read}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "old line\n",
        "the disk is the editor's business"
    );
}

#[tokio::test]
async fn mcp_servers_the_client_passes_are_connected_and_their_tools_offered() {
    let Some(python) = std::env::var("LEMBAS_MCP_PYTHON").ok().filter(|p| !p.is_empty()) else {
        eprintln!("LEMBAS_MCP_PYTHON is not set: no MCP peer here (.ci/run sets it)");
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../lembas-mcp/tests/peer_server.py");
    let server = FakeServer::start(vec![
        Scripted::tool_call("mcp__peer__add", json!({"a": 20, "b": 22})),
        Scripted::text("It is 42."),
    ])
    .await;
    let (_dir, root) = project();
    let root2 = root.clone();
    let peer: agent_client_protocol::v1::schema::McpServer = serde_json::from_value(json!({
        "name": "peer",
        "command": python,
        "args": [script],
        "env": [{"name": "PEER_INSTRUCTIONS", "value": "Sums go through add."}]
    }))
    .unwrap();
    let sse: agent_client_protocol::v1::schema::McpServer =
        serde_json::from_value(json!({"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}))
            .unwrap();
    with_client(template(&server, Mode::Edit), true, async move |cx, seen, _asked| {
        let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        assert!(init.agent_capabilities.mcp_capabilities.http, "streamable HTTP servers are taken");
        let session =
            cx.send_request(NewSessionRequest::new(root2.clone()).mcp_servers(vec![peer, sse])).block_task().await?;
        let done =
            cx.send_request(PromptRequest::new(session.session_id.clone(), text("2 + 40?"))).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let said = agent_words(&seen.lock().unwrap());
        assert!(said.ends_with("It is 42."), "{said}");
        // The server lembas cannot speak to is said in the editor too.
        assert!(said.contains("(lembas: MCP server old"), "{said}");
        Ok(())
    })
    .await;
    let requests = server.chat_requests();
    let tools: Vec<&str> =
        requests[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert!(tools.contains(&"mcp__peer__add"), "{tools:?}");
    assert!(requests[0]["messages"][0]["content"].as_str().unwrap().contains("Sums go through add."));
    let result = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(result["content"].as_str().unwrap().contains("42"), "{result}");
}

#[tokio::test]
async fn a_subagents_approval_is_asked_under_its_task_call_and_its_steps_shown_there() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "task",
            json!({"description": "mend the note", "prompt": "Change old to new in notes.txt."}),
        ),
        Scripted::text("The subagent mended it."),
    ])
    .await;
    server.route(
        "You work for the main agent",
        vec![
            Scripted::tool_call("read", json!({"path": "notes.txt"})),
            Scripted::tool_call(
                "edit",
                json!({"path": "notes.txt", "old_string": "old line", "new_string": "new line"}),
            ),
            Scripted::text("notes.txt:1 now says new line."),
        ],
    );
    let (_dir, root) = project();
    let cfg = template(&server, Mode::Manual);
    let root2 = root.clone();
    with_client(cfg, true, async move |cx, seen, asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root2.clone())).block_task().await?;
        let done =
            cx.send_request(PromptRequest::new(session.session_id.clone(), text("mend it"))).block_task().await?;
        assert_eq!(done.stop_reason, StopReason::EndTurn);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(*asked.lock().unwrap(), 1, "the subagent's edit was put to the client");
        let seen = seen.lock().unwrap();
        // One call the client knows: the task; the subagent's steps are its content.
        let task_id = seen
            .iter()
            .find_map(|u| match u {
                SessionUpdate::ToolCall(call) if call.title == "task mend the note" => {
                    Some(call.tool_call_id.0.to_string())
                }
                _ => None,
            })
            .expect("the task call");
        assert_eq!(seen.iter().filter(|u| matches!(u, SessionUpdate::ToolCall(_))).count(), 1);
        assert!(seen.iter().any(|u| matches!(u, SessionUpdate::ToolCallUpdate(t)
            if t.tool_call_id.0.as_ref() == task_id
                && format!("{:?}", t.fields.content).contains("→ edit notes.txt"))));
        let asks = PERMISSION_ASKS.lock().unwrap();
        let ask =
            asks.iter().find(|(_, title)| title.starts_with("mend the note:")).expect("asked, naming the subagent");
        assert_eq!(ask.0, task_id);
        assert_eq!(ask.1, "mend the note: edit notes.txt");
        Ok(())
    })
    .await;
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "new line\n");
}

#[tokio::test]
async fn model_and_effort_are_config_options_changed_mid_session() {
    let server = FakeServer::start(vec![Scripted::text("On the other model.")]).await;
    let (_dir, root) = project();
    let mut cfg = template(&server, Mode::Edit);
    let mut other = cfg.model.clone();
    other.id = "other-model".into();
    other.efforts = Some(vec!["low".into(), "high".into()]);
    cfg.models = vec![cfg.model.clone(), other];
    with_client(cfg, true, async move |cx, seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let opened = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let offered = serde_json::to_value(opened.config_options.unwrap()).unwrap();
        assert_eq!(offered[0]["id"], "model");
        assert_eq!(offered[0]["currentValue"], "fake-model");
        let id = opened.session_id.clone();
        let set = |option: &str, value: &str| {
            SetSessionConfigOptionRequest::new(
                id.clone(),
                option.to_owned(),
                SessionConfigOptionValue::value_id(value.to_owned()),
            )
        };
        let answer = cx.send_request(set("model", "other-model")).block_task().await?;
        let now = serde_json::to_value(answer.config_options).unwrap();
        assert_eq!((now[0]["currentValue"].as_str(), now[1]["id"].as_str()), (Some("other-model"), Some("effort")));
        cx.send_request(set("effort", "high")).block_task().await?;
        assert!(cx.send_request(set("effort", "extreme")).block_task().await.is_err());
        cx.send_request(PromptRequest::new(id.clone(), text("hello"))).block_task().await?;
        // The requests went to the chosen model, and the editor was told of each change.
        let last = server.chat_requests().pop().unwrap();
        assert_eq!(last["model"], "other-model");
        let told: Vec<serde_json::Value> = seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::ConfigOptionUpdate(update) => {
                    Some(serde_json::to_value(&update.config_options).unwrap())
                }
                _ => None,
            })
            .collect();
        assert!(
            told.iter().any(|o| o[0]["currentValue"] == "other-model" && o[1]["currentValue"] == "high"),
            "{told:?}"
        );
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn an_image_block_reaches_a_model_that_sees() {
    let server = FakeServer::start(vec![Scripted::text("A red square.")]).await;
    let (_dir, root) = project();
    let mut cfg = template(&server, Mode::Edit);
    cfg.model.vision = Some(true);
    with_client(cfg, true, async move |cx, _seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let opened = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is this?")),
            ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
        ];
        cx.send_request(PromptRequest::new(opened.session_id, blocks)).block_task().await?;
        let request = server.chat_requests().pop().unwrap();
        let user = request["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap().clone();
        assert_eq!(user["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=");
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn compact_typed_in_the_editor_is_answered_when_the_compaction_ends() {
    let server = FakeServer::start(vec![Scripted::text("Hello."), Scripted::text("We said hello.")]).await;
    let (_dir, root) = project();
    with_client(template(&server, Mode::Edit), true, async move |cx, seen, _asked| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let id = session.session_id.clone();
        cx.send_request(PromptRequest::new(id.clone(), text("say hello"))).block_task().await?;
        seen.lock().unwrap().clear();
        // Its progress is said first (under the same submission): the answer waits for the end.
        let compacted = cx.send_request(PromptRequest::new(id, text("/compact"))).block_task().await?;
        assert_eq!(compacted.stop_reason, StopReason::EndTurn);
        let said = agent_words(&seen.lock().unwrap());
        assert!(said.contains("Compacted the conversation."), "{said}");
        Ok(())
    })
    .await;
    assert_eq!(server.chat_requests().len(), 2, "the turn and the summary");
}
