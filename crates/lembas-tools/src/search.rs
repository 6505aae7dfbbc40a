//! `glob` and `grep`: over the project's files, skipping what `.gitignore` ignores and build
//! directories. Results name absolute paths.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use regex::RegexBuilder;

use crate::files::{files_under, io_error};
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
    let regex = RegexBuilder::new(pattern).case_insensitive(args.bool("ignore_case")?).build().map_err(|e| {
        format!("`{pattern}` is not a valid regular expression: {}", e.to_string().lines().last().unwrap_or(""))
    })?;
    let include = args.opt_str("include")?.map(PathGlob::new).transpose()?;
    let context = args.opt_usize("context")?.unwrap_or(0).min(20);
    let files_only = args.bool("files_only")?;
    let root = search_root(ws, args)?;

    // Files too large to search, and what is no file at all (a pipe would never be read to
    // its end), are left out — and said to be.
    let mut skipped: Vec<PathBuf> = Vec::new();
    let files: Vec<PathBuf> = if root.is_file() {
        vec![root.clone()]
    } else {
        let mut files = Vec::new();
        for (path, meta) in files_under(&root, &ws.private, &|rel| include.as_ref().is_none_or(|g| g.matches(rel))) {
            match meta {
                Some(m) if !m.is_file() => {}
                Some(m) if m.len() > MAX_GREP_BYTES => skipped.push(path),
                _ => files.push(path),
            }
        }
        files.sort();
        skipped.sort();
        files
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

    // Files are searched in parallel; their hits are put together in path order.
    let found = search_files(&files, &regex);
    let mut out = Vec::new();
    let mut matches = 0;
    let mut truncated = false;
    'files: for (file, hits) in files.iter().zip(found) {
        let Some((lines, hits)) = hits else { continue };
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
        for &hit in &hits {
            let from = hit.saturating_sub(context).max(last_shown.map_or(0, |l| l + 1));
            let to = (hit + context).min(lines.len() - 1);
            if context > 0 && last_shown.is_some_and(|l| from > l + 1) {
                out.push("--".to_owned());
            }
            for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                let mark = if hits.binary_search(&i).is_ok() { ':' } else { '-' };
                out.push(format!("{name}{mark}{}{mark} {}", i + 1, cut(line)));
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
                files.len(),
                if files.len() == 1 { "" } else { "s" },
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

/// A text file's lines and the indexes of those that match; `None` for a binary or unreadable
/// file, or one without a match.
type Hits = Option<(Vec<String>, Vec<usize>)>;

fn search_file(file: &Path, regex: &regex::Regex) -> Hits {
    let content = std::fs::read(file).ok()?;
    if content.iter().take(1024).any(|b| *b == 0) {
        return None;
    }
    // Most files do not match: test the whole text once before splitting it into lines.
    let text = String::from_utf8_lossy(&content);
    if !regex.is_match(&text) {
        return None;
    }
    let lines: Vec<String> = content.lines().map(|l| l.unwrap_or_default()).collect();
    let hits: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| regex.is_match(l)).map(|(i, _)| i).collect();
    (!hits.is_empty()).then_some((lines, hits))
}

/// Searches `files` on every core, answering in their order.
fn search_files(files: &[PathBuf], regex: &regex::Regex) -> Vec<Hits> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    let chunk = files.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                (part.len(), scope.spawn(move || part.iter().map(|f| search_file(f, regex)).collect::<Vec<_>>()))
            })
            .collect();
        // A part that failed answers nothing for its files, keeping the order of the rest.
        handles.into_iter().flat_map(|(len, h)| h.join().unwrap_or_else(|_| vec![None; len])).collect()
    })
}
