//! `glob` and `grep`: over the project's files, skipping what `.gitignore` ignores and build
//! directories. Results name absolute paths.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};

use crate::files::{files_under, io_error, walker};
use crate::{Args, ToolOutput, Workspace};

/// The most files `glob` lists and matches `grep` shows.
pub const MAX_RESULTS: usize = 200;
/// Longer lines are cut in `grep`'s answer.
const MAX_LINE_CHARS: usize = 400;
/// Larger files are not searched by `grep`.
const MAX_GREP_BYTES: u64 = 8 * 1024 * 1024;

/// A glob that matches a file name when it has no `/`, else the path below the search root.
struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    fn new(pattern: &str) -> Result<PathGlob, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .or_else(|_| Glob::new(pattern))
            .map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))?;
        Ok(PathGlob { matcher: glob.compile_matcher(), by_name: !pattern.contains('/') })
    }

    fn matches(&self, rel: &Path) -> bool {
        if self.by_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

fn search_root(ws: &Workspace, args: &Args) -> Result<PathBuf, String> {
    let root = ws.resolve(args.opt_str("path")?.unwrap_or("."));
    std::fs::metadata(&root).map_err(|e| io_error(ws, &root, &e))?;
    Ok(root)
}

pub(crate) fn glob(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let pattern = args.str("pattern")?;
    let glob = PathGlob::new(pattern.trim_start_matches("./"))?;
    let root = search_root(ws, args)?;
    if !root.is_dir() {
        return Err(ws.error("not_a_directory", &root));
    }
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = files_under(&root, &ws.private, &|rel| glob.matches(rel))
        .into_iter()
        .map(|(path, meta)| (meta.and_then(|m| m.modified().ok()).unwrap_or(std::time::UNIX_EPOCH), path))
        .collect();
    if found.is_empty() {
        return Ok(ToolOutput::Text(format!("No files match {pattern} under {}.", root.display())));
    }
    // Newest first; the same time by path, so the answer is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut lines: Vec<String> = found.into_iter().take(MAX_RESULTS).map(|(_, p)| p.display().to_string()).collect();
    if total > MAX_RESULTS {
        lines.push(format!("({} more files: narrow the pattern or the path)", total - MAX_RESULTS));
    }
    Ok(ToolOutput::Text(lines.join("\n")))
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let mut s: String = line.chars().take(MAX_LINE_CHARS).collect();
    s.push_str(" […]");
    s
}

pub(crate) fn grep(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let pattern = args.str("pattern")?;
    let regex =
        regex::bytes::RegexBuilder::new(pattern).case_insensitive(args.bool("ignore_case")?).build().map_err(|e| {
            format!("`{pattern}` is not a valid regular expression: {}", e.to_string().lines().last().unwrap_or(""))
        })?;
    let include = args.opt_str("include")?.map(PathGlob::new).transpose()?;
    let context = args.opt_usize("context")?.unwrap_or(0).min(20);
    let files_only = args.bool("files_only")?;
    let root = search_root(ws, args)?;

    // Files too large to search, and what is no file at all (a pipe would never be read to
    // its end), are left out — and said to be. The files are searched as the walk finds them,
    // on every core; what they hold is put together in path order.
    let (found, files_searched, skipped) = if root.is_file() {
        let hits = search_file(&root, &regex);
        let skipped = if matches!(hits, Searched::TooLarge) { vec![root.clone()] } else { Vec::new() };
        let found = match hits {
            Searched::Hits(lines, hits) => vec![(root.clone(), lines, hits)],
            _ => Vec::new(),
        };
        (found, 1 - skipped.len(), skipped)
    } else {
        search_under(ws, &root, include.as_ref(), &regex)
    };
    let skipped_note = (!skipped.is_empty()).then(|| {
        let names: Vec<String> = skipped.iter().take(5).map(|p| p.display().to_string()).collect();
        let more = if skipped.len() > 5 { format!(" and {} more", skipped.len() - 5) } else { String::new() };
        format!(
            "(not searched, over {} MB: {}{more}; search such a file with a command such as rg)",
            MAX_GREP_BYTES >> 20,
            names.join(", ")
        )
    });

    let mut out = Vec::new();
    let mut matches = 0;
    let mut truncated = false;
    'files: for (file, lines, hits) in &found {
        let name = file.display().to_string();
        if files_only {
            out.push(name);
            matches += 1;
            if matches >= MAX_RESULTS {
                truncated = true;
                break;
            }
            continue;
        }
        let mut last_shown: Option<usize> = None;
        for &hit in hits {
            let from = hit.saturating_sub(context).max(last_shown.map_or(0, |l| l + 1));
            let to = (hit + context).min(lines.len() - 1);
            if context > 0 && last_shown.is_some_and(|l| from > l + 1) {
                out.push("--".to_owned());
            }
            for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                let mark = if hits.binary_search(&i).is_ok() { ':' } else { '-' };
                out.push(format!("{name}{mark}{}{mark} {}", i + 1, cut(&String::from_utf8_lossy(line))));
            }
            last_shown = Some(to);
            matches += 1;
            if matches >= MAX_RESULTS {
                truncated = true;
                break 'files;
            }
        }
    }
    if out.is_empty() {
        // A model reads the first words: what was left out comes before "no matches".
        return Ok(ToolOutput::Text(match skipped_note {
            Some(note) => format!(
                "{note}\nNo matches for {pattern} in the {} other file{} under {}.",
                files_searched,
                if files_searched == 1 { "" } else { "s" },
                root.display()
            ),
            None => format!("No matches for {pattern} under {}.", root.display()),
        }));
    }
    if truncated {
        out.push(format!("(stopped at {MAX_RESULTS} matches: narrow the pattern, the path or include)"));
    }
    out.extend(skipped_note);
    Ok(ToolOutput::Text(out.join("\n")))
}

/// What searching one file came to.
enum Searched {
    /// Its lines (without their ends) and the indexes of those that match.
    Hits(Vec<Vec<u8>>, Vec<usize>),
    /// No match, or nothing to search: a binary or unreadable file.
    Nothing,
    TooLarge,
}

fn search_file(file: &Path, regex: &regex::bytes::Regex) -> Searched {
    use std::io::Read;
    // Opened once: its size from the open file, then its text.
    let Ok(mut opened) = std::fs::File::open(file) else { return Searched::Nothing };
    let size = opened.metadata().map_or(0, |m| m.len());
    if size > MAX_GREP_BYTES {
        return Searched::TooLarge;
    }
    let mut content = Vec::with_capacity(size as usize + 1);
    if opened.read_to_end(&mut content).is_err() {
        return Searched::Nothing;
    }
    if content.iter().take(1024).any(|b| *b == 0) {
        return Searched::Nothing;
    }
    // Most files do not match: test the whole text once before splitting it into lines.
    if !regex.is_match(&content) {
        return Searched::Nothing;
    }
    let lines: Vec<Vec<u8>> =
        content.split(|b| *b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec()).collect();
    // A text that ends with its last line's end has no line after it.
    let lines = match lines.split_last() {
        Some((last, rest)) if last.is_empty() => rest.to_vec(),
        _ => lines,
    };
    let hits: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| regex.is_match(l)).map(|(i, _)| i).collect();
    if hits.is_empty() { Searched::Nothing } else { Searched::Hits(lines, hits) }
}

/// A file's hits: the file, its lines and the indexes of those that match.
type Found = (PathBuf, Vec<Vec<u8>>, Vec<usize>);

/// Searches every file under `root` that `include` takes, as the parallel walker finds them:
/// the files that match (in path order), how many were searched, and those too large to search.
fn search_under(
    ws: &Workspace,
    root: &Path,
    include: Option<&PathGlob>,
    regex: &regex::bytes::Regex,
) -> (Vec<Found>, usize, Vec<PathBuf>) {
    let found = std::sync::Mutex::new((Vec::new(), 0usize, Vec::new()));
    walker(root, &ws.private).build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            let is_file = entry.file_type().is_some_and(|t| t.is_file());
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if !is_file || !include.is_none_or(|g| g.matches(rel)) {
                return ignore::WalkState::Continue;
            }
            let searched = search_file(entry.path(), regex);
            let mut found = found.lock().expect("grep results");
            match searched {
                Searched::TooLarge => found.2.push(entry.into_path()),
                Searched::Hits(lines, hits) => {
                    found.1 += 1;
                    found.0.push((entry.into_path(), lines, hits));
                }
                Searched::Nothing => found.1 += 1,
            }
            ignore::WalkState::Continue
        })
    });
    let (mut hits, searched, mut skipped) = found.into_inner().expect("grep results");
    hits.sort_by(|a: &Found, b: &Found| a.0.cmp(&b.0));
    skipped.sort();
    (hits, searched, skipped)
}
