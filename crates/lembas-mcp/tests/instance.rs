//! The instance's `/mcp` as the device reaches memory through it: against the test kit's fake
//! LLeMbas instance, with and without the memory scope.

use lembas_mcp::InstanceMcp;
use lembas_testkit::{FakeServer, Llembas, MemoryRecords};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn memory_is_read_and_changed_through_the_instance_and_a_scope_lands_in_its_group() {
    let server = FakeServer::start(Vec::new()).await;
    server.set_llembas(Llembas::default());
    server.set_memory(None, MemoryRecords { memory: vec!["Prefers tabs.".into()], user: Vec::new() });
    let instance = InstanceMcp::new(&server.url(), "lmb_test_token");
    assert_eq!(instance.read("lembas://memory", None).await.unwrap(), "Prefers tabs.");

    let cancel = CancellationToken::new();
    let added = instance
        .call("memory", json!({ "action": "add", "target": "memory", "content": "Uses fish." }), None, &cancel)
        .await;
    assert!(!added.is_error, "{}", added.text);
    assert_eq!(instance.read("lembas://memory", None).await.unwrap(), "Prefers tabs.\n§\nUses fish.");

    // A link session's call carries its scope and lands in that chat's group, not the account's.
    let scoped = instance
        .call("memory", json!({ "action": "add", "target": "user", "content": "Is Ada." }), Some("s-7"), &cancel)
        .await;
    assert!(!scoped.is_error, "{}", scoped.text);
    assert_eq!(server.memory(Some("s-7")).user, ["Is Ada."]);
    assert_eq!(server.memory(None).user, Vec::<String>::new());
    let calls: Vec<_> = server.mcp_requests().into_iter().filter(|r| r["method"] == "tools/call").collect();
    assert_eq!(calls[1]["params"]["_meta"]["lembas"]["scope"], "s-7");
    assert!(calls[0]["params"].get("_meta").is_none_or(|m| m.get("lembas").is_none()));

    // A refusal from the instance is an answer, not a panic.
    let wrong =
        instance.call("memory", json!({ "action": "remove", "old_text": "nothing like it" }), None, &cancel).await;
    assert!(wrong.is_error && wrong.text.contains("no entry"), "{}", wrong.text);
}

#[tokio::test]
async fn a_token_without_the_memory_scope_is_refused_with_a_clear_error() {
    let server = FakeServer::start(Vec::new()).await;
    server.set_llembas(Llembas { scope: "models link".into(), ..Llembas::default() });
    let instance = InstanceMcp::new(&server.url(), "lmb_test_token");
    let err = instance.read("lembas://memory", None).await.unwrap_err();
    assert!(err.contains("did not start an MCP session"), "{err}");
}
