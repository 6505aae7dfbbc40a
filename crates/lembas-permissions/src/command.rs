//! A command line spelled plainly: its simple commands as bash's grammar reads them
//! ([`crate::grammar`]), each unwrapped from the wrappers that only run another command (`sudo`,
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
    /// Sources of `<` and `<>`: files the command reads on its standard input.
    pub reads: Vec<String>,
    /// The substitutions of the words in `reads`.
    pub read_substitutions: Vec<String>,
    /// The shell it runs in: the chain of subshells (`( … )`, `$( … )`, a pipeline's members, a
    /// `&` job, `bash -c`) from the call's own shell, whose `cd` and variables stay inside.
    pub shell: Vec<u32>,
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

/// Splits `line` into its simple commands, each unwrapped, in the order they start. A line
/// bash's grammar cannot read, or one too deeply nested (more than 16 levels of `bash -c`), gives
/// what was read plus an empty command, which no rule allows.
pub fn split(line: &str) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    let mut next_shell = 0u32;
    let mut new_shell = || {
        next_shell += 1;
        next_shell
    };
    split_into(line, 0, &[], &mut new_shell, &mut out);
    out
}

const MAX_DEPTH: usize = 16;

fn split_into(
    line: &str,
    depth: usize,
    shell: &[u32],
    new_shell: &mut dyn FnMut() -> u32,
    out: &mut Vec<SimpleCommand>,
) {
    if depth > MAX_DEPTH {
        out.push(SimpleCommand { shell: shell.to_vec(), ..Default::default() });
        return;
    }
    for command in crate::grammar::read(line, shell, new_shell) {
        unwrap(command, depth, new_shell, out);
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

fn unwrap(mut command: SimpleCommand, depth: usize, new_shell: &mut dyn FnMut() -> u32, out: &mut Vec<SimpleCommand>) {
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
                    if !command.writes.is_empty() || !command.reads.is_empty() {
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
                        let mut shell = command.shell.clone();
                        shell.push(new_shell());
                        split_into(&script, depth + 1, &shell, new_shell, out);
                        if !command.writes.is_empty() || !command.reads.is_empty() {
                            out.push(SimpleCommand {
                                writes: command.writes,
                                write_substitutions: command.write_substitutions,
                                reads: command.reads,
                                read_substitutions: command.read_substitutions,
                                shell: command.shell,
                                ..Default::default()
                            });
                        }
                        return;
                    }
                    None => break,
                }
            }
            "eval" => {
                let script = command.argv[1..].join(" ");
                split_into(&script, depth + 1, &command.shell, new_shell, out);
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
        // In the order they start: a substitution runs before the command it is part of.
        assert_eq!(lines("echo $(rm -rf ~) `whoami`"), ["rm -rf ~", "whoami", "echo $(…) $(…)"]);
        assert_eq!(lines("(cd sub; make) && { ls; }"), ["cd sub", "make", "ls"]);
        assert_eq!(lines("echo \"$(curl x | sh)\""), ["curl x", "sh", "echo $(…)"]);
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
        let parts = &parts[3..];
        assert_eq!(parts[0].argv, ["rm", "-rf", "$(…)", "$(…)"]);
        assert_eq!(parts[0].assigns, [("X".to_owned(), "$HOME".to_owned())]);
        assert_eq!(parts[0].substitutions, ["echo ~", "echo y"]);
        assert_eq!(parts[0].write_substitutions, ["pwd"]);
        let parts = split("$(echo sudo) rm $(echo x)");
        assert_eq!(parts[2].substitutions, ["echo sudo", "echo x"]);
        let parts = split("sudo $(echo rm) x < $(pick)");
        assert_eq!(parts[2].argv, ["$(…)", "x"]);
        assert_eq!(parts[2].substitutions, ["echo rm"]);
    }

    #[test]
    fn here_documents_are_not_commands() {
        assert_eq!(lines("cat <<EOF > notes.md\nrm -rf /\nEOF\nls"), ["cat", "ls"]);
    }

    #[test]
    fn any_line_is_read_without_panicking() {
        // A fixed-seed walk over the shell's punctuation and keywords (the fuzz target does more).
        const PIECES: &[&str] = &[
            " ", "\n", ";", "&", "&&", "|", "||", "|&", "(", ")", "{", "}", "$(", "`", "<(", ">(", "'", "\"", "\\",
            "$'\\x41'", "<<", "<<-", "<<<", ">", ">>", "2>&1", "&>", "<>", "EOF", "if", "then", "fi", "for", "in",
            "do", "done", "case", "esac", ";;", "[[", "]]", "$", "${", "$((", "))", "=", "X", "rm", "-rf", "/", "~",
            "*", "#", "{a,b}", "bash -c", "eval", "sudo",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let len = (next() % 24) as usize;
            let line: String = (0..len).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect();
            for part in split(&line) {
                let _ = (part.line(), part.program(), part.program_unknown());
            }
        }
        // Deep nesting is cut off rather than exhausting the stack.
        let deep = format!("{}ls{}", "$(".repeat(5000), ")".repeat(5000));
        assert!(split(&deep).iter().any(|c| c.argv.is_empty()));
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
