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

/// What the spec's events need that the engine's do not say, kept per session: the ids the
/// client gave the words it steered with, and the titles of subagents' calls until they finish.
#[derive(Debug, Default)]
pub(crate) struct Follow {
    /// `_lembas/steer` words with the client's id, oldest first, until a step takes them in.
    steers: std::collections::VecDeque<(String, String)>,
    /// A subagent's calls that started, by call id: their titles, for `sub_tool`.
    titles: std::collections::HashMap<String, String>,
}

impl Follow {
    /// The client steered with `text` under its message `id`.
    pub(crate) fn steered(&mut self, text: &str, id: &str) {
        self.steers.push_back((text.to_owned(), id.to_owned()));
    }
}

/// The `_lembas/event` params that say `event`, in order.
pub(crate) fn lembas_events(
    session: &str,
    submission: Option<&SubmissionId>,
    event: &Event,
    instance: &Instance,
    follow: &mut Follow,
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
            // Words no step took in became a prompt of their own: their ids are done with.
            follow.steers.clear();
            value["turnId"] = json!(turn);
            vec![said(value), task("end")]
        }
        // The spec's `model` event: the device's ref, its level (`default`: the model's own),
        // and whether the instance serves it.
        Event::Model { model, effort } => {
            value["ref"] = json!(model);
            value["effort"] = json!(effort.as_deref().unwrap_or("default"));
            value["connection"] = json!(instance.connection);
            value["instance"] = json!(instance.served);
            vec![said(value)]
        }
        Event::Title { .. } => {
            value["id"] = json!(session);
            vec![said(value)]
        }
        // `texts`, and the ids the client gave them (`_lembas/steer`).
        Event::Steered { text } => {
            value["texts"] = json!([text]);
            if let Some(at) = follow.steers.iter().position(|(t, _)| t == text) {
                let (_, id) = follow.steers.remove(at).expect("a steer");
                value["ids"] = json!([id]);
            }
            vec![said(value)]
        }
        Event::Subagent { call_id, job, event: inner, .. } => {
            let mut out = vec![said(value)];
            match inner.as_ref() {
                Event::ToolStart { call_id: call, title, tool, .. } => {
                    let title = if title.is_empty() { tool.clone() } else { title.clone() };
                    follow.titles.insert(call.clone(), title);
                }
                // A subagent's call finished: drawn under its task line, or in its job's panel.
                Event::ToolEnd { call_id: call, tool, is_error, .. } => {
                    let title = follow.titles.remove(call).unwrap_or_else(|| tool.clone());
                    let mut sub = json!({ "type": "sub_tool", "callId": call_id, "name": tool, "title": title });
                    if let Some(job) = job {
                        sub["jobId"] = json!(job);
                    }
                    if *is_error {
                        sub["isError"] = json!(true);
                    }
                    out.push(said(sub));
                }
                _ => {}
            }
            out
        }
        // As the engine says them. Listed, not matched with `_`, so a new event is placed here
        // on purpose.
        Event::Session { .. }
        | Event::Step { .. }
        | Event::Text { .. }
        | Event::Reasoning { .. }
        | Event::ToolStart { .. }
        | Event::ToolEnd { .. }
        | Event::ToolDenied { .. }
        | Event::Usage { .. }
        | Event::Team { .. }
        | Event::Room { .. }
        | Event::SubagentsStopped { .. }
        | Event::Jobs { .. }
        | Event::Job { .. }
        | Event::JobNote { .. }
        | Event::JobSaid { .. }
        | Event::FilesFound { .. }
        | Event::Context { .. }
        | Event::Phase { .. }
        | Event::Plan { .. }
        | Event::Compacted { .. }
        | Event::Mode { .. }
        | Event::Agents { .. }
        | Event::Personality { .. }
        | Event::Levels { .. }
        | Event::AgentFiles { .. }
        | Event::Notes { .. }
        | Event::McpServers { .. }
        | Event::Notice { .. }
        | Event::SteerReturned { .. }
        | Event::Undone { .. }
        | Event::SnapshotStore { .. }
        | Event::Turns { .. }
        | Event::Forked { .. }
        | Event::Ask { .. }
        | Event::Answered { .. }
        | Event::Error { .. }
        | Event::Closed => vec![said(value)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_opens_and_closes_with_its_id_and_other_events_pass_as_they_are() {
        let turn = SubmissionId("t7".into());
        let prompt = Event::Prompt { text: "hi".into(), machine: false };
        let said = lembas_events("s1", Some(&turn), &prompt, &Instance::default(), &mut Follow::default());
        assert_eq!(said[0], json!({"sessionId": "s1", "event": {"type": "task", "state": "start", "turnId": "t7"}}));
        assert_eq!(
            (said[1]["event"]["type"].clone(), said[1]["event"]["turnId"].clone()),
            (json!("prompt"), json!("t7"))
        );
        let mode = lembas_events(
            "s1",
            None,
            &Event::Mode { mode: lembas_protocol::Mode::Edit },
            &Instance::default(),
            &mut Follow::default(),
        );
        assert_eq!(mode, vec![json!({"sessionId": "s1", "event": {"type": "mode", "mode": "edit"}})]);
    }

    #[test]
    fn the_spec_fields_are_added_steer_ids_title_ids_and_a_subagents_finished_call() {
        let mut follow = Follow::default();
        follow.steered("also the tests", "m9");
        let steered = Event::Steered { text: "also the tests".into() };
        let said = lembas_events("s1", None, &steered, &Instance::default(), &mut follow);
        assert_eq!(
            (said[0]["event"]["texts"].clone(), said[0]["event"]["ids"].clone()),
            (json!(["also the tests"]), json!(["m9"]))
        );
        let title = lembas_events("s1", None, &Event::Title { title: "Fix".into() }, &Instance::default(), &mut follow);
        assert_eq!(title[0]["event"]["id"], "s1");
        let sub = |event: Event| Event::Subagent {
            call_id: "task_1".into(),
            agent: "scan".into(),
            job: Some("job2".into()),
            event: Box::new(event),
        };
        let start = Event::ToolStart {
            call_id: "c1".into(),
            tool: "bash".into(),
            title: "cargo test".into(),
            args: json!({}),
            paths: Vec::new(),
        };
        assert_eq!(lembas_events("s1", None, &sub(start), &Instance::default(), &mut follow).len(), 1);
        let end = Event::ToolEnd {
            call_id: "c1".into(),
            tool: "bash".into(),
            result_id: None,
            text: String::new(),
            is_error: true,
            outcome: Default::default(),
            diffs: Vec::new(),
        };
        let said = lembas_events("s1", None, &sub(end), &Instance::default(), &mut follow);
        assert_eq!(
            said[1]["event"],
            json!({"type": "sub_tool", "callId": "task_1", "jobId": "job2", "name": "bash", "title": "cargo test", "isError": true})
        );
    }
}
