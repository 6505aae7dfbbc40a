//! Background work as a LLeMbas server's web UI sees and steers it over the link (`acp.md`,
//! capability `jobs`): the `job` and `job_note` events, `_lembas/jobs`, `_lembas/job/output`,
//! `_lembas/job/send`, `_lembas/job/stop`, `_lembas/job/transcript`, `jobs` in the session's
//! status, and a background subagent's card naming its job.

mod common;

use common::{linked_with, prompted, ready};
use lembas_testkit::{DeviceLink, Scripted};
use serde_json::{Value, json};

const SUBAGENT: &str = "You work for the main agent";

/// Answers the next card with `once`, the job it names (if any) answered.
async fn allow_next(link: &mut DeviceLink) -> Value {
    let card = link.next_request("session/request_permission").await;
    link.choose(&card, "once", None);
    card["params"]["_meta"]["lembas"]["job"].clone()
}

/// The job's output from `offset` once it holds `want` (asked again until it does).
async fn output_with(link: &mut DeviceLink, id: &str, job: &str, want: &str) -> Value {
    for _ in 0..100 {
        let read = link.request("_lembas/job/output", json!({ "sessionId": id, "id": job, "offset": 0 })).await;
        if read["result"]["text"].as_str().is_some_and(|t| t.contains(want)) {
            return read["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{job}'s output never held {want:?}");
}

#[tokio::test]
async fn a_background_job_is_listed_read_sent_words_stopped_and_a_subagents_job_named_on_its_card() {
    let script = vec![
        Scripted::tool_call(
            "bash",
            json!({ "command": "printf 'line1\\nline2\\n'; read x; echo \"got:$x\"; sleep 60", "background": true }),
        ),
        Scripted::text("It runs."),
        Scripted::text("Noted: the person stopped job1."),
        Scripted::tool_call(
            "task",
            json!({ "description": "scan", "prompt": "Make a file called made.txt.", "background": true }),
        ),
        Scripted::text("The scan runs."),
        Scripted::text("The scan made a file."),
    ];
    let (server, env) = linked_with(script, "", true).await;
    server.route(
        SUBAGENT,
        vec![Scripted::tool_call("bash", json!({ "command": "touch made.txt" })), Scripted::text("Made made.txt.")],
    );
    let (mut child, mut link) = ready(&server, &env).await;
    let id = prompted(&mut link, &env, "manual", "start it in the background").await;
    assert!(allow_next(&mut link).await.is_null(), "the main agent's own card names no job");

    // Its start, as the `job` event says it.
    let started = link.next_event(|e| e["type"] == "job" && e["state"] == "start").await;
    assert_eq!(started["job"]["id"], "job1", "{started}");
    assert_eq!(started["job"]["kind"], "command", "{started}");
    assert_eq!(started["job"]["state"], "running", "{started}");
    assert!(started["job"]["description"].as_str().unwrap().starts_with("printf"), "{started}");
    assert!(started["job"]["started"].as_u64().unwrap() > 1_700_000_000_000, "{started}");
    assert_eq!(link.answer_to(70).await["result"]["stopReason"], "end_turn");

    // Listed, in the status too; its output read from the start, twice: the person reading it
    // is not the model reading it.
    let listed = link.request("_lembas/jobs", json!({ "sessionId": id })).await;
    assert_eq!(listed["result"]["jobs"][0]["id"], "job1", "{listed}");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!(status["result"]["jobs"][0]["state"], "running", "{status}");
    let read = output_with(&mut link, &id, "job1", "line2").await;
    assert_eq!(read["offset"], 0);
    assert!(read["job"]["unread"].as_u64().unwrap() >= 12, "unread by the model still: {read}");
    let part = link.request("_lembas/job/output", json!({ "sessionId": id, "id": "job1", "offset": 6 })).await;
    assert!(part["result"]["text"].as_str().unwrap().starts_with("line2"), "{part}");

    // Words to its input; then the person stops it, and the model is told in the job's note.
    let sent = link.request("_lembas/job/send", json!({ "sessionId": id, "id": "job1", "text": "hello" })).await;
    assert_eq!(sent["result"]["sent"], true, "{sent}");
    output_with(&mut link, &id, "job1", "got:hello").await;
    let stopped = link.request("_lembas/job/stop", json!({ "sessionId": id, "id": "job1" })).await;
    assert_eq!(stopped["result"]["job"]["state"], "stopped", "{stopped}");
    let ended = link.next_event(|e| e["type"] == "job" && e["state"] == "end").await;
    assert_eq!(ended["job"]["exit"], Value::Null, "a signal ended it: {ended}");
    let note = link.next_event(|e| e["type"] == "job_note").await;
    assert_eq!(note["jobId"], "job1", "{note}");
    assert!(note["text"].as_str().unwrap().contains("was stopped"), "{note}");
    // The note woke the session as the harness's turn.
    let woke = link.next_event(|e| e["type"] == "prompt" && e["machine"] == true).await;
    assert!(woke["text"].as_str().unwrap().contains("job1"), "{woke}");
    link.next_event(|e| e["type"] == "done" && e["text"] == "Noted: the person stopped job1.").await;
    let asked = server.chat_requests();
    let told = asked.last().unwrap()["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(told.contains("job1") && told.contains("was stopped"), "{told}");
    let unknown = link.request("_lembas/job/stop", json!({ "sessionId": id, "id": "job9" })).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // A subagent in the background: its card names its job; its transcript is read; a
    // command job has none.
    link.send(&json!({ "jsonrpc": "2.0", "id": 71, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "scan in the background"}] } }));
    let job = allow_next(&mut link).await;
    assert_eq!(job, json!({ "id": "job2", "agent": "general", "description": "scan" }));
    let ended = link.next_event(|e| e["type"] == "job" && e["state"] == "end" && e["job"]["id"] == "job2").await;
    assert_eq!(ended["job"]["kind"], "subagent", "{ended}");
    assert_eq!(ended["job"]["state"], "done", "{ended}");
    assert!(ended["job"]["tools"].as_u64().unwrap() >= 1, "{ended}");
    assert!(env.project.join("made.txt").exists());
    // Its call, drawn in the job's panel.
    let sub = link.next_event(|e| e["type"] == "sub_tool").await;
    assert_eq!(
        (sub["jobId"].clone(), sub["name"].clone(), sub["title"].clone()),
        (json!("job2"), json!("bash"), json!("touch made.txt")),
        "{sub}"
    );
    let transcript = link.request("_lembas/job/transcript", json!({ "sessionId": id, "id": "job2" })).await;
    assert_eq!(transcript["result"]["state"], "done", "{transcript}");
    let turns = transcript["result"]["turns"].as_array().unwrap();
    assert!(turns[0]["prompt"].as_str().unwrap().contains("made.txt"), "{transcript}");
    let none = link.request("_lembas/job/transcript", json!({ "sessionId": id, "id": "job1" })).await;
    assert_eq!(none["error"]["code"], -32602, "{none}");
    child.kill().await.unwrap();
}
