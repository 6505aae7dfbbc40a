//! What a tool block says: a title that names what the call was about, and a one-line summary
//! of what came of it, read from the result the model got.

use serde_json::Value;

/// A call's title: the engine's, except where it names the wrong thing for a person (a search
/// is about its pattern, not its folder).
pub fn title(tool: &str, title: &str, args: &Value) -> String {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    match (tool, text("pattern")) {
        ("grep", Some(pattern)) => match text("path").filter(|p| !p.is_empty() && *p != ".") {
            Some(path) => format!("\"{pattern}\" in {path}"),
            None => format!("\"{pattern}\""),
        },
        ("glob", Some(pattern)) => pattern.to_owned(),
        // A command is shown as it ran (wrapped, never cut); one of several lines says so.
        // The question asked, not the tool's name.
        ("ask_user", _) => text("question").map_or_else(|| title.to_owned(), str::to_owned),
        ("bash", _) => match text("command") {
            Some(command) if command.lines().count() > 1 => format!("{} …", command.lines().next().unwrap_or("")),
            Some(command) => command.to_owned(),
            None => title.to_owned(),
        },
        _ => title.to_owned(),
    }
}

/// A result without its id bracket line.
pub fn body(text: &str) -> &str {
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with('[') && first.ends_with(']') => rest,
        _ if text.starts_with('[') && text.ends_with(']') && !text.contains('\n') => "",
        _ => text,
    }
}

/// What came of a call, in one line.
pub fn summary(tool: &str, text: &str, failed: bool) -> String {
    let first = first_line(text);
    // What the model is told in its own words, said to the person in theirs.
    if let Some(said) = person_words(tool, body(text)) {
        return said;
    }
    if failed {
        return first;
    }
    let body = body(text);
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    match tool {
        "read" => read_summary(text).unwrap_or(first),
        "write" | "edit" | "multiedit" | "apply_patch" => change_summary(text),
        "glob" if lines.first().is_some_and(|l| l.starts_with("No ")) => first,
        "glob" => count(lines.iter().filter(|l| !l.starts_with('(')).count(), "file", "Found "),
        "list" => count(lines.iter().filter(|l| !l.starts_with('(')).count(), "entry", ""),
        "grep" => grep_summary(&lines).unwrap_or(first),
        "bash" => bash_summary(&lines),
        _ => first,
    }
}

/// The person's words for a result written for the model: an answer they gave, a plan they
/// approved, a read or a search that changed nothing since the last.
fn person_words(tool: &str, body: &str) -> Option<String> {
    // A stub shares its bracket's line (`[#0002 a.rs lines 1-3 of 3 sha …] Unchanged since …`).
    let said = body.split_once("] ").map_or(body, |(bracket, rest)| if bracket.starts_with('[') { rest } else { body });
    if said.starts_with("Unchanged since ") {
        return Some("Unchanged since it was read".into());
    }
    if said.starts_with("Same result as ") {
        return Some("The same as the last time".into());
    }
    match tool {
        "ask_user" => Some(match said.strip_prefix("The person answered: ") {
            Some(words) => format!("You answered: {}", first_line(words)),
            None if said.starts_with("Nobody is here") => "Nobody was here to answer".into(),
            None => "Not answered".into(),
        }),
        "plan_submit" => {
            let mode = said.split_once("the permission mode is now ").and_then(|(_, r)| r.split('.').next());
            Some(match mode {
                Some(mode) => format!("Plan approved: now in {mode} mode"),
                None if said.starts_with("Nobody is here") => "The plan waits for approval".into(),
                None => "Plan not approved yet".into(),
            })
        }
        _ => None,
    }
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

/// The first line that says something, without its id bracket, cut to a row.
fn first_line(text: &str) -> String {
    let line = body(text).lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        s.push('…');
    }
    s
}

/// `read`'s bracket says which lines of how many: "Read 120 lines", or "Read lines 1-50 of 300".
fn read_summary(text: &str) -> Option<String> {
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

/// A change's size in lines added and removed.
fn change_summary(text: &str) -> String {
    let body = body(text);
    if let Some(created) = text.lines().next().and_then(|l| l.split_once("] ")).map(|(_, rest)| rest.to_owned())
        && created.starts_with("Created")
    {
        return created;
    }
    let added = body.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
    let removed = body.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count();
    format!("{} added, {} removed", count(added, "line", ""), removed)
}

/// "9 matches in 4 files" (a match is a `path:line:` row).
fn grep_summary(lines: &[&str]) -> Option<String> {
    if lines.first().is_some_and(|l| l.starts_with("No matches")) {
        return None;
    }
    let mut files: Vec<&str> = Vec::new();
    let mut matches = 0;
    for line in lines {
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
fn bash_summary(lines: &[&str]) -> String {
    if let Some(last) = lines.last() {
        if let Some(code) = last.strip_prefix("(exit code ").and_then(|r| r.strip_suffix(')')) {
            return format!("exit {code}");
        }
        if last.starts_with("(stopped") || last.starts_with("(ended by") {
            return last.trim_matches(['(', ')']).to_owned();
        }
    }
    match lines.len() {
        0 => "done, no output".into(),
        1 if lines[0].trim() == "(no output)" => "done, no output".into(),
        1 => "done, 1 line of output".into(),
        n => format!("done, {n} lines of output"),
    }
}

/// Whether a summary says the call went wrong although it ran (a command that exited non-zero).
pub fn summary_fails(tool: &str, summary: &str) -> bool {
    tool == "bash"
        && (summary.starts_with("exit ") || summary.starts_with("stopped") || summary.starts_with("ended by"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_the_model_is_told_is_said_to_the_person_in_their_words() {
        let stub =
            "[#0002 notes.txt lines 1-3 of 3 sha 4fdbc441] Unchanged since #0001, which already shows lines 1-3.";
        assert_eq!(summary("read", stub, false), "Unchanged since it was read");
        assert_eq!(summary("grep", "[#0004] Same result as #0003.", false), "The same as the last time");
        assert_eq!(summary("ask_user", "[#0005]\nThe person answered: postgres", false), "You answered: postgres");
        let approved = "[#0006]\nThe person approved the plan. Plan mode has ended: the permission mode is now edit. Carry out the plan, keeping it current with plan_update.";
        assert_eq!(summary("plan_submit", approved, false), "Plan approved: now in edit mode");
        assert_eq!(title("ask_user", "", &serde_json::json!({"question": "Which database?"})), "Which database?");
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
        assert_eq!(summary("bash", "[r4]\nbuilding\nfailed\n(exit code 1)", false), "exit 1");
        assert_eq!(summary("bash", "[r4]\nok", false), "done, 1 line of output");
        assert_eq!(summary("bash", "[r4]\n(no output)", false), "done, no output");
        assert_eq!(
            summary("edit", "[r5 a.rs sha 99]\n@@ -1 +1 @@\n-old\n+new\n+more", false),
            "2 lines added, 1 removed"
        );
        assert_eq!(summary("write", "[r6 n.rs sha 99] Created, 4 lines.", false), "Created, 4 lines.");
        assert_eq!(summary("edit", "`old_string` was not found in a.rs.", true), "`old_string` was not found in a.rs.");
    }

    #[test]
    fn a_search_is_titled_by_its_pattern() {
        assert_eq!(title("grep", "src", &json!({"pattern": "TODO", "path": "src"})), "\"TODO\" in src");
        assert_eq!(title("grep", "TODO", &json!({"pattern": "TODO"})), "\"TODO\"");
        assert_eq!(title("read", "a.rs", &json!({"path": "a.rs"})), "a.rs");
    }
}
