//! Where the engine and the terminal UI meet: what the host reads of stored sessions, drawn as
//! the UI draws it (the front end itself compiles without the engine; the binary wires them).

use lembas_core::{Event, Mode};
use lembas_tui::{App, Block, Theme, block_lines, plain};

fn lines(block: &Block) -> Vec<String> {
    block_lines(block, 60, Theme { no_color: true }).iter().map(plain).collect()
}

#[test]
fn subagents_lists_the_sessions_subagents_and_shows_one_read_only() {
    use lembas_store::{NewMessage, SessionRecord, Store};
    let store = std::sync::Arc::new(Store::in_memory().unwrap());
    let host = lembas_core::Host::new(store.clone());
    let show = |app: &mut App, pick: Option<usize>| {
        let children = host.subagents(&app.session_id).map_err(|e| e.to_string());
        app.show_subagents(children, pick, |id| host.transcript(id).map_err(|e| e.to_string()));
    };
    let record = |id: &str, title: &str, parent: Option<&str>| SessionRecord {
        id: id.into(),
        title: title.into(),
        project: "/p".into(),
        started: "/p".into(),
        model: "m".into(),
        created_at: 1,
        updated_at: 1,
        system_prompt: "s".into(),
        tools: "[]".into(),
        state: "{}".into(),
        parent: parent.map(Into::into),
    };
    store.create_session(&record("main", "fix it", None)).unwrap();
    let mut app = App::new("m", Mode::Edit, None, 0);
    app.apply(&Event::Session {
        id: "main".into(),
        title: "fix it".into(),
        model: "m".into(),
        mode: Mode::Edit,
        resumed: false,
        sandbox: "active".into(),
    });
    show(&mut app, None);
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n.contains("No subagents")));

    store.create_session(&record("sub", "find the parser", Some("main"))).unwrap();
    let message = |json: serde_json::Value| NewMessage {
        role: json["role"].as_str().unwrap().into(),
        json: json.to_string(),
        text: String::new(),
    };
    let call = serde_json::json!({"id": "c1", "name": "grep", "arguments": "{\"pattern\":\"fn parse\"}"});
    store
        .append(
            "sub",
            &[
                message(serde_json::json!({"role": "user", "content": "Where is parse?", "turn": true})),
                message(serde_json::json!({"role": "assistant", "content": "", "tool_calls": [call]})),
                message(serde_json::json!({"role": "tool", "tool_call_id": "c1", "content": "[#0001]\nsrc/parse.rs:3: fn parse"})),
                message(serde_json::json!({"role": "assistant", "content": "parse is at src/parse.rs:3."})),
            ],
            &[],
            &serde_json::json!({}),
            None,
            2,
        )
        .unwrap();
    show(&mut app, None);
    assert!(matches!(app.finished.last(), Some(Block::Notice(n)) if n.contains(" 1. find the parser — 4 messages")));
    app.finished.clear();
    show(&mut app, Some(1));
    let shown: String = app.finished.iter().flat_map(lines).collect::<Vec<_>>().join("\n");
    assert!(shown.contains("subagent \"find the parser\", read-only"), "{shown}");
    assert!(shown.contains("› Where is parse?"), "its brief is drawn as the words that started it: {shown}");
    assert!(shown.contains("grep \"fn parse\"") && shown.contains("1 match in 1 file"), "{shown}");
    assert!(shown.contains("parse is at src/parse.rs:3."), "{shown}");
    show(&mut app, Some(2));
    assert!(matches!(app.finished.last(), Some(Block::Error(e)) if e.contains("no subagent 2")));
}
