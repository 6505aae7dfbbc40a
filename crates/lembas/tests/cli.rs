//! The built `lembas` binary against the test kit's fake server, over real HTTP, in temporary
//! projects with their own LEMBAS_HOME.

use std::process::Stdio;
use std::time::Duration;

use lembas_testkit::{FakeServer, Scripted};

mod common;
use common::{Env, stderr, stdout};
use serde_json::{Value, json};

#[tokio::test]
async fn without_a_login_it_says_how_to_log_in() {
    let env = Env::new();
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out).lines().count(), 1);
    assert!(stderr(&out).contains("lembas login"));
}

#[tokio::test]
async fn log_in_to_a_plain_server_and_run_a_turn() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::text("The note says to remember the milk."),
    ])
    .await;
    server.set_models(json!([{"id": "small-coder", "object": "model"}, {"id": "other", "object": "model"}]));
    let env = Env::new();
    env.login(&server).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(env.home.join("config/credentials.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let out = env.run(&["run", "what", "is", "in", "notes.txt?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The note says to remember the milk.\n");
    assert!(stderr(&out).contains("› read notes.txt"));
    let requests = server.chat_requests();
    assert_eq!(requests[0]["model"], "small-coder", "the first model the server lists");
    assert!(
        requests[0]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .starts_with("what is in notes.txt?\n\n<session-note>\nToday is ")
    );
}

#[tokio::test]
async fn json_prints_one_event_per_line_ending_with_done() {
    let server = FakeServer::start(vec![Scripted::text("Hi there.").with_reasoning("Greet.")]).await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--json", "say hi"]).await;
    assert!(out.status.success());
    let events: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
    assert_eq!(events[0]["type"], "session");
    // How full the window starts (an estimate before the server counts), then the prompt.
    assert_eq!(events[1]["type"], "context");
    assert!(events[1]["shares"][0]["tokens"].as_u64().unwrap() > 0);
    assert_eq!(events[2]["type"], "prompt");
    assert!(events.iter().any(|e| e["type"] == "reasoning"));
    assert!(events.iter().any(|e| e["type"] == "text"));
    let last = events.last().unwrap();
    assert_eq!(last["type"], "done");
    assert_eq!(last["reason"], "answered");
    assert_eq!(last["text"], "Hi there.");
}

#[tokio::test]
async fn continue_resends_the_first_turn_unchanged_and_sessions_are_listed_and_found() {
    let server = FakeServer::start(vec![Scripted::text("Pelican."), Scripted::text("Still a pelican.")]).await;
    let env = Env::new();
    env.login(&server).await;
    assert!(env.run(&["run", "name a bird"]).await.status.success());
    let out = env.run(&["run", "--continue", "and again?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    let first = requests[0]["messages"].as_array().unwrap();
    let second = requests[1]["messages"].as_array().unwrap();
    assert_eq!(&second[..first.len()], &first[..], "the first request is the second's prefix");
    assert_eq!(second[first.len()]["content"], "Pelican.");

    let list: Value = serde_json::from_slice(&env.run(&["sessions", "list", "--json"]).await.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["title"], "name a bird");
    let hits: Value =
        serde_json::from_slice(&env.run(&["sessions", "search", "pelican", "--json"]).await.stdout).unwrap();
    assert_eq!(hits[0]["session"]["id"], id.as_str());
    // The notes lembas adds to a message are not what was said: search does not find them.
    let noted: Value =
        serde_json::from_slice(&env.run(&["sessions", "search", "Today", "--json"]).await.stdout).unwrap();
    assert_eq!(noted, serde_json::json!([]));
    let shown = stdout(&env.run(&["sessions", "show", &id[..8]]).await);
    assert!(shown.contains("> name a bird") && shown.contains("Still a pelican."), "{shown}");
    assert!(env.run(&["sessions", "rename", &id, "Birds"]).await.status.success());
    assert!(stdout(&env.run(&["sessions"]).await).contains("Birds"));
    assert!(env.run(&["sessions", "delete", &id]).await.status.success());
    assert!(stdout(&env.run(&["sessions"]).await).contains("No sessions yet."));
}

#[tokio::test]
async fn the_prompt_can_come_from_stdin() {
    let server = FakeServer::start(vec![Scripted::text("Read it.")]).await;
    let env = Env::new();
    env.login(&server).await;
    let mut child = env.cmd(&["run", "-"]).stdin(Stdio::piped()).spawn().unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"a prompt\nover two lines\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success());
    assert!(
        server.chat_requests()[0]["messages"][1]["content"].as_str().unwrap().starts_with("a prompt\nover two lines\n")
    );
}

#[tokio::test]
async fn print_is_run_with_every_flag_in_any_order() {
    let server =
        FakeServer::start(vec![Scripted::text("One."), Scripted::text("Two."), Scripted::text("Three.")]).await;
    server.set_models(json!([{"id": "small-coder", "object": "model"}, {"id": "other", "object": "model"}]));
    let env = Env::new();
    env.login(&server).await;
    // Flags before and after the prompt, as `run` takes them.
    let out = env.run(&["--model", "other", "-p", "say", "one", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let end: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(end["answer"], "One.");
    assert_eq!(server.chat_requests()[0]["model"], "other");
    let out = env.run(&["-p", "--mode", "plan", "-q", "say two"]).await;
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("Two.\n", ""));
    // No prompt: standard input is the prompt.
    let mut child = env.cmd(&["-p"]).stdin(Stdio::piped()).spawn().unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello from a pipe\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Three.\n");
    assert!(server.chat_requests()[2]["messages"][1]["content"].as_str().unwrap().starts_with("hello from a pipe"));
}

#[tokio::test]
async fn bad_arguments_exit_two() {
    let server = FakeServer::start(vec![]).await;
    let env = Env::new();
    env.login(&server).await;
    assert_eq!(env.run(&["run", "--mode", "yolo", "x"]).await.status.code(), Some(2));
    assert_eq!(env.run(&["run", "--model", "nope", "x"]).await.status.code(), Some(2));
    assert_eq!(env.run(&["run", "--effort", "ludicrous", "x"]).await.status.code(), Some(2));
    assert_eq!(env.run(&["run"]).await.status.code(), Some(2));
}

#[tokio::test]
async fn an_unreachable_model_fails_with_one_line() {
    let server = FakeServer::start(vec![Scripted::status(401, r#"{"error":{"message":"bad key"}}"#)]).await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad key"));
}

#[cfg(unix)]
async fn wait_for(server: &FakeServer, requests: usize) {
    for _ in 0..200 {
        if server.chat_requests().len() >= requests {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("lembas never sent request {requests}");
}

#[cfg(unix)]
#[tokio::test]
async fn ctrl_c_mid_reply_exits_and_the_session_resumes() {
    let server =
        FakeServer::start(vec![Scripted::text("slowly ".repeat(50)).with_delay_ms(100), Scripted::text("Resumed.")])
            .await;
    let env = Env::new();
    env.login(&server).await;
    let child = env.cmd(&["run", "tell me a long story"]).spawn().unwrap();
    wait_for(&server, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id().unwrap() as i32), nix::sys::signal::Signal::SIGINT)
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output()).await.expect("it exits").unwrap();
    assert_eq!(out.status.code(), Some(130));
    let out = env.run(&["run", "--continue", "go on"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let resumed = &server.chat_requests()[1]["messages"];
    assert!(resumed[1]["content"].as_str().unwrap().starts_with("tell me a long story"));
}

#[cfg(unix)]
#[tokio::test]
async fn kill_nine_mid_turn_loses_no_answered_step() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("read", json!({"path": "notes.txt"})),
        Scripted::text("never finished ".repeat(100)).with_delay_ms(100),
        Scripted::text("Back again."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let mut child = env.cmd(&["run", "read the notes"]).spawn().unwrap();
    wait_for(&server, 2).await;
    child.kill().await.unwrap();
    let out = env.run(&["run", "--continue", "where were we?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let messages = server.chat_requests()[2]["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert!(messages[3]["content"].as_str().unwrap().contains("1: remember the milk"));
}

#[tokio::test]
async fn version_help_and_completions() {
    let env = Env::new();
    let version = env.run(&["--version"]).await;
    assert!(stdout(&version).starts_with("lembas "));
    let help = stdout(&env.run(&["run", "--help"]).await);
    assert!(help.contains("--continue") && help.contains("Exit status"));
    let completions = stdout(&env.run(&["completions", "bash"]).await);
    // Each command's arguments are made only when it is given; the script has the whole tree:
    // a command's own options, and `help`'s commands down to the last level.
    assert!(completions.contains(r#"opts="-h --json --personal --help""#), "notes list's options");
    assert!(completions.contains("lembas__subcmd__help__subcmd__sessions__subcmd__list"), "help sessions list");
    assert!(completions.contains("lembas__subcmd__sessions__subcmd__list"), "sessions list");
}

#[tokio::test]
async fn headless_manual_refuses_and_auto_still_refuses_the_hardline() {
    let server = FakeServer::start(vec![
        Scripted::text("")
            .with_call("bash", r#"{"command": "touch made.txt"}"#)
            .with_call("write", r#"{"path": "w.txt", "content": "x"}"#),
        Scripted::text("Could not."),
        Scripted::tool_call("bash", json!({"command": "rm -rf ~"})),
        Scripted::text("Refused."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "manual", "make files"]).await;
    assert!(out.status.success());
    let told = server.chat_requests()[1]["messages"].as_array().unwrap().clone();
    let results: Vec<&str> =
        told.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap()).collect();
    assert!(results.iter().all(|r| r.contains("nobody is here to give it")), "{results:?}");
    assert!(!env.project.join("made.txt").exists() && !env.project.join("w.txt").exists());

    let out = env.run(&["run", "--mode", "auto", "clean my home"]).await;
    assert!(out.status.success());
    let told = server.chat_requests()[3]["messages"].as_array().unwrap().clone();
    assert!(told.last().unwrap()["content"].as_str().unwrap().contains("Refused in every mode"));
}

#[tokio::test]
async fn a_projects_own_rules_count_once_it_is_trusted() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("bash", json!({"command": "touch first.txt"})),
        Scripted::text("refused"),
        Scripted::tool_call("bash", json!({"command": "touch second.txt"})),
        Scripted::text("done"),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    std::fs::create_dir_all(env.project.join(".lembas")).unwrap();
    std::fs::write(env.project.join(".lembas/permissions.json"), r#"{"bash": {"touch *": "allow"}}"#).unwrap();
    assert!(env.run(&["run", "make a file"]).await.status.success());
    assert!(!env.project.join("first.txt").exists(), "untrusted: its rules do not count");
    let out = env.run(&["trust"]).await;
    assert!(stdout(&out).starts_with("Trusting "), "{}", stderr(&out));
    assert!(env.run(&["run", "make a file"]).await.status.success());
    assert!(env.project.join("second.txt").exists(), "trusted: its rule allows touch");
}

#[tokio::test]
async fn a_reader_that_goes_away_is_no_panic() {
    let server = FakeServer::start(vec![Scripted::text("One."), Scripted::text("Two.")]).await;
    let env = Env::new();
    env.login(&server).await;
    assert!(env.run(&["run", "first"]).await.status.success());
    assert!(env.run(&["run", "second"]).await.status.success());
    for args in [&["sessions"][..], &["sessions", "--json"][..], &["sessions", "search", "first"][..]] {
        let mut child = env.cmd(args).spawn().unwrap();
        // The reader closes its end before lembas writes: what `| head -c 0` does.
        drop(child.stdout.take());
        let out = child.wait_with_output().await.unwrap();
        assert_ne!(out.status.code(), Some(101), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
    }
}

#[tokio::test]
async fn an_untrusted_projects_servers_are_named_not_skipped_silently() {
    let server = FakeServer::start(vec![Scripted::text("ok")]).await;
    let env = Env::new();
    env.login(&server).await;
    std::fs::write(
        env.project.join(".mcp.json"),
        r#"{"mcpServers": {"tickets": {"command": "true"}, "docs": {"command": "true"}}}"#,
    )
    .unwrap();
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("names 2 MCP servers (docs, tickets), not started"), "{}", stderr(&out));
}

#[tokio::test]
async fn a_server_that_is_down_is_said_retry_by_retry() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = FakeServer::start(vec![]).await;
    let env = Env::new();
    env.login(&server).await;
    // The login now points at a port nobody listens on, and retries are bounded at 2 s.
    let creds = env.home.join("config/credentials.json");
    let text =
        std::fs::read_to_string(&creds).unwrap().replace(&server.base_url(), &format!("http://127.0.0.1:{port}/v1"));
    std::fs::write(&creds, text).unwrap();
    std::fs::write(env.home.join("config/config.toml"), "retry_seconds = 2\n").unwrap();
    let out = env.run(&["run", "hello?"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("trying again in 1 s (attempt 2)"), "{err}");
}

#[tokio::test]
async fn a_bad_setting_is_refused_where_it_is_written() {
    let server = FakeServer::start(vec![]).await;
    let env = Env::new();
    env.login(&server).await;
    let config = env.home.join("config/config.toml");
    for (text, said) in [
        ("effort = \"low\"\ncompact_at = 2.0\n", "config.toml:2: compact_at = 2 is outside 0.5–0.95"),
        ("mode = \"fast\"\n", "config.toml:1: no mode fast: use manual, edit, auto or plan"),
        ("\nmodel = \"nope\"\n", "config.toml:2: no model nope; the login offers: fake-model"),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = env.run(&["run", "hi"]).await;
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(stderr(&out).contains(said), "{text}: {}", stderr(&out));
    }
}

#[tokio::test]
async fn a_prefix_of_several_sessions_lists_them() {
    let server = FakeServer::start(vec![Scripted::text("One."), Scripted::text("Two.")]).await;
    let env = Env::new();
    env.login(&server).await;
    assert!(env.run(&["run", "first words"]).await.status.success());
    assert!(env.run(&["run", "second words"]).await.status.success());
    // Session ids are UUIDv7: two made a moment apart share their first characters.
    let out = env.run(&["run", "--resume", "0", "again"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("starts more than one session") && err.contains("first words") && err.contains("second words"),
        "{err}"
    );
}

#[tokio::test]
async fn scripting_forms_people_know() {
    let server = FakeServer::start(vec![
        Scripted::text("Printed.").with_usage(120, 7, 100),
        Scripted::tool_call("list", json!({})).with_usage(50, 5, 0),
        Scripted::text("Quietly.").with_usage(60, 3, 0),
        Scripted::text("As JSON.").with_usage(10, 2, 0),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    // -p is the one-shot form of run.
    let out = env.run(&["-p", "say", "it"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Printed.\n");
    // -q: the answer alone; no tool lines on stderr.
    let out = env.run(&["run", "-q", "list and say"]).await;
    assert_eq!(stdout(&out), "Quietly.\n");
    assert!(!stderr(&out).contains("› list"), "{}", stderr(&out));
    // One JSON object at the end, with the session and the usage.
    let out = env.run(&["run", "--output-format", "json", "once more"]).await;
    let printed = stdout(&out);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let done: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(done["answer"], "As JSON.");
    assert_eq!(done["reason"], "answered");
    assert_eq!(done["usage"]["input"], 10);
    assert!(done.get("cost").is_some_and(Value::is_null), "said, and not known: {done}");
    assert!(done["session_id"].as_str().is_some_and(|s| s.len() > 20));
    // --help says plain lembas opens the UI.
    let out = env.run(&["--help"]).await;
    assert!(stdout(&out).contains("With no command, `lembas` opens the terminal UI"));
}

#[tokio::test]
async fn headless_plan_mode_prints_the_plan_and_keeps_it() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "plan_write",
            json!({"title": "Store", "phases": [{"title": "Do", "tasks": [{"text": "add sqlite"}, {"text": "migrate"}]}]}),
        ),
        Scripted::tool_call("plan_submit", json!({})),
        Scripted::text("The plan waits for approval."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "plan", "design storage"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("add sqlite") && printed.contains("migrate"), "{printed}");
    assert!(printed.contains("The plan waits for approval."), "{printed}");
    let plans: Vec<_> = std::fs::read_dir(env.project.join(".agent/plans")).unwrap().flatten().collect();
    assert_eq!(plans.len(), 1);
    assert!(std::fs::read_to_string(plans[0].path()).unwrap().contains("migrate"));
    assert!(stderr(&out).contains("waits for your approval"), "{}", stderr(&out));
}

#[tokio::test]
async fn a_mistyped_command_is_said_and_bad_words_come_before_the_login() {
    let env = Env::new();
    // Not a prompt for the terminal UI: the command it comes nearest.
    let out = env.run(&["sesions"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean 'sessions'?"), "{}", stderr(&out));
    assert!(stderr(&env.run(&["modles"]).await).contains("did you mean 'models'?"));
    // A mode that cannot be is a usage error, logged in or not.
    assert_eq!(env.run(&["run", "--mode", "yolo", "x"]).await.status.code(), Some(2));
    assert_eq!(env.run(&["--mode", "yolo", "-p", "x"]).await.status.code(), Some(2));
    // Every sessions command says what it does.
    for command in ["rename", "delete"] {
        let help = stdout(&env.run(&["sessions", command, "--help"]).await);
        assert!(help.lines().next().is_some_and(|l| l.len() > 10 && !l.starts_with("Usage")), "{help}");
    }
}

#[tokio::test]
async fn models_as_json_carry_their_effort_levels() {
    let server = FakeServer::start(vec![]).await;
    server.set_models(json!([{"id": "thinker", "object": "model", "reasoning_efforts": ["low", "high"]}]));
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["models", "--json"]).await;
    let models: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(models[0]["levels"].as_array().is_some_and(|l| !l.is_empty()), "{models}");
}

#[tokio::test]
async fn login_without_a_url_finds_the_model_server_on_this_machine() {
    let server = FakeServer::start(vec![Scripted::text("Found you.")]).await;
    let env = Env::new();
    let root = server.url().trim_end_matches('/').trim_end_matches("/v1").to_owned();
    // Where it looks stands in for 8080, 11434, 1234 and 8000 (which a test may not take).
    let nothing = "nothing=http://127.0.0.1:9";
    let out = env.cmd(&["login"]).env("LEMBAS_LOCAL_SERVERS", nothing).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no model server found on this machine (looked for nothing"), "{}", stderr(&out));
    let candidates = format!("{nothing},llama-server={root}");
    let out = env.cmd(&["login"]).env("LEMBAS_LOCAL_SERVERS", &candidates).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("found llama-server at {root}")), "{}", stderr(&out));
    let out = env.run(&["run", "hello"]).await;
    assert_eq!(stdout(&out), "Found you.\n", "{}", stderr(&out));
}

/// The first request's instructions and tools, in the fake server's tokens.
fn first_request_tokens(server: &FakeServer) -> usize {
    let request = &server.chat_requests()[0];
    lembas_testkit::tokens_in(request["messages"][0]["content"].as_str().unwrap_or_default())
        + lembas_testkit::tokens_in(&serde_json::to_string(&request["tools"]).unwrap())
}

#[tokio::test]
async fn a_small_window_gets_a_first_request_half_its_size() {
    let mut sizes = Vec::new();
    for window in [4096u64, 8192, 16384, 32768, 0] {
        let server = FakeServer::start(vec![Scripted::text("Small and fine.")]).await;
        if window > 0 {
            // llama.cpp: the window, its slots, and a tokenizer at /tokenize (and a refusal of a
            // request larger than the window).
            server.set_props(json!({ "default_generation_settings": { "n_ctx": window }, "total_slots": 4 }));
        }
        let env = Env::new();
        std::fs::write(env.project.join("AGENTS.md"), "Be brief.\n").unwrap();
        env.login(&server).await;
        let out = env.run(&["run", "--json", "hello"]).await;
        let events: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let notices: Vec<&str> =
            events.iter().filter(|e| e["type"] == "notice").filter_map(|e| e["message"].as_str()).collect();
        assert!(out.status.success(), "{window}: {}", stderr(&out));
        let tools: Vec<String> = server.chat_requests()[0]["tools"]
            .as_array()
            .map(|t| t.iter().map(|t| t["function"]["name"].as_str().unwrap_or_default().to_owned()).collect())
            .unwrap_or_default();
        let tokens = first_request_tokens(&server);
        if window > 0 {
            assert!(tokens as u64 <= window / 2, "{window}: {tokens} tokens");
        }
        let small = notices.iter().find(|n| n.contains("is small: ")).map(|n| n.to_string());
        match window {
            4096 => {
                // The smallest offer: files, commands and recall; said once, with the way back.
                let mut core = tools.clone();
                core.sort();
                assert_eq!(core, ["bash", "edit", "glob", "grep", "list", "read", "recall", "write"], "{window}");
                let said = small.as_deref().unwrap_or_default();
                assert!(said.contains("does without the team, subagents") && said.contains("plan_write"), "{said}");
                assert!(said.contains("A larger window brings them back (llama-server -c 8192"), "{said}");
            }
            8192 => {
                assert!(!tools.contains(&"team_add".to_owned()), "{window}: {tools:?}");
                assert!(small.as_ref().is_some_and(|n| n.contains("team")), "{window}: {notices:?}");
            }
            _ => assert!(tools.contains(&"team_add".to_owned()) && small.is_none(), "{window}: {notices:?}"),
        }
        sizes.push((window, tokens, small.unwrap_or_else(|| "everything offered".into())));
    }
    eprintln!("first request by window: {sizes:#?}");
}
