//! A local model's window where its server cannot count tokens (Ollama, LM Studio, many
//! proxies: no `/tokenize`): the first request is judged by a realistic estimate, so an 8k window
//! is used, not refused, and the request still takes at most half of it.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::json;

#[tokio::test]
async fn an_8k_window_without_a_tokenizer_is_used_within_its_half() {
    let server = FakeServer::start(vec![Scripted::text("Fits.")]).await;
    // A window in the model list (vLLM's field), and no `/props` or `/tokenize`.
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 8192}]));
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Fits.\n");
    let request = &server.chat_requests()[0];
    let tokens = lembas_testkit::tokens_in(request["messages"][0]["content"].as_str().unwrap_or_default())
        + lembas_testkit::tokens_in(&serde_json::to_string(&request["tools"]).unwrap());
    assert!(tokens <= 4096, "{tokens} tokens is more than half of 8192");
}

/// The window `lembas models --json` says the login's model has, after logging in to `server`.
async fn window_after_login(server: &FakeServer) -> serde_json::Value {
    let env = Env::new();
    env.login(server).await;
    let out = env.run(&["models", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let first = listed.as_array().map(|a| a[0].clone()).unwrap_or_else(|| listed["models"][0].clone());
    first["context"].clone()
}

#[tokio::test]
async fn ollamas_window_is_the_one_it_serves_not_the_trained_maximum() {
    use lembas_testkit::Ollama;
    let cases = [
        // Not loaded, no num_ctx: Ollama's default, though the model was trained on 32k.
        (Ollama { trained: 32768, num_ctx: None, loaded: None }, 4096),
        // The Modelfile sets num_ctx.
        (Ollama { trained: 32768, num_ctx: Some(8192), loaded: None }, 8192),
        // Loaded (OLLAMA_CONTEXT_LENGTH, say): the window it runs with now.
        (Ollama { trained: 32768, num_ctx: Some(8192), loaded: Some(16384) }, 16384),
        // Never above the trained maximum.
        (Ollama { trained: 2048, num_ctx: Some(8192), loaded: None }, 2048),
    ];
    for (ollama, want) in cases {
        let server = FakeServer::start(vec![]).await;
        server.set_models(json!([{"id": "qwen2.5-coder:1.5b", "object": "model"}]));
        server.set_ollama(ollama.clone());
        assert_eq!(window_after_login(&server).await, json!(want), "{ollama:?}");
    }
}

/// The tokens of a chat request's prompt by the test kit's count (3 bytes a token), and its
/// `max_tokens`.
fn prompt_and_reply(request: &serde_json::Value) -> (u64, u64) {
    let mut prompt = serde_json::to_string(&request["messages"]).unwrap();
    if let Some(tools) = request.get("tools") {
        prompt += &tools.to_string();
    }
    (lembas_testkit::tokens_in(&prompt) as u64, request["max_tokens"].as_u64().unwrap_or(0))
}

/// The last user message of a request.
fn last_user(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"].as_str().unwrap_or_default().to_owned()
}

const COMPACT_ASK: &str = "Summarise the conversation below";

#[tokio::test]
async fn a_reply_that_runs_to_the_windows_end_is_compacted_before_it_goes_on() {
    // vLLM's way: a request whose prompt and max_tokens pass the window is refused; the reply
    // ends at max_tokens. The model runs away: it would write far more than the window holds.
    let server = FakeServer::start(vec![
        Scripted::text("and again ".repeat(20_000)),
        Scripted::text("## What we are doing\nWriting an essay; the first part was written."),
        Scripted::text("Done."),
    ])
    .await;
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 8192}]));
    server.count_tokens(3.0);
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "write a long essay"]).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    assert!(stdout(&out).ends_with("Done.\n"), "{}", stdout(&out));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "the step, the compaction, the step that goes on");
    for request in &requests {
        let (prompt, reply) = prompt_and_reply(request);
        assert!(reply > 0, "every request limits its reply to what the window leaves");
        assert!(prompt + reply <= 8192, "{prompt} + {reply} pass the window");
    }
    // The runaway was cut where its compaction still fits: the compaction asks with every
    // message as it was, the runaway included.
    assert!(last_user(&requests[1]).starts_with(COMPACT_ASK), "{}", last_user(&requests[1]));
    assert!(requests[1]["messages"].to_string().contains("and again and again"));
    let summary = requests[2]["messages"][1]["content"].as_str().unwrap();
    assert!(summary.starts_with("[This session was summarised"), "{summary}");
}

#[tokio::test]
async fn a_summary_that_runs_on_is_cut_to_its_share_so_the_turn_goes_on_at_4k() {
    // Two reads fill half of a 4k window, where this person has compaction start; the window
    // still has room. A small model writes its summary as it wrote everything else: on and on.
    // Given all the window left, the summary would fill the window the turn must go on in.
    let env = Env::new();
    let lines: String = (0..100).map(|i| format!("{i:040}\n")).collect();
    std::fs::write(env.project.join("f.txt"), lines).unwrap();
    std::fs::create_dir_all(env.home.join("config")).unwrap();
    std::fs::write(env.home.join("config/config.toml"), "compact_at = 0.5\n").unwrap();
    let read = json!({ "path": "f.txt" }).to_string();
    let server = FakeServer::start(vec![
        Scripted::text("").with_call("read", &read),
        Scripted::text("").with_call("glob", &json!({ "pattern": "*.txt" }).to_string()),
        Scripted::text(format!("## What we are doing\n{}", "more of the same ".repeat(20_000))),
        Scripted::text("Done."),
    ])
    .await;
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 4096}]));
    server.count_tokens(3.0);
    env.login(&server).await;
    let out = env.run(&["run", "what is in f.txt?"]).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    assert!(stdout(&out).ends_with("Done.\n"), "{}", stdout(&out));
    let requests = server.chat_requests();
    let compaction = requests.iter().find(|r| last_user(r).contains(COMPACT_ASK)).expect("a compaction");
    let (_, summary_reply) = prompt_and_reply(compaction);
    assert!(summary_reply > 0 && summary_reply <= 512, "the summary was given {summary_reply} tokens");
    for request in &requests {
        let (prompt, reply) = prompt_and_reply(request);
        assert!(prompt + reply <= 4096, "{prompt} + {reply} pass the window");
    }
}

#[tokio::test]
async fn results_that_fill_the_window_are_summarised_from_a_transcript() {
    // Six files, each as much as a read shows at an 8k window: together more than the window.
    let mut script = Scripted::text("");
    let env = Env::new();
    for n in 0..6 {
        let lines: String = (0..200).map(|i| format!("{:0100}\n", i + n * 1000)).collect();
        std::fs::write(env.project.join(format!("f{n}.txt")), lines).unwrap();
        script = script.with_call("read", &json!({ "path": format!("f{n}.txt") }).to_string());
    }
    let server = FakeServer::start(vec![
        script,
        Scripted::text("## What we are doing\nReading six files; each holds numbered lines."),
        Scripted::text("They hold numbers."),
    ])
    .await;
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 8192}]));
    server.count_tokens(3.0);
    env.login(&server).await;
    let out = env.run(&["run", "what do the six files hold?"]).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    assert!(stdout(&out).ends_with("They hold numbers.\n"), "{}", stdout(&out));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    for request in &requests {
        let (prompt, reply) = prompt_and_reply(request);
        assert!(prompt + reply <= 8192, "{prompt} + {reply} pass the window");
    }
    // The same conversation could not carry the ask: the summary was asked from a transcript
    // holding the person's words and the newest results.
    let compaction = requests[1]["messages"].as_array().unwrap();
    assert_eq!(compaction.len(), 2, "the instructions, then the ask with the transcript");
    let ask = compaction[1]["content"].as_str().unwrap();
    assert!(ask.starts_with(COMPACT_ASK), "{ask}");
    assert!(ask.contains("[user]\nwhat do the six files hold?"), "{ask}");
    assert!(ask.contains("[tool result]"), "{ask}");
    // The turn goes on with its instructions and tools, from the summary.
    let after = &requests[2];
    assert!(after["tools"].as_array().is_some_and(|t| t.len() >= 8), "{after}");
    assert_eq!(after["messages"][0], requests[0]["messages"][0], "the same instructions");
}

#[tokio::test]
async fn a_servers_count_of_tokens_is_kept_with_the_login() {
    // No tokenizer endpoint; the server counts 4 bytes a token and says so in its usage.
    let server = FakeServer::start(vec![Scripted::text("Counted.")]).await;
    server.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": 32768}]));
    server.count_tokens(4.0);
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let login: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.home.join("config/credentials.json")).unwrap()).unwrap();
    let measured = login["models"][0]["bytes_per_token"].as_f64().expect("the measure is kept");
    assert!((3.6..=4.4).contains(&measured), "{measured}");
}

#[tokio::test]
async fn the_first_request_fits_4k_8k_and_32k_windows_of_servers_that_cannot_count() {
    use lembas_testkit::Ollama;
    for window in [4096u64, 8192, 32768] {
        // Ollama at that window (it cuts a longer prompt silently), and a server that lists
        // the window with no tokenizer.
        let ollama = FakeServer::start(vec![Scripted::text("Fits.")]).await;
        ollama.set_models(json!([{"id": "qwen2.5-coder:1.5b", "object": "model"}]));
        ollama.set_ollama(Ollama { trained: 32768, num_ctx: Some(window), loaded: None });
        let listed = FakeServer::start(vec![Scripted::text("Fits.")]).await;
        listed.set_models(json!([{"id": "local-coder", "object": "model", "max_model_len": window}]));
        for server in [&ollama, &listed] {
            server.count_tokens(3.6);
            let env = Env::new();
            env.login(server).await;
            let out = env.run(&["run", "--json", "hello"]).await;
            assert!(out.status.success(), "{window}: {}", stderr(&out));
            assert!(stdout(&out).contains(r#""type":"done","reason":"answered","text":"Fits.""#), "{}", stdout(&out));
            let request = &server.chat_requests()[0];
            // Its instructions and tools take at most half; with the person's words, and the
            // room given to the reply, it fits the window.
            let prefix = request["messages"][0].to_string() + &request["tools"].to_string();
            let prefix = lembas_testkit::tokens_in(&prefix) as u64;
            assert!(prefix <= window / 2, "{window}: the instructions and tools take {prefix} tokens");
            let (prompt, reply) = prompt_and_reply(request);
            assert!(prompt + reply <= window, "{window}: {prompt} + {reply}");
            assert!(reply >= 256, "{window}: room for a reply");
            if window == 4096 {
                assert!(stdout(&out).contains("does without the team"), "told what was left out: {}", stdout(&out));
            }
        }
        assert_eq!(ollama.prompts_cut(), 0, "{window}: Ollama cut nothing");
    }
}

/// A session at llama.cpp's 8k whose person pasted a long log; the server started again with
/// -c 4096 (the login still says 8192) and the session continued: that run's output.
async fn restarted_smaller(server: &FakeServer, env: &Env) -> std::process::Output {
    server.set_props(json!({ "default_generation_settings": { "n_ctx": 8192 }, "total_slots": 1 }));
    std::fs::write(env.project.join("AGENTS.md"), "Be brief.\n").unwrap();
    env.login(server).await;
    let log: String = (0..120).map(|i| format!("line {i:04}: the build step ran and wrote its output\n")).collect();
    let out = env.run(&["run", &format!("Here is my log:\n{log}")]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    server.set_props(json!({ "default_generation_settings": { "n_ctx": 4096 }, "total_slots": 1 }));
    env.run(&["run", "--json", "--continue", "Say hello."]).await
}

#[tokio::test]
async fn a_server_restarted_with_a_smaller_window_is_learnt_from_its_refusal_and_compacted_for() {
    let server = FakeServer::start(vec![
        Scripted::text("Read it."),
        Scripted::text("## What we are doing\nThe person pasted a long log."),
        Scripted::text("Hello again."),
    ])
    .await;
    let env = Env::new();
    let out = restarted_smaller(&server, &env).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let requests = server.chat_requests();
    // Refused (lembas sent it believing 8k), the summary asked within 4k, then asked once more.
    assert_eq!(requests.len(), 4, "{}", stdout(&out));
    assert!(stdout(&out).contains("\"type\":\"compacted\""));
    // After the refusal every request fits 4k. (The session's instructions and tools were
    // fitted to 8k: the request after the summary leaves its reply less than lembas asks for,
    // and goes without a limit — the server, which counts, takes it.)
    for request in &requests[2..] {
        let (prompt, reply) = prompt_and_reply(request);
        assert!(prompt + reply <= 4096, "{prompt} + {reply}");
    }
    assert!(stdout(&out).contains("Hello again."));
}

#[tokio::test]
async fn after_a_refusal_taught_the_window_the_offer_is_fitted_to_it_and_a_cut_off_reply_goes_on_never_the_old_history()
{
    let server = FakeServer::start(vec![
        Scripted::text("Read it."),
        Scripted::text("## What we are doing\nThe person pasted a long log."),
        Scripted::text("Hello, and").with_finish_reason("length"),
        Scripted::text(" again."),
        Scripted::text("Still here."),
    ])
    .await;
    let env = Env::new();
    let out = restarted_smaller(&server, &env).await;
    let said = stdout(&out);
    assert!(out.status.success(), "{}\n{said}", stderr(&out));
    // After the refusal: the summary, the step asked again, its cut-off reply continued — every
    // request within 4k, none carrying the conversation the summary replaced.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5, "{said}");
    for request in &requests[2..] {
        let (prompt, reply) = prompt_and_reply(request);
        assert!(prompt + reply <= 4096, "{prompt} + {reply}");
        assert!(!request.to_string().contains("line 0100"), "the old history came back: {request}");
    }
    assert_eq!(said.matches("\"type\":\"compacted\"").count(), 1, "{said}");
    // The session's instructions and tools were fitted to 8k: at the summary they are fitted
    // again to 4k, the person told what is left out, and the turn goes on with the core tools.
    assert!(said.contains("again."), "{said}");
    assert!(said.contains("does without"), "{said}");
    let names = |request: &serde_json::Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    let (before, after) = (names(&requests[0]), names(requests.last().unwrap()));
    assert!(after.contains(&"read".to_owned()) && after.contains(&"bash".to_owned()), "{after:?}");
    assert!(after.len() < before.len(), "{before:?} then {after:?}");
    // Resumed, the session keeps the offer fitted to 4k.
    let out = env.run(&["run", "--continue", "Still there?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(names(server.chat_requests().last().unwrap()), after);
}

/// A llama.cpp server at 8k whose chat template renders no tool list (SmolLM2's), counting
/// `bytes_per_token`: lembas' guess of a request, tools included, is far above what it reads.
async fn template_without_tools(replies: Vec<Scripted>, bytes_per_token: f64) -> (FakeServer, Env) {
    let server = FakeServer::start(replies).await;
    server.set_props(json!({ "default_generation_settings": { "n_ctx": 8192 }, "total_slots": 1 }));
    server.count_tokens(bytes_per_token);
    server.template_without_tools();
    let env = Env::new();
    std::fs::write(env.project.join("AGENTS.md"), "Be brief.\n").unwrap();
    env.login(&server).await;
    (server, env)
}

/// `lines` lines of a pasted log (about 60 bytes each).
fn pasted_log(lines: usize, from: usize) -> String {
    (from..from + lines).map(|i| format!("line {i:05}: the build step ran and wrote its output\n")).collect()
}

#[tokio::test]
async fn a_first_request_guessed_tight_is_sent_and_its_count_decides_not_compacted_on_the_guess() {
    // Tools and instructions take about 2,400 tokens by the guess, none as this server reads;
    // the log puts the guess past what leaves a compaction room after the reply (about 6,700
    // of 8,192), while the server reads some 4,700: a half-full window.
    let (server, env) = template_without_tools(vec![Scripted::text("Read it.")], 3.0).await;
    let out = env.run(&["run", "--json", &format!("Here is my log:\n{}", pasted_log(230, 0))]).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1, "no compaction before the first request: {}", stdout(&out));
    assert!(!stdout(&out).contains("\"type\":\"compacted\""));
    let guess = lembas_testkit::tokens_in(&(requests[0]["messages"].to_string() + &requests[0]["tools"].to_string()));
    assert!((6_750..7_800).contains(&guess), "the test's premise: a guess of {guess} tokens is tight at 8k");
}

#[tokio::test]
async fn a_conversation_the_server_counted_is_reckoned_from_its_count_not_guessed_again() {
    // 4.5 bytes a token: the server's count against the bytes sent (tools included, which it
    // never reads) is past what a measure is believed at, so only the count itself can say how
    // full the window is. The second paste takes the guess past the tight mark (about 6,700),
    // the count to some 5,400 of 8,192.
    let (server, env) =
        template_without_tools(vec![Scripted::text("Read it."), Scripted::text("Read that too.")], 4.5).await;
    let out = env.run(&["run", &format!("Here is my log:\n{}", pasted_log(200, 0))]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["run", "--json", "--continue", &format!("And the rest:\n{}", pasted_log(200, 200))]).await;
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    assert!(stdout(&out).contains("Read that too."), "{}", stdout(&out));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "no compaction: the window is two-thirds full as the server counts");
    let second = &requests[1];
    let read = (second["messages"].to_string().len() as f64 / 4.5) as u64;
    let guess = ((second["messages"].to_string() + &second["tools"].to_string()).len() as f64 / 4.5) as u64;
    assert!(read < 6_000 && guess > 6_750, "the test's premise: read {read}, guessed {guess}");
}
