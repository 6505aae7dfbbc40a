//! The person's credentials (`protected.home` in `permission/hardline.json`): which places
//! hold them, whether a path or a glob a command reads may name one, and which ones a command
//! line's programs are made to use. Reading one by name is asked in every mode; the sandbox
//! keeps the rest of the commands from reading them at all.

use std::path::{Path, PathBuf};

use lembas_spec::render;

use crate::command::SUBSTITUTION;
use crate::hardline::{Context, spec};

/// The person's credentials under `home` (`protected.home`), each with what it holds: no
/// command reads them in the sandbox, and reading one by name is asked in every mode.
pub fn credentials(home: &Path) -> Vec<(PathBuf, &'static str)> {
    spec().protected.home.iter().map(|(rel, what)| (home.join(rel), what.as_str())).collect()
}

/// Why reading `path` (real, absolute) is asked in every mode, if it is: it is, or is in, one of
/// the person's credentials — or, when `vague` (a glob, a word cut short), it may name one.
pub fn credential(path: &Path, vague: bool, ctx: &Context) -> Option<String> {
    let home = ctx.home.as_deref()?;
    let (place, what) = credentials(home)
        .into_iter()
        .find(|(place, _)| path.starts_with(place) || (vague && place.starts_with(path)))?;
    let named = if path.starts_with(&place) { path } else { place.as_path() };
    Some(render(&spec().protected.credentials, &[("path", &named.display().to_string()), ("what", what)]))
}

/// The credentials a command line's programs are made to use — `git push` and `ssh` the SSH
/// keys and saved passwords, `aws` the cloud credentials, `kubectl` the cluster's — each as
/// `protected.home` says what it holds: what the card that asks to run it outside the sandbox
/// names.
pub fn credentials_used(line: &str) -> Vec<&'static str> {
    let mut places: Vec<&str> = Vec::new();
    for part in crate::command::split(line) {
        // The subcommand: the first word that is neither an option nor the value of one that
        // takes it (`git -c k=v -C dir push`).
        let mut words = part.argv.iter().skip(1).map(String::as_str);
        let mut sub = "";
        while let Some(word) = words.next() {
            if matches!(word, "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                words.next();
            } else if !word.starts_with('-') {
                sub = word;
                break;
            }
        }
        places.extend(match part.program() {
            "ssh" | "scp" | "sftp" | "ssh-add" => &[".ssh"][..],
            "rsync" if part.argv.iter().any(|a| a.contains(':')) => &[".ssh"],
            "git" if matches!(sub, "push" | "pull" | "fetch" | "clone" | "ls-remote" | "submodule" | "remote") => {
                &[".ssh", ".git-credentials"]
            }
            "gpg" | "gpg2" => &[".gnupg"],
            "git" if part.argv.iter().any(|a| a == "-S" || a.starts_with("--gpg-sign")) => &[".gnupg"],
            "aws" | "sam" | "cdk" => &[".aws"],
            "az" => &[".azure"],
            "gcloud" | "gsutil" | "bq" => &[".config/gcloud"],
            "kubectl" | "helm" | "k9s" | "kustomize" => &[".kube"],
            "docker" | "podman" if matches!(sub, "push" | "pull" | "login" | "build") => &[".docker/config.json"],
            "curl" | "wget" | "ftp" if part.argv.iter().any(|a| a.starts_with("--netrc") || a == "-n") => &[".netrc"],
            _ => &[],
        });
    }
    let mut said: Vec<&'static str> = Vec::new();
    for place in places {
        if let Some(what) = spec().protected.home.get(place).map(String::as_str)
            && !said.contains(&what)
        {
            said.push(what);
        }
    }
    said
}

/// A glob word as an absolute pattern (`~/` and the working folder read in, `..` by its text),
/// when nothing in it but the glob is unknown.
pub(crate) fn glob_of(word: &str, scope: &crate::words::Scope) -> Option<String> {
    if word.contains(['$', '`', '{']) || word.contains(SUBSTITUTION) {
        return None;
    }
    let absolute = match word.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", scope.home.as_ref()?.display()),
        None if word.starts_with('/') => word.to_owned(),
        None if word.starts_with('~') => return None,
        None => format!("{}/{word}", scope.cwd.as_ref()?.display()),
    };
    Some(crate::words::settled(PathBuf::from(absolute)).to_string_lossy().into_owned())
}

/// Whether a file `glob` matches could be `place` or lie inside it: each of its components, as
/// far as both go, matches the place's.
pub(crate) fn glob_may_name(glob: &str, place: &Path) -> bool {
    let place: Vec<String> = place.components().skip(1).map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let glob: Vec<&str> = glob.split('/').filter(|c| !c.is_empty()).collect();
    glob.iter().zip(&place).all(|(g, p)| component_matches(g.as_bytes(), p.as_bytes()))
}

/// One file name against one glob component: `*`, `?`, and a `[…]` class taken as any one
/// character (so it may match more than bash would, never less).
fn component_matches(glob: &[u8], name: &[u8]) -> bool {
    match glob.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| component_matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && component_matches(rest, &name[1..]),
        Some((b'[', rest)) => {
            let after = rest.iter().position(|&c| c == b']').map_or(rest, |end| &rest[end + 1..]);
            !name.is_empty() && component_matches(after, &name[1..])
        }
        Some((c, rest)) => name.first() == Some(c) && component_matches(rest, &name[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::split;
    use crate::hardline::{Floor, line_floor};

    fn ctx() -> Context {
        Context { home: Some("/home/ada".into()), root: "/home/ada/src/app".into(), ..Context::default() }
    }

    fn floor(line: &str) -> Option<Floor> {
        line_floor(line, &split(line), Path::new("/home/ada/src/app"), &|p: &Path| p.to_path_buf(), &ctx())
    }

    fn asked_line(line: &str) -> bool {
        matches!(floor(line), Some(Floor::Ask(_)))
    }

    #[test]
    fn reading_credentials_by_name_is_asked() {
        for line in [
            "head ~/.ssh/id_rsa",
            "cat ~/.aws/credentials",
            "cat $HOME/.netrc",
            "tail -n 3 ~/.git-credentials",
            "base64 < ~/.kube/config",
            "cp ~/.docker/config.json /tmp/x",
            "tar -czf /tmp/k.tgz ~/.gnupg",
            "grep -r secret ~/.config/gcloud",
            "cat ~/.ss*/id_*",
            "cat ~/.*/credentials",
            "cat ~/.[a-z]sh/*",
            "cat ../../.netr?",
            "cd ~/.ssh && cat id_ed25519",
            "less ~/.azure/accessTokens.json",
        ] {
            assert!(asked_line(line), "{line}: {:?}", floor(line));
        }
        for line in [
            "cat ~/.ssh.txt",
            "ls ~/.ssh",
            "echo ~/.ssh/id_rsa",
            "cat ~/.bashrc",
            "grep -r x src",
            "cat ../lemb*/config/cred*",
            "cat ~/notes/*.md",
            "head ~/.bash*",
        ] {
            assert_eq!(floor(line), None, "{line}");
        }
    }

    #[test]
    fn the_credentials_a_command_is_made_to_use() {
        assert_eq!(credentials_used("git push origin main"), ["SSH keys", "saved passwords"]);
        assert_eq!(credentials_used("git -c core.sshCommand=x -C sub fetch"), ["SSH keys", "saved passwords"]);
        assert_eq!(credentials_used("cargo test && aws s3 ls"), ["cloud credentials"]);
        assert_eq!(credentials_used("kubectl get pods | grep x"), ["cluster credentials"]);
        assert!(credentials_used("git status && cargo build").is_empty());
    }
}
