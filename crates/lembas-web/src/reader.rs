//! Who reads an HTML page or a PDF ([`crate::convert::heavy`]): `lembas-reader`, a program of its
//! own installed beside lembas — the body on its standard input, the content type as its argument,
//! the text as JSON on its standard output, ended at a time limit — or, for the tests of the
//! crates below the binary, a function in this process.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::convert::{Converted, NotText, light};

/// The reader's program name, beside lembas.
pub const PROGRAM: &str = "lembas-reader";

/// How long a page or a PDF may take to read.
const READ_TIME: Duration = Duration::from_secs(30);

/// The most text a reader may give back.
const MAX_TEXT: usize = 64 * 1024 * 1024;

/// Reads what a fetch brought back.
#[derive(Debug, Clone)]
pub enum Reader {
    /// `lembas-reader` at this path.
    Program(PathBuf),
    /// A function in this process (`lembas_web::convert`): tests below the binary.
    Inline(fn(&str, &[u8], bool) -> Result<Converted, NotText>),
}

impl Default for Reader {
    fn default() -> Self {
        Reader::beside_this_program()
    }
}

impl Reader {
    /// `lembas-reader` beside the running program — or, for a test program in
    /// `target/<profile>/deps/`, in `target/<profile>/`, where cargo builds it.
    pub fn beside_this_program() -> Reader {
        let exe = std::env::current_exe().unwrap_or_default();
        Reader::Program(beside(&exe))
    }

    /// The text of `body`, sent as `content_type`; `cut`: it was cut at the size limit.
    pub async fn read(&self, content_type: &str, body: Vec<u8>, cut: bool) -> Result<Converted, NotText> {
        if let Some(converted) = light(content_type, &body, cut)? {
            return Ok(converted);
        }
        match self {
            Reader::Inline(convert) => {
                let (convert, content_type) = (*convert, content_type.to_owned());
                tokio::task::spawn_blocking(move || convert(&content_type, &body, cut))
                    .await
                    .map_err(|e| NotText::Unreadable(e.to_string()))?
            }
            Reader::Program(program) => run(program, content_type, body).await,
        }
    }
}

fn beside(exe: &Path) -> PathBuf {
    let sibling = exe.with_file_name(PROGRAM);
    let above = exe.parent().filter(|p| p.ends_with("deps")).and_then(Path::parent).map(|p| p.join(PROGRAM));
    match above {
        Some(above) if !sibling.is_file() && above.is_file() => above,
        _ => sibling,
    }
}

/// What `lembas-reader` answers for `body`, within [`READ_TIME`].
async fn run(program: &Path, content_type: &str, body: Vec<u8>) -> Result<Converted, NotText> {
    let mut command = tokio::process::Command::new(program);
    for name in lembas_sys::child_env::secrets_present() {
        command.env_remove(name);
    }
    let mut child = command
        .arg(content_type)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            NotText::Unreadable(format!(
                "{PROGRAM}, which reads pages and PDFs, could not be started ({}: {e}); reinstall lembas",
                program.display()
            ))
        })?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let work = async {
        // Written while the answer is read: a large page fills both pipes.
        let write = async move {
            let _ = stdin.write_all(&body).await;
            drop(stdin);
        };
        let mut answer = Vec::new();
        let mut limited = (&mut stdout).take(MAX_TEXT as u64);
        let read = limited.read_to_end(&mut answer);
        let ((), read) = tokio::join!(write, read);
        read.map_err(|e| NotText::Unreadable(e.to_string()))?;
        let status = child.wait().await.map_err(|e| NotText::Unreadable(e.to_string()))?;
        if !status.success() {
            return Err(NotText::Unreadable(format!("{PROGRAM} failed ({status})")));
        }
        serde_json::from_slice::<Result<Converted, NotText>>(&answer)
            .map_err(|e| NotText::Unreadable(format!("{PROGRAM} answered what is not its answer ({e})")))?
    };
    match tokio::time::timeout(READ_TIME, work).await {
        Ok(read) => read,
        Err(_) => Err(NotText::Unreadable(format!("reading it took more than {} seconds", READ_TIME.as_secs()))),
    }
}

/// `lembas-reader`'s work: the body on standard input, the content type as the first argument;
/// the answer — `{"Ok": {title, text}}` or `{"Err": …}` — as JSON on standard output.
pub fn serve_one() -> std::process::ExitCode {
    use std::io::{Read, Write};
    let Some(content_type) = std::env::args().nth(1) else {
        eprintln!("{PROGRAM} is started by lembas, as `{PROGRAM} CONTENT-TYPE` with the body on its standard input");
        return std::process::ExitCode::from(2);
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        eprintln!("{PROGRAM}: {e}");
        return std::process::ExitCode::FAILURE;
    }
    confine();
    let answer = crate::convert(&content_type, &body, false);
    let text = serde_json::to_vec(&answer).expect("an answer serializes");
    match std::io::stdout().write_all(&text) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(_) => std::process::ExitCode::FAILURE,
    }
}

/// From here on this process opens no file and makes no connection (Landlock, as far as the
/// kernel has it): it has its body, and answers on the standard output it already holds. A
/// parser a hostile document took over can do no more than print.
fn confine() {
    use landlock::{ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr};
    let abi = ABI::V4;
    let restricted = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
    if let Err(e) = restricted {
        eprintln!("{PROGRAM}: reading unconfined: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_program_finds_the_reader_where_cargo_builds_it() {
        let dir = std::env::temp_dir().join(format!("lembas-reader-test-{}", std::process::id()));
        let deps = dir.join("debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        assert_eq!(beside(&deps.join("web-123")), deps.join(PROGRAM), "none built: the sibling is named");
        std::fs::write(dir.join("debug").join(PROGRAM), "").unwrap();
        assert_eq!(beside(&deps.join("web-123")), dir.join("debug").join(PROGRAM));
        assert_eq!(beside(&dir.join("bin/lembas")), dir.join("bin").join(PROGRAM));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_missing_reader_is_said_and_text_needs_none() {
        let reader = Reader::Program(PathBuf::from("/nonexistent/lembas-reader"));
        let why = reader.read("text/html", b"<p>x</p>".to_vec(), false).await.unwrap_err();
        assert!(matches!(&why, NotText::Unreadable(w) if w.contains("reinstall lembas")), "{why:?}");
        let text = reader.read("text/plain", b"plain".to_vec(), false).await.unwrap();
        assert_eq!(text.text, "plain");
    }
}
