//! How a person reads a call: its title, and what came of it in one line — said by the tool's
//! handler, which knows the shape of its own results, so no client reads the model's text to
//! draw a call. The same live, and when a stored session is drawn again.

use lembas_progress::short_what;
use lembas_protocol::ToolOutcome;
use serde_json::Value;

use super::Handler;

/// A call's title, from its arguments.
pub(crate) type Title = fn(&Value) -> String;

/// What came of a call, from its result (`failed`: it was an error); `None` when the result's
/// first line says it.
pub(crate) type Summary = fn(&str, bool) -> Option<String>;

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The command, path, pattern or id a call is about, cut to a line.
pub(super) fn plain_title(args: &Value) -> String {
    ["command", "path", "pattern", "id"].iter().find_map(|k| text(args, k)).map(short_what).unwrap_or_default()
}

/// An MCP tool's arguments are its own: a path or the like when there is one, else the
/// arguments as given, cut to a line.
pub(super) fn arguments_title(args: &Value) -> String {
    match plain_title(args) {
        title if !title.is_empty() => title,
        _ if args.as_object().is_some_and(|a| !a.is_empty()) => short_what(&args.to_string()),
        _ => String::new(),
    }
}

/// A command as it runs, never cut: its first line, and a mark when more follow.
pub(super) fn command_title(args: &Value) -> String {
    match text(args, "command") {
        Some(command) if command.lines().count() > 1 => format!("{} …", command.lines().next().unwrap_or("")),
        Some(command) => command.to_owned(),
        None => String::new(),
    }
}

/// A search is about its pattern, and where it looks when that is not the whole project.
pub(super) fn search_title(args: &Value) -> String {
    let Some(pattern) = text(args, "pattern") else { return plain_title(args) };
    match text(args, "path").filter(|p| !p.is_empty() && *p != ".") {
        Some(path) => format!("\"{pattern}\" in {path}"),
        None => format!("\"{pattern}\""),
    }
}

pub(super) fn pattern_title(args: &Value) -> String {
    text(args, "pattern").map_or_else(|| plain_title(args), str::to_owned)
}

/// The question asked, not the tool's name.
pub(super) fn question_title(args: &Value) -> String {
    text(args, "question").map(str::to_owned).unwrap_or_default()
}

pub(super) fn task_title(args: &Value) -> String {
    short_what(text(args, "description").unwrap_or_default())
}

/// A team tool is about the agent it names.
pub(super) fn agent_title(args: &Value) -> String {
    text(args, "name").map(short_what).unwrap_or_default()
}

/// A message is about whom it goes to.
pub(super) fn recipients_title(args: &Value) -> String {
    let to = lembas_team::names_of(args.get("to"));
    if to.is_empty() { String::new() } else { short_what(&format!("to {}", to.join(", "))) }
}

/// A fetch is about its URL, without the scheme a person does not read.
pub(super) fn url_title(args: &Value) -> String {
    let url = text(args, "url").unwrap_or_default();
    short_what(url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).unwrap_or(url))
}

/// A note's call is about the note (and what is done to it); a listing about the notes.
pub(super) fn note_title(args: &Value) -> String {
    match (text(args, "action"), text(args, "name")) {
        (Some(action), Some(name)) => short_what(&format!("{action} {name}")),
        (None, Some(name)) => short_what(name),
        _ => "notes".to_owned(),
    }
}

/// A search is about its words.
pub(super) fn query_title(args: &Value) -> String {
    text(args, "query").map(|q| short_what(&format!("\"{q}\""))).unwrap_or_default()
}

/// A page fetched: its title, else what it was and how much.
pub(super) fn fetch_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    let mut lines = said_lines(text).into_iter();
    let first = lines.next()?;
    if let Some(title) = first.strip_prefix("# ") {
        return Some(short_what(title));
    }
    let (_, what) = first.strip_prefix("Source: ")?.split_once(" (")?;
    Some(format!("Read {}", what.trim_end_matches(')')))
}

/// A search's results, counted.
pub(super) fn search_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    let results = said_lines(text)
        .iter()
        .filter(|l| l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        .count();
    Some(count(results, "result", ""))
}

pub(super) fn patch_title(_args: &Value) -> String {
    "patch".to_owned()
}

/// A result without its id bracket line.
pub(crate) fn without_bracket(text: &str) -> &str {
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with('[') && first.ends_with(']') => rest,
        _ if text.starts_with('[') && text.ends_with(']') && !text.contains('\n') => "",
        _ => text,
    }
}

/// What came of a call of `handler` whose result was `text`.
pub(crate) fn outcome(handler: &Handler, text: &str, failed: bool) -> ToolOutcome {
    let body = without_bracket(text);
    let summary = unchanged_words(body).or_else(|| (handler.summary)(text, failed)).unwrap_or_else(|| first_line(text));
    let command = handler.runs_a_command();
    let went_wrong = failed || (command && command_ended_badly(&summary));
    let changes = lembas_protocol::tools::changes_files(handler.name);
    ToolOutcome {
        went_wrong,
        show_body: !failed && (command || changes),
        body: if command { without_ending(body) } else { body.to_owned() },
        summary,
        whole: false,
    }
}

/// The ledger's words for a read or a search that changed nothing since the last, in a
/// person's.
fn unchanged_words(body: &str) -> Option<String> {
    // A stub shares its bracket's line (`[#0002 a.rs lines 1-3 of 3 sha …] Unchanged since …`).
    let said = body.split_once("] ").map_or(body, |(bracket, rest)| if bracket.starts_with('[') { rest } else { body });
    if said.starts_with("Unchanged since ") {
        return Some("Unchanged since it was read".into());
    }
    if said.starts_with("Same result as ") {
        return Some("The same as the last time".into());
    }
    None
}

pub(super) fn first_line_says(_text: &str, _failed: bool) -> Option<String> {
    None
}

/// The first line that says something, without its id bracket, cut to a row.
fn first_line(text: &str) -> String {
    ToolOutcome::summary_line(without_bracket(text))
}

/// "N things" with the plural people write.
fn count(n: usize, what: &str, lead: &str) -> String {
    let plural = match what {
        "entry" => "entries".to_owned(),
        "match" => "matches".to_owned(),
        other => format!("{other}s"),
    };
    format!("{lead}{n} {}", if n == 1 { what.to_owned() } else { plural })
}

fn said_lines(text: &str) -> Vec<&str> {
    without_bracket(text).lines().filter(|l| !l.trim().is_empty()).collect()
}

/// The person's answer, in their words.
pub(super) fn answer_summary(text: &str, _failed: bool) -> Option<String> {
    let said = without_bracket(text);
    Some(match said.strip_prefix("The person answered: ") {
        Some(words) => format!("You answered: {}", first_line(words)),
        None if said.starts_with("Nobody is here") => "Nobody was here to answer".into(),
        None => "Not answered".into(),
    })
}

/// What became of a plan put to the person.
pub(super) fn plan_verdict_summary(text: &str, _failed: bool) -> Option<String> {
    let said = without_bracket(text);
    let mode = said.split_once("the permission mode is now ").and_then(|(_, r)| r.split('.').next());
    Some(match mode {
        Some(mode) => format!("Plan approved: now in {mode} mode"),
        None if said.starts_with("Nobody is here") => "The plan waits for approval".into(),
        None => "Plan not approved yet".into(),
    })
}

/// `read`'s bracket says which lines of how many: "Read 120 lines", or "Read lines 1-50 of 300".
pub(super) fn read_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    let bracket = text.lines().next()?.strip_prefix('[')?.strip_suffix(']')?;
    if bracket.contains(" empty sha ") {
        return Some("Read an empty file".into());
    }
    let (_, after) = bracket.split_once(" lines ")?;
    let (range, rest) = after.split_once(" of ")?;
    let total = rest.split_whitespace().next()?;
    let (from, to) = range.split_once('-')?;
    Some(if from == "1" && to == total {
        format!("Read {total} line{}", if total == "1" { "" } else { "s" })
    } else {
        format!("Read lines {from}-{to} of {total}")
    })
}

/// A change's size in lines added and removed, or the file it created.
pub(super) fn change_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    if let Some(created) = text.lines().next().and_then(|l| l.split_once("] ")).map(|(_, rest)| rest.to_owned())
        && created.starts_with("Created")
    {
        return Some(created);
    }
    let body = without_bracket(text);
    let added = body.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
    let removed = body.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count();
    Some(format!("{} added, {} removed", count(added, "line", ""), removed))
}

pub(super) fn glob_summary(text: &str, failed: bool) -> Option<String> {
    let lines = said_lines(text);
    if failed || lines.first().is_some_and(|l| l.starts_with("No ")) {
        return None;
    }
    Some(count(lines.iter().filter(|l| !l.starts_with('(')).count(), "file", "Found "))
}

pub(super) fn list_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    Some(count(said_lines(text).iter().filter(|l| !l.starts_with('(')).count(), "entry", ""))
}

/// "9 matches in 4 files" (a match is a `path:line:` row).
pub(super) fn grep_summary(text: &str, failed: bool) -> Option<String> {
    let lines = said_lines(text);
    if failed || lines.first().is_some_and(|l| l.starts_with("No matches")) {
        return None;
    }
    let mut files: Vec<&str> = Vec::new();
    let mut matches = 0;
    for line in &lines {
        let Some((path, rest)) = line.split_once(':') else { continue };
        let is_match =
            rest.split_once(':').is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if is_match {
            matches += 1;
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    if matches == 0 {
        // Files only (`files_only`): each row a file.
        return Some(count(lines.len(), "file", ""));
    }
    Some(format!("{} in {}", count(matches, "match", ""), count(files.len(), "file", "")))
}

/// How a command ended: its exit code when not 0, else how much it printed.
pub(super) fn command_summary(text: &str, failed: bool) -> Option<String> {
    if failed {
        return None;
    }
    let lines = said_lines(text);
    if let Some(last) = lines.last() {
        if let Some(code) = last.strip_prefix("(exit code ").and_then(|r| r.strip_suffix(')')) {
            return Some(format!("exit {code}"));
        }
        if last.starts_with("(stopped") || last.starts_with("(ended by") {
            return Some(last.trim_matches(['(', ')']).to_owned());
        }
    }
    Some(match lines.len() {
        0 => "done, no output".into(),
        1 if lines[0].trim() == "(no output)" => "done, no output".into(),
        1 => "done, 1 line of output".into(),
        n => format!("done, {n} lines of output"),
    })
}

/// Whether a command's summary says it ended badly although it ran.
fn command_ended_badly(summary: &str) -> bool {
    summary.starts_with("exit ") || summary.starts_with("stopped") || summary.starts_with("ended by")
}

/// A command's output without the line saying how it ended (`(exit code 4)`, `(no output)`),
/// which the summary already says.
fn without_ending(body: &str) -> String {
    let mut lines: Vec<&str> = body.lines().collect();
    if lines.last().is_some_and(|l| (l.starts_with("(exit code ") || *l == "(no output)") && l.ends_with(')')) {
        lines.pop();
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::handler;
    use super::*;

    fn summary(tool: &str, text: &str, failed: bool) -> String {
        outcome(handler(tool), text, failed).summary
    }

    fn title(tool: &str, args: &Value) -> String {
        (handler(tool).title)(args)
    }

    #[test]
    fn what_the_model_is_told_is_said_to_the_person_in_their_words() {
        let stub =
            "[#0002 notes.txt lines 1-3 of 3 sha 4fdbc441] Unchanged since #0001, which already shows lines 1-3.";
        assert_eq!(summary("read", stub, false), "Unchanged since it was read");
        assert_eq!(summary("grep", "[#0004] Same result as #0003.", false), "The same as the last time");
        assert_eq!(summary("ask_user", "[#0005]\nThe person answered: postgres", false), "You answered: postgres");
        let approved = "[#0006]\nThe person approved the plan. Plan mode has ended: the permission mode is now edit. Carry out the plan, keeping it current with plan_update.";
        assert_eq!(summary("plan_submit", approved, false), "Plan approved: now in edit mode");
        assert_eq!(title("ask_user", &json!({"question": "Which database?"})), "Which database?");
    }

    #[test]
    fn each_tool_says_what_came_of_it() {
        assert_eq!(summary("read", "[r1 a.rs lines 1-120 of 120 sha 1234]\n1: x", false), "Read 120 lines");
        assert_eq!(summary("read", "[r1 a.rs lines 1-50 of 300 sha 1234]\n1: x", false), "Read lines 1-50 of 300");
        assert_eq!(summary("glob", "[r2]\nsrc/a.rs\nsrc/b.rs", false), "Found 2 files");
        assert_eq!(summary("list", "[r2]\na/\nb.txt\nc.txt", false), "3 entries");
        assert_eq!(
            summary("grep", "[r3]\nsrc/a.rs:3: TODO one\nsrc/a.rs:9: TODO two\nsrc/b.rs:1: TODO", false),
            "3 matches in 2 files"
        );
        assert_eq!(summary("bash", "[r4]\nok", false), "done, 1 line of output");
        assert_eq!(summary("bash", "[r4]\n(no output)", false), "done, no output");
        assert_eq!(
            summary("edit", "[r5 a.rs sha 99]\n@@ -1 +1 @@\n-old\n+new\n+more", false),
            "2 lines added, 1 removed"
        );
        assert_eq!(summary("write", "[r6 n.rs sha 99] Created, 4 lines.", false), "Created, 4 lines.");
        assert_eq!(summary("edit", "`old_string` was not found in a.rs.", true), "`old_string` was not found in a.rs.");
        assert_eq!(summary("mcp__peer__add", "42", false), "42");
    }

    #[test]
    fn a_command_that_ended_badly_went_wrong_and_shows_its_output_without_the_ending() {
        let ended = outcome(handler("bash"), "[r4]\nbuilding\nfailed\n(exit code 1)", false);
        assert_eq!(ended.summary, "exit 1");
        assert!(ended.went_wrong && ended.show_body);
        assert_eq!(ended.body, "building\nfailed");
        let read = outcome(handler("read"), "[r1 a.rs lines 1-1 of 1 sha 1]\n1: x", false);
        assert!(!read.went_wrong && !read.show_body);
        assert_eq!(read.body, "1: x");
        let edit = outcome(handler("edit"), "[r5 a.rs sha 99]\n@@ -1 +1 @@\n-old\n+new", false);
        assert!(edit.show_body);
        assert!(outcome(handler("edit"), "`old_string` was not found", true).went_wrong);
    }

    #[test]
    fn a_calls_title_is_what_it_is_about() {
        assert_eq!(title("bash", &json!({"command": "cargo test\nmore"})), "cargo test …");
        assert_eq!(title("bash", &json!({"command": "cargo test"})), "cargo test");
        assert_eq!(title("mcp__peer__add", &json!({"a": 2, "b": 40})), r#"{"a":2,"b":40}"#);
        assert_eq!(title("mcp__fs__read_text_file", &json!({"path": "a.txt"})), "a.txt");
        assert_eq!(title("mcp__peer__die", &json!({})), "");
        assert_eq!(title("grep", &json!({"pattern": "TODO", "path": "src"})), "\"TODO\" in src");
        assert_eq!(title("grep", &json!({"pattern": "TODO"})), "\"TODO\"");
        assert_eq!(title("read", &json!({"path": "a.rs"})), "a.rs");
        assert_eq!(title("apply_patch", &json!({"patch": "*** Begin Patch"})), "patch");
        assert_eq!(title("task", &json!({"description": "Find the tests"})), "Find the tests");
        assert_eq!(title("team_add", &json!({"name": "scout", "task": "Look."})), "scout");
        assert_eq!(title("team_send", &json!({"to": ["scout", "lead"], "message": "hi"})), "to scout, lead");
    }
}
