//! Every tool the engine runs, one handler each: how a call of it runs, how a person reads it
//! (its title, and what came of it), and — for a tool on files — the paths it reaches and what
//! it would change. The definitions (`spec/tools/`) say what the model is told and what the
//! permission rules judge; a handler says the rest. Nothing outside this module and the handlers
//! it names decides anything by a tool's name (`tests/architecture.rs` holds it).
//!
//! Adding a tool is its definition, its handler (a function beside its kin, or a file of its
//! own) and one line in [`HANDLERS`].

pub(crate) mod describe;
pub(crate) mod knowledge;
mod library;
mod runs;
mod show;
pub(crate) mod team;
mod web;

use std::path::PathBuf;
use std::sync::LazyLock;

use futures::future::BoxFuture;
use lembas_context::FileChange;
use lembas_tools::handlers::FileTool;
use lembas_tools::{ToolOutput, Workspace};
use serde_json::Value;

use crate::session::Session;
use describe::{Summary, Title};
pub(crate) use runs::{Call, CallTools, run_one};
pub(crate) use web::WebCall;

/// A call the engine answers itself, in call order, with the session in hand, waiting on the
/// person.
pub(crate) type EngineRun = for<'a> fn(&'a mut Session, &'a str, &'a Value) -> BoxFuture<'a, ToolOutput>;

/// A call the engine answers itself at once, in call order: by the session, the call's id and its
/// arguments.
pub(crate) type EngineAnswer = fn(&mut Session, &str, &Value) -> ToolOutput;

/// A call that runs beside the step's other calls, with what it takes of the session.
pub(crate) type BesideRun = for<'a> fn(&'a CallTools, &'a Call) -> BoxFuture<'a, ToolOutput>;

/// How a call of a tool runs.
pub(crate) enum Runs {
    /// On files, on a blocking thread, beside the step's other calls.
    Files(&'static FileTool),
    /// On the person's skills, on a blocking thread, beside the step's other calls.
    Skills(fn(&lembas_tools::SkillPlaces, &Value) -> ToolOutput),
    /// On the notes, on a blocking thread, beside the step's other calls.
    Notes(fn(&lembas_library::Notes, &Value) -> ToolOutput),
    /// Beside the step's other calls: jobs, an MCP server's tool.
    Beside(BesideRun),
    /// A command line, in the sandbox; its runner is made for each call.
    Command,
    /// A subagent's task, made when the call is made ready.
    Task,
    /// By the engine in call order, once the permission rules allowed it, waiting on the person:
    /// a question, the plan put to them.
    Engine(EngineRun),
    /// By the engine in call order, at once, once the permission rules allowed it: the plan.
    AtOnce(EngineAnswer),
    /// The team's own tools: by the engine in call order, at once, judged by the tree's rules
    /// (`team.md`) rather than the session's mode.
    Team(EngineAnswer),
    /// At insertion, where the result's own id is known: `recall`.
    Recall,
    /// A name nothing answers to.
    Missing,
}

/// How many results a search call asks for: its `limit`, else `default`, kept within 1–20.
pub(super) fn limit(args: &Value, default: u64) -> usize {
    args.get("limit").and_then(Value::as_u64).unwrap_or(default).clamp(1, 20) as usize
}

/// One tool's handler.
pub(crate) struct Handler {
    pub name: &'static str,
    pub runs: Runs,
    /// Asked for every time, in every mode, and never allowed for the session: it writes what
    /// every later session reads.
    pub always_asks: bool,
    /// The call in one line, as a person reads it.
    pub title: Title,
    /// What came of it in one line; `None`: the first line of its result says it.
    pub summary: Summary,
    /// Offered only to a model that sees images.
    pub needs_vision: bool,
    /// Its change is said as a patch even when it touches one file.
    pub said_as_patch: bool,
    /// It fetches the URL its `url` argument names: what the permission rules judge it by.
    pub fetches: bool,
    /// A session can do without it when a small window leaves little room: it has other ways
    /// or is seldom used.
    pub spare: bool,
}

impl Handler {
    const fn new(name: &'static str, runs: Runs) -> Self {
        Handler {
            name,
            runs,
            always_asks: false,
            title: describe::plain_title,
            summary: describe::first_line_says,
            needs_vision: false,
            said_as_patch: false,
            fetches: false,
            spare: false,
        }
    }

    const fn titled(self, title: Title) -> Self {
        Handler { title, ..self }
    }

    const fn summed(self, summary: Summary) -> Self {
        Handler { summary, ..self }
    }

    const fn always_asking(self) -> Self {
        Handler { always_asks: true, ..self }
    }

    const fn seeing(self) -> Self {
        Handler { needs_vision: true, ..self }
    }

    const fn patching(self) -> Self {
        Handler { said_as_patch: true, ..self }
    }

    const fn fetching(self) -> Self {
        Handler { fetches: true, ..self }
    }

    const fn spare(self) -> Self {
        Handler { spare: true, ..self }
    }

    /// The URL a call fetches; `None` for a tool that fetches none.
    pub fn url<'a>(&self, args: &'a Value) -> Option<&'a str> {
        if self.fetches { args.get("url").and_then(Value::as_str) } else { None }
    }

    /// The paths a call reaches, resolved: what the permission rules judge, and what calls of
    /// one step compare to run in order.
    pub fn paths(&self, ws: &Workspace, args: &Value) -> Vec<PathBuf> {
        match self.runs {
            Runs::Files(tool) => tool.paths(ws, args),
            _ => Vec::new(),
        }
    }

    /// What the call would change, worked out without writing; `None` for one that changes no
    /// file.
    pub fn preview(&self, ws: &Workspace, args: &Value) -> Option<Result<Vec<FileChange>, String>> {
        match self.runs {
            Runs::Files(tool) => tool.preview(ws, args),
            _ => None,
        }
    }

    /// The command line a call runs; `None` for a tool that runs none.
    pub fn command<'a>(&self, args: &'a Value) -> Option<&'a str> {
        match self.runs {
            Runs::Command => args.get("command").and_then(Value::as_str),
            _ => None,
        }
    }

    pub fn runs_a_command(&self) -> bool {
        matches!(self.runs, Runs::Command)
    }

    /// Whether a call may change the project's files, so the turn snapshots them first: a file
    /// tool that writes, a command, a subagent, a team's member, a job or an MCP server's tool.
    pub fn may_change_the_project(&self) -> bool {
        match self.runs {
            Runs::Files(_) => lembas_spec::tool(self.name).is_some_and(|t| t.changes_files()),
            // What reaches the web leaves the project as it was.
            Runs::Beside(_) => lembas_spec::tool(self.name).is_none_or(|t| !t.reaches_the_web()),
            Runs::Command | Runs::Task | Runs::Team(_) => true,
            Runs::Skills(_) | Runs::Notes(_) | Runs::Engine(_) | Runs::AtOnce(_) | Runs::Recall | Runs::Missing => {
                false
            }
        }
    }
}

/// The answer of a tool offered for what may come during the session (`context.md` §10 rule 4)
/// while it has not come: its definition's `unavailable` text.
pub(crate) fn unavailable(name: &str) -> ToolOutput {
    ToolOutput::Error(lembas_spec::tool(name).and_then(|def| def.unavailable.clone()).unwrap_or_default())
}

/// Every handler, in the definitions' order; an MCP server's tools share one
/// ([`runs::MCP`]).
static HANDLERS: LazyLock<Vec<Handler>> = LazyLock::new(|| {
    use crate::handlers::team;
    use Runs::{AtOnce, Beside, Command, Engine, Files, Notes, Recall, Skills, Task, Team};
    use describe as d;
    use lembas_library::tools as notes;
    use lembas_tools::handlers as on_files;
    vec![
        Handler::new("apply_patch", Files(&on_files::APPLY_PATCH))
            .titled(d::patch_title)
            .summed(d::change_summary)
            .patching()
            .spare(),
        Handler::new("ask_user", Engine(crate::engine_tools::ask_user))
            .titled(d::question_title)
            .summed(d::answer_summary),
        Handler::new("bash", Command).titled(d::command_title).summed(d::command_summary),
        Handler::new("edit", Files(&on_files::EDIT)).summed(d::change_summary),
        Handler::new("glob", Files(&on_files::GLOB)).titled(d::pattern_title).summed(d::glob_summary),
        Handler::new("grep", Files(&on_files::GREP)).titled(d::search_title).summed(d::grep_summary),
        Handler::new("job_list", Beside(runs::job_list)).spare(),
        Handler::new("job_output", Beside(runs::job_output)),
        Handler::new("job_send", Beside(runs::job_send)).spare(),
        Handler::new("job_stop", Beside(runs::job_stop)),
        Handler::new("knowledge_get", Beside(knowledge::knowledge_get)),
        Handler::new("knowledge_search", Beside(knowledge::knowledge_search)).titled(d::query_title),
        Handler::new("list", Files(&on_files::LIST)).summed(d::list_summary),
        Handler::new("memory", Beside(runs::memory)),
        Handler::new("multiedit", Files(&on_files::MULTIEDIT)).summed(d::change_summary).spare(),
        Handler::new("note_manage", Notes(notes::note_manage)).titled(d::note_title),
        Handler::new("note_view", Notes(notes::note_view)).titled(d::note_title).spare(),
        Handler::new("notes_search", Notes(notes::notes_search)).titled(d::query_title).spare(),
        Handler::new("plan_submit", Engine(crate::engine_tools::plan_submit)).summed(d::plan_verdict_summary),
        Handler::new("plan_update", AtOnce(crate::engine_tools::plan_update)),
        Handler::new("plan_write", AtOnce(crate::engine_tools::plan_write)),
        Handler::new("read", Files(&on_files::READ)).summed(d::read_summary),
        Handler::new("recall", Recall),
        Handler::new("report", Team(team::report)),
        Handler::new("session_search", AtOnce(library::session_search)).titled(d::query_title).spare(),
        Handler::new("tasks", AtOnce(library::tasks)).spare(),
        Handler::new("decisions", AtOnce(library::decisions)).spare(),
        Handler::new("settings", AtOnce(library::settings)),
        Handler::new("skill_manage", Skills(lembas_tools::skill_manage)).always_asking().spare(),
        Handler::new("skill_view", Skills(lembas_tools::skill_view)).spare(),
        Handler::new("skills_list", Skills(lembas_tools::skills_list)).spare(),
        Handler::new("task", Task).titled(d::task_title),
        Handler::new("team_add", Team(team::team_add)).titled(d::agent_title),
        Handler::new("team_assign", Team(team::team_assign)).titled(d::agent_title),
        Handler::new("team_decide", Team(team::team_decide)),
        Handler::new("team_findings", Team(team::team_findings)),
        Handler::new("team_finish", Team(team::team_finish)),
        Handler::new("team_read", Team(team::team_read)),
        Handler::new("team_replace", Team(team::team_replace)).titled(d::agent_title),
        Handler::new("team_request", Team(team::team_request)),
        Handler::new("team_send", Team(team::team_send)).titled(d::recipients_title),
        Handler::new("team_stop", Team(team::team_stop)).titled(d::agent_title),
        Handler::new("team_whoami", Team(team::team_whoami)),
        Handler::new("view_image", Files(&on_files::VIEW_IMAGE)).seeing().spare(),
        Handler::new("web_fetch", Beside(web::web_fetch))
            .titled(d::url_title)
            .summed(d::fetch_summary)
            .fetching()
            .spare(),
        Handler::new("web_search", Beside(web::web_search)).titled(d::query_title).summed(d::search_summary).spare(),
        Handler::new("show", Engine(show::show)),
        Handler::new("write", Files(&on_files::WRITE)).summed(d::change_summary),
    ]
});

/// Where a name nothing answers to lands.
static MISSING: Handler = Handler::new("", Runs::Missing);

/// The handler of a call of `name`: the tool's own (also by a former name), an MCP server's
/// tool, or one that answers that there is no such tool.
pub(crate) fn handler(name: &str) -> &'static Handler {
    let known = |n: &str| HANDLERS.iter().find(|h| h.name == n);
    known(name)
        .or_else(|| lembas_spec::tool(name).and_then(|def| known(&def.name)))
        .unwrap_or(if lembas_mcp::is_mcp_name(name) { &runs::MCP } else { &MISSING })
}

/// Whether `tools` (what a session offers) has the tool `name`.
pub(crate) fn offers(tools: &[lembas_model::ToolSchema], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_tool_of_the_spec_has_a_handler_and_every_handler_a_definition() {
        for def in lembas_spec::tools().iter().filter(|d| d.on_device()) {
            assert_eq!(handler(&def.name).name, def.name, "{} has no handler", def.name);
        }
        for h in HANDLERS.iter() {
            assert!(lembas_spec::tool(h.name).is_some(), "{} is not a spec tool", h.name);
            if let Runs::Files(tool) = h.runs {
                assert_eq!(tool.name, h.name);
            }
        }
    }

    #[test]
    fn a_small_window_leaves_out_the_tools_a_session_can_do_without() {
        let spare: Vec<&str> = HANDLERS.iter().filter(|h| h.spare).map(|h| h.name).collect();
        assert_eq!(
            spare,
            [
                "apply_patch",
                "job_list",
                "job_send",
                "multiedit",
                "note_view",
                "notes_search",
                "session_search",
                "tasks",
                "decisions",
                "skill_manage",
                "skill_view",
                "skills_list",
                "view_image",
                "web_fetch",
                "web_search"
            ]
        );
    }

    #[test]
    fn a_former_name_an_mcp_tool_and_an_unknown_one_each_find_their_handler() {
        assert_eq!(handler("mcp__peer__add").name, "mcp");
        assert!(matches!(handler("no_such_tool").runs, Runs::Missing));
        for def in lembas_spec::tools() {
            for alias in def.aliases.get("cli").into_iter().flatten() {
                assert_eq!(handler(alias).name, def.name);
            }
        }
    }
}
