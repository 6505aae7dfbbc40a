//! A command line spelled plainly: split into its simple commands — at `;`, `&&`, `||`, `|`,
//! `&` and newlines, inside `$(…)`, backticks, `( … )` and `{ …; }` — with quotes and escapes
//! taken away, and each unwrapped from the wrappers that only run another command (`sudo`,
//! `env`, `bash -c '…'`, `xargs`, …). What is checked is what would run.

/// One simple command: its words as the program sees them, and the files its redirections write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub argv: Vec<String>,
    /// Targets of `>`, `>>`, `&>`, `2>` …: files the command writes.
    pub writes: Vec<String>,
    /// `NAME=value` words before the program (and `env`'s), in order: what the line sets.
    pub assigns: Vec<(String, String)>,
    /// The text inside each `$(…)` or backticks in `argv`, in the order their marks appear.
    pub substitutions: Vec<String>,
    /// The same for the redirection targets in `writes`.
    pub write_substitutions: Vec<String>,
}

/// How a substitution stands in a word once spelled plainly.
pub const SUBSTITUTION: &str = "$(…)";

impl SimpleCommand {
    /// The command as one plainly spelled line (what rules and the hardline read).
    pub fn line(&self) -> String {
        self.argv.join(" ")
    }

    /// The program's name without its directory (`/usr/bin/rm` is `rm`).
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", |p| p.rsplit('/').next().unwrap_or(p))
    }

    /// Whether the program is only known when the line runs (`$CMD`, `$(…)`).
    pub fn program_unknown(&self) -> bool {
        let p = self.program();
        p.contains(SUBSTITUTION) || p.starts_with('$')
    }
}

/// Splits `line` into its simple commands, each unwrapped. A line too deeply nested to read
/// (more than 16 levels of `bash -c` or `$(…)`) gives what was read so far plus an empty command,
/// which no rule allows.
pub fn split(line: &str) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    split_into(line, 0, &mut out);
    out
}

const MAX_DEPTH: usize = 16;

fn split_into(line: &str, depth: usize, out: &mut Vec<SimpleCommand>) {
    if depth > MAX_DEPTH {
        out.push(SimpleCommand::default());
        return;
    }
    let mut lexer = Lexer { chars: line.chars().collect(), pos: 0, depth, nested: Vec::new(), heredocs: Vec::new() };
    let commands = lexer.commands();
    let nested = std::mem::take(&mut lexer.nested);
    for command in commands {
        unwrap(command, depth, out);
    }
    for inner in nested {
        split_into(&inner, depth + 1, out);
    }
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Command text found inside `$(…)` and backticks, split after this level.
    nested: Vec<String>,
    /// Here-document delimiters whose bodies start at the next newline.
    heredocs: Vec<String>,
}

enum Token {
    Word(String),
    Separator,
    /// Something read that adds nothing (a here-document's operator and delimiter).
    Nothing,
    Redirect {
        writes: bool,
    },
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn commands(&mut self) -> Vec<SimpleCommand> {
        let mut commands = Vec::new();
        let mut current = SimpleCommand::default();
        let mut pending_redirect: Option<bool> = None;
        loop {
            let before = self.nested.len();
            let Some(token) = self.token() else { break };
            let found = self.nested[before..].to_vec();
            match token {
                Token::Separator => {
                    if !current.argv.is_empty() || !current.writes.is_empty() {
                        commands.push(std::mem::take(&mut current));
                    }
                    pending_redirect = None;
                }
                Token::Redirect { writes } => pending_redirect = Some(writes),
                Token::Nothing => {}
                Token::Word(word) => match pending_redirect.take() {
                    Some(true) => {
                        current.writes.push(word);
                        current.write_substitutions.extend(found);
                    }
                    Some(false) => {}
                    None => {
                        current.argv.push(word);
                        current.substitutions.extend(found);
                    }
                },
            }
        }
        if !current.argv.is_empty() || !current.writes.is_empty() {
            commands.push(current);
        }
        commands
    }

    /// Text up to the `close` that balances an opening already read.
    fn balanced(&mut self, open: char, close: char) -> String {
        let mut depth = 1;
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\\' {
                if let Some(next) = self.peek(0) {
                    text.push(c);
                    text.push(next);
                    self.pos += 1;
                }
                continue;
            }
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return text;
                }
            }
            text.push(c);
        }
        text
    }

    fn skip_heredoc_bodies(&mut self) {
        for delimiter in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0).is_some() {
                    self.pos += 1;
                }
                if line.trim() == delimiter || self.peek(0).is_none() {
                    break;
                }
            }
        }
    }

    fn token(&mut self) -> Option<Token> {
        // Blanks between words.
        while let Some(c) = self.peek(0) {
            if c == ' ' || c == '\t' || c == '\r' {
                self.pos += 1;
            } else if c == '\\' && self.peek(1) == Some('\n') {
                self.pos += 2;
            } else if c == '#' {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let c = self.peek(0)?;
        match c {
            '\n' => {
                self.pos += 1;
                self.skip_heredoc_bodies();
                return Some(Token::Separator);
            }
            ';' | '&' | '|' | '(' | ')' => {
                self.pos += 1;
                if c == '&' && self.peek(0) == Some('>') {
                    self.pos += 1;
                    if self.peek(0) == Some('>') {
                        self.pos += 1;
                    }
                    return Some(Token::Redirect { writes: true });
                }
                while matches!(self.peek(0), Some('&' | '|' | ';')) && c != '(' && c != ')' {
                    self.pos += 1;
                }
                return Some(Token::Separator);
            }
            '{' | '}' if matches!(self.peek(1), None | Some(' ' | '\t' | '\n' | ';')) => {
                self.pos += 1;
                return Some(Token::Separator);
            }
            '<' | '>' => return Some(self.redirect(None)),
            d if d.is_ascii_digit() && matches!(self.peek(1), Some('<' | '>')) => {
                self.pos += 1;
                return Some(self.redirect(Some(d)));
            }
            _ => {}
        }
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    self.pos += 1;
                    if let Some(next) = self.peek(0) {
                        if next != '\n' {
                            word.push(next);
                        }
                        self.pos += 1;
                    }
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        if q == '\'' {
                            break;
                        }
                        word.push(q);
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        match q {
                            '"' => break,
                            '\\' if matches!(self.peek(0), Some('"' | '\\' | '$' | '`')) => {
                                word.push(self.peek(0).unwrap_or('\\'));
                                self.pos += 1;
                            }
                            '$' if self.peek(0) == Some('(') => {
                                self.pos += 1;
                                let inner = self.balanced('(', ')');
                                self.nested.push(inner);
                                word.push_str("$(…)");
                            }
                            '`' => {
                                let inner = self.balanced('\u{0}', '`');
                                self.nested.push(inner);
                                word.push_str("$(…)");
                            }
                            other => word.push(other),
                        }
                    }
                }
                '$' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.balanced('(', ')');
                    self.nested.push(inner);
                    word.push_str("$(…)");
                }
                '`' => {
                    self.pos += 1;
                    let inner = self.balanced('\u{0}', '`');
                    self.nested.push(inner);
                    word.push_str("$(…)");
                }
                other => {
                    word.push(other);
                    self.pos += 1;
                }
            }
        }
        let _ = self.depth;
        Some(Token::Word(word))
    }

    /// A redirection operator; `<<` starts a here-document whose delimiter is the next word.
    fn redirect(&mut self, fd: Option<char>) -> Token {
        let first = self.peek(0).unwrap_or('>');
        self.pos += 1;
        if first == '<' {
            if self.peek(0) == Some('<') {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    self.pos += 1;
                    return Token::Redirect { writes: false };
                }
                if self.peek(0) == Some('-') {
                    self.pos += 1;
                }
                // The delimiter: read it here, so the body is skipped at the next newline.
                if let Some(Token::Word(delimiter)) = self.token() {
                    self.heredocs.push(delimiter);
                }
                return Token::Nothing;
            }
            return Token::Redirect { writes: false };
        }
        if matches!(self.peek(0), Some('>' | '|')) {
            self.pos += 1;
        }
        if self.peek(0) == Some('&') {
            // `2>&1`: a duplicate of another descriptor, not a file.
            self.pos += 1;
            while self.peek(0).is_some_and(|c| c.is_ascii_digit() || c == '-') {
                self.pos += 1;
            }
            return Token::Redirect { writes: false };
        }
        let _ = fd;
        Token::Redirect { writes: true }
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Removes wrappers that only run another command, and reads `sh -c` scripts as commands.
/// Takes the first word away, with the substitutions in it.
fn drop_first(command: &mut SimpleCommand) -> String {
    let word = command.argv.remove(0);
    let marks = word.matches(SUBSTITUTION).count().min(command.substitutions.len());
    command.substitutions.drain(..marks);
    word
}

/// Takes the leading `NAME=value` words away, keeping them as what the line sets.
fn take_assignments(command: &mut SimpleCommand) {
    while command.argv.first().is_some_and(|w| is_assignment(w)) {
        let word = command.argv.first().cloned().unwrap_or_default();
        if let Some((name, value)) = word.split_once('=') {
            command.assigns.push((name.to_owned(), value.to_owned()));
        }
        drop_first(command);
    }
}

fn unwrap(mut command: SimpleCommand, depth: usize, out: &mut Vec<SimpleCommand>) {
    loop {
        take_assignments(&mut command);
        let program = command.program().to_owned();
        // Options of a wrapper that take a value.
        let valued: &[&str] = match program.as_str() {
            "sudo" | "doas" => &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D"],
            "env" => &["-u", "-C", "-S", "--unset", "--chdir"],
            "nice" => &["-n", "--adjustment"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "xargs" => &[
                "-n",
                "-I",
                "-i",
                "-P",
                "-L",
                "-l",
                "-s",
                "-d",
                "-E",
                "-a",
                "--max-args",
                "--replace",
                "--max-procs",
                "--delimiter",
            ],
            "exec" => &["-a"],
            "stdbuf" => &["-i", "-o", "-e"],
            _ => &[],
        };
        match program.as_str() {
            "sudo" | "doas" | "env" | "nice" | "timeout" | "xargs" | "exec" | "command" | "builtin" | "nohup"
            | "time" | "stdbuf" | "unbuffer" | "setsid" => {
                drop_first(&mut command);
                while let Some(first) = command.argv.first() {
                    if first == "--" {
                        drop_first(&mut command);
                        break;
                    }
                    if !first.starts_with('-') || first == "-" {
                        break;
                    }
                    let takes_value = valued.contains(&first.as_str());
                    drop_first(&mut command);
                    if takes_value && !command.argv.is_empty() {
                        drop_first(&mut command);
                    }
                }
                if program == "timeout" && !command.argv.is_empty() {
                    drop_first(&mut command); // the duration
                }
                if program == "env" {
                    take_assignments(&mut command);
                }
                if command.argv.is_empty() {
                    // Nothing left to run, but what it wrote is still written.
                    if !command.writes.is_empty() {
                        out.push(command);
                    }
                    return;
                }
            }
            "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" => {
                let script = command
                    .argv
                    .iter()
                    .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
                    .and_then(|i| command.argv.get(i + 1))
                    .cloned();
                match script {
                    Some(script) => {
                        split_into(&script, depth + 1, out);
                        if !command.writes.is_empty() {
                            out.push(SimpleCommand { argv: Vec::new(), writes: command.writes, ..Default::default() });
                        }
                        return;
                    }
                    None => break,
                }
            }
            "eval" => {
                let script = command.argv[1..].join(" ");
                split_into(&script, depth + 1, out);
                return;
            }
            _ => break,
        }
    }
    out.push(command);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(line: &str) -> Vec<String> {
        split(line).iter().map(SimpleCommand::line).collect()
    }

    #[test]
    fn splits_at_every_operator() {
        assert_eq!(
            lines("git add . && git commit -m 'a b'; ls | wc -l & echo hi || true"),
            ["git add .", "git commit -m a b", "ls", "wc -l", "echo hi", "true"]
        );
        assert_eq!(lines("a\nb"), ["a", "b"]);
    }

    #[test]
    fn quotes_and_escapes_are_taken_away() {
        assert_eq!(lines(r#"r"m" -r'f' \/"#), ["rm -rf /"]);
        assert_eq!(lines(r#"echo "a \"b\" $HOME""#), [r#"echo a "b" $HOME"#]);
    }

    #[test]
    fn wrappers_are_unwrapped() {
        assert_eq!(lines("sudo -u root env FOO=1 nice -n 5 rm -rf /tmp/x"), ["rm -rf /tmp/x"]);
        assert_eq!(lines("bash -c 'cd / && rm -rf ~'"), ["cd /", "rm -rf ~"]);
        assert_eq!(lines("sh -lc \"timeout 5 xargs -n 1 rm\""), ["rm"]);
        assert_eq!(lines("LANG=C command ls"), ["ls"]);
        assert_eq!(lines("eval 'rm -rf /'"), ["rm -rf /"]);
    }

    #[test]
    fn substitutions_and_groups_are_commands_too() {
        assert_eq!(lines("echo $(rm -rf ~) `whoami`"), ["echo $(…) $(…)", "rm -rf ~", "whoami"]);
        assert_eq!(lines("(cd sub; make) && { ls; }"), ["cd sub", "make", "ls"]);
        assert_eq!(lines("echo \"$(curl x | sh)\""), ["echo $(…)", "curl x", "sh"]);
    }

    #[test]
    fn redirections_are_writes_not_words() {
        let parts = split("echo hi > out.txt 2>&1 < in.txt >> log");
        assert_eq!(parts[0].argv, ["echo", "hi"]);
        assert_eq!(parts[0].writes, ["out.txt", "log"]);
        assert_eq!(split("cat x &> all.log")[0].writes, ["all.log"]);
    }

    #[test]
    fn substitutions_and_assignments_are_kept_beside_the_words() {
        let parts = split("X=$HOME sudo rm -rf \"$(echo ~)\" > \"$(pwd)/log\" $(echo y)");
        assert_eq!(parts[0].argv, ["rm", "-rf", "$(…)", "$(…)"]);
        assert_eq!(parts[0].assigns, [("X".to_owned(), "$HOME".to_owned())]);
        assert_eq!(parts[0].substitutions, ["echo ~", "echo y"]);
        assert_eq!(parts[0].write_substitutions, ["pwd"]);
        let parts = split("$(echo sudo) rm $(echo x)");
        assert_eq!(parts[0].substitutions, ["echo sudo", "echo x"]);
        let parts = split("sudo $(echo rm) x < $(pick)");
        assert_eq!(parts[0].argv, ["$(…)", "x"]);
        assert_eq!(parts[0].substitutions, ["echo rm"]);
    }

    #[test]
    fn here_documents_are_not_commands() {
        assert_eq!(lines("cat <<EOF > notes.md\nrm -rf /\nEOF\nls"), ["cat", "ls"]);
    }

    #[test]
    fn nesting_too_deep_leaves_an_empty_command() {
        let mut line = "ls".to_owned();
        for _ in 0..20 {
            line = format!("bash -c {:?}", line);
        }
        assert!(split(&line).iter().any(|c| c.argv.is_empty()));
    }
}
