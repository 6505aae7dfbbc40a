//! The link as a LLeMbas server's web UI and phone drive it, by the spec's words (`acp.md`) —
//! not by lembas' own: the test kit answers each card with one of the ids the card offers
//! (`once`, `session`, `deny`), the person's feedback and a corrected command beside it.

mod common;

use common::{Env, linked_with, prompted, ready};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

/// A LLeMbas instance, logged in to by token; remote work allowed in the folder holding the
/// trusted project, up to the default widest mode.
async fn linked(script: Vec<Scripted>) -> (FakeServer, Env) {
    linked_with(script, "", true).await
}

/// The tool results the model read in `request`, in order.
fn results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test]
async fn approvals_answered_once_session_and_deny_with_words_do_what_the_person_chose() {
    let script = vec![
        Scripted::tool_call("bash", json!({ "command": "rm -rf build" })),
        Scripted::tool_call("bash", json!({ "command": "cargo test --all" })),
        Scripted::tool_call("bash", json!({ "command": "touch a.txt" })),
        Scripted::tool_call("bash", json!({ "command": "touch a.txt" })),
        Scripted::text("Done."),
    ];
    let (server, env) = linked(script).await;
    std::fs::create_dir_all(env.project.join("build")).unwrap();
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link
        .request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": { "mode": "manual" } }))
        .await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    link.send(&json!({ "jsonrpc": "2.0", "id": 70, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "clean, test and make a file, twice"}] } }));

    // The card, as the spec draws it: its three options by id and kind, and why it is asked.
    let card = link.next_request("session/request_permission").await;
    let options: Vec<(String, String)> = card["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap().to_owned(), o["kind"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("once", "allow_once"), ("session", "allow_always"), ("deny", "reject_once")];
    assert_eq!(options, want.map(|(i, k)| (i.to_owned(), k.to_owned())), "{card}");
    let lembas = &card["params"]["_meta"]["lembas"];
    assert!(lembas["reason"].as_str().is_some_and(|r| r.contains("manual mode asks")), "{card}");
    assert_eq!(lembas["always"], "commands matching `rm -rf build`", "{card}");
    // Denied, with the person's words: the model reads them.
    link.choose(&card, "deny", Some(json!({ "feedback": "keep the build folder, it is cached" })));

    // Allowed once, with the command corrected: the corrected one runs.
    let card = link.next_request("session/request_permission").await;
    assert!(card["params"]["toolCall"]["title"].as_str().unwrap().contains("cargo test --all"), "{card}");
    link.choose(&card, "once", Some(json!({ "command": "echo corrected > fixed.txt" })));

    // Allowed for the session: the next call of the same kind is not asked.
    let card = link.next_request("session/request_permission").await;
    assert!(card["params"]["toolCall"]["title"].as_str().unwrap().contains("touch a.txt"), "{card}");
    link.choose(&card, "session", None);

    let answer = link.answer_to(70).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        link.requests.iter().all(|r| r["method"] != "session/request_permission"),
        "the same call was not asked again"
    );
    assert!(env.project.join("build").is_dir(), "the denial held");
    assert_eq!(std::fs::read_to_string(env.project.join("fixed.txt")).unwrap(), "corrected\n");
    assert!(env.project.join("a.txt").exists());
    let told = results(server.chat_requests().last().unwrap());
    assert!(told[0].contains("keep the build folder, it is cached"), "{told:?}");
    child.kill().await.unwrap();
}

fn plan() -> Scripted {
    Scripted::tool_call(
        "plan_write",
        json!({"title": "Store notes", "phases": [{"title": "Do", "tasks": [{"text": "add sqlite"}]}]}),
    )
}

#[tokio::test]
async fn questions_and_plans_reach_the_person_as_their_own_requests() {
    let script = vec![
        plan(),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::tool_call("ask_user", json!({"question": "Which port should it listen on?"})),
        Scripted::text("Done."),
    ];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let id = prompted(&mut link, &env, "plan", "go").await;

    // The plan, sent back with the person's words; then approved into edit mode.
    let asked = link.next_request("_lembas/plan").await;
    assert_eq!(asked["params"]["sessionId"], id.as_str());
    assert!(asked["params"]["plan"].as_str().unwrap().contains("add sqlite"), "{asked}");
    assert_eq!(asked["params"]["modes"], json!(["edit", "auto", "manual"]), "{asked}");
    link.answer(&asked["id"], json!({ "outcome": "declined", "feedback": "name the table first" }));
    let asked = link.next_request("_lembas/plan").await;
    link.answer(&asked["id"], json!({ "outcome": "approved", "mode": "edit" }));

    // A question with options, and one without: both asked, both answered in words.
    let asked = link.next_request("_lembas/question").await;
    assert_eq!(
        (asked["params"]["question"].clone(), asked["params"]["options"].clone()),
        (json!("Which database?"), json!(["sqlite", "postgres"])),
        "{asked}"
    );
    link.answer(&asked["id"], json!({ "answer": "postgres" }));
    let asked = link.next_request("_lembas/question").await;
    assert_eq!(asked["params"]["options"], json!([]), "{asked}");
    link.answer(&asked["id"], json!({ "answer": "5433, the other one is taken" }));

    let answer = link.answer_to(70).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(link.requests.iter().all(|r| r["method"] != "session/request_permission"), "{:?}", link.requests);
    let told = results(server.chat_requests().last().unwrap());
    assert!(told[1].contains("name the table first"), "{told:?}");
    assert!(told[3].contains("postgres"), "{told:?}");
    assert!(told[4].contains("5433, the other one is taken"), "{told:?}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_question_and_a_plan_nobody_answers_time_out() {
    let script = vec![
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        plan(),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::text("Waiting for you."),
    ];
    let (server, env) = linked_with(script, "approval_timeout = 1", true).await;
    let (mut child, mut link) = ready(&server, &env).await;
    prompted(&mut link, &env, "plan", "go").await;
    let answer = link.answer_to(70).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked: Vec<&str> = link.requests.iter().filter_map(|r| r["method"].as_str()).collect();
    assert_eq!(asked, ["_lembas/question", "_lembas/plan"], "both asked, neither answered");
    let settled = link.notifications.iter().filter(|n| n["method"] == "_lembas/permission/settled").count();
    assert_eq!(settled, 2, "the client hears each is settled: {:?}", link.notifications);
    let told = results(server.chat_requests().last().unwrap());
    assert!(told[2].contains("Nobody answered the plan within 1 seconds"), "{told:?}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_client_that_does_not_know_the_question_is_asked_with_a_card_from_then_on() {
    let script = vec![
        Scripted::tool_call("ask_user", json!({"question": "Which database?", "options": ["sqlite", "postgres"]})),
        Scripted::tool_call("ask_user", json!({"question": "Which port?", "options": ["5432", "5433"]})),
        Scripted::text("Done."),
    ];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = ready(&server, &env).await;
    prompted(&mut link, &env, "edit", "go").await;
    let asked = link.next_request("_lembas/question").await;
    link.send(
        &json!({ "jsonrpc": "2.0", "id": asked["id"], "error": { "code": -32601, "message": "Method not found" } }),
    );
    // The same question, as a card with one option per answer.
    let card = link.next_request("session/request_permission").await;
    assert_eq!(card["params"]["toolCall"]["title"], "Which database?", "{card}");
    link.choose(&card, "option_1", None);
    // The next question goes as a card at once.
    let card = link.next_request("session/request_permission").await;
    assert_eq!(card["params"]["toolCall"]["title"], "Which port?", "{card}");
    link.choose(&card, "option_0", None);
    let answer = link.answer_to(70).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(link.requests.iter().filter(|r| r["method"] == "_lembas/question").count(), 0);
    let told = results(server.chat_requests().last().unwrap());
    assert!(told[0].contains("postgres") && told[1].contains("5432"), "{told:?}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_stored_session_is_prompted_after_the_service_restarts_and_status_names_its_turns() {
    let script =
        vec![Scripted::text("First."), Scripted::text("Second, slowly.").with_delay_ms(800), Scripted::text("Third.")];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = |turn: &str, words: &str| json!({ "sessionId": id, "prompt": [{"type": "text", "text": words}], "_meta": { "lembas": { "turnId": turn } } });
    let first = link.request("session/prompt", prompt("t1", "remember the number 7")).await;
    assert_eq!(first["result"]["_meta"]["lembas"]["turnId"], "t1", "{first}");
    child.kill().await.unwrap();
    drop(link);

    // A new service knows nothing of the session in memory: it is opened from the store.
    let (mut child, mut link) = ready(&server, &env).await;
    let capabilities = link
        .request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": { "_meta": { "lembas": { "protocol": 3 } } } }),
        )
        .await;
    assert!(capabilities["result"]["_meta"]["lembas"]["capabilities"].as_array().unwrap().contains(&json!("sessions")));
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!((status["result"]["exists"].clone(), status["result"]["held"].clone()), (json!(true), json!("none")));
    assert_eq!(status["result"]["lastTurnId"], "t1", "the last turn it finished before: {status}");
    link.send(
        &json!({ "jsonrpc": "2.0", "id": 80, "method": "session/prompt", "params": prompt("t2", "what was it?") }),
    );
    // While t2 runs, t3 waits behind it.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    link.send(&json!({ "jsonrpc": "2.0", "id": 81, "method": "session/prompt", "params": prompt("t3", "and then?") }));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    let status = &status["result"];
    assert_eq!(
        (status["held"].clone(), status["turnId"].clone(), status["queued"].clone(), status["lastTurnId"].clone()),
        (json!("here"), json!("t2"), json!(["t3"]), json!("t1")),
        "{status}"
    );
    assert_eq!(link.answer_to(80).await["result"]["stopReason"], "end_turn");
    assert_eq!(link.answer_to(81).await["result"]["stopReason"], "end_turn");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!((status["result"]["queued"].clone(), status["result"]["lastTurnId"].clone()), (json!([]), json!("t3")));
    // The conversation went on from what was stored.
    let second = server.chat_requests()[1].to_string();
    assert!(second.contains("remember the number 7") && second.contains("First."), "{second}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_prompt_marked_machine_is_not_taken_as_the_persons_words() {
    let script = vec![Scripted::text("Noted."), Scripted::text("Hello.")];
    let (server, env) = linked(script).await;
    // A hook on the person's prompts: it must not run for the harness's words.
    std::fs::write(
        env.home.join("config/config.toml"),
        format!(
            "{}\n[[hooks.UserPromptSubmit]]\ncommand = \"cat >> {}\"\n",
            std::fs::read_to_string(env.home.join("config/config.toml")).unwrap(),
            env.project.join("prompts-seen.txt").display()
        ),
    )
    .unwrap();
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let machine = json!({ "sessionId": id, "prompt": [{"type": "text", "text": "The job build-7 finished."}],
        "_meta": { "lembas": { "machine": true } } });
    assert_eq!(link.request("session/prompt", machine).await["result"]["stopReason"], "end_turn");
    let said: Vec<&Value> = link
        .notifications
        .iter()
        .filter(|n| n["method"] == "_lembas/event" && n["params"]["event"]["type"] == "prompt")
        .collect();
    assert_eq!(said.len(), 1, "{:?}", link.notifications);
    assert_eq!(said[0]["params"]["event"]["machine"], true, "{}", said[0]);
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert!(!status["result"]["title"].as_str().unwrap_or("").contains("build-7"), "no title from it: {status}");
    let person = json!({ "sessionId": id, "prompt": [{"type": "text", "text": "say hello"}] });
    assert_eq!(link.request("session/prompt", person).await["result"]["stopReason"], "end_turn");
    let seen = std::fs::read_to_string(env.project.join("prompts-seen.txt")).unwrap_or_default();
    assert!(seen.contains("say hello") && !seen.contains("build-7"), "{seen}");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!(status["result"]["title"], "say hello", "{status}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_personality_sent_with_a_prompt_reaches_the_model_from_that_message_on() {
    let script = vec![Scripted::text("Plain."), Scripted::text("Arr."), Scripted::text("Oui.")];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let plain = json!({ "sessionId": id, "prompt": [{"type": "text", "text": "hello"}] });
    link.request("session/prompt", plain).await;
    let pirate = json!({ "sessionId": id, "prompt": [{"type": "text", "text": "hello again"}],
        "_meta": { "lembas": { "personalization": { "personality": "custom", "personality_custom": "Answer like a pirate." } } } });
    link.request("session/prompt", pirate).await;
    // The chat's own instructions, changed mid-chat: noted on that message, the system prompt
    // (the cached prefix) as it began.
    let moved = json!({ "sessionId": id, "prompt": [{"type": "text", "text": "and now?"}],
        "_meta": { "lembas": { "system_prompt": "Answer in French." } } });
    link.request("session/prompt", moved).await;
    let requests = server.chat_requests();
    assert!(!requests[0].to_string().contains("like a pirate"));
    assert!(requests[1].to_string().contains("Answer like a pirate."), "{}", requests[1]);
    let system = |r: &Value| r["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(system(&requests[2]), system(&requests[0]), "the prefix holds");
    let last = requests[2]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(last.contains("Answer in French."), "{last}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_plan_is_sent_as_its_structure_and_slash_plan_plans_a_task_or_switches_to_plan_mode() {
    let script = vec![plan(), Scripted::tool_call("plan_submit", json!({})), Scripted::text("Done.")];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = common::service(&server, &env).await;
    assert_eq!(link.recv().await.unwrap()["method"], "_lembas/hello");
    let hello = common::initialize(&mut link).await;
    let listed = &hello["result"]["_meta"]["lembas"]["capabilities"];
    for capability in ["plan_state", "commands", "jobs"] {
        assert!(listed.as_array().unwrap().contains(&json!(capability)), "{capability}: {hello}");
    }
    let opened =
        link.request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": { "mode": "edit" } })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    // The commands follow the answer, `/plan` among them.
    let commands =
        link.next_notification(|n| n["params"]["update"]["sessionUpdate"] == "available_commands_update").await;
    let names: Vec<&str> = commands["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"plan"), "{names:?}");

    // `/plan TASK`: the task, in plan mode.
    link.send(&json!({ "jsonrpc": "2.0", "id": 70, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "/plan store the notes in sqlite"}] } }));
    let asked = link.next_request("_lembas/plan").await;
    // The plan's structure beside its text, on the request and on the `plan` update.
    assert_eq!(asked["params"]["_meta"]["lembas"]["plan"]["title"], "Store notes", "{asked}");
    assert_eq!(asked["params"]["_meta"]["lembas"]["plan"]["phases"][0]["tasks"][0]["text"], "add sqlite", "{asked}");
    let update = link.next_notification(|n| n["params"]["update"]["sessionUpdate"] == "plan").await;
    assert_eq!(update["params"]["update"]["_meta"]["lembas"]["plan"]["title"], "Store notes", "{update}");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!(status["result"]["plan"]["title"], "Store notes", "{status}");
    link.answer(&asked["id"], json!({ "outcome": "approved", "mode": "edit" }));
    assert_eq!(link.answer_to(70).await["result"]["stopReason"], "end_turn");
    let first = &server.chat_requests()[0];
    let words = first["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
    assert!(words["content"].as_str().unwrap().starts_with("store the notes in sqlite\n"), "{words}");
    assert!(words["content"].as_str().unwrap().contains("The permission mode is now plan"), "{words}");
    assert!(
        link.notifications
            .iter()
            .any(|n| n["params"]["event"]["type"] == "mode" && n["params"]["event"]["mode"] == "plan")
    );

    // `/plan` alone: an action, said in a line.
    let answer =
        link.request("session/prompt", json!({ "sessionId": id, "prompt": [{"type": "text", "text": "/plan"}] })).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let said: Vec<String> = link
        .notifications
        .iter()
        .filter(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|n| n["params"]["update"]["content"]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(said.iter().any(|t| t == "Mode: plan."), "{said:?}");
    assert_eq!(server.chat_requests().len(), 3, "no request for a command");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_path_mention_is_found_under_the_sessions_folder_new_files_too() {
    let (server, env) = linked(vec![Scripted::text("Done.")]).await;
    std::fs::create_dir_all(env.project.join("src")).unwrap();
    std::fs::write(env.project.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(env.project.join("README.md"), "# x\n").unwrap();
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let found = link.request("_lembas/files/search", json!({ "sessionId": id, "query": "main" })).await;
    let root = std::fs::canonicalize(&env.project).unwrap();
    assert_eq!(found["result"]["root"], root.to_str().unwrap(), "{found}");
    assert_eq!(found["result"]["files"][0], "src/main.rs", "{found}");
    // A file made after the session opened is found too; `limit` holds.
    std::fs::write(env.project.join("src/made_now.rs"), "\n").unwrap();
    let found = link.request("_lembas/files/search", json!({ "sessionId": id, "query": "madenow" })).await;
    assert_eq!(found["result"]["files"], json!(["src/made_now.rs"]), "{found}");
    let one = link.request("_lembas/files/search", json!({ "sessionId": id, "query": "", "limit": 1 })).await;
    assert_eq!(one["result"]["files"].as_array().unwrap().len(), 1, "{one}");
    let none = link.request("_lembas/files/search", json!({ "sessionId": "nope", "query": "x" })).await;
    assert_eq!(none["error"]["code"], -32602, "{none}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn words_steered_in_are_said_with_the_clients_id_and_the_title_with_the_sessions() {
    let script = vec![
        Scripted::tool_call("glob", json!({ "pattern": "*" })).with_delay_ms(600),
        Scripted::text("Done, tests too."),
    ];
    let (server, env) = linked(script).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let id = prompted(&mut link, &env, "edit", "go").await;
    link.next_event(|e| e["type"] == "step").await;
    let steered = link.request("_lembas/steer", json!({ "sessionId": id, "text": "the tests too", "id": "m1" })).await;
    assert_eq!(steered["result"]["steered"], true, "{steered}");
    let taken = link.next_event(|e| e["type"] == "steered").await;
    assert_eq!((taken["texts"].clone(), taken["ids"].clone()), (json!(["the tests too"]), json!(["m1"])), "{taken}");
    let title = link.next_event(|e| e["type"] == "title").await;
    assert_eq!(title["id"], id.as_str(), "{title}");
    assert_eq!(link.answer_to(70).await["result"]["stopReason"], "end_turn");
    assert!(server.chat_requests()[1].to_string().contains("the tests too"));
    child.kill().await.unwrap();
}
