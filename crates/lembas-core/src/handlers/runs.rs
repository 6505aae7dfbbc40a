//! Calls that run beside the step's other calls: what each takes of its session, and how the
//! handlers of files, skills, jobs and MCP servers' tools run them.

use futures::FutureExt;
use futures::future::BoxFuture;
use lembas_model::CancellationToken;
use lembas_tools::ToolOutput;
use serde_json::Value;

use super::{Handler, Runs};

/// What a call running beside others takes of its session.
pub(crate) struct CallTools {
    pub events: crate::sink::EventSink,
    pub ws: lembas_tools::Workspace,
    pub jobs: lembas_tools::Jobs,
    pub parked: crate::session::subagent::ParkedAgents,
    pub mcp: Option<std::sync::Arc<lembas_mcp::McpHub>>,
    pub skills: lembas_tools::SkillPlaces,
    pub web: super::WebCall,
    pub notes: lembas_library::Notes,
    pub knowledge: Option<std::sync::Arc<lembas_knowledge::Knowledge>>,
    /// The bases this conversation is limited to (none: every base).
    pub knowledge_scope: Option<Vec<String>>,
    pub memory: Option<crate::session::memory::MemoryLink>,
}

/// One call, as it runs.
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub args: Value,
    pub cancel: CancellationToken,
}

/// Runs one call that runs beside others: a subagent's task, a command, or what its handler
/// runs (on a blocking thread for the tools on files and skills).
pub(crate) async fn run_one(
    tools: CallTools,
    call: Call,
    task: Option<Box<crate::session::subagent::TaskRun>>,
    command: Option<crate::sandboxing::CommandRunner>,
) -> ToolOutput {
    if call.cancel.is_cancelled() {
        return ToolOutput::Error("Not run: the turn was interrupted.".into());
    }
    if let Some(task) = task {
        return if task.background {
            task.start_job(call.id, tools.events, &tools.jobs, &tools.parked)
        } else {
            task.run(call.id, tools.events, &call.cancel).await
        };
    }
    match super::handler(&call.name).runs {
        Runs::Command => match command {
            Some(runner) => runner.run(&tools.ws, &call.args, &call.cancel, &tools.jobs).await,
            None => ToolOutput::Error("The command could not be made ready to run.".into()),
        },
        Runs::Files(tool) => blocking(move || tool.run(&tools.ws, &call.args)).await,
        Runs::Skills(run) => {
            blocking(move || match needs(&call.name, "skills") {
                true if lembas_tools::discover_skills(&tools.skills).is_empty() => super::unavailable(&call.name),
                _ => run(&tools.skills, &call.args),
            })
            .await
        }
        Runs::Notes(run) => {
            blocking(move || match needs(&call.name, "notes") {
                true if !tools.notes.any() => super::unavailable(&call.name),
                _ => run(&tools.notes, &call.args),
            })
            .await
        }
        Runs::Beside(run) => run(&tools, &call).await,
        _ => ToolOutput::Error(format!("There is no tool called {} here.", call.name)),
    }
}

/// Whether tool `name` is offered for `what` (notes, skills) that may come during the session.
fn needs(name: &str, what: &str) -> bool {
    lembas_spec::tool(name).is_some_and(|def| def.requires.iter().any(|r| r == what))
}

/// What `work` answers, done on a blocking thread: reading a file may go through an editor that
/// answers on this same runtime.
async fn blocking(work: impl FnOnce() -> ToolOutput + Send + 'static) -> ToolOutput {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| ToolOutput::Error(format!("The tool failed: {e}")))
}

/// A job's id, as a job tool's call gives it.
fn job_id(args: &Value) -> Result<&str, ToolOutput> {
    match args.get("id").and_then(Value::as_str).map(str::trim) {
        Some(id) if !id.is_empty() => Ok(id),
        _ => Err(ToolOutput::Error("`id` is required (job1, job2, …).".to_owned())),
    }
}

fn answer(result: Result<String, String>) -> ToolOutput {
    result.map_or_else(ToolOutput::Error, ToolOutput::Text)
}

pub(super) fn job_list<'a>(tools: &'a CallTools, _call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move { ToolOutput::Text(tools.jobs.list()) }.boxed()
}

pub(super) fn job_output<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let id = match job_id(&call.args) {
            Ok(id) => id,
            Err(e) => return e,
        };
        let wait = call.args.get("wait").and_then(Value::as_u64).unwrap_or(0).min(600);
        answer(tools.jobs.output(id, std::time::Duration::from_secs(wait)).await)
    }
    .boxed()
}

/// Input to a job; a message to a background subagent that has reported wakes it.
pub(super) fn job_send<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let id = match job_id(&call.args) {
            Ok(id) => id,
            Err(e) => return e,
        };
        let Some(input) = call.args.get("input").and_then(Value::as_str) else {
            return ToolOutput::Error("`input` is required.".to_owned());
        };
        if let Some(woke) = crate::session::subagent::wake(&tools.parked, &tools.jobs, id, input) {
            return woke;
        }
        answer(tools.jobs.send(id, input).await)
    }
    .boxed()
}

pub(super) fn job_stop<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        match job_id(&call.args) {
            Ok(id) => answer(tools.jobs.stop(id).await),
            Err(e) => e,
        }
    }
    .boxed()
}

/// `memory`: the person's memory, through their LLeMbas instance's own MCP server.
pub(super) fn memory<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        match &tools.memory {
            Some(link) => link.call(call.args.clone(), &call.cancel).await,
            None => ToolOutput::Error("Memory is kept by a LLeMbas server; this session has none.".to_owned()),
        }
    }
    .boxed()
}

/// Every MCP server's tools: called through the session's hub, by their full name.
pub(super) static MCP: Handler = Handler::new("mcp", Runs::Beside(mcp_call)).titled(super::describe::arguments_title);

fn mcp_call<'a>(tools: &'a CallTools, call: &'a Call) -> BoxFuture<'a, ToolOutput> {
    async move {
        let Some(hub) = &tools.mcp else {
            return ToolOutput::Error(format!("No MCP server offers {} in this session.", call.name));
        };
        match hub.call(&call.name, call.args.clone(), &call.cancel).await {
            out if out.is_error => ToolOutput::Error(out.text),
            out if out.images.is_empty() => ToolOutput::Text(out.text),
            out => ToolOutput::TextAndImages { text: out.text, images: out.images },
        }
    }
    .boxed()
}
