//! `lembas run`: one turn, headless. The reply streams to stdout; `--json` prints the engine's
//! events instead, one per line.

use std::io::{IsTerminal, Read, Write};

use lembas_core::{Answer, Approval, Ask, Command, DoneReason, Event, OpenSession, Said, Start};

use crate::cli::{OutputFormat, RunArgs, exit};
use crate::{Failure, resuming, setup};

/// What the session asks, put on the terminal the run was started from, one at a time
/// (subagents side by side may ask together; the next waits).
async fn ask_at_terminal(ask: Ask) -> Answer {
    let card = match &ask {
        Ask::Approval(request) => {
            let who = request.agent.as_ref().map_or_else(|| "lembas".to_owned(), |a| format!("the subagent \"{a}\""));
            let mut card = format!("\n{who} wants to run {}: {}\n", request.tool, request.title);
            for path in &request.reaches {
                card.push_str(&format!("  reaches {path}\n"));
            }
            card.push_str(if request.once_only {
                "Allow? [y] once, [n] no (asked every time) — you may add why after n: "
            } else {
                "Allow? [y] once, [a] always this session, [n] no — you may add why after n: "
            });
            card
        }
        Ask::Question(question) => {
            let mut card = format!("\n{}\n", question.question);
            for (i, option) in question.options.iter().enumerate() {
                card.push_str(&format!("  {}. {option}\n", i + 1));
            }
            card.push_str("Your answer: ");
            card
        }
        Ask::Plan { plan, .. } => {
            format!("\n{}\n\nApprove the plan? [y] yes, [n] no — you may add why after n: ", plan.trim_end())
        }
        // Never asked of a terminal: `show` is offered only to a client that shows files.
        Ask::Show(_) => return Answer::Shown { shown: false, reason: Some("a terminal has no viewer".into()) },
    };
    eprint!("{card}");
    let _ = std::io::stderr().flush();
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line).unwrap_or_default()
    })
    .await
    .unwrap_or_default();
    let line = line.trim();
    if let Ask::Question(question) = &ask {
        // A number picks that option.
        let words = line
            .parse::<usize>()
            .ok()
            .and_then(|n| question.options.get(n.wrapping_sub(1)).cloned())
            .unwrap_or_else(|| line.to_owned());
        eprintln!("\r  → answered");
        return Answer::Reply { words: (!words.is_empty()).then_some(words) };
    }
    let approval = match line.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('y') => Approval::Once,
        Some('a') if matches!(&ask, Ask::Approval(r) if !r.once_only) => Approval::Always,
        _ => {
            let feedback = line.split_once(char::is_whitespace).map(|(_, rest)| rest.trim().to_owned());
            Approval::Deny { feedback: feedback.filter(|f| !f.is_empty()) }
        }
    };
    // The answer on a line of its own, so what follows never shares the prompt's line
    // (whether or not the terminal echoed a newline).
    let said = match &approval {
        Approval::Once => "allowed once",
        Approval::Always => "allowed for this session",
        _ => "declined",
    };
    eprintln!("\r  → {said}");
    Answer::Approval(approval)
}

fn read_prompt(words: &[String]) -> Result<String, Failure> {
    let from_stdin = (words.len() == 1 && words[0] == "-") || (words.is_empty() && !std::io::stdin().is_terminal());
    let prompt = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::new(exit::USAGE, format!("cannot read the prompt from stdin: {e}")))?;
        text
    } else {
        words.join(" ")
    };
    if words.is_empty() && !from_stdin {
        return Err(Failure::new(exit::USAGE, "no prompt: give one, or `-` to read it from standard input"));
    }
    if prompt.trim().is_empty() {
        return Err(Failure::new(exit::USAGE, "the prompt is empty"));
    }
    Ok(prompt)
}

pub async fn run(args: RunArgs) -> Result<u8, Failure> {
    // A word that can never be right is said before anything else (a login included).
    if let Some(mode) = args.mode.as_deref() {
        setup::choose_mode(Some(mode))?;
    }
    let prompt = read_prompt(&args.prompt)?;
    let mut start = setup::Startup::load()?;
    start.take_account_personality().await;
    let (config, login) = (&start.config, &start.login);
    if args.model.is_none() {
        setup::check_config_model(&start.home, config, login)?;
    }
    let cwd = std::env::current_dir().map_err(|e| Failure::new(exit::FAILED, format!("no current directory: {e}")))?;
    // MCP servers start connecting now, beside the rest of the set-up.
    let project = start.project(setup::project_root(&cwd))?;
    for note in setup::start_notes(&project.real, project.standing) {
        eprintln!("lembas: {note}");
    }
    let host = start.host.clone();
    let resume_id = resuming::resume_id(&host, &project.real, args.continue_last, args.resume.as_deref())?;
    let model =
        resuming::start_model(&host, login, args.model.as_deref(), resume_id.as_deref(), config.model.as_deref())?;
    let effort = resuming::choose_effort(&model, args.effort.clone().or(config.effort.clone()))?;
    let mode = setup::choose_mode(args.mode.as_deref().or(config.mode.as_deref()))?;

    let machine = args.json || args.output_format != OutputFormat::Text;
    let interactive = !machine && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let mut cfg = start.project_session(&project, model, effort, mode);
    if let Some(agents) = args.agents {
        cfg.agents = agents;
    }
    if !args.kb.is_empty() {
        cfg.knowledge_scope = Some(crate::kb::known_bases(&start.knowledge, &args.kb)?);
    }
    let begin = match resume_id {
        Some(id) => Start::Resume(id),
        None => Start::New { root: project.root.clone(), cwd: cwd.clone() },
    };
    let opened = host.open(OpenSession { cfg, start: begin, attended: interactive })?;
    let (session, mut rx) = (opened.handle, opened.events);
    let answers = session.clone();

    let json = args.json || args.output_format == OutputFormat::StreamJson;
    let shape = if json {
        Shape::EveryEvent
    } else if args.output_format == OutputFormat::Json {
        Shape::FinalObject
    } else {
        Shape::Text { quiet: args.quiet }
    };
    let mut printer = Printer::new(shape, mode == lembas_permissions::Mode::Plan);
    let renderer = tokio::spawn(async move {
        while let Some(Said { event, .. }) = rx.recv().await {
            match &event {
                Event::Closed => break,
                Event::Ask { id, ask } => {
                    printer.end_line();
                    let answer = ask_at_terminal(ask.clone()).await;
                    answers.send(Command::Answer { id: *id, answer });
                }
                _ => printer.print(event),
            }
        }
        printer.last
    });

    if json {
        session.send(Command::SaySession);
    }
    let on_interrupt = session.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.send(Command::Cancel);
        }
    });
    session.send(Command::prompt(prompt));
    // Nobody comes back to this session later: the jobs the prompt started may finish, and
    // their notes wake it, before it closes.
    session.send(Command::Close { wait_for_jobs: Some(args.job_wait) });
    let reason = renderer.await.ok().flatten();
    session.close().await;
    start.finish(Some(&project)).await;
    Ok(match reason {
        Some(DoneReason::Answered | DoneReason::Limit) => exit::OK,
        Some(DoneReason::Failed) | None => exit::FAILED,
        Some(DoneReason::Cancelled) => exit::INTERRUPTED,
    })
}

/// How a run prints what the session says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The reply on stdout as it streams; tool calls and notices on stderr (not with `quiet`).
    Text { quiet: bool },
    /// Every event as a JSON line (`--json`, `--output-format stream-json`).
    EveryEvent,
    /// One object at the end (`--output-format json`).
    FinalObject,
}

/// Prints a run's events in its shape, and keeps how the last turn ended (the exit status).
struct Printer {
    out: std::io::Stdout,
    shape: Shape,
    ended_with_newline: bool,
    /// In plan mode the plan is the work: printed whole before the closing words.
    plan_mode: bool,
    plan: Option<lembas_core::Plan>,
    last: Option<DoneReason>,
}

impl Printer {
    fn new(shape: Shape, plan_mode: bool) -> Printer {
        Printer { out: std::io::stdout(), shape, ended_with_newline: true, plan_mode, plan: None, last: None }
    }

    /// Ends the reply's line, so what comes next (a question) starts on its own.
    fn end_line(&mut self) {
        if !self.ended_with_newline {
            let _ = writeln!(self.out);
            self.ended_with_newline = true;
        }
    }

    fn print(&mut self, event: Event) {
        match &event {
            Event::Done { reason, .. } => self.last = Some(*reason),
            Event::Plan { plan } if self.plan_mode => self.plan = Some(plan.clone()),
            _ => {}
        }
        match self.shape {
            Shape::FinalObject => final_object(&event),
            Shape::EveryEvent => {
                let _ = writeln!(self.out, "{}", serde_json::to_string(&event).unwrap_or_default());
                if let Event::Error { message } = &event {
                    eprintln!("lembas: {message}");
                }
                let _ = self.out.flush();
            }
            Shape::Text { quiet } => {
                if matches!(event, Event::Done { .. })
                    && let Some(plan) = self.plan.take()
                {
                    self.end_line();
                    let _ = writeln!(self.out, "{}\n", plan.render().trim_end());
                }
                self.text(event, quiet);
            }
        }
    }

    /// An event as a person reads it at a terminal.
    fn text(&mut self, event: Event, quiet: bool) {
        match event {
            Event::Text { delta } => {
                self.ended_with_newline = delta.ends_with('\n');
                let _ = write!(self.out, "{delta}");
                let _ = self.out.flush();
            }
            Event::ToolStart { tool, title, .. } => {
                self.end_line();
                if !quiet {
                    eprintln!("› {tool} {title}");
                }
            }
            Event::Error { message } => eprintln!("lembas: {message}"),
            // Each reply on lines of its own: a turn sent on (a nudge, a Stop hook) answers
            // again after text that ended without a newline.
            Event::Done { .. } | Event::Step { .. } => self.end_line(),
            _ if quiet => {}
            Event::ToolDenied { tool, reason, .. } => eprintln!("  {tool} not run: {reason}"),
            // A subagent's calls, under its task's line.
            Event::Subagent { agent, event, .. } => match *event {
                Event::ToolStart { tool, title, .. } => eprintln!("  › {agent}: {tool} {title}"),
                Event::ToolDenied { tool, reason, .. } => eprintln!("  › {agent}: {tool} not run: {reason}"),
                _ => {}
            },
            Event::Notice { message } => eprintln!("lembas: {message}"),
            // A retry is said as it happens, so a server that is down is not a silent wait.
            Event::Phase {
                progress:
                    Some(lembas_progress::Progress {
                        phase: lembas_progress::Phase::Retrying { reason, in_seconds, attempt },
                        ..
                    }),
            } => {
                let attempt = attempt.map(|a| format!(" (attempt {})", a + 1)).unwrap_or_default();
                eprintln!("lembas: {reason}; trying again in {in_seconds} s{attempt}");
            }
            _ => {}
        }
    }
}

/// `--output-format json`: one object at the end, for a script — the answer, the session, the
/// usage; errors on stderr.
fn final_object(event: &Event) {
    match event {
        Event::Done { reason, text, steps, session, usage } => {
            let done = serde_json::json!({
                "answer": text,
                "session_id": session,
                "reason": reason,
                "steps": steps,
                "usage": usage,
                // Not known per turn yet: a LLeMbas server reports the month's cost (`/usage`),
                // no server reports a turn's.
                "cost": null,
            });
            println!("{done}");
        }
        Event::Error { message } => eprintln!("lembas: {message}"),
        _ => {}
    }
}
