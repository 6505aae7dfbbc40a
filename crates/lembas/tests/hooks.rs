//! Hooks through the real binary, written as Claude Code users write them: a formatter after
//! every write, a refusal before `rm`, a Stop hook that asks for one more step — from a trusted
//! project's `.claude/settings.json` — and a prompt hook from `config.toml`.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

/// The messages a request sends, as text.
fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    format!("sh {}", path.display())
}

#[tokio::test]
async fn a_claude_code_projects_hooks_format_refuse_and_send_the_turn_on() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("write", json!({"path": "greeting.txt", "content": "hello\n"})),
        Scripted::tool_call("bash", json!({"command": "rm notes.txt"})),
        Scripted::text("Done."),
        Scripted::text("Ran the tests: they pass."),
    ])
    .await;
    let env = Env::new();
    env.login(&server).await;
    let hooks = env.project.join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // As such hooks are written: the call's JSON on stdin, exit 2 and stderr to refuse.
    let format = script(
        &hooks,
        "format.sh",
        r#"f=$(sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p'); tr a-z A-Z < "$f" > "$f.tmp" && mv "$f.tmp" "$f""#,
    );
    let guard = script(
        &hooks,
        "guard.sh",
        r#"grep -q '"command":"rm ' && { echo "no rm in this project" >&2; exit 2; }; exit 0"#,
    );
    let more = script(
        &hooks,
        "more.sh",
        r#"grep -q '"stop_hook_active":false' && echo '{"decision": "block", "reason": "Run the tests before you stop."}'; exit 0"#,
    );
    let settings = json!({"hooks": {
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": format}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard, "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": more}]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": "true"}]}]
    }});
    std::fs::write(env.project.join(".claude/settings.json"), settings.to_string()).unwrap();
    std::fs::write(
        env.home.join("config/config.toml"),
        "[[hooks.UserPromptSubmit]]\ncommand = \"echo The build is green.\"\n",
    )
    .unwrap();
    assert!(env.run(&["trust"]).await.status.success());

    let out = env.run(&["run", "--mode", "auto", "greet, and tidy up"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("hooks lembas does not run: PreCompact"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\nRan the tests: they pass.\n", "each reply on a line of its own");
    // The formatter ran after the write; the refusal kept the note.
    assert_eq!(std::fs::read_to_string(env.project.join("greeting.txt")).unwrap(), "HELLO\n");
    assert!(env.project.join("notes.txt").exists());
    let requests = server.chat_requests();
    assert!(texts(&requests[0]).last().unwrap().contains("The build is green."), "the prompt hook's context");
    assert!(texts(&requests[2]).iter().any(|t| t.contains("Refused by the person's hook: no rm in this project")));
    let last = texts(requests.last().unwrap());
    assert!(last.last().unwrap().contains("Run the tests before you stop."), "{last:?}");
    assert_eq!(requests.len(), 4, "the Stop hook sent the turn on once: it says nothing when sent on already");
}

#[tokio::test]
async fn an_untrusted_projects_hooks_do_not_run_and_a_prompt_hook_may_block() {
    let server = FakeServer::start(vec![Scripted::text("Fine.")]).await;
    let env = Env::new();
    env.login(&server).await;
    std::fs::create_dir_all(env.project.join(".claude")).unwrap();
    let settings =
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ran-a-hook"}]}]}});
    std::fs::write(env.project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let out = env.run(&["run", "--mode", "auto", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.project.join("ran-a-hook").exists(), "not trusted: not run");

    std::fs::write(
        env.home.join("config/config.toml"),
        "[[hooks.UserPromptSubmit]]\ncommand = \"grep -q secret && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0\"\n",
    )
    .unwrap();
    let out = env.run(&["run", "--mode", "auto", "the secret is 42"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("blocked by your hook: no secrets in prompts"), "{}", stderr(&out));
    assert_eq!(server.chat_requests().len(), 1, "a blocked prompt is not sent");
}
