//! `read` and `list`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::WalkBuilder;
use lembas_spec::filesystem;

use crate::{Args, ToolOutput, Workspace};

/// Larger files are refused whole: search them, or read a part with a command.
pub const MAX_READ_BYTES: u64 = 20 * 1024 * 1024;

/// Directories no listing or search walks into, whatever `.gitignore` says.
pub(crate) const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "dist",
    "build",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    ".gradle",
    ".idea",
];

const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tiff"];

pub(crate) fn read(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let call_path = args.str("path")?;
    let offset = args.opt_usize("offset")?;
    let limit = args.opt_usize("limit")?;
    let path = ws.resolve(call_path);
    let meta = std::fs::metadata(&path).map_err(|e| io_error(ws, &path, &e))?;
    if meta.is_dir() {
        let listing = tree(&path, 1, &ws.private)?;
        let fs = filesystem();
        return Ok(ToolOutput::Text(if listing.is_empty() {
            fs.listing.empty_read.clone()
        } else {
            listing.join("\n")
        }));
    }
    if !meta.is_file() {
        // A device, a pipe or a socket: reading it could never end (`/dev/zero`) or never start
        // (a pipe nobody writes).
        return Err(format!(
            "{} is not a regular file (a device, a pipe or a socket): read shows files only.",
            path.display()
        ));
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref().is_some_and(|e| IMAGE_EXTENSIONS.contains(&e)) {
        return Err(format!("{} is an image: look at it with view_image.", path.display()));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(format!(
            "{} is {} MB, too large to read whole: search it with grep, or show a part with a command such as sed -n.",
            path.display(),
            meta.len() / (1024 * 1024)
        ));
    }
    if let Some(buffer) = ws.read_text(&path) {
        let content = buffer?;
        ws.times.saw(&path);
        return Ok(ToolOutput::Read { call_path: call_path.to_owned(), file: path, content, offset, limit });
    }
    let bytes = read_capped(&path).map_err(|e| io_error(ws, &path, &e))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(format!(
            "{} grew past {} MB while being read: search it with grep.",
            path.display(),
            MAX_READ_BYTES >> 20
        ));
    }
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return Err(format!("{} is a binary file: read shows text only.", path.display()));
    }
    let content = String::from_utf8(bytes).map_err(|_| {
        format!("{} is not UTF-8 text: read shows UTF-8 text only (try a command such as iconv).", path.display())
    })?;
    ws.times.saw(&path);
    Ok(ToolOutput::Read { call_path: call_path.to_owned(), file: path, content, offset, limit })
}

/// A file's bytes, at most one past [`MAX_READ_BYTES`]; opened without blocking, so a file
/// swapped for a pipe after it was looked at does not hang the read.
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits()).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// An I/O error as the spec words it where it has a text, else a plain sentence.
pub(crate) fn io_error(ws: &Workspace, path: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => ws.error("not_found", path),
        std::io::ErrorKind::NotADirectory => ws.error("not_a_directory", path),
        std::io::ErrorKind::IsADirectory => ws.error("is_a_directory", path),
        std::io::ErrorKind::PermissionDenied => {
            format!("Permission denied: {} cannot be accessed by this user.", path.display())
        }
        _ => format!("{}: {e}", path.display()),
    }
}

/// A walk under `root` that skips the folders nobody's project needs searched, and `private`.
pub(crate) fn walker(root: &Path, private: &Arc<[PathBuf]>) -> WalkBuilder {
    let private = private.clone();
    let mut builder = WalkBuilder::new(root);
    builder.hidden(false).require_git(false).git_global(false).follow_links(false).filter_entry(move |entry| {
        let dir = entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir());
        let skipped_dir = dir && entry.file_name().to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n));
        let private = entry.depth() > 0 && private.iter().any(|p| entry.path() == p.as_path());
        !(skipped_dir || private)
    });
    builder
}

/// Folders by their real paths, as [`Workspace::private`] holds them.
pub fn private_folders(folders: impl IntoIterator<Item = PathBuf>) -> Arc<[PathBuf]> {
    folders.into_iter().map(|f| std::fs::canonicalize(&f).unwrap_or(f)).collect()
}

/// Every file under `root` that a search looks at, found with the parallel walker, in no
/// particular order; `keep` filters by the path below `root`.
pub(crate) fn files_under(
    root: &Path,
    private: &Arc<[PathBuf]>,
    keep: &(dyn Fn(&Path) -> bool + Sync),
) -> Vec<(PathBuf, Option<std::fs::Metadata>)> {
    let found = std::sync::Mutex::new(Vec::new());
    walker(root, private).build_parallel().run(|| {
        Box::new(|entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
                && keep(entry.path().strip_prefix(root).unwrap_or(entry.path()))
            {
                let meta = entry.metadata().ok();
                found.lock().expect("walk results").push((entry.into_path(), meta));
            }
            ignore::WalkState::Continue
        })
    });
    found.into_inner().expect("walk results")
}

/// The tree under `dir`, `depth` levels, as `filesystem.md` *A listing* draws it (without the
/// line limit).
fn tree(dir: &Path, depth: usize, private: &Arc<[PathBuf]>) -> Result<Vec<String>, String> {
    #[derive(Default)]
    struct Node {
        dirs: std::collections::BTreeMap<String, Node>,
        files: Vec<String>,
        /// Holds, at some depth the walk reached, a file it lists — or sits at the depth limit
        /// with something in it.
        worth: bool,
    }
    let mut top = Node::default();
    for entry in walker(dir, private).max_depth(Some(depth)).build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let mut node = &mut top;
        for part in &parts[..parts.len() - 1] {
            node = node.dirs.entry(part.clone()).or_default();
        }
        let name = parts.last().cloned().unwrap_or_default();
        if is_dir {
            let at_limit = entry.depth() == depth;
            let child = node.dirs.entry(name).or_default();
            if at_limit {
                child.worth = std::fs::read_dir(entry.path()).map(|mut d| d.next().is_some()).unwrap_or(false);
            }
        } else {
            node.files.push(name);
        }
    }
    fn mark(node: &mut Node) -> bool {
        let mut any = !node.files.is_empty() || node.worth;
        for child in node.dirs.values_mut() {
            any |= mark(child);
        }
        node.worth = any;
        any
    }
    mark(&mut top);
    fn draw(node: &Node, indent: usize, out: &mut Vec<String>) {
        for (name, child) in node.dirs.iter().filter(|(_, c)| c.worth) {
            out.push(format!("{}{name}/", " ".repeat(indent)));
            draw(child, indent + 2, out);
        }
        let mut files = node.files.clone();
        files.sort();
        out.extend(files.into_iter().map(|f| format!("{}{f}", " ".repeat(indent))));
    }
    let mut out = Vec::new();
    draw(&top, 0, &mut out);
    Ok(out)
}

pub(crate) fn list(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let fs = filesystem();
    let path = ws.resolve(args.opt_str("path")?.unwrap_or("."));
    let depth = args.opt_usize("depth")?.unwrap_or(fs.listing.default_depth).clamp(1, fs.listing.max_depth);
    let meta = std::fs::metadata(&path).map_err(|e| io_error(ws, &path, &e))?;
    if !meta.is_dir() {
        return Err(ws.error("not_a_directory", &path));
    }
    let mut lines = tree(&path, depth, &ws.private)?;
    if lines.is_empty() {
        return Ok(ToolOutput::Text(fs.listing.empty_list.clone()));
    }
    if lines.len() > fs.listing.max_lines {
        lines.truncate(fs.listing.max_lines);
        lines.push(fs.listing.more.clone());
    }
    Ok(ToolOutput::Text(lines.join("\n")))
}

/// `view_image`: the image's bytes, for a model that sees.
pub(crate) fn view_image(ws: &Workspace, args: &Args) -> Result<ToolOutput, String> {
    let call_path = args.str("path")?;
    let path = ws.resolve(call_path);
    let meta = std::fs::metadata(&path).map_err(|e| io_error(ws, &path, &e))?;
    if meta.is_dir() {
        return Err(ws.error("is_a_directory", &path));
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return Err(format!("{} is not an image view_image shows: PNG, JPEG, GIF or WebP.", path.display())),
    };
    if meta.len() > crate::MAX_IMAGE_BYTES {
        return Err(format!(
            "{} is {} MB: images over 10 MB are not sent.",
            path.display(),
            meta.len() / (1024 * 1024)
        ));
    }
    let data = std::fs::read(&path).map_err(|e| io_error(ws, &path, &e))?;
    Ok(ToolOutput::Image { call_path: call_path.to_owned(), file: path, mime: mime.to_owned(), data })
}
