//! The team through the real binary (`team.md`, `subagents.md` §5–§13): subagents added by the
//! main agent work side by side in the background, their reports wake the idle main agent, and
//! the run ends with its answer once nobody works. The fake model answers each agent from a
//! script of its own, chosen by its conversation (its system prompt names it), never by the
//! order requests arrive in.

mod common;

use common::{Env, stderr, stdout};
use lembas_testkit::{FakeServer, Scripted};
use serde_json::{Value, json};

const PARSER: &str = "You are \"parser\" (s1)";
const LEXER: &str = "You are \"lexer\" (s2)";

fn add(name: &str, role: &str, task: &str, goal: Option<&str>) -> String {
    let mut args = json!({"name": name, "role": role, "task": task});
    if let Some(goal) = goal {
        args["goal"] = goal.into();
    }
    args.to_string()
}

fn system_of(request: &Value) -> &str {
    request["messages"][0]["content"].as_str().unwrap_or_default()
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().map(str::to_owned).unwrap_or_else(|| m["content"].to_string()))
        .collect()
}

/// The tool results a request carries, in order.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn two_subagents_work_side_by_side_and_their_reports_wake_the_idle_main_agent() {
    let server = FakeServer::start(vec![
        Scripted::text("")
            .with_call(
                "team_add",
                &add("parser", "reads the notes", "Say what notes.txt says.", Some("know the notes")),
            )
            .with_call("team_add", &add("lexer", "counts the words", "Count the words of notes.txt.", None)),
        Scripted::text("Both are at work; their reports will come."),
        // Woken by the first report (lexer's: it answers at once), then by the second.
        Scripted::text("Lexer reported; waiting for parser."),
        Scripted::text("The note says to remember the milk, in 3 words."),
    ])
    .await;
    // Lexer answers after the main agent's first turn is over (its report then wakes it), and
    // well before parser.
    server.route(LEXER, vec![Scripted::text("notes.txt has 3 words.").with_delay_ms(300)]);
    server.route(
        PARSER,
        vec![
            Scripted::tool_call("read", json!({"path": "notes.txt"})).with_delay_ms(1500),
            Scripted::text("notes.txt:1 says: remember the milk."),
        ],
    );
    let env = Env::new();
    std::fs::write(env.project.join("notes.txt"), "remember the milk\n").unwrap();
    env.login(&server).await;
    let out = env.run(&["run", "--agents", "1-3", "What does the note say, and how long is it?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.trim_end().ends_with("The note says to remember the milk, in 3 words."), "{printed}");
    let said = stderr(&out);
    assert!(said.contains("› team_add"), "{said}");
    assert!(said.contains("  › parser: read notes.txt"), "{said}");

    let requests = server.chat_requests();
    // The main agent was offered the team and told how to lead, and its size in the first note.
    let first = &requests[0];
    assert!(system_of(first).contains("# Leading subagents"), "the lead block");
    let names: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    for tool in ["team_add", "team_send", "team_read", "team_stop", "team_whoami"] {
        assert!(names.contains(&tool), "{names:?}");
    }
    assert!(!names.contains(&"team_finish"), "a subagent's tool: {names:?}");
    assert!(user_texts(first)[0].contains("The team may have 1 to 3 agents, you included."), "{:?}", user_texts(first));

    // Each subagent ran on its own conversation, with its standing and the member tools.
    let parser: Vec<&Value> = requests.iter().filter(|r| system_of(r).contains(PARSER)).collect();
    let lexer: Vec<&Value> = requests.iter().filter(|r| system_of(r).contains(LEXER)).collect();
    assert_eq!((parser.len(), lexer.len()), (2, 1));
    assert!(system_of(parser[0]).contains("The team's goal: know the notes"));
    assert_eq!(user_texts(parser[0])[0].split("\n\n<session-note>").next().unwrap(), "Say what notes.txt says.");
    let member_tools: Vec<&str> =
        parser[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(member_tools.contains(&"team_finish") && !member_tools.contains(&"team_add"), "{member_tools:?}");

    // The reports woke the main agent, each under its mark, as messages of their own.
    let main: Vec<&Value> = requests.iter().filter(|r| !system_of(r).contains("You are \"")).collect();
    assert_eq!(main.len(), 4, "two steps, then one turn per report");
    let woke = user_texts(main[2]);
    assert_eq!(woke.last().unwrap(), "[Team report from lexer to lead:]\nnotes.txt has 3 words.");
    let woke = user_texts(main[3]);
    assert_eq!(woke.last().unwrap(), "[Team report from parser to lead:]\nnotes.txt:1 says: remember the milk.");
}

#[tokio::test]
async fn on_a_model_that_serves_two_at_once_a_third_agent_waits_for_a_slot() {
    let server = FakeServer::start(vec![
        Scripted::text("")
            .with_call("team_add", &add("a", "first", "Say one.", Some("count")))
            .with_call("team_add", &add("b", "second", "Say two.", None)),
        // Slow enough that the tree, told at most four times a second, shows b waiting.
        Scripted::text("Both added.").with_delay_ms(600),
        Scripted::text("Got the reports."),
        Scripted::text("Got the reports."),
    ])
    .await;
    server.set_models(json!([{"id": "small-coder", "object": "model", "capacity": {"parallel": 2}}]));
    server.route("You are \"a\" (s1)", vec![Scripted::text("one").with_delay_ms(300)]);
    server.route("You are \"b\" (s2)", vec![Scripted::text("two").with_delay_ms(300)]);
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--json", "count to two with helpers"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let results: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_end" && e["tool"] == "team_add")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    // The main agent's own turn holds one of the two slots: a starts, b waits for it.
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("Added a (first): it is working."), "{}", results[0]);
    assert!(
        results[1].contains(
            "Added b (second): it waits for a free slot — the model serves 2 requests at once and all are busy — and starts when one frees."
        ),
        "{}",
        results[1]
    );
    // The tree said so, and b ran once the main agent's turn gave its slot back.
    assert!(
        events.iter().any(|e| e["type"] == "team"
            && e["tree"]["agents"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x["name"] == "b" && x["state"] == "waiting"))),
        "a team event with b waiting"
    );
    let requests = server.chat_requests();
    assert!(requests.iter().any(|r| system_of(r).contains("You are \"b\" (s2)")), "b ran");
}

#[tokio::test]
async fn a_manager_does_not_do_the_work_itself() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("team_add", json!({"name": "w", "role": "writes", "task": "Wait.", "goal": "a file"})),
        Scripted::tool_call("write", json!({"path": "out.txt", "content": "mine"})),
        Scripted::tool_call("bash", json!({"command": "git status"})),
        Scripted::text("I gave it to w."),
        Scripted::text("w reported."),
        Scripted::text("Noted."),
    ])
    .await;
    // Before its final reply, w tells its parent how it goes (`report`).
    server.route(
        "You are \"w\" (s1)",
        vec![
            Scripted::tool_call("report", json!({"message": "halfway there"})).with_delay_ms(200),
            Scripted::text("waited"),
        ],
    );
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "write out.txt"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.project.join("out.txt").exists(), "the write was refused");
    let requests = server.chat_requests();
    let main: Vec<&Value> = requests.iter().filter(|r| !system_of(r).contains("You are \"")).collect();
    let tool_results = tool_results(main[3]);
    assert!(
        tool_results.iter().any(|t| t.contains("You lead a team: give this to a member (team_add or team_send).")),
        "{tool_results:?}"
    );
    // Reading for review stays the manager's.
    assert!(!tool_results.last().unwrap().contains("You lead a team"), "{tool_results:?}");
    let told: Vec<String> = main.iter().flat_map(|r| user_texts(r)).collect();
    assert!(told.iter().any(|t| t.contains("[Team message from w to lead:]\nhalfway there")), "{told:?}");
    assert!(told.iter().any(|t| t.contains("[Team report from w to lead:]\nwaited")), "{told:?}");
}

#[tokio::test]
async fn a_subagent_whose_context_fills_gets_one_last_turn_and_its_parent_is_told() {
    let server = FakeServer::start(vec![
        Scripted::tool_call(
            "team_add",
            json!({"name": "w", "role": "reads", "task": "Read notes.txt.", "goal": "read"}),
        ),
        Scripted::text("w is reading."),
        Scripted::text("w ran out of room; its findings will do."),
    ])
    .await;
    server.set_models(json!([{"id": "small-coder", "object": "model", "context": 100000}]));
    server.route(
        "You are \"w\" (s1)",
        vec![
            // The step that fills 90 % of the window: it pauses after it.
            Scripted::tool_call("read", json!({"path": "notes.txt"})).with_usage(90_000, 10, 0),
            // Its last turn: a finding saved, then its last words.
            Scripted::tool_call("team_findings", json!({"action": "write", "text": "notes.txt says milk"})),
            Scripted::text("Saved what I found."),
        ],
    );
    let env = Env::new();
    std::fs::write(env.project.join("notes.txt"), "milk\n").unwrap();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "read the notes with a helper"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    let w: Vec<&Value> = requests.iter().filter(|r| system_of(r).contains("You are \"w\" (s1)")).collect();
    assert_eq!(w.len(), 3, "the filling step, then its last turn's two");
    assert_eq!(
        user_texts(w[1]).last().unwrap(),
        "[Team notice to w: your context is full]\nSave what you found with team_findings, then tell your parent with team_send that you are gone and what is left undone. This is your last turn: at most 8 steps."
    );
    let main: Vec<&Value> = requests.iter().filter(|r| !system_of(r).contains("You are \"")).collect();
    assert_eq!(
        user_texts(main.last().unwrap()).last().unwrap(),
        "[Team report from w to lead:]\nw (s1) ran out of context and has ended. Its findings: team_findings with of w.\n\nSaved what I found."
    );
}

#[tokio::test]
async fn a_running_task_subagent_counts_toward_the_teams_size() {
    let server = FakeServer::start(vec![
        Scripted::tool_call("task", json!({"description": "look", "prompt": "List the project.", "background": true})),
        Scripted::tool_call("team_add", json!({"name": "w", "role": "writes", "task": "Write.", "goal": "g"})),
        Scripted::text("The team is full while the task runs."),
        Scripted::text("The task reported."),
    ])
    .await;
    server.route("You work for the main agent", vec![Scripted::text("One file.").with_delay_ms(400)]);
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--agents", "1-2", "look around"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    let main: Vec<&Value> = requests.iter().filter(|r| !system_of(r).contains("You work for the main agent")).collect();
    let results = tool_results(main[2]);
    assert!(
        results.last().unwrap().contains(
            "The team is full: it has as many agents as the person allows (2). Give the work to a member already on it (team_send), or stop one (team_stop) first."
        ),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_narrowed_subagent_asks_the_main_agent_and_runs_once_allowed() {
    let mut lead = vec![
        Scripted::tool_call(
            "team_add",
            json!({"name": "w", "role": "writes the note", "task": "Write out.txt.", "goal": "a note",
                   "mode": "manual", "request": ["write"]}),
        ),
        Scripted::text("w is at work."),
        // Slow to decide: the decision comes after the subagent's turn has ended, and wakes it
        // (one that came during the turn would be read at its next step instead).
        Scripted::tool_call("team_decide", json!({"id": "r1", "allow": true, "note": "only that file"}))
            .with_delay_ms(800),
    ];
    // However the request and the reports fall into its turns, the main agent answers briefly.
    lead.extend((0..4).map(|_| Scripted::text("Noted.")));
    let server = FakeServer::start(lead).await;
    server.route(
        "You are \"w\" (s1)",
        vec![
            Scripted::tool_call("write", json!({"path": "out.txt", "content": "hello\n"})),
            Scripted::tool_call("team_request", json!({"tool": "write", "pattern": "out.txt", "why": "the task"})),
            Scripted::text("Waiting for the main agent's decision."),
            // Woken by the decision: the same call again.
            Scripted::tool_call("write", json!({"path": "out.txt", "content": "hello\n"})),
            Scripted::text("Wrote out.txt."),
        ],
    );
    let env = Env::new();
    env.login(&server).await;
    let out = env.run(&["run", "--mode", "auto", "have a helper write out.txt"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.project.join("out.txt")).unwrap(), "hello\n", "written once allowed");
    let requests = server.chat_requests();
    let w: Vec<&Value> = requests.iter().filter(|r| system_of(r).contains("You are \"w\" (s1)")).collect();
    // Refused in its own mode, but askable: the main agent could allow it.
    assert!(
        tool_results(w[1]).last().unwrap().contains(
            "Your mode does not allow this, but the main agent may: ask for it with team_request (the tool, the pattern, why), then try again once it allows."
        ),
        "{:?}",
        tool_results(w[1])
    );
    assert!(tool_results(w[2]).last().unwrap().contains("Asked the main agent (r1)"));
    // Woken by the decision, under its mark, with the note.
    assert_eq!(
        user_texts(w[3]).last().unwrap(),
        "[Team decision on r1 from lead to w:]\nAllowed: write out.txt. Try it again now.\n\nonly that file"
    );
    let main: Vec<&Value> = requests.iter().filter(|r| !system_of(r).contains("You are \"")).collect();
    let asked = main
        .iter()
        .flat_map(|r| user_texts(r))
        .any(|t| t.contains("[Team request r1 from w to lead:]\nwrite out.txt — the task"));
    assert!(asked, "the request reached the main agent");
}

/// The requests of the agent whose system prompt holds `marker` so far.
fn requests_of(server: &FakeServer, marker: &str) -> Vec<Value> {
    server.chat_requests().into_iter().filter(|r| system_of(r).contains(marker)).collect()
}

#[tokio::test]
async fn a_team_lasts_across_a_resume_and_a_subagent_cut_short_goes_on() {
    let server = FakeServer::start(vec![
        Scripted::text("").with_call(
            "team_add",
            &add("parser", "reads the notes", "Say what notes.txt says.", Some("know the notes")),
        ),
        Scripted::text("Parser is at work."),
        // The second run: the main agent reads the tree it left, then waits for the report.
        Scripted::tool_call("team_read", json!({})),
        Scripted::text("Parser is back at work."),
        Scripted::text("The note says to remember the milk."),
    ])
    .await;
    server.route(
        PARSER,
        vec![
            Scripted::tool_call("read", json!({"path": "notes.txt"})),
            // Cut short: this reply never comes, the first process is interrupted meanwhile.
            Scripted::text("never said").stall_after(0),
            Scripted::text("notes.txt:1 says: remember the milk.").with_delay_ms(100),
        ],
    );
    let env = Env::new();
    env.login(&server).await;
    let mut first = env.cmd(&["run", "--agents", "1-3", "What does the note say?"]).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while requests_of(&server, PARSER).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "parser never reached its second step");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let pid = nix::unistd::Pid::from_raw(first.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    // Its answer was given: it exits once the interrupt stops the wait for its subagent.
    tokio::time::timeout(std::time::Duration::from_secs(20), first.wait()).await.unwrap().unwrap();

    let out = env.run(&["run", "--continue", "Is it done?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).trim_end().ends_with("The note says to remember the milk."), "{}", stdout(&out));

    // The subagent went on in its own conversation, as it was, told why it was woken.
    let parser = requests_of(&server, PARSER);
    assert_eq!(parser.len(), 3);
    assert_eq!(system_of(&parser[2]), system_of(&parser[0]), "its prefix as it was");
    assert!(tool_results(&parser[2])[0].contains("remember the milk"), "its context intact");
    assert_eq!(
        user_texts(&parser[2]).last().unwrap(),
        "The session was closed while you worked, and is open again. Go on with your part from where you stopped."
    );
    // The main agent found its tree as it left it, and the report woke it.
    let main: Vec<Value> =
        server.chat_requests().into_iter().filter(|r| !system_of(r).contains("You are \"")).collect();
    assert_eq!(main.len(), 5, "two steps, two steps after the resume, one turn for the report");
    let read = tool_results(&main[3]).last().unwrap().clone();
    assert!(read.contains("parser") && read.contains("s1"), "{read}");
    assert_eq!(
        user_texts(&main[4]).last().unwrap(),
        "[Team report from parser to lead:]\nnotes.txt:1 says: remember the milk."
    );
}

#[tokio::test]
async fn a_claude_code_agent_of_a_trusted_project_joins_the_team_with_its_instructions_and_tools() {
    const CHECKER: &str = "You are \"checker\" (s1)";
    let mut args: Value =
        serde_json::from_str(&add("checker", "checks the notes", "Check notes.txt.", Some("g"))).unwrap();
    args["agent"] = "note-checker".into();
    let server = FakeServer::start(vec![
        // The first run, in the project not yet trusted.
        Scripted::text("They say to remember the milk."),
        Scripted::text("").with_call("team_add", &args.to_string()),
        Scripted::text("checker is on it."),
        Scripted::text("checker reported."),
    ])
    .await;
    server.route(CHECKER, vec![Scripted::text("The notes say to remember the milk.")]);
    let env = Env::new();
    env.login(&server).await;
    let agents = env.project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("note-checker.md"),
        "---\nname: note-checker\ndescription: Checks notes for mistakes.\ntools: Read, Grep\nmodel: sonnet\n---\nQuote each line you judge.\n",
    )
    .unwrap();

    // Not read while the project is not trusted: the main agent is not offered it.
    let out = env.run(&["run", "--mode", "auto", "what do the notes say?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = &server.chat_requests()[0];
    assert!(!first.to_string().contains("note-checker"), "an untrusted project's agents are not read");

    assert!(env.run(&["trust"]).await.status.success());
    let out = env.run(&["run", "--mode", "auto", "what do the notes say?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.chat_requests();
    // The report reaches the main agent — in the request after its own answer, or folded into
    // the one before it when the checker is quicker than that answer (either order is right).
    let report = "The notes say to remember the milk.";
    assert!(
        requests.iter().any(|r| !system_of(r).contains(CHECKER) && r.to_string().contains(report)),
        "the main agent had the checker's report: {}",
        stdout(&out)
    );
    let member = requests.iter().find(|r| system_of(r).contains(CHECKER)).expect("checker worked");
    assert!(system_of(member).contains("Quote each line you judge."), "{}", system_of(member));
    let tools: Vec<&str> =
        member["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"read") && tools.contains(&"grep"), "{tools:?}");
    assert!(!tools.contains(&"bash") && !tools.contains(&"write") && !tools.contains(&"edit"), "{tools:?}");
}
