//! `lembas update [--check] [--url URL]`: a newer lembas from a release source, checked against
//! the manifest's SHA-256 and put in place of this one whole, or not at all.
//!
//! The release source is a manifest (JSON): `version`, `notes`, and `archives` by platform
//! (`x86_64-linux`, `aarch64-linux`, `aarch64-macos`, …), each a `url` (absolute, or relative
//! to the manifest's) of a `.tar.gz` with `lembas` (and `lembas-sandbox`) at its root, and its
//! `sha256`. `docs/install.md` has an example.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::Digest;

use crate::cli::exit;
use crate::{Failure, setup};

/// Where lembas' own releases are listed, when neither `--url`, `LEMBAS_UPDATE_URL` nor
/// `[update] url` names another source.
pub const DEFAULT_URL: &str = "https://lembas.dev/releases/latest.json";

/// The programs a release archive carries: lembas, its sandbox's launcher and its reader of web
/// pages and PDFs.
const PROGRAMS: [&str; 3] = ["lembas", "lembas-sandbox", "lembas-reader"];

#[derive(Debug, Deserialize)]
struct Manifest {
    version: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    archives: BTreeMap<String, Archive>,
}

impl Manifest {
    /// This platform's archive, where the release has one.
    fn archive_here(&self) -> Option<&Archive> {
        self.archives.get(&platform())
    }
}

#[derive(Debug, Deserialize)]
struct Archive {
    url: String,
    sha256: String,
}

/// This computer's platform as a manifest names it: `x86_64-linux`, `aarch64-macos`.
pub fn platform() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

fn failed(message: impl Into<String>) -> Failure {
    Failure::new(exit::FAILED, message)
}

/// The release source: `--url`, `LEMBAS_UPDATE_URL`, `[update] url`, or lembas' own.
fn source(url: Option<String>, configured: Option<String>) -> String {
    url.or_else(|| std::env::var("LEMBAS_UPDATE_URL").ok().filter(|u| !u.is_empty()))
        .or(configured)
        .unwrap_or_else(|| DEFAULT_URL.to_owned())
}

fn client(whole: std::time::Duration) -> Result<reqwest::Client, String> {
    let connect = whole.min(std::time::Duration::from_secs(15));
    reqwest::Client::builder().connect_timeout(connect).timeout(whole).build().map_err(|e| e.to_string())
}

/// The manifest at `url`, and the version it offers.
async fn read_manifest(client: &reqwest::Client, url: &str) -> Result<(Manifest, semver::Version), String> {
    let manifest: Manifest = fetch(client, url)
        .await
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| format!("its manifest is not one: {e}")))
        .map_err(|e| format!("the release source {url} could not be read: {e}"))?;
    let newest = semver::Version::parse(manifest.version.trim_start_matches('v'))
        .map_err(|e| format!("the release source names no version lembas can read ({}): {e}", manifest.version))?;
    Ok((manifest, newest))
}

fn this_version() -> semver::Version {
    semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("lembas' own version is semver")
}

/// `lembas update`.
pub async fn update(url: Option<String>, check: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let configured = lembas_config::Config::load(&home).map_err(|e| failed(e.to_string()))?.update.url;
    let url = source(url, configured);
    let client = client(std::time::Duration::from_secs(300)).map_err(failed)?;
    let (manifest, newest) = read_manifest(&client, &url).await.map_err(failed)?;
    let current = this_version();
    if newest <= current {
        out!("lembas {current} is the newest (the release source offers {newest}).");
        return Ok(exit::OK);
    }
    let exe = std::env::current_exe().and_then(|p| p.canonicalize()).map_err(|e| failed(e.to_string()))?;
    if check {
        out!("{}", news(&newest, manifest.archive_here().is_some(), managed_elsewhere(&exe)));
        say_notes(&manifest.notes);
        return Ok(exit::OK);
    }
    if let Some(how) = managed_elsewhere(&exe) {
        return Err(failed(how));
    }
    let archive = manifest.archive_here().ok_or_else(|| {
        failed(format!(
            "lembas {newest} has no release for {}: build it from source (install.sh does, with cargo)",
            platform()
        ))
    })?;
    let archive_url = joined(&url, &archive.url);
    let unchanged = format!("lembas {current} is unchanged");
    let bytes = fetch(&client, &archive_url)
        .await
        .map_err(|e| failed(format!("the download of {archive_url} failed ({e}); {unchanged}")))?;
    let sum = hex::encode(sha2::Sha256::digest(&bytes));
    if !sum.eq_ignore_ascii_case(archive.sha256.trim()) {
        return Err(failed(format!(
            "the download's SHA-256 ({sum}) is not the manifest's ({}): refused; {unchanged}",
            archive.sha256.trim()
        )));
    }
    let dir = exe.parent().expect("a program is in a folder");
    let placed = place(&bytes, dir, &exe).map_err(|e| failed(format!("{e}; {unchanged}")))?;
    out!("Updated lembas {current} → {newest} ({}).", placed.join(", "));
    say_notes(&manifest.notes);
    Ok(exit::OK)
}

/// What the once-a-day check last found (`update.json` in the state folder).
#[derive(Debug, Default, serde::Serialize, Deserialize)]
struct Checked {
    /// When the release source was last read (ms).
    checked_at: i64,
    /// The version it offered then.
    newest: Option<String>,
    /// When the person was last told of it (ms).
    told_at: i64,
    /// Whether it has a build for this platform (absent in a file an older lembas wrote: yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    built_here: Option<bool>,
}

/// What the person is told of a newer lembas: the way to it — `lembas update`, or, where the
/// release has no build for this platform or another tool installed this lembas, what to do
/// instead.
fn news(newest: &semver::Version, built_here: bool, managed: Option<String>) -> String {
    let current = this_version();
    match (managed, built_here) {
        (Some(how), _) => format!("lembas {newest} is out (this is {current}); {how}."),
        (None, false) => format!(
            "lembas {newest} is out (this is {current}), but it has no build for {}: build it from source (install.sh does, with cargo).",
            platform()
        ),
        (None, true) => format!("lembas {newest} is out (this is {current}): `lembas update` installs it."),
    }
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

fn checked_file(home: &lembas_config::Home) -> PathBuf {
    home.state.join("update.json")
}

/// For the terminal UI as it opens, at most once a day: a newer lembas the last check found.
/// Reads a file; the network is never waited on (the check itself runs in the background, for
/// a later start: [`check_in_background`]).
pub fn mention(home: &lembas_config::Home, now_ms: i64) -> Option<String> {
    let file = checked_file(home);
    let mut checked: Checked = serde_json::from_slice(&std::fs::read(&file).ok()?).ok()?;
    let newest = semver::Version::parse(checked.newest.as_deref()?).ok()?;
    if newest <= this_version() || now_ms - checked.told_at < DAY_MS {
        return None;
    }
    checked.told_at = now_ms;
    std::fs::write(&file, serde_json::to_vec(&checked).ok()?).ok()?;
    Some(news(&newest, checked.built_here != Some(false), None))
}

/// Reads the release source in the background when it was not read today (`[update] check =
/// false`: never); what it finds is mentioned at a later start. A failure is quiet: it is tried
/// again tomorrow.
pub fn check_in_background(home: &lembas_config::Home, settings: &lembas_config::UpdateSettings, now_ms: i64) {
    if settings.check == Some(false) {
        return;
    }
    let file = checked_file(home);
    let checked: Checked = std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    if now_ms - checked.checked_at < DAY_MS {
        return;
    }
    let url = source(None, settings.url.clone());
    tokio::spawn(async move {
        let newest = match client(std::time::Duration::from_secs(10)) {
            Ok(client) => read_manifest(&client, &url)
                .await
                .ok()
                .map(|(manifest, newest)| (newest.to_string(), manifest.archive_here().is_some())),
            Err(_) => None,
        };
        let (newest, built_here) = match newest {
            Some((newest, built_here)) => (Some(newest), Some(built_here)),
            None => (checked.newest, checked.built_here),
        };
        let checked = Checked { checked_at: now_ms, newest, told_at: checked.told_at, built_here };
        if let Some(folder) = file.parent() {
            let _ = std::fs::create_dir_all(folder);
        }
        // Whole or not at all: a start reading it meanwhile finds the old one or the new.
        if let Ok(bytes) = serde_json::to_vec(&checked) {
            let _ = lembas_sys::write_whole(&file, &bytes);
        }
    });
}

fn say_notes(notes: &str) {
    if !notes.trim().is_empty() {
        out!("\nWhat changed:\n{}", notes.trim_end());
    }
}

/// A URL's body, whole: a status other than 2xx, or a body cut short, is an error.
async fn fetch(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let response = client.get(url).send().await.map_err(|e| with_causes(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the server answered {status}"));
    }
    let promised = response.content_length();
    let bytes = response.bytes().await.map_err(|e| format!("cut off: {}", with_causes(&e)))?;
    match promised {
        Some(length) if length != bytes.len() as u64 => Err(format!("cut off after {} of {length} bytes", bytes.len())),
        _ => Ok(bytes.to_vec()),
    }
}

/// An error and what caused it, in one line (reqwest's own says only "error sending request").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        said.push_str(&format!(": {e}"));
        cause = e.source();
    }
    said
}

/// `path` of the manifest at `base`: an absolute URL as it is, a relative one beside it.
fn joined(base: &str, path: &str) -> String {
    if path.contains("://") {
        return path.to_owned();
    }
    match base.rfind('/') {
        Some(cut) => format!("{}/{}", &base[..cut], path.trim_start_matches("./")),
        None => path.to_owned(),
    }
}

/// Why lembas at `exe` is not lembas' to replace, and how to update it instead; `None`: it is.
pub fn managed_elsewhere(exe: &Path) -> Option<String> {
    let shown = exe.display();
    if exe.components().any(|c| c.as_os_str() == ".cargo") {
        return Some(format!(
            "lembas ({shown}) was installed with cargo: update it with cargo (`cargo install` as you installed it)"
        ));
    }
    let managed = [
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/bin",
        "/nix/store",
        "/opt/homebrew",
        "/usr/local/Cellar",
        "/home/linuxbrew",
        "/snap",
    ];
    if managed.iter().any(|root| exe.starts_with(root)) {
        return Some(format!(
            "lembas ({shown}) was installed by a package manager: update it with that package manager"
        ));
    }
    let dir = exe.parent()?;
    let probe = dir.join(format!(".lembas-write-test-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!(
            "lembas cannot write {} ({e}): update it the way it was installed, or as someone who may write there",
            dir.display()
        )),
    }
}

/// Unpacks the archive's programs beside `exe` under temporary names, then moves each over its
/// old self (a rename: a program running from the old file goes on). Nothing is moved unless
/// all were unpacked. Answers the programs put in place.
fn place(archive: &[u8], dir: &Path, exe: &Path) -> Result<Vec<String>, String> {
    let mut unpacked: Vec<(PathBuf, PathBuf)> = Vec::new();
    let result = unpack(archive, dir, exe, &mut unpacked);
    if let Err(e) = result {
        for (partial, _) in &unpacked {
            let _ = std::fs::remove_file(partial);
        }
        return Err(e);
    }
    if !unpacked.iter().any(|(_, target)| target == exe) {
        for (partial, _) in &unpacked {
            let _ = std::fs::remove_file(partial);
        }
        return Err("the archive holds no lembas program".into());
    }
    // The launcher first: lembas last, so a failure between leaves the old lembas working.
    unpacked.sort_by_key(|(_, target)| target == exe);
    let mut placed = Vec::new();
    for (partial, target) in &unpacked {
        std::fs::rename(partial, target).map_err(|e| format!("{} could not be replaced: {e}", target.display()))?;
        placed.push(target.file_name().unwrap_or_default().to_string_lossy().into_owned());
    }
    Ok(placed)
}

fn unpack(archive: &[u8], dir: &Path, exe: &Path, unpacked: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let entries = tar.entries().map_err(|e| format!("the archive cannot be read: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("the archive cannot be read: {e}"))?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        // Only the programs, by name at the archive's root (or in its one folder): nothing an
        // archive names can be written anywhere else.
        let Some(name) = path.file_name().and_then(|n| n.to_str()).filter(|n| PROGRAMS.contains(n)) else {
            continue;
        };
        if path.components().count() > 2 || !entry.header().entry_type().is_file() {
            continue;
        }
        let target = if name == "lembas" { exe.to_path_buf() } else { dir.join(name) };
        let partial = dir.join(format!(".{name}.update-{}", std::process::id()));
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| format!("the archive cannot be read: {e}"))?;
        std::fs::write(&partial, &bytes).map_err(|e| format!("{} could not be written: {e}", partial.display()))?;
        unpacked.push((partial.clone(), target));
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_named_beside_the_manifest_is_found_there() {
        let base = "https://example.test/releases/latest.json";
        assert_eq!(joined(base, "lembas-1.2.0.tar.gz"), "https://example.test/releases/lembas-1.2.0.tar.gz");
        assert_eq!(joined(base, "https://cdn.test/a.tar.gz"), "https://cdn.test/a.tar.gz");
    }

    #[tokio::test]
    async fn a_newer_release_is_looked_for_once_a_day_and_mentioned_once_a_day() {
        let server = lembas_testkit::ReleaseServer::start().await;
        server.serve("/latest.json", r#"{"version": "99.0.0", "archives": {}}"#);
        let dir = tempfile::tempdir().unwrap();
        let home = lembas_config::Home::under(dir.path());
        let settings =
            lembas_config::UpdateSettings { url: Some(format!("{}/latest.json", server.url())), check: None };
        let now = 10 * DAY_MS;
        assert_eq!(mention(&home, now), None, "nothing was looked for yet");
        check_in_background(&home, &settings, now);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !checked_file(&home).exists() {
            assert!(std::time::Instant::now() < deadline, "the check never wrote what it found");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let said = mention(&home, now).expect("a newer lembas is mentioned");
        assert!(said.starts_with("lembas 99.0.0 is out"), "{said}");
        // The release lists no build for this platform: not "`lembas update` installs it".
        assert!(said.contains(&format!("no build for {}", platform())) && !said.contains("lembas update"), "{said}");
        assert_eq!(mention(&home, now + DAY_MS / 2), None, "once a day at most");
        assert!(mention(&home, now + DAY_MS + 1).is_some());
        // Read today already: not again until tomorrow.
        server.serve("/latest.json", r#"{"version": "100.0.0", "archives": {}}"#);
        check_in_background(&home, &settings, now + 1);
        let checked: Checked = serde_json::from_slice(&std::fs::read(checked_file(&home)).unwrap()).unwrap();
        assert_eq!(checked.newest.as_deref(), Some("99.0.0"));
    }

    #[test]
    fn an_install_by_cargo_or_a_package_manager_is_theirs_to_update() {
        assert!(managed_elsewhere(Path::new("/home/me/.cargo/bin/lembas")).unwrap().contains("cargo"));
        assert!(managed_elsewhere(Path::new("/usr/bin/lembas")).unwrap().contains("package manager"));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(managed_elsewhere(&dir.path().join("lembas")), None);
    }
}
