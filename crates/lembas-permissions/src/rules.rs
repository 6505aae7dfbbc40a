//! Permission rules: a tool key → allow, ask or deny, or a map of patterns. Sources stack —
//! the defaults, then the global configuration, then a trusted project's, then what the person
//! allowed in this session — and the most specific rule wins.

use std::path::Path;

use globset::GlobBuilder;
use serde_json::Value;

/// What a rule says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn parse(word: &str) -> Option<Action> {
        match word {
            "allow" => Some(Action::Allow),
            "ask" => Some(Action::Ask),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// Where a rule came from; on equal specificity the later source wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Defaults,
    Global,
    Project,
    Session,
}

#[derive(Debug, Clone)]
struct Rule {
    tool: String,
    pattern: Option<String>,
    action: Action,
    source: Source,
    /// The pattern, read as a command pattern.
    command: Option<CommandPattern>,
    /// The pattern, read as a path glob: compiled the first time a path is judged by it (each
    /// judgement compiling it again cost a call ~0.1 ms; all of them at start, the start-up).
    path: std::sync::OnceLock<Option<globset::GlobMatcher>>,
    /// The pattern, read as a URL pattern (`web_fetch`): compiled the first time a URL is
    /// judged by it.
    url: std::sync::OnceLock<Option<crate::url_pattern::UrlPattern>>,
}

impl Rule {
    /// Whether this rule's pattern, read as a path glob, matches the path judged: `~/…` within
    /// the home folder, `/…` the whole path, a name alone the file's name, else the path in the
    /// project. Its glob is its own pattern's, compiled once.
    fn matches_path(&self, absolute: &Path, relative: Option<&Path>, home: Option<&Path>) -> bool {
        let Some(pattern) = self.pattern.as_deref() else { return false };
        let in_home = pattern.strip_prefix("~/");
        let glob = self.path.get_or_init(|| {
            let text = in_home.unwrap_or(pattern);
            GlobBuilder::new(text).literal_separator(false).build().ok().map(|g| g.compile_matcher())
        });
        let Some(g) = glob else { return false };
        if in_home.is_some() {
            return home.and_then(|h| absolute.strip_prefix(h).ok()).is_some_and(|rel| g.is_match(rel));
        }
        if pattern.starts_with('/') {
            return g.is_match(absolute);
        }
        if !pattern.contains('/') {
            return absolute.file_name().is_some_and(|n| g.is_match(n));
        }
        relative.is_some_and(|r| g.is_match(r))
    }
}

/// A command pattern: `*` stands for any run of characters on one line, and a pattern that ends
/// in ` *` also matches the command without that tail (`git status *` covers `git status`).
/// Matched directly rather than as a regular expression: compiling the defaults' hundred
/// patterns into automata took most of lembas' start-up time.
#[derive(Debug, Clone)]
struct CommandPattern {
    /// The pattern cut at its stars.
    parts: Vec<String>,
    /// The parts without the optional ` *` tail, when it has one.
    bare: Option<Vec<String>>,
}

impl CommandPattern {
    fn new(pattern: &str) -> CommandPattern {
        let cut = |p: &str| p.split('*').map(str::to_owned).collect::<Vec<_>>();
        CommandPattern { parts: cut(pattern), bare: pattern.strip_suffix(" *").map(cut) }
    }

    fn is_match(&self, line: &str) -> bool {
        wildcard(&self.parts, line) || self.bare.as_ref().is_some_and(|bare| wildcard(bare, line))
    }
}

/// Whether `text` is `parts` joined by runs of characters that hold no line break.
/// Whether every simple command of `line`, plainly spelled, matches one of `patterns` (bash
/// rule patterns): what a list such as `[sandbox] credentials` allows a line.
pub fn every_part_matches(line: &str, patterns: &[String]) -> bool {
    let patterns: Vec<CommandPattern> = patterns.iter().map(|p| CommandPattern::new(p)).collect();
    let parts = crate::command::split(line);
    !parts.is_empty() && parts.iter().all(|part| patterns.iter().any(|p| p.is_match(&part.line())))
}

fn wildcard(parts: &[String], text: &str) -> bool {
    let [first, middle @ .., last] = parts else {
        return parts.first().is_some_and(|only| only == text);
    };
    if text.len() < first.len() + last.len() || !text.starts_with(first.as_str()) || !text.ends_with(last.as_str()) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in middle {
        // The leftmost place is the right one: a later one would only make the star's run
        // longer, and every later part has at least as much room after it.
        let Some(at) = rest.find(part.as_str()) else { return false };
        if rest[..at].contains('\n') {
            return false;
        }
        rest = &rest[at + part.len()..];
    }
    !rest.contains('\n')
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The tool as a whole.
    Tool,
    /// A command line, plainly spelled.
    Command(&'a str),
    /// A path: absolute, and relative to the project root when inside it.
    Path { absolute: &'a Path, relative: Option<&'a Path>, home: Option<&'a Path> },
    /// A URL the web tools fetch, matched part by part (`url_pattern`): a pattern with `://`
    /// names a scheme, host, port and path; any other a host (`docs.rs`, `*.github.com`), with
    /// its port when the pattern names one (`localhost:8080`).
    Url(&'a crate::network::Target),
}

/// The rules in force.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

/// The key a tool's rules are written under (`plan` for the plan tools and the former `todo`).
pub fn rule_key(tool: &str) -> &str {
    match tool {
        "plan_write" | "plan_update" | "todo" => "plan",
        other => other,
    }
}

/// How specific a pattern is: its characters that are not `*`.
fn specificity(pattern: Option<&str>) -> usize {
    pattern.map_or(0, |p| p.chars().filter(|c| *c != '*').count())
}

impl RuleSet {
    /// The rules every session starts from (`permission/defaults.json`).
    pub fn defaults() -> RuleSet {
        static DEFAULTS: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                let mut set = RuleSet::default();
                let text =
                    lembas_spec::file("permission/defaults.json").expect("spec/permission/defaults.json is embedded");
                let json: Value = serde_json::from_str(text).expect("defaults.json parses");
                set.add_json(&json, Source::Defaults).expect("defaults.json holds rules");
                set
            })
            .clone()
    }

    /// Adds rules written as JSON (`{ tool: action | { pattern: action } }`); keys starting
    /// with `about` are notes.
    pub fn add_json(&mut self, json: &Value, source: Source) -> Result<(), String> {
        let map = json.as_object().ok_or("rules must be an object of tools")?;
        for (tool, value) in map {
            if tool.starts_with("about") {
                continue;
            }
            match value {
                Value::String(word) => {
                    let action =
                        Action::parse(word).ok_or_else(|| format!("{tool}: {word:?} is not allow, ask or deny"))?;
                    self.add(tool, None, action, source);
                }
                Value::Object(patterns) => {
                    for (pattern, word) in patterns {
                        let word = word.as_str().unwrap_or_default();
                        let action = Action::parse(word)
                            .ok_or_else(|| format!("{tool} {pattern}: {word:?} is not allow, ask or deny"))?;
                        self.add(tool, Some(pattern), action, source);
                    }
                }
                _ => return Err(format!("{tool}: a rule is allow, ask, deny or a map of patterns")),
            }
        }
        Ok(())
    }

    pub fn add(&mut self, tool: &str, pattern: Option<&str>, action: Action, source: Source) {
        let command = pattern.map(CommandPattern::new);
        self.rules.push(Rule {
            tool: rule_key(tool).to_owned(),
            pattern: pattern.map(str::to_owned),
            action,
            source,
            command,
            path: std::sync::OnceLock::new(),
            url: std::sync::OnceLock::new(),
        });
    }

    /// Whether this rule's pattern, read as a URL pattern, covers `target`; with `named`, only a
    /// pattern that names hosts counts (`*` and `https://*/*` are the whole tool's rule).
    fn url_matches(rule: &Rule, target: &crate::network::Target, named: bool) -> bool {
        let pattern = rule.url.get_or_init(|| rule.pattern.as_deref().and_then(crate::url_pattern::UrlPattern::parse));
        pattern.as_ref().is_some_and(|p| (!named || p.names_a_host()) && p.matches(&target.url))
    }

    /// The action of the most specific rule for `tool` matching `subject`, if any rule does.
    pub fn matching(&self, tool: &str, subject: Subject<'_>) -> Option<Action> {
        self.most_specific(tool, subject, false)
    }

    /// The action of the most specific rule for `tool` that names what `subject` is (a
    /// pattern, not the tool as a whole), if any does.
    pub fn matching_by_name(&self, tool: &str, subject: Subject<'_>) -> Option<Action> {
        self.most_specific(tool, subject, true)
    }

    fn most_specific(&self, tool: &str, subject: Subject<'_>, named: bool) -> Option<Action> {
        let key = rule_key(tool);
        self.rules
            .iter()
            .filter(|r| r.tool == key)
            .filter(|r| match (&r.pattern, subject) {
                (None, _) => !named,
                (Some(_), Subject::Tool) => false,
                (Some(_), Subject::Command(line)) => r.command.as_ref().is_some_and(|p| p.is_match(line)),
                (Some(_), Subject::Path { absolute, relative, home }) => r.matches_path(absolute, relative, home),
                (Some(_), Subject::Url(target)) => Self::url_matches(r, target, named),
            })
            .max_by_key(|r| (specificity(r.pattern.as_deref()), r.pattern.is_some(), r.source, r.action))
            .map(|r| r.action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_patterns_match_as_their_stars_say() {
        let p = |pattern: &str, line: &str| CommandPattern::new(pattern).is_match(line);
        assert!(p("git status *", "git status") && p("git status *", "git status -s"));
        assert!(!p("git status *", "git statusx") && !p("git status *", "git stat"));
        assert!(p("ls", "ls") && !p("ls", "ls -l"));
        assert!(p("cat *.env", "cat prod.env") && !p("cat *.env", "cat prod.env.bak"));
        assert!(p("npm run * --watch", "npm run dev --watch") && !p("npm run * --watch", "npm run dev"));
        assert!(p("a*b*c", "abc") && p("a*b*c", "aXbYbZc") && !p("a*b*c", "acb"));
        assert!(p("*", "anything at all") && p("*", ""));
        // A star stays on one line, as the regular expressions before it did.
        assert!(!p("cat *", "cat a\nrm -rf /") && !p("echo * done", "echo a\nb done"));
        assert!(!p("ab*ba", "aba"), "the two ends may not overlap");
    }

    #[test]
    fn every_part_of_a_line_must_match() {
        let patterns = ["git push *".to_owned(), "ssh *".to_owned()];
        assert!(every_part_matches("git push origin main", &patterns));
        assert!(every_part_matches("git push && ssh host uptime", &patterns));
        assert!(!every_part_matches("git push; cat ~/.ssh/id_rsa", &patterns));
        assert!(!every_part_matches("", &patterns));
    }

    #[test]
    fn the_most_specific_pattern_wins() {
        let rules = RuleSet::defaults();
        assert_eq!(rules.matching("bash", Subject::Command("cat src/main.rs")), Some(Action::Allow));
        assert_eq!(rules.matching("bash", Subject::Command("cat .env")), Some(Action::Ask));
        assert_eq!(rules.matching("bash", Subject::Command("git status")), Some(Action::Allow));
        assert_eq!(rules.matching("bash", Subject::Command("git status -s")), Some(Action::Allow));
        assert_eq!(rules.matching("bash", Subject::Command("git push")), None);
        assert_eq!(rules.matching("bash", Subject::Command("tree -o out.txt")), Some(Action::Ask));
        assert_eq!(rules.matching("glob", Subject::Tool), Some(Action::Allow));
        assert_eq!(rules.matching("todo", Subject::Tool), Some(Action::Allow));
    }

    #[test]
    fn later_sources_win_ties_and_specific_beats_general() {
        let mut rules = RuleSet::defaults();
        rules.add("bash", Some("cat *"), Action::Deny, Source::Project);
        assert_eq!(rules.matching("bash", Subject::Command("cat a.txt")), Some(Action::Deny));
        assert_eq!(
            rules.matching("bash", Subject::Command("cat .env")),
            Some(Action::Ask),
            "a more specific default still wins"
        );
        rules.add("bash", Some("git push *"), Action::Allow, Source::Global);
        rules.add("bash", Some("git push --force*"), Action::Deny, Source::Global);
        assert_eq!(rules.matching("bash", Subject::Command("git push origin main")), Some(Action::Allow));
        assert_eq!(rules.matching("bash", Subject::Command("git push --force origin")), Some(Action::Deny));
    }

    #[test]
    fn path_patterns_read_names_relative_and_home_paths() {
        let rules = RuleSet::defaults();
        let home = Path::new("/home/ada");
        let at = |abs: &str, rel: Option<&str>| {
            rules.matching(
                "read",
                Subject::Path { absolute: Path::new(abs), relative: rel.map(Path::new), home: Some(home) },
            )
        };
        assert_eq!(at("/p/.env", Some(".env")), Some(Action::Ask));
        assert_eq!(at("/p/config/prod.env", Some("config/prod.env")), Some(Action::Ask));
        assert_eq!(at("/p/src/main.rs", Some("src/main.rs")), Some(Action::Allow));
        assert_eq!(at("/home/ada/.ssh/config", None), Some(Action::Ask));
    }

    #[test]
    fn url_patterns_match_the_whole_url_or_its_host() {
        let mut rules = RuleSet::default();
        rules.add("web_fetch", Some("http://127.0.0.1:8080/*"), Action::Allow, Source::Global);
        rules.add("web_fetch", Some("docs.rs"), Action::Allow, Source::Global);
        rules.add("web_fetch", Some("*.example.com"), Action::Deny, Source::Global);
        rules.add("web_fetch", Some("localhost:3000"), Action::Allow, Source::Global);
        let at = |url: &str| rules.matching("web_fetch", Subject::Url(&crate::network::parse(url).unwrap()));
        assert_eq!(at("http://127.0.0.1:8080/status"), Some(Action::Allow));
        assert_eq!(at("http://127.0.0.1:8080"), Some(Action::Allow));
        assert_eq!(at("http://127.0.0.1:9090/"), None);
        assert_eq!(at("https://docs.rs/serde/latest"), Some(Action::Allow));
        assert_eq!(at("https://DOCS.rs/"), Some(Action::Allow));
        assert_eq!(at("https://docs.rs.evil.net/"), None);
        assert_eq!(at("https://api.example.com/x"), Some(Action::Deny));
        assert_eq!(at("http://localhost:3000/"), Some(Action::Allow));
        assert_eq!(at("http://localhost:4000/"), None);
        rules.add("web_fetch", None, Action::Allow, Source::Global);
        let target = crate::network::parse("http://10.0.0.1/").unwrap();
        assert_eq!(rules.matching("web_fetch", Subject::Url(&target)), Some(Action::Allow));
        assert_eq!(rules.matching_by_name("web_fetch", Subject::Url(&target)), None, "a whole-tool rule names no URL");
    }

    #[test]
    fn bad_rules_are_said_so() {
        let mut rules = RuleSet::default();
        assert!(rules.add_json(&serde_json::json!({"bash": {"ls": "maybe"}}), Source::Global).is_err());
        assert!(rules.add_json(&serde_json::json!({"bash": 3}), Source::Global).is_err());
    }
}
