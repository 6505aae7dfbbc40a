//! Instruction files, stacked (`filesystem.md`): from the boundary down to the start directory,
//! outermost first, each directory gives the first of `AGENTS.md`, `CLAUDE.md` that is a file the
//! session can read — never both. A file it cannot read is skipped and the walk goes on below.

use std::path::Path;

use lembas_spec::filesystem;

/// The directories from `boundary` down to `start`, outermost first. A start outside the
/// boundary is read as the boundary.
pub fn chain_dirs(boundary: &str, start: &str) -> Vec<String> {
    let boundary = lembas_paths::resolve(Path::new("/"), boundary);
    let start = lembas_paths::resolve(Path::new("/"), start);
    let below = lembas_paths::relative_to(&start, &boundary).unwrap_or_default();
    let mut dirs = vec![boundary.clone()];
    let mut dir = boundary;
    for part in below.components() {
        dir = dir.join(part);
        dirs.push(dir.clone());
    }
    dirs.into_iter().map(|d| d.to_string_lossy().into_owned()).collect()
}

/// The instruction file one directory contributes, if any: the first name in order of
/// preference for which `readable_file(path)` holds.
pub fn in_directory(dir: &str, readable_file: &impl Fn(&str) -> bool) -> Option<String> {
    filesystem().instructions.names.iter().map(|name| join(dir, name)).find(|path| readable_file(path))
}

/// The stacked chain from `boundary` to `start`: the loaded paths, outermost first.
pub fn chain(boundary: &str, start: &str, readable_file: impl Fn(&str) -> bool) -> Vec<String> {
    chain_dirs(boundary, start).iter().filter_map(|dir| in_directory(dir, &readable_file)).collect()
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') { format!("{dir}{name}") } else { format!("{dir}/{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirs_run_from_the_boundary_to_the_start() {
        assert_eq!(chain_dirs("/p", "/p/a/b"), ["/p", "/p/a", "/p/a/b"]);
        assert_eq!(chain_dirs("/p", "/elsewhere"), ["/p"]);
        assert_eq!(chain_dirs("/", "/x"), ["/", "/x"]);
    }

    #[test]
    fn agents_md_is_preferred_and_never_both() {
        let files = ["/p/AGENTS.md", "/p/CLAUDE.md", "/p/a/CLAUDE.md"];
        let found = chain("/p", "/p/a", |path| files.contains(&path));
        assert_eq!(found, ["/p/AGENTS.md", "/p/a/CLAUDE.md"]);
    }
}
