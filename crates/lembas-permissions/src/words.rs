//! What a word of a command names, as far as it can be told without running anything: `~`,
//! `$HOME` and the variables the line itself set are read, brace alternatives are each taken,
//! `$(echo …)` is read as what it echoes, and `cd` moves where later words are resolved. What
//! cannot be read — another variable, a substitution, a glob — leaves the word *vague*: it may
//! name anything at or under the part that could be read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::command::{SUBSTITUTION, SimpleCommand};

/// Where a line's words are resolved, as the line goes along.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Where the next command runs; `None` once a `cd` went somewhere that cannot be read.
    pub cwd: Option<PathBuf>,
    /// Where it ran before the last `cd` (`$OLDPWD`, `~-`); `None` when that cannot be told —
    /// as at the start, where bash takes it from an environment the judge does not see.
    oldpwd: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// Variables the line set (`X=…`); `None` for a value that cannot be read.
    vars: HashMap<String, Option<String>>,
}

/// One place a word may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The path, absolute, with its `..` left where they stand: the kernel takes a `..` after
    /// following the link before it (`sshdir/../x` with `sshdir -> ~/.ssh` is `~/x`), so only
    /// the judge's real-path function may resolve them.
    pub path: PathBuf,
    /// Whether the word may name anything at or under `path` rather than `path` itself.
    pub vague: bool,
}

/// Everything a word may name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    pub places: Vec<Place>,
    /// Whether some alternative could not be read at all (`$X`, `$(cmd)` alone).
    pub unknown: bool,
}

impl Reach {
    pub fn is_vague(&self) -> bool {
        self.unknown || self.places.iter().any(|p| p.vague)
    }
}

/// The scopes of the shells a line runs in: a subshell starts with its parent's scope as it
/// stood, and its `cd` and variables never reach its parent.
#[derive(Debug, Clone)]
pub struct Scopes {
    shells: Vec<(Vec<u32>, Scope)>,
}

impl Scopes {
    pub fn new(cwd: &Path, home: Option<&Path>) -> Scopes {
        Scopes { shells: vec![(Vec::new(), Scope::new(cwd, home))] }
    }

    /// The scope of the shell `shell` (a chain of subshell ids), made from its nearest known
    /// parent's the first time it is asked for.
    pub fn of(&mut self, shell: &[u32]) -> &mut Scope {
        let at = match self.shells.iter().position(|(s, _)| s == shell) {
            Some(at) => at,
            None => {
                let parent = self
                    .shells
                    .iter()
                    .filter(|(s, _)| shell.starts_with(s))
                    .max_by_key(|(s, _)| s.len())
                    .map(|(_, scope)| scope.clone())
                    .unwrap_or_else(|| self.shells[0].1.clone());
                self.shells.push((shell.to_vec(), parent));
                self.shells.len() - 1
            }
        };
        &mut self.shells[at].1
    }
}

/// At most this many brace alternatives are taken; past it a word is unknown.
const MAX_ALTERNATIVES: usize = 64;

impl Scope {
    pub fn new(cwd: &Path, home: Option<&Path>) -> Scope {
        Scope { cwd: Some(cwd.to_path_buf()), oldpwd: None, home: home.map(Path::to_path_buf), vars: HashMap::new() }
    }

    /// Takes in what one simple command does to the scope of the commands after it: its
    /// assignments, and a `cd`/`pushd`.
    pub fn follow(&mut self, command: &SimpleCommand) {
        for (name, value) in &command.assigns {
            let read = if value.contains('$') || value.contains('`') {
                self.expand_vars(value).filter(|v| !v.contains(['*', '?', '[']))
            } else {
                Some(value.clone())
            };
            self.vars.insert(name.clone(), read);
        }
        if matches!(command.program(), "cd" | "pushd" | "popd") {
            let target = command.argv.iter().skip(1).find(|a| !a.starts_with('-') || *a == "-");
            let before = self.cwd.clone();
            self.cwd = match (command.program(), target) {
                ("popd", _) => None,
                (_, None) => self.home.clone(),
                (_, Some(t)) if t == "-" => self.oldpwd.clone(),
                (_, Some(t)) => {
                    let reach = self.reach(t, &command.substitutions_of(t));
                    match reach.places.as_slice() {
                        [one] if !one.vague && !reach.unknown => Some(one.path.clone()),
                        _ => None,
                    }
                }
            };
            // bash sets OLDPWD only when the `cd` succeeds; one that cannot be read may not have.
            self.oldpwd = if self.cwd.is_some() { before } else { None };
        }
    }

    fn var(&self, name: &str) -> Option<String> {
        if let Some(value) = self.vars.get(name) {
            return value.clone();
        }
        match name {
            "HOME" => self.home.as_ref().map(|h| h.display().to_string()),
            "PWD" => self.cwd.as_ref().map(|c| c.display().to_string()),
            "OLDPWD" => self.oldpwd.as_ref().map(|c| c.display().to_string()),
            _ => None,
        }
    }

    /// `$NAME` and `${NAME}` replaced where their value is known; `None` when one is not.
    /// `${NAME%…}`-style forms count as unknown except that they keep the name, so
    /// [`Scope::reach`] can still see `${HOME%/}` is about the home folder.
    fn expand_vars(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (name, len, plain) = if let Some(inner) = after.strip_prefix('{') {
                let end = inner.find('}')?;
                let body = &inner[..end];
                let name: String = body.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                (name.clone(), end + 2, name.len() == body.len())
            } else {
                let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if name.is_empty() {
                    return None;
                }
                (name.clone(), name.len(), true)
            };
            if !plain {
                return None;
            }
            out.push_str(&self.var(&name)?);
            rest = &after[len..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// What `word` (one word of `argv` or a redirection target, with `subs` the text of its
    /// substitutions in order) may name.
    pub fn reach(&self, word: &str, subs: &[String]) -> Reach {
        let mut reach = Reach::default();
        let Some(alternatives) = braces(word) else {
            reach.unknown = true;
            return reach;
        };
        for alternative in alternatives {
            match self.place(&alternative, subs) {
                Some(place) => reach.places.push(place),
                None => reach.unknown = true,
            }
        }
        reach
    }

    /// One brace alternative: its place, or `None` when nothing of it can be read.
    fn place(&self, word: &str, subs: &[String]) -> Option<Place> {
        let mut text = word.to_owned();
        // Whether the word may name more than `text` says, and whether what could not be read
        // stood first (then not even where it is can be told).
        let mut vague = false;
        let mut cut_at_start = false;
        let mut cut = |text: &mut String, at: usize, vague: &mut bool| {
            cut_at_start |= at == 0;
            text.truncate(at);
            *vague = true;
        };
        // A substitution that only echoes a word is that word.
        for sub in subs {
            let Some(at) = text.find(SUBSTITUTION) else { break };
            match echoed(sub) {
                Some(value) => text.replace_range(at..at + SUBSTITUTION.len(), &value),
                None => {
                    cut(&mut text, at, &mut vague);
                    break;
                }
            }
        }
        if let Some(at) = text.find(SUBSTITUTION) {
            cut(&mut text, at, &mut vague);
        }
        // `~`, `~+` (`$PWD`) and `~-` (`$OLDPWD`) at the start; `~name` is another user's home,
        // which cannot be told here.
        if let Some(rest) = text.strip_prefix('~') {
            let (base, rest) = match rest.strip_prefix(['+', '-']) {
                Some(after) if after.is_empty() || after.starts_with('/') => {
                    (if rest.starts_with('+') { self.cwd.as_ref() } else { self.oldpwd.as_ref() }, after)
                }
                _ if rest.is_empty() || rest.starts_with('/') => (self.home.as_ref(), rest),
                _ => (None, rest),
            };
            text = format!("{}{rest}", base?.display());
        }
        // Variables: known ones read; at the first unknown, the word is cut there — except a
        // `${HOME…}` form, which is taken as (somewhere at or under) the home folder.
        let mut whole_home = false;
        if let Some(at) = text.find('$') {
            match self.expand_vars(&text) {
                Some(read) => text = read,
                None => {
                    let after = &text[at + 1..];
                    let name: String = after
                        .trim_start_matches('{')
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    let prefix = self.expand_vars(&text[..at]);
                    match (prefix, self.var(&name)) {
                        (Some(prefix), Some(value)) if after.starts_with('{') => {
                            text = format!("{prefix}{value}");
                            vague = true;
                            whole_home = true;
                        }
                        (Some(prefix), _) => {
                            text = prefix;
                            let at = text.len();
                            cut(&mut text, at, &mut vague);
                        }
                        (None, _) => cut(&mut text, 0, &mut vague),
                    }
                }
            }
        }
        // A glob: the part before its first pattern character, in the folder it searches.
        if let Some(at) = text.find(['*', '?', '[']) {
            text.truncate(at);
            vague = true;
        }
        if vague && !whole_home && !text.ends_with('/') {
            // Cut inside a name: the place is the folder around it.
            match text.rfind('/') {
                Some(slash) => text.truncate(slash + 1),
                None => text.clear(),
            }
        }
        if text.is_empty() {
            if cut_at_start {
                return None;
            }
            text = ".".to_owned();
        }
        let cwd = if Path::new(&text).is_absolute() { Path::new("/") } else { self.cwd.as_deref()? };
        Some(Place { path: join_as_the_kernel_will(cwd, &text), vague })
    }
}

/// `path` with whatever `..` the real-path function left (one that never follows links, as in
/// tests and the conformance runner) taken by its text.
pub(crate) fn settled(path: PathBuf) -> PathBuf {
    use std::path::Component;
    if !path.components().any(|c| c == Component::ParentDir) {
        return path;
    }
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// `text` read from `cwd`, with `.` and repeated `/` taken out but every `..` kept in its
/// place, for the real-path function to take after the link before it.
fn join_as_the_kernel_will(cwd: &Path, text: &str) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    let start = if Path::new(text).is_absolute() { None } else { Some(cwd) };
    for component in start.into_iter().flat_map(Path::components).chain(Path::new(text).components()) {
        match component {
            Component::RootDir | Component::Prefix(_) => out = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => out.push(".."),
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

impl SimpleCommand {
    /// The substitutions of one word of `argv` (the first word spelled so).
    pub fn substitutions_of(&self, word: &str) -> Vec<String> {
        substitutions_in(&self.argv, &self.substitutions, word)
    }

    /// The substitutions of one redirection target.
    pub fn write_substitutions_of(&self, target: &str) -> Vec<String> {
        substitutions_in(&self.writes, &self.write_substitutions, target)
    }

    /// The substitutions of a word the command reads: an input redirection's, else the word of
    /// `argv` an option or operand named.
    pub fn substitutions_for_read(&self, word: &str) -> Vec<String> {
        if self.reads.iter().any(|w| w == word) {
            substitutions_in(&self.reads, &self.read_substitutions, word)
        } else {
            self.substitutions_of(word)
        }
    }

    /// The substitutions of a word the command writes: a redirection target's, else the word
    /// of `argv` an option or operand named.
    pub fn substitutions_for_write(&self, word: &str) -> Vec<String> {
        if self.writes.iter().any(|w| w == word) {
            self.write_substitutions_of(word)
        } else {
            self.substitutions_of(word)
        }
    }
}

/// The substitutions of `word` among `words`, whose substitutions are `all` in order.
fn substitutions_in(words: &[String], all: &[String], word: &str) -> Vec<String> {
    let mut before = 0;
    for w in words {
        let marks = w.matches(SUBSTITUTION).count();
        if w == word {
            return all.iter().skip(before).take(marks).cloned().collect();
        }
        before += marks;
    }
    Vec::new()
}

/// What a substitution prints when it only echoes one word: `echo W`, `printf %s W`,
/// `realpath W`, `readlink -f W`.
pub(crate) fn echoed(inner: &str) -> Option<String> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    let word = match words.as_slice() {
        ["echo", w] | ["printf", "%s", w] | ["realpath", w] | ["readlink", "-f", w] => *w,
        _ => return None,
    };
    let word = word.trim_matches(|c| c == '"' || c == '\'');
    (!word.contains('`') && !word.contains("$(")).then(|| word.to_owned())
}

/// A word's brace alternatives (`{a,b}`, `{1..3}` read as unknown), nested ones included;
/// `None` past [`MAX_ALTERNATIVES`] or for a range.
fn braces(word: &str) -> Option<Vec<String>> {
    let Some(open) = word.find('{') else { return Some(vec![word.to_owned()]) };
    // `${…}` is a variable, not braces.
    if open > 0 && word.as_bytes()[open - 1] == b'$' {
        let close = word[open..].find('}')? + open;
        let rest = braces(&word[close + 1..])?;
        return Some(rest.into_iter().map(|r| format!("{}{r}", &word[..=close])).collect());
    }
    let mut depth = 0;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in word[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close else { return Some(vec![word.to_owned()]) };
    let inner = &word[open + 1..close];
    if commas.is_empty() {
        if inner.contains("..") {
            return None;
        }
        // `{}` or `{x}` stands as written.
        let rest = braces(&word[close + 1..])?;
        return Some(rest.into_iter().map(|r| format!("{}{r}", &word[..=close])).collect());
    }
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let middle = &word[pair[0] + 1..pair[1]];
        for expanded in braces(&format!("{}{middle}{}", &word[..open], &word[close + 1..]))? {
            out.push(expanded);
            if out.len() > MAX_ALTERNATIVES {
                return None;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::split;

    fn scope() -> Scope {
        Scope::new(Path::new("/home/ada/app"), Some(Path::new("/home/ada")))
    }

    fn place(path: &str, vague: bool) -> Place {
        Place { path: path.into(), vague }
    }

    #[test]
    fn plain_words_tilde_and_home() {
        let s = scope();
        assert_eq!(s.reach("src/a.rs", &[]).places, [place("/home/ada/app/src/a.rs", false)]);
        assert_eq!(s.reach("~/.ssh", &[]).places, [place("/home/ada/.ssh", false)]);
        assert_eq!(s.reach("$HOME", &[]).places, [place("/home/ada", false)]);
        assert_eq!(s.reach("${HOME}/x", &[]).places, [place("/home/ada/x", false)]);
        assert_eq!(s.reach("${HOME%/}", &[]).places, [place("/home/ada", true)]);
    }

    #[test]
    fn globs_and_unknowns_are_vague() {
        let s = scope();
        assert_eq!(s.reach("/u*", &[]).places, [place("/", true)]);
        assert_eq!(s.reach("*", &[]).places, [place("/home/ada/app", true)]);
        assert_eq!(s.reach("src/$X", &[]).places, [place("/home/ada/app/src", true)]);
        assert_eq!(s.reach("build/*", &[]).places, [place("/home/ada/app/build", true)]);
        assert!(s.reach("$X", &[]).unknown);
        assert_eq!(s.reach("/tmp/$X", &[]).places, [place("/tmp", true)]);
        assert!(s.reach("$(…)", &["whoami".to_owned()]).unknown);
        assert_eq!(s.reach("$(…)", &["echo ~".to_owned()]).places, [place("/home/ada", false)]);
        assert_eq!(s.reach("$(…)/.ssh/k", &["echo ~".to_owned()]).places, [place("/home/ada/.ssh/k", false)]);
    }

    #[test]
    fn braces_are_each_alternative() {
        let s = scope();
        assert_eq!(s.reach("{/,}", &[]).places, [place("/", false), place("/home/ada/app", false)]);
        assert_eq!(s.reach("a{b,c{d,e}}", &[]).places.len(), 3);
        assert!(s.reach("{1..9}", &[]).unknown);
        assert!(s.reach(&"{a,b}".repeat(8), &[]).unknown);
    }

    #[test]
    fn cd_and_assignments_carry_to_later_commands() {
        let mut s = scope();
        let parts = split("X=$HOME; cd ~/.ssh && echo k >> authorized_keys");
        s.follow(&parts[0]);
        s.follow(&parts[1]);
        assert_eq!(s.cwd.as_deref(), Some(Path::new("/home/ada/.ssh")));
        assert_eq!(s.reach("$X", &[]).places, [place("/home/ada", false)]);
        let mut s = scope();
        s.follow(split("cd $(mktemp -d)").last().expect("cd"));
        assert_eq!(s.cwd, None);
        assert!(s.reach("x", &[]).unknown);
        assert_eq!(s.reach("/etc", &[]).places, [place("/etc", false)]);
    }
}
