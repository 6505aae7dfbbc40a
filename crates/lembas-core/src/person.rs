//! A command the person runs themselves (`!command` in the TUI): judged by the session's rules
//! as the `bash` call they asked for — the hardline and a rule that refuses still refuse, and an
//! ask counts as answered by the typing — run as the model's commands are (sandbox, jobs,
//! timeout), shown as a `bash` call, and handed to the model with the next prompt.

use lembas_permissions::Decision;
use lembas_protocol::Attachment;
use lembas_tools::ToolOutput;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Event;
use crate::session::Session;

impl Session {
    pub async fn person_command(&mut self, command: &str, cancel: &CancellationToken) {
        let command = command.trim();
        if command.is_empty() {
            return;
        }
        let tool = crate::handlers::handler("bash");
        let def = lembas_spec::tool(tool.name).expect("spec/tools/bash.json").clone();
        let args = json!({ "command": command });
        self.person_runs += 1;
        let call_id = format!("person-{}", self.person_runs);
        let judged = self.judge_call(&def, &args);
        self.emit(Event::ToolStart {
            call_id: call_id.clone(),
            tool: tool.name.into(),
            title: (tool.title)(&args),
            args: args.clone(),
            paths: Vec::new(),
        });
        if let Decision::Refuse(reason) = judged.verdict.decision {
            self.emit(Event::ToolDenied { call_id, tool: tool.name.into(), reason });
            return;
        }
        // Asked for by the person: run as an approved call is.
        let command = args.get("command").and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
        let runner = self.command_runner(true, &call_id, &command);
        let (text, is_error) = match runner.run(&self.ws, &args, cancel, &self.jobs).await {
            ToolOutput::Text(text) => (text, false),
            ToolOutput::Error(text) => (text, true),
            other => (format!("{other:?}"), false),
        };
        self.emit(Event::ToolEnd {
            call_id,
            tool: tool.name.into(),
            result_id: None,
            outcome: crate::handlers::describe::outcome(tool, &text, is_error),
            text: text.clone(),
            is_error,
            diffs: Vec::new(),
        });
        self.report_jobs();
        self.person_ran.push(Attachment::Text { name: format!("what `{command}` printed (the person ran it)"), text });
    }
}
