//! Files written whole or not at all. The temporary file is made beside the destination (so
//! the move is a rename on one file system) by `tempfile`: created exclusively (`O_EXCL`: an
//! existing name — a link a repository planted under the name the next write would use — is
//! never opened, let alone followed), under a random name, and then renamed over the
//! destination, which replaces a link standing there rather than writing through it.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` whole: readers see the old file or the new one, never a part. Not
/// synced to the disk first: for what is cheap to lose in a crash (a snapshot's ref, a note),
/// on paths a turn waits for — a sync costs milliseconds.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, None, false)
}

/// The same, synced to the disk before it replaces the old file, and made with permissions
/// `mode` where one is given (on Unix; `0o600` for lembas' secrets): for what must survive a
/// crash whole (configuration, the login, the task list).
pub fn write_whole_synced(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    write(path, bytes, mode, true)
}

fn write(path: &Path, bytes: &[u8], mode: Option<u32>, synced: bool) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = builder.tempfile_in(folder)?;
    file.write_all(bytes)?;
    if synced {
        file.as_file().sync_all()?;
    }
    // On failure the temporary file is removed as it drops.
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_written_whole_and_replaces_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.md");
        write_whole(&path, b"one").unwrap();
        write_whole(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("tasks.md")], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn planted_links_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        let project = dir.path();
        // Links under every name an earlier lembas would have used (`.<name>.<pid>.tmp` for the
        // next pids), and at the destination itself.
        let me = std::process::id();
        for pid in me..me + 50 {
            std::os::unix::fs::symlink(&victim, project.join(format!(".tasks.md.{pid}.tmp"))).unwrap();
            std::os::unix::fs::symlink(&victim, project.join(format!(".tasks.md.tmp{pid}"))).unwrap();
        }
        std::os::unix::fs::symlink(&victim, project.join("tasks.md")).unwrap();
        write_whole(&project.join("tasks.md"), b"written").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        let meta = std::fs::symlink_metadata(project.join("tasks.md")).unwrap();
        assert!(meta.is_file(), "the link at the destination is replaced, not followed");
        assert_eq!(std::fs::read_to_string(project.join("tasks.md")).unwrap(), "written");
    }

    #[cfg(unix)]
    #[test]
    fn a_mode_is_the_new_file_s() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.json");
        write_whole_synced(&path, b"{}", Some(0o600)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
