//! `lembas service`: this computer linked to a LLeMbas server (the test kit's, which plays the
//! server's ACP client over the WebSocket link) — hello and limits, remote sessions held to the
//! roots, trust and the widest mode, a turn over the link, 4400, redial, the protocol check —
//! and `lembas remote`, the settings the link obeys.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Env, initialize, linked_with, ready, service, stderr, stdout};
use lembas_testkit::{DeviceLink, FakeServer, Llembas, Scripted};
use serde_json::{Value, json};

const TOKEN: &str = "lmb_test_token";

/// A LLeMbas instance, logged in to by token; remote work allowed in the folder holding the
/// project (with `max_mode` and trust as given).
async fn linked_env(script: Vec<Scripted>, max_mode: &str, trust: bool) -> (FakeServer, Env) {
    linked_with(script, &format!("max_mode = \"{max_mode}\""), trust).await
}

fn real(path: &Path) -> String {
    std::fs::canonicalize(path).unwrap().display().to_string()
}

/// Every file under `dir`, with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
    out
}

#[tokio::test]
async fn the_device_says_hello_then_answers_initialize_with_its_limits() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (mut child, mut link) = service(&server, &env).await;
    assert_eq!(link.authorization.as_deref(), Some("Bearer lmb_test_token"));
    let hello = link.recv().await.unwrap();
    assert_eq!(hello["method"], "_lembas/hello", "{hello}");
    assert!(hello.get("id").is_none(), "hello is a notification: {hello}");
    let root = real(env.project.parent().unwrap());
    assert_eq!(hello["params"]["protocol"], 3);
    assert_eq!(
        hello["params"]["limits"],
        json!({"roots": [root], "max_mode": "edit", "require_trust": true, "scheduled": false})
    );
    assert_eq!(hello["params"]["device"]["platform"], std::env::consts::OS);
    assert!(hello["params"]["harness_spec"].is_string());

    let answer = initialize(&mut link).await;
    let lembas = &answer["result"]["_meta"]["lembas"];
    assert_eq!(lembas["protocol"], 3, "{answer}");
    assert_eq!(lembas["limits"], hello["params"]["limits"]);

    // What the person sees of it: linked, the settings — and never the token.
    let listed = env.run(&["remote", "list", "--json"]).await;
    let listed: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed["state"], "linked", "{listed}");
    assert_eq!(listed["server"], server.url());
    assert_eq!((listed["roots"].clone(), listed["scheduled"].clone()), (json!([root]), json!(false)));
    let text = env.run(&["remote", "list"]).await;
    assert!(stdout(&text).contains("(linked)"), "{}", stdout(&text));
    for (path, text) in files_under(&env.home.join("state")).into_iter().chain(files_under(&env.home.join("logs"))) {
        assert!(!text.contains(TOKEN), "{} has the token", path.display());
    }
    assert!(!stdout(&text).contains(TOKEN) && !listed.to_string().contains(TOKEN));
    child.kill().await.unwrap();
}

#[tokio::test]
async fn remote_sessions_open_only_inside_the_roots_in_trusted_projects_never_wider_than_max_mode() {
    let (server, env) = linked_env(vec![Scripted::text("Hello from this computer.")], "edit", true).await;
    let (mut child, mut link) = ready(&server, &env).await;

    let outside = tempfile::tempdir().unwrap();
    let refused = link.request("session/new", json!({ "cwd": outside.path(), "mcpServers": [] })).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "folder");
    assert!(refused["error"]["message"].as_str().unwrap().contains("outside the folders"), "{refused}");

    let untrusted = env.project.parent().unwrap().join("other");
    std::fs::create_dir_all(untrusted.join(".git")).unwrap();
    let refused = link.request("session/new", json!({ "cwd": untrusted, "mcpServers": [] })).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("not a trusted project"), "{refused}");

    // Auto asked for, edit allowed: edit it is, and a later ask for auto stays edit.
    let opened =
        link.request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": { "mode": "auto" } })).await;
    assert_eq!(opened["result"]["modes"]["currentModeId"], "edit", "{opened}");
    assert_eq!(opened["result"]["_meta"]["lembas"]["instance"], true, "the instance's model: {opened}");
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    link.request("session/set_mode", json!({ "sessionId": id, "modeId": "manual" })).await;
    link.request("session/set_mode", json!({ "sessionId": id, "modeId": "auto" })).await;

    let answered = link
        .request(
            "session/prompt",
            json!({ "sessionId": id, "prompt": [{"type": "text", "text": "say hello"}], "_meta": { "lembas": { "turnId": "t1" } } }),
        )
        .await;
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");
    let words: String = link
        .notifications
        .iter()
        .filter(|n| n["method"] == "session/update" && n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|n| n["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(words, "Hello from this computer.");
    // A client of lembas' protocol (it said so in clientCapabilities._meta.lembas) gets every
    // engine event, the turn opened and closed under its id.
    let events: Vec<&Value> =
        link.notifications.iter().filter(|n| n["method"] == "_lembas/event").map(|n| &n["params"]["event"]).collect();
    let tasks: Vec<(&Value, &Value)> =
        events.iter().filter(|e| e["type"] == "task").map(|e| (&e["state"], &e["turnId"])).collect();
    assert_eq!(tasks, [(&json!("start"), &json!("t1")), (&json!("end"), &json!("t1"))], "{events:?}");
    assert!(events.iter().any(|e| e["type"] == "text"), "{events:?}");
    assert!(events.iter().any(|e| e["type"] == "prompt" && e["turnId"] == "t1"), "{events:?}");
    // The same turn sent again after a dropped answer is answered by that turn, not run twice.
    let again = link
        .request(
            "session/prompt",
            json!({ "sessionId": id, "prompt": [{"type": "text", "text": "say hello"}], "_meta": { "lembas": { "turnId": "t1" } } }),
        )
        .await;
    assert_eq!(again["result"]["_meta"]["lembas"]["turnId"], "t1", "{again}");
    assert_eq!(server.chat_requests().len(), 1, "one turn, one request");
    let requests = server.chat_requests();
    let names: Vec<&Value> = requests[0]["tools"].as_array().unwrap().iter().map(|t| &t["function"]["name"]).collect();
    assert!(!names.contains(&&json!("show")), "show: only where the client shows files: {names:?}");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!((status["result"]["busy"].clone(), status["result"]["turnId"].clone()), (json!(false), Value::Null));
    // A turn the client missed is imported from the history.
    let history = link.request("_lembas/session/history", json!({ "sessionId": id })).await;
    let turns = history["result"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{history}");
    assert_eq!(turns[0]["prompt"], "say hello");
    let modes: Vec<&Value> = link
        .notifications
        .iter()
        .filter(|n| n["params"]["update"]["sessionUpdate"] == "current_mode_update")
        .map(|n| &n["params"]["update"]["currentModeId"])
        .collect();
    // Manual is narrower, so it is taken; auto after it is lowered to edit.
    assert_eq!(modes, [&json!("manual"), &json!("edit")], "never wider than edit");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_dropped_link_is_dialled_again_and_a_malformed_frame_is_a_parse_error() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (mut child, mut link) = service(&server, &env).await;
    link.recv().await.unwrap();
    link.send_raw("{this is not json");
    let answer = link.recv().await.unwrap();
    assert_eq!((answer["error"]["code"].clone(), answer["id"].clone()), (json!(-32700), Value::Null), "{answer}");
    // Still served after it.
    assert_eq!(initialize(&mut link).await["result"]["_meta"]["lembas"]["protocol"], 3);

    let dropped = std::time::Instant::now();
    drop(link);
    let mut again = server.next_link(Duration::from_secs(10)).await.expect("dialled again");
    assert!(dropped.elapsed() < Duration::from_secs(5), "the first redial comes within a few seconds");
    assert_eq!(again.recv().await.unwrap()["method"], "_lembas/hello");
    assert_eq!(initialize(&mut again).await["result"]["_meta"]["lembas"]["protocol"], 3);
    child.kill().await.unwrap();
}

#[tokio::test]
async fn close_code_4400_stops_the_service_naming_what_to_update() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (child, mut link) = service(&server, &env).await;
    link.recv().await.unwrap();
    link.close(4400, "update LLeMbas CLI to 2.0");
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(4), "stopped for good: a unit does not restart it");
    let said = stderr(&out);
    assert!(said.contains("update LLeMbas CLI to 2.0") && said.contains("update the older"), "{said}");
    assert!(server.next_link(Duration::from_secs(3)).await.is_none(), "no redial after 4400");
}

#[tokio::test]
async fn a_server_that_no_longer_speaks_protocol_3_is_not_linked_again() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (child, mut link) = service(&server, &env).await;
    link.recv().await.unwrap();
    server.set_llembas(Llembas { protocols: vec![1, 2], version: "1.9.0".into(), ..Llembas::default() });
    link.close(1012, "restarting");
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap();
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(said.contains("which speaks link protocol 1 and 2") && said.contains("update the server"), "{said}");
}

#[tokio::test]
async fn remote_settings_are_changed_from_the_command_line() {
    let env = Env::new();
    let dir = env.project.to_str().unwrap();
    let listed = |out: std::process::Output| -> Value { serde_json::from_str(&stdout(&out)).unwrap() };
    let before = listed(env.run(&["remote", "list", "--json"]).await);
    assert_eq!(
        before,
        json!({"server": null, "state": "off", "enabled": true, "roots": [], "max_mode": "edit",
        "require_trust": true, "approval_timeout": 600, "scheduled": false})
    );
    assert!(env.run(&["remote", "roots", "add", dir]).await.status.success());
    assert!(env.run(&["service", "scheduled", "on"]).await.status.success());
    assert!(env.run(&["remote", "disable"]).await.status.success());
    let after = listed(env.run(&["remote", "list", "--json"]).await);
    assert_eq!(
        (after["roots"].clone(), after["scheduled"].clone(), after["enabled"].clone()),
        (json!([real(&env.project)]), json!(true), json!(false))
    );
    assert!(env.run(&["remote", "roots", "remove", dir]).await.status.success());
    let missing = env.run(&["remote", "roots", "remove", dir]).await;
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert_eq!(listed(env.run(&["remote", "list", "--json"]).await)["roots"], json!([]));
    // Without a LLeMbas login there is nothing to link to.
    let server = FakeServer::start(vec![]).await;
    env.login(&server).await;
    let out = env.run(&["service"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("plain model server"), "{}", stderr(&out));
}

/// A scheduled run's `session/new` and `session/prompt` params.
fn scheduled(run: &str, mode: Option<&str>) -> Value {
    let mut marks =
        json!({ "schedule_id": "sched1", "run_id": run, "title": "Waybread check", "approval_wait_s": 1800 });
    if let Some(mode) = mode {
        marks["mode"] = json!(mode);
    }
    json!({ "lembas": { "scheduled": marks, "turnId": run } })
}

async fn run_prompt(link: &mut DeviceLink, session: &str, run: &str, words: &str) -> Value {
    let params =
        json!({ "sessionId": session, "prompt": [{"type": "text", "text": words}], "_meta": scheduled(run, None) });
    link.request("session/prompt", params).await
}

#[tokio::test]
async fn scheduled_runs_are_refused_while_off_and_report_how_they_went_when_on() {
    let script = vec![
        Scripted::text("All the waybread is wrapped."),
        Scripted::text("Nothing changed.\n[SILENT]"),
        Scripted::status(400, "the model is gone"),
    ];
    let (server, env) = linked_with(script, "max_mode = \"auto\"", true).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let off = link
        .request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": scheduled("r1", Some("edit")) }))
        .await;
    assert_eq!(off["error"]["code"], -32602, "{off}");
    assert_eq!(off["error"]["data"]["reason"], "scheduled_off");
    assert_eq!(
        off["error"]["message"],
        "This computer does not accept scheduled work. Turn on \"Accept scheduled work\" on it (lembas service scheduled on)."
    );
    child.kill().await.unwrap();
    drop(link);

    assert!(env.run(&["service", "scheduled", "on"]).await.status.success());
    let (mut child, mut link) = service(&server, &env).await;
    let hello = link.recv().await.unwrap();
    assert_eq!(hello["params"]["limits"]["scheduled"], true, "{hello}");
    initialize(&mut link).await;
    let plan = link
        .request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": scheduled("r1", Some("plan")) }))
        .await;
    assert_eq!(plan["error"]["data"]["reason"], "plan", "{plan}");
    // No mode chosen: edit, though the device would allow auto.
    let opened = link
        .request("session/new", json!({ "cwd": env.project, "mcpServers": [], "_meta": scheduled("r1", None) }))
        .await;
    assert_eq!(opened["result"]["modes"]["currentModeId"], "edit", "{opened}");
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();

    let ok = run_prompt(&mut link, &id, "r1", "check the waybread").await;
    let said = &ok["result"]["_meta"]["lembas"];
    assert_eq!(said["turnId"], "r1", "{ok}");
    assert_eq!(
        said["scheduled"],
        json!({ "run_id": "r1", "status": "ok", "text": "All the waybread is wrapped.", "error": null })
    );
    let silent = run_prompt(&mut link, &id, "r2", "check again").await;
    assert_eq!(silent["result"]["_meta"]["lembas"]["scheduled"]["status"], "silent", "{silent}");
    assert_eq!(silent["result"]["_meta"]["lembas"]["scheduled"]["text"], "Nothing changed.\n[SILENT]");
    let failed = run_prompt(&mut link, &id, "r3", "once more").await;
    let outcome = &failed["result"]["_meta"]["lembas"]["scheduled"];
    assert_eq!(outcome["status"], "failed", "{failed}");
    assert!(outcome["error"].as_str().is_some_and(|e| !e.is_empty()), "{failed}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn an_approval_nobody_answers_in_time_is_a_denial_the_model_reads() {
    let script = vec![
        Scripted::tool_call("bash", json!({ "command": "touch made-by-the-run.txt" })),
        Scripted::text("It was not allowed."),
    ];
    let (server, env) = linked_with(script, "max_mode = \"manual\"\napproval_timeout = 1", true).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let answered = link
        .request("session/prompt", json!({ "sessionId": id, "prompt": [{"type": "text", "text": "make a file"}] }))
        .await;
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");
    assert!(link.requests.iter().any(|r| r["method"] == "session/request_permission"), "the server was asked");
    let settled: Vec<&Value> =
        link.notifications.iter().filter(|n| n["method"] == "_lembas/permission/settled").collect();
    assert_eq!(settled.len(), 1, "{:?}", link.notifications);
    assert_eq!(settled[0]["params"]["outcome"], "denied");
    assert!(!env.project.join("made-by-the-run.txt").exists());
    let told = server.chat_requests()[1].to_string();
    assert!(told.contains("Nobody answered this approval within 1 seconds"), "{told}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_watch_command_runs_only_where_the_mode_allows_it_and_is_hashed_as_the_spec_says() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let watch = |command: &str, timeout: f64| json!({ "cwd": env.project, "command": command, "timeout_s": timeout, "schedule_id": "s", "run_id": "r" });
    let off = link.request("_lembas/monitor", watch("printf 'ok\\n'", 10.0)).await;
    assert_eq!(off["error"]["data"]["reason"], "scheduled_off", "{off}");
    child.kill().await.unwrap();
    drop(link);

    assert!(env.run(&["remote", "scheduled", "on"]).await.status.success());
    let (mut child, mut link) = ready(&server, &env).await;
    let ok = link.request("_lembas/monitor", watch("printf 'ok\\n'", 10.0)).await;
    let result = &ok["result"];
    assert_eq!(result["hash"], "sha256:9427ae13c91f98a3af2213b34fb59e4bb5aa9e6101a1f7407f526dde3571e6aa", "{ok}");
    assert_eq!((result["exit"].clone(), result["timed_out"].clone()), (json!(0), json!(false)));
    assert_eq!(
        (result["excerpt"].clone(), result["bytes"].clone(), result["truncated"].clone()),
        (json!("ok\n"), json!(3), json!(false))
    );
    assert!(result["duration_ms"].is_u64());

    let asks = link.request("_lembas/monitor", watch("rm -rf build", 10.0)).await;
    assert_eq!(asks["error"]["data"]["reason"], "permission", "{asks}");
    assert!(
        asks["error"]["message"].as_str().unwrap().starts_with("The watch command would need approval in edit mode ("),
        "{asks}"
    );
    let denied = link.request("_lembas/monitor", watch("rm -rf /", 10.0)).await;
    assert!(
        denied["error"]["message"].as_str().unwrap().starts_with("The watch command is refused here: "),
        "{denied}"
    );

    let slow = link.request("_lembas/monitor", watch("echo started; tail -f notes.txt", 1.9)).await;
    let result = &slow["result"];
    assert_eq!(
        (result["timed_out"].clone(), result["hash"].clone(), result["exit"].clone()),
        (json!(true), Value::Null, Value::Null),
        "{slow}"
    );
    assert_eq!(result["excerpt"], "started\nremember the milk\n");
    assert!(result["duration_ms"].as_u64().unwrap() < 10_000, "stopped at its timeout (1 s: the fraction is cut)");

    let outside = link.request("_lembas/monitor", json!({ "cwd": "/", "command": "true" })).await;
    assert_eq!(outside["error"]["data"]["reason"], "folder", "{outside}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_turn_goes_on_while_the_link_is_down_and_is_followed_again_on_the_next() {
    let script = vec![
        Scripted::tool_call("bash", json!({ "command": "touch made-while-away.txt" })),
        Scripted::text("Made it.").with_delay_ms(300),
    ];
    let (server, env) = linked_env(script, "manual", true).await;
    let (mut child, mut link) = ready(&server, &env).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = json!({ "jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "make a file"}], "_meta": { "lembas": { "turnId": "t9" } } } });
    link.send(&prompt);
    // The approval is asked; the link drops before anyone answers.
    loop {
        let message = link.recv().await.expect("the approval is asked");
        if message["method"] == "session/request_permission" {
            break;
        }
    }
    drop(link);

    let mut again = server.next_link(Duration::from_secs(10)).await.expect("dialled again");
    again.recv().await.unwrap();
    initialize(&mut again).await;
    let status = again.request("_lembas/session/status", json!({ "sessionId": id })).await;
    let status = &status["result"];
    assert_eq!(
        (status["held"].clone(), status["busy"].clone(), status["turnId"].clone()),
        (json!("here"), json!(true), json!("t9")),
        "{status}"
    );
    // The approval is asked again on this link; allowed, the turn goes on.
    let asked = loop {
        if let Some(asked) = again.requests.iter().find(|r| r["method"] == "session/request_permission") {
            break asked.clone();
        }
        let message = again.recv().await.expect("asked again on the new link");
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    again.choose(&asked, "once", None);
    // The prompt sent again under its turn id is answered by that turn.
    again.send(&prompt);
    let answer = again.answer_to(99).await;
    assert_eq!(answer["result"]["_meta"]["lembas"]["turnId"], "t9", "{answer}");
    assert!(env.project.join("made-while-away.txt").exists());
    assert_eq!(server.chat_requests().len(), 2, "one turn: the call, then the answer");
    child.kill().await.unwrap();
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_service_is_installed_as_a_systemd_user_unit_and_removed_again() {
    use std::os::unix::fs::PermissionsExt;
    let (_server, env) = linked_env(vec![], "edit", true).await;
    let config = env.home.parent().unwrap().join("xdg");
    // A stand-in for systemctl that writes down what it was asked.
    let bin = env.home.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let asked = bin.join("asked");
    std::fs::write(bin.join("systemctl"), format!("#!/bin/sh\necho \"$@\" >> {}\n", asked.display())).unwrap();
    std::fs::set_permissions(bin.join("systemctl"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |args: &'static [&'static str]| {
        let mut cmd = env.cmd(args);
        cmd.env("XDG_CONFIG_HOME", &config).env("PATH", &path);
        cmd
    };
    let out = run(&["service", "install"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let unit = std::fs::read_to_string(config.join("systemd/user/lembas.service")).unwrap();
    assert!(unit.contains(&format!("ExecStart={} service", env!("CARGO_BIN_EXE_lembas"))), "{unit}");
    assert!(unit.contains(&format!("LEMBAS_HOME={}", env.home.display())), "{unit}");
    assert_eq!(std::fs::read_to_string(&asked).unwrap(), "--user daemon-reload\n--user enable --now lembas.service\n");
    let status = run(&["service", "status"]).output().await.unwrap();
    assert!(
        stdout(&status).contains("installed  ") && stdout(&status).contains("lembas.service"),
        "{}",
        stdout(&status)
    );
    let out = run(&["service", "uninstall"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!config.join("systemd/user/lembas.service").exists());
    assert!(
        std::fs::read_to_string(&asked)
            .unwrap()
            .ends_with("--user disable --now lembas.service\n--user daemon-reload\n")
    );
    let status = run(&["service", "status"]).output().await.unwrap();
    assert!(stdout(&status).contains("installed  no"), "{}", stdout(&status));
}

#[tokio::test]
async fn the_server_lists_folders_configures_steers_compacts_and_deletes_remote_sessions() {
    let script =
        vec![Scripted::text("Hi there."), Scripted::text("The person greeted the agent; nothing else happened.")];
    let (server, env) = linked_env(script, "edit", true).await;
    let (mut child, mut link) = service(&server, &env).await;
    link.recv().await.unwrap();
    let init = initialize(&mut link).await;
    let capabilities = &init["result"]["_meta"]["lembas"]["capabilities"];
    for promised in ["turns", "scheduled", "directories", "configure"] {
        assert!(capabilities.as_array().unwrap().iter().any(|c| c == promised), "{promised} in {capabilities}");
    }
    // The folders: the roots, then what lies in one, with what the person made of each.
    let roots = link.request("_lembas/directories", json!({})).await;
    let root = real(env.project.parent().unwrap());
    assert_eq!(roots["result"]["roots"], json!([root]), "{roots}");
    let inside = link.request("_lembas/directories", json!({ "path": root })).await;
    let folders = inside["result"]["directories"].as_array().unwrap();
    let project = folders.iter().find(|f| f["name"] == "proj").expect("the project is listed");
    assert_eq!((project["project"].clone(), project["trusted"].clone()), (json!(true), json!(true)), "{inside}");
    let outside = link.request("_lembas/directories", json!({ "path": "/" })).await;
    assert_eq!(outside["error"]["data"]["reason"], "folder", "{outside}");

    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    let configured = link.request("_lembas/configure", json!({ "sessionId": id, "effort": "no-such-level" })).await;
    assert_eq!(configured["result"]["model"], "fake-model", "{configured}");
    let refused = link.request("_lembas/configure", json!({ "sessionId": id, "model": "not-served" })).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let steered = link.request("_lembas/steer", json!({ "sessionId": id, "text": "say hi" })).await;
    assert_eq!(steered["result"]["steered"], true, "{steered}");
    // Steered with nothing running, the words are a turn of their own.
    for _ in 0..100 {
        if server.chat_requests().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.chat_requests().len(), 1);
    let mut compacted = link.request("_lembas/session/compact", json!({ "sessionId": id })).await;
    for _ in 0..50 {
        // The steered turn may still be ending: asked again once it has.
        if compacted.get("error").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        compacted = link.request("_lembas/session/compact", json!({ "sessionId": id })).await;
    }
    assert!(compacted["result"]["summary"].as_str().is_some_and(|s| s.contains("greeted")), "{compacted}");

    let deleted = link.request("_lembas/session/delete", json!({ "sessionId": id })).await;
    assert_eq!(deleted["result"]["deleted"], true, "{deleted}");
    let status = link.request("_lembas/session/status", json!({ "sessionId": id })).await;
    assert_eq!(status["result"]["exists"], false, "{status}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_change_of_the_limits_is_heard_by_the_server_on_a_new_link() {
    let (server, env) = linked_env(vec![], "edit", true).await;
    let (mut child, mut link) = service(&server, &env).await;
    let hello = link.recv().await.unwrap();
    assert_eq!(hello["params"]["limits"]["scheduled"], false);
    assert!(env.run(&["remote", "scheduled", "on"]).await.status.success());
    let mut again = server.next_link(Duration::from_secs(15)).await.expect("dialled again with the new limits");
    let hello = again.recv().await.unwrap();
    assert_eq!(hello["params"]["limits"]["scheduled"], true, "{hello}");
    let init = initialize(&mut again).await;
    assert_eq!(init["result"]["_meta"]["lembas"]["limits"]["scheduled"], true, "{init}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_client_that_shows_files_is_offered_show_and_is_sent_the_file() {
    let script = vec![
        Scripted::tool_call("show", json!({ "path": "notes.txt", "line": 1 })),
        Scripted::tool_call("show", json!({ "path": "/etc/hostname" })),
        Scripted::text("Shown."),
    ];
    let (server, env) = linked_env(script, "edit", true).await;
    let (mut child, mut link) = service(&server, &env).await;
    link.recv().await.unwrap();
    let params = json!({ "protocolVersion": 1, "clientCapabilities": { "_meta": { "lembas": { "protocol": 3, "show": true } } } });
    link.request("initialize", params).await;
    let opened = link.request("session/new", json!({ "cwd": env.project, "mcpServers": [] })).await;
    let id = opened["result"]["sessionId"].as_str().unwrap().to_owned();
    link.send(&json!({ "jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": {
        "sessionId": id, "prompt": [{"type": "text", "text": "show me the notes"}] } }));
    let mut shown = Vec::new();
    loop {
        let message = link.recv().await.expect("the turn ends");
        if message["method"] == "_lembas/show" {
            shown.push(message["params"].clone());
            link.answer(&message["id"], json!({ "shown": true }));
        } else if message["id"] == 99 {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            break;
        }
    }
    assert_eq!(shown.len(), 1, "only the project's file is sent: {shown:?}");
    assert_eq!(shown[0]["path"], "notes.txt");
    assert_eq!(
        (shown[0]["kind"].clone(), shown[0]["text"].clone(), shown[0]["line"].clone()),
        (json!("text"), json!("remember the milk\n"), json!(1))
    );
    let requests = server.chat_requests();
    assert!(requests[0]["tools"].to_string().contains("\"show\""), "offered to a client that shows files");
    let told = requests[2]["messages"].to_string();
    assert!(told.contains("Shown to the person: notes.txt") && told.contains("outside the project"), "{told}");
    child.kill().await.unwrap();
}
