//! What a simple command does, read from its words and options rather than its name: the files
//! it writes, the places it deletes, and whether it runs other code. A rule that allows a
//! program to read (`find *`, `sort *`, `git diff *`) does not allow it to write or to run
//! something else (`find -delete`, `sort -o f`, `git diff --output=f`).

use crate::command::SimpleCommand;

/// The effects of one simple command beyond reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effects {
    /// Words naming files it writes (redirection targets and options' operands).
    pub writes: Vec<String>,
    /// Words naming places it deletes, with all under them when `recursive`.
    pub deletes: Vec<String>,
    pub recursive: bool,
    /// Why it runs other code or changes more than files, when it does.
    pub runs: Option<String>,
}

/// Descriptors and sinks that are no file: writing there changes nothing.
pub fn is_sink(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-")
        || target.starts_with("/dev/fd/")
        || target.chars().all(|c| c.is_ascii_digit() || c == '-')
}

fn operands(argv: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut options_done = false;
    for a in argv.iter().skip(1) {
        if !options_done && a == "--" {
            options_done = true;
            continue;
        }
        if options_done || !a.starts_with('-') || a == "-" {
            out.push(a.as_str());
        }
    }
    out
}

/// The value of an option in any of its spellings: `-o F`, `-oF`, `--output F`, `--output=F`.
fn option_values<'a>(argv: &'a [String], short: Option<&str>, long: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            break;
        }
        let next = argv.get(i + 1).map(String::as_str);
        if let Some(s) = short {
            if a == s {
                out.extend(next);
                i += 2;
                continue;
            }
            if a.len() > s.len() && a.starts_with(s) && !a.starts_with("--") {
                out.push(&a[s.len()..]);
            }
        }
        for l in long {
            if a == *l {
                out.extend(next);
            } else if let Some(v) = a.strip_prefix(l).and_then(|r| r.strip_prefix('=')) {
                out.push(v);
            }
        }
        i += 1;
    }
    out
}

fn has(argv: &[String], words: &[&str]) -> bool {
    argv.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| words.iter().any(|w| a == w || (w.starts_with("--") && a.starts_with(&format!("{w}=")))))
}

/// Whether a short-option cluster (`-rf`) or a long option names `letter`/`long`.
fn has_flag(argv: &[String], letters: &[char], long: &[&str]) -> bool {
    argv.iter().skip(1).take_while(|a| *a != "--").any(|a| {
        long.contains(&a.as_str())
            || (a.starts_with('-') && !a.starts_with("--") && a.chars().any(|c| letters.contains(&c)))
    })
}

/// The effects of `command`.
pub fn effects(command: &SimpleCommand) -> Effects {
    let mut fx =
        Effects { writes: command.writes.iter().filter(|t| !is_sink(t)).cloned().collect(), ..Effects::default() };
    let argv = &command.argv;
    let ops = operands(argv);
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
    match command.program() {
        "rm" | "unlink" | "rmdir" | "shred" => {
            fx.recursive = has_flag(argv, &['r', 'R'], &["--recursive"]) && command.program() == "rm";
            fx.deletes = owned(ops);
        }
        "find" => find_effects(argv, &mut fx),
        "mv" => {
            // The sources are gone from where they were; the target is written.
            if let Some((target, sources)) = ops.split_last() {
                fx.deletes.extend(sources.iter().map(|s| s.to_string()));
                fx.recursive = true;
                fx.writes.push(target.to_string());
            }
        }
        "cp" | "ln" | "install" | "scp" => fx.writes.extend(ops.last().map(|s| s.to_string())),
        "rsync" => {
            if let Some(target) = ops.last() {
                fx.writes.push(target.to_string());
                if argv.iter().any(|a| a.starts_with("--delete") || a.starts_with("--remove-source")) {
                    fx.deletes.push(target.to_string());
                    fx.recursive = true;
                }
            }
        }
        "tee" | "touch" | "truncate" | "mkdir" | "mkfifo" | "mknod" => fx.writes.extend(owned(ops)),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            fx.writes.extend(owned(ops.into_iter().skip(1).collect()));
            fx.recursive = has_flag(argv, &['R'], &["--recursive"]);
        }
        "sed" | "perl" | "ruby"
            if argv.iter().skip(1).any(|a| a == "--in-place" || (a.starts_with("-i") && !a.starts_with("--"))) =>
        {
            fx.writes.extend(owned(ops.into_iter().skip(1).collect()));
        }
        "dd" => fx.writes.extend(argv.iter().filter_map(|a| a.strip_prefix("of=").map(str::to_owned))),
        "sort" => fx.writes.extend(owned(option_values(argv, Some("-o"), &["--output"]))),
        "uniq" => fx.writes.extend(ops.get(1).map(|s| s.to_string())),
        "tree" => fx.writes.extend(owned(option_values(argv, Some("-o"), &[]))),
        "split" | "csplit" | "tar" | "unzip" | "zip" | "gzip" | "gunzip" | "xz" | "bzip2" | "patch" | "curl"
        | "wget" => {
            fx.runs = Some(format!("{} writes files", command.program()));
        }
        "git" => git_effects(argv, &mut fx),
        "rg" if has(argv, &["--pre"]) => fx.runs = Some("rg --pre runs a program on each file".to_owned()),
        "date" if has(argv, &["-s", "--set"]) => fx.runs = Some("date --set changes the clock".to_owned()),
        "file" if has_flag(argv, &['C'], &["--compile"]) => fx.runs = Some("file -C writes a magic file".to_owned()),
        "diff" | "sdiff" if has(argv, &["-o", "--output"]) => {
            fx.writes.extend(owned(option_values(argv, Some("-o"), &["--output"])))
        }
        "python" | "python3" | "perl" | "ruby" | "node" | "php" | "lua" | "Rscript" | "deno" | "bun"
            if has(argv, &["-c", "-e", "-E", "-r", "--eval", "-p", "--print"]) =>
        {
            fx.runs = Some("inline code for an interpreter".to_owned());
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "source" | "." => {
            fx.runs = Some("a shell reading a script".to_owned());
        }
        "eval" => fx.runs = Some("eval of text that cannot be read before it runs".to_owned()),
        _ if command.program_unknown() => {
            fx.runs = Some("a program whose name is only known when it runs".to_owned());
        }
        _ => {}
    }
    fx
}

fn find_effects(argv: &[String], fx: &mut Effects) {
    // The starting points are the words before the first test or action.
    let starts: Vec<String> =
        argv.iter().skip(1).take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!").cloned().collect();
    let starts = if starts.is_empty() { vec![".".to_owned()] } else { starts };
    let mut i = 1;
    while i < argv.len() {
        match argv[i].as_str() {
            "-delete" => {
                fx.deletes.extend(starts.iter().cloned());
                fx.recursive = true;
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let run: Vec<&str> =
                    argv[i + 1..].iter().map(String::as_str).take_while(|a| *a != ";" && *a != "+").collect();
                // `find … -exec rm -rf {} +` deletes what it finds: everything under its starts.
                if run.first().is_some_and(|p| p.rsplit('/').next() == Some("rm")) {
                    fx.deletes.extend(starts.iter().cloned());
                    fx.recursive = true;
                }
                fx.runs = Some(format!("find {} runs `{}` on what it finds", argv[i], run.join(" ")));
                i += run.len();
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => fx.writes.extend(argv.get(i + 1).cloned()),
            _ => {}
        }
        i += 1;
    }
}

/// git: options that run programs or write files, and reading subcommands used to change.
fn git_effects(argv: &[String], fx: &mut Effects) {
    // Global options before the subcommand.
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        let a = argv[i].as_str();
        if a == "-c" || a.starts_with("--config-env") || a.starts_with("--exec-path=") || a == "--exec-path" {
            fx.runs = Some("git's configuration given on the command line can run programs".to_owned());
        }
        if matches!(a, "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env") {
            i += 1;
        }
        i += 1;
    }
    let sub = argv.get(i).map(String::as_str).unwrap_or("");
    let rest = &argv[i.min(argv.len())..];
    let with = |words: &[&str]| has(rest, words);
    match sub {
        "diff" | "log" | "show" | "format-patch" | "whatchanged" => {
            fx.writes.extend(option_values(rest, None, &["--output"]).into_iter().map(str::to_owned));
            if sub == "format-patch" {
                fx.writes.push(".".to_owned());
            }
            if with(&["--ext-diff", "--show-signature"]) {
                fx.runs = Some(format!("git {sub} with an external program"));
            }
        }
        "grep" if with(&["-O", "--open-files-in-pager"]) || rest.iter().any(|a| a.starts_with("-O")) => {
            fx.runs = Some("git grep opens a pager program".to_owned());
        }
        "branch" => {
            let changes = has_flag(
                rest,
                &['d', 'D', 'm', 'M', 'c', 'C', 'f', 'u'],
                &[
                    "--delete",
                    "--move",
                    "--copy",
                    "--force",
                    "--set-upstream-to",
                    "--unset-upstream",
                    "--edit-description",
                ],
            );
            // Without --list, a name makes a branch.
            let makes = !with(&["--list", "-l"]) && !operands(rest).is_empty();
            if changes || makes {
                fx.runs = Some("git branch changes branches".to_owned());
            }
        }
        "remote" if operands(rest).iter().any(|o| !matches!(*o, "show" | "get-url")) => {
            fx.runs = Some("git remote changes the remotes".to_owned());
        }
        // Other subcommands change the repository by their nature: the rules name them.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::split;

    fn fx(line: &str) -> Effects {
        effects(split(line).last().expect("a command"))
    }

    #[test]
    fn redirections_and_writing_options_are_writes() {
        assert_eq!(fx("echo x > f").writes, ["f"]);
        assert_eq!(fx("cat /dev/null > f").writes, ["f"]);
        assert!(fx("ls 2>/dev/null").writes.is_empty());
        assert_eq!(fx("sort -o out in").writes, ["out"]);
        assert_eq!(fx("sort --output=out in").writes, ["out"]);
        assert_eq!(fx("uniq IN OUT").writes, ["OUT"]);
        assert_eq!(fx("git diff --output=../x").writes, ["../x"]);
        assert_eq!(fx("git log --output ../x").writes, ["../x"]);
        assert_eq!(fx("find . -fprint ../x").writes, ["../x"]);
        assert_eq!(fx("tee -a a b").writes, ["a", "b"]);
        assert_eq!(fx("tree -o t.txt").writes, ["t.txt"]);
    }

    #[test]
    fn deleting_and_running_are_seen() {
        let f = fx("find -delete");
        assert_eq!((f.deletes, f.recursive), (vec![".".to_owned()], true));
        let f = fx("find / -exec rm -rf {} +");
        assert_eq!(f.deletes, ["/"]);
        assert!(f.runs.is_some());
        assert!(fx("find -exec sh -c 'x' \\;").runs.is_some());
        assert!(fx("git grep --open-files-in-pager=vim x").runs.is_some());
        assert!(fx("git grep -Ovim x").runs.is_some());
        assert!(fx("git -c core.pager=sh status").runs.is_some());
        assert!(fx("git branch -D main").runs.is_some());
        assert!(fx("git branch feature").runs.is_some());
        assert!(fx("git branch --list 'f*'").runs.is_none());
        assert!(fx("git remote add x y").runs.is_some());
        assert!(fx("rg --pre ./x foo").runs.is_some());
        assert!(fx("python3 -c 'import os'").runs.is_some());
        assert!(fx("bash").runs.is_some());
        assert!(fx("$(echo rm) -rf x").runs.is_some());
        assert_eq!(fx("rm -rf a b").deletes, ["a", "b"]);
        assert!(fx("rm -rf a").recursive);
        assert!(!fx("rm a").recursive);
    }

    #[test]
    fn reading_stays_reading() {
        for line in [
            "git status",
            "git diff HEAD~1",
            "git log -5 --oneline",
            "find . -name '*.rs'",
            "sort a",
            "uniq a",
            "cat a b",
        ] {
            assert_eq!(fx(line), Effects::default(), "{line}");
        }
    }
}
