//! Command lines made from bytes, out of the words a model would use to read — and to slip a
//! write past a rule that allows reading: redirections, writing options, substitutions. Shared
//! by the judge-against-sandbox test and its fuzz target (`fuzz/fuzz_targets/plan_sandbox.rs`).

const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "find",
    "sort",
    "uniq",
    "echo",
    "printf",
    "diff",
    "cut",
    "tree",
    "stat",
    "du",
    "file",
    "git status",
    "git diff",
    "git log",
    "git show",
    "git grep",
    "git branch",
    "realpath",
    "basename",
    "dirname",
    "which",
    "rg",
];

const WORDS: &[&str] = &[
    ".",
    "src",
    "src/lib.rs",
    "notes.txt",
    "f",
    "../x",
    "/tmp/x",
    "-l",
    "-n",
    "-o",
    "f",
    "-delete",
    "-exec",
    "touch",
    "{}",
    "\\;",
    "+",
    "-fprint",
    "-name",
    "'*.rs'",
    "--output=f",
    "-O",
    "cat",
    "-c",
    "core.pager=sh",
    "-D",
    "main",
    "-r",
    "x",
    "$(touch f)",
    "`touch f`",
    "$HOME",
    "~",
    "-i",
    "--pre",
    "sh",
    "-a",
    "2>/dev/null",
    // What no command may change, and what none may read by name.
    ".git/hooks/pre-commit",
    ".git/config",
    ".mcp.json",
    ".lembas/permissions.json",
    "~/.ssh/id_ed25519",
];

const JOINS: &[&str] = &[" ", " ", " ", " | ", " && ", "; ", " > ", " >> ", " 2> ", " &> ", " < "];

/// A command line from `bytes`: a program, then words joined by blanks and operators.
pub fn line_from(bytes: &[u8]) -> String {
    let mut it = bytes.iter().copied();
    let mut line = PROGRAMS[usize::from(it.next().unwrap_or(0)) % PROGRAMS.len()].to_owned();
    while let (Some(join), Some(word)) = (it.next(), it.next()) {
        let join = JOINS[usize::from(join) % JOINS.len()];
        line.push_str(join);
        if join.contains('|') || join.contains('&') || join.contains(';') {
            line.push_str(PROGRAMS[usize::from(word) % PROGRAMS.len()]);
        } else {
            line.push_str(WORDS[usize::from(word) % WORDS.len()]);
        }
        if line.len() > 160 {
            break;
        }
    }
    line
}
