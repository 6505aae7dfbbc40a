//! `_lembas/event` (`acp.md`): every engine event of a session, to a client that said it speaks
//! lembas' protocol. The event is said as the engine says it (`type` and its fields); a turn's
//! `prompt` and `done` carry its `turnId` (the client's, or the id lembas gave it), and a `task`
//! event with `state: "start" | "end"` opens and closes each turn (capability `turns`).

use lembas_protocol::{Event, SubmissionId};
use serde_json::{Value, json};

/// Whose models the session speaks to: on a LLeMbas server's link every model is the instance's
/// (the device talks to the server it is logged in to), through the login's connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Instance {
    pub connection: Option<String>,
    pub served: bool,
}

/// The `_lembas/event` params that say `event`, in order.
pub(crate) fn lembas_events(
    session: &str,
    submission: Option<&SubmissionId>,
    event: &Event,
    instance: &Instance,
) -> Vec<Value> {
    let said = |event: Value| json!({ "sessionId": session, "event": event });
    let Ok(mut value) = serde_json::to_value(event) else { return Vec::new() };
    let turn = submission.map(|s| s.as_str().to_owned());
    let task = |state: &str| said(json!({ "type": "task", "state": state, "turnId": turn }));
    match event {
        Event::Prompt { .. } => {
            value["turnId"] = json!(turn);
            vec![task("start"), said(value)]
        }
        Event::Done { .. } => {
            value["turnId"] = json!(turn);
            vec![said(value), task("end")]
        }
        // The spec's `model` event: the device's ref, and whether the instance serves it.
        Event::Model { model, .. } => {
            value["ref"] = json!(model);
            value["connection"] = json!(instance.connection);
            value["instance"] = json!(instance.served);
            vec![said(value)]
        }
        _ => vec![said(value)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_opens_and_closes_with_its_id_and_other_events_pass_as_they_are() {
        let turn = SubmissionId("t7".into());
        let prompt = Event::Prompt { text: "hi".into(), machine: false };
        let said = lembas_events("s1", Some(&turn), &prompt, &Instance::default());
        assert_eq!(said[0], json!({"sessionId": "s1", "event": {"type": "task", "state": "start", "turnId": "t7"}}));
        assert_eq!(
            (said[1]["event"]["type"].clone(), said[1]["event"]["turnId"].clone()),
            (json!("prompt"), json!("t7"))
        );
        let mode = lembas_events("s1", None, &Event::Mode { mode: lembas_protocol::Mode::Edit }, &Instance::default());
        assert_eq!(mode, vec![json!({"sessionId": "s1", "event": {"type": "mode", "mode": "edit"}})]);
    }
}
