//! Tool calls an open model's server left in the reply's text, taken as calls by the real
//! binary: the turn goes on to run them instead of ending on what looks like prose.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::Value;

fn tool_results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test]
async fn calls_written_as_text_in_each_form_are_run() {
    let forms = [
        "Making it.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch hermes.txt\"}}\n</tool_call>",
        "<function=bash>\n<parameter=command>\ntouch qwen.txt\n</parameter>\n</function>",
        "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"touch bare.txt\"}}\n```",
        "The file is needed, so I make it.</think>\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"touch stray.txt\"}}</tool_call>",
        "[TOOL_CALLS]bash[ARGS]{\"command\": \"touch mistral.txt\"}",
        "<|python_tag|>{\"name\": \"bash\", \"parameters\": {\"command\": \"touch llama.txt\"}}<|eom_id|>",
    ];
    let mut script: Vec<Scripted> = forms.iter().map(|f| Scripted::text(*f)).collect();
    script.push(Scripted::text("All six made."));
    let server = FakeServer::start(script).await;
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "make the files"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).ends_with("All six made.\n"), "{}", stdout(&out));
    for file in ["hermes.txt", "qwen.txt", "bare.txt", "stray.txt", "mistral.txt", "llama.txt"] {
        assert!(env.project.join(file).exists(), "{file} was not made");
    }
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 7, "each call ran once, then the answer");
    // The calls went back to the model as calls, not as text.
    let last = &requests[6]["messages"];
    let calls: Vec<&Value> = last.as_array().unwrap().iter().filter(|m| m["tool_calls"].is_array()).collect();
    assert_eq!(calls.len(), 6, "{last}");
    assert!(!last.to_string().contains("<tool_call>") && !last.to_string().contains("[TOOL_CALLS]"), "{last}");
    assert_eq!(tool_results(&requests[6]).len(), 6);
    // A reply that only mentions the form, or names a tool not offered, is an answer.
    let server = FakeServer::start(vec![Scripted::text(
        "Write calls as <tool_call>{\"name\": \"deploy\", \"arguments\": {}}</tool_call> if you must.",
    )])
    .await;
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "how do calls look?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("if you must."), "{}", stdout(&out));
    assert_eq!(server.chat_requests().len(), 1);
}
