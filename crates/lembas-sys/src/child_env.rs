//! The environment a process lembas starts is given: the person's own, less lembas' secrets —
//! every `LEMBAS_*` variable (`LEMBAS_API_KEY` among them) and every variable lembas reads a
//! key from (a search provider's `key_env`, a knowledge base's embedder's). A command, a hook or
//! a server that needs one of them is given it by name where it is configured (an MCP server's
//! `env`), never by inheritance.
//!
//! The names read from the configuration are registered as lembas starts ([`keep_secret`]);
//! every place that starts a process removes [`secrets_present`] from what it passes on.

use std::ffi::{OsStr, OsString};
use std::sync::RwLock;

/// The variables lembas reads keys from, beyond its own `LEMBAS_*`.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// What every variable of lembas' own begins with.
pub const OWN_PREFIX: &str = "LEMBAS_";

/// Marks `name` as a variable lembas reads a key from: no process it starts inherits it.
pub fn keep_secret(name: &str) {
    let name = name.trim();
    if name.is_empty() {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !secrets.iter().any(|n| n == name) {
        secrets.push(name.to_owned());
    }
}

/// Whether `name` is one of lembas' secrets.
pub fn is_secret(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else { return false };
    name.starts_with(OWN_PREFIX)
        || SECRETS.read().unwrap_or_else(std::sync::PoisonError::into_inner).iter().any(|n| n == name)
}

/// The secrets set in lembas' environment now: what every process it starts must have removed.
pub fn secrets_present() -> Vec<OsString> {
    std::env::vars_os().map(|(name, _)| name).filter(|name| is_secret(name)).collect()
}

/// The environment a process lembas starts is given, for a start that clears it first.
pub fn inherited() -> Vec<(OsString, OsString)> {
    std::env::vars_os().filter(|(name, _)| !is_secret(name)).collect()
}

/// Takes lembas' secrets out of `command`'s environment (what it would inherit).
pub fn scrub_std(command: &mut std::process::Command) -> &mut std::process::Command {
    for name in secrets_present() {
        command.env_remove(name);
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_variables_and_registered_keys_are_secrets_others_are_not() {
        assert!(is_secret(OsStr::new("LEMBAS_API_KEY")));
        assert!(is_secret(OsStr::new("LEMBAS_ANYTHING")));
        assert!(!is_secret(OsStr::new("PATH")));
        assert!(!is_secret(OsStr::new("SYS_TEST_SEARCH_KEY")));
        keep_secret("SYS_TEST_SEARCH_KEY");
        keep_secret("  ");
        assert!(is_secret(OsStr::new("SYS_TEST_SEARCH_KEY")));
        assert!(!is_secret(OsStr::new("SYS_TEST_SEARCH")), "a name, not a prefix");
        assert!(inherited().iter().all(|(name, _)| !is_secret(name)));
    }
}
