//! A `web_fetch` rule's pattern read as a URL, part by part: scheme, host, port, path. Matched
//! as text, a star in `http://*.example.org/*` could run from the host into the path and match
//! `http://127.0.0.1/.example.org/`; read as a URL, a star in the host matches labels of the host
//! only, and a star in the path matches the path only.
//!
//! The forms a person writes (`docs/permissions.md`):
//! - `docs.rs`, `*.github.com` — a host, any scheme and port;
//! - `localhost:3000` — a host and a port;
//! - `https://docs.rs/serde/*` — a whole URL: its scheme, host, port (the scheme's own when none
//!   is written) and path (a `*` runs over any characters of the path and query; `/a/*` also
//!   matches `/a`);
//! - `*` alone, or a pattern whose host is `*` — every URL: the whole tool's rule, which never
//!   opens the person's own network (it names no host).

use url::{Host, Url};

/// A pattern as read; `None` parts match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlPattern {
    scheme: Option<String>,
    host: HostPattern,
    port: Option<PortPattern>,
    path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `*`: every host.
    Any,
    /// A host written out, as the URL parser writes it (lower case, an address in its one form).
    Exact(String),
    /// A domain name with stars in it: each star matches within one label, except a leading
    /// `*.`, which matches one or more whole labels. Never matches an address.
    Wild(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortPattern {
    Any,
    Is(u16),
}

impl UrlPattern {
    /// Reads a pattern; `None` when it cannot be read as a URL pattern (it then matches nothing).
    pub(crate) fn parse(written: &str) -> Option<UrlPattern> {
        let written = written.trim();
        if written == "*" {
            return Some(UrlPattern { scheme: None, host: HostPattern::Any, port: None, path: None });
        }
        let (scheme, rest) = match written.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
            None => (None, written),
        };
        if let Some(s) = &scheme
            && !matches!(s.as_str(), "http" | "https" | "*")
        {
            return None;
        }
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], Some(&rest[at..])),
            None => (rest, None),
        };
        let (host, port) = split_port(authority)?;
        let port = match port {
            Some("*") => Some(PortPattern::Any),
            Some(p) => Some(PortPattern::Is(p.parse().ok()?)),
            // A whole URL means its scheme's own port, as a browser would.
            None => match scheme.as_deref() {
                Some("http") => Some(PortPattern::Is(80)),
                Some("https") => Some(PortPattern::Is(443)),
                _ => None,
            },
        };
        let path = path.map(|p| if p.starts_with('?') { format!("/{p}") } else { p.to_owned() });
        let scheme = scheme.filter(|s| s != "*");
        Some(UrlPattern { scheme, host: HostPattern::parse(host)?, port, path })
    }

    /// Whether this pattern names hosts (not `*`): only such a rule may open the person's own
    /// network.
    pub(crate) fn names_a_host(&self) -> bool {
        !matches!(self.host, HostPattern::Any)
    }

    /// Whether `url` is one this pattern covers.
    pub(crate) fn matches(&self, url: &Url) -> bool {
        if self.scheme.as_deref().is_some_and(|s| s != url.scheme()) {
            return false;
        }
        let Some(host) = url.host() else { return false };
        if !self.host.matches(&host) {
            return false;
        }
        if let Some(PortPattern::Is(port)) = self.port
            && url.port_or_known_default() != Some(port)
        {
            return false;
        }
        match &self.path {
            None => true,
            Some(pattern) => {
                let mut here = url.path().to_owned();
                if let Some(query) = url.query() {
                    here.push('?');
                    here.push_str(query);
                }
                path_matches(pattern, &here)
            }
        }
    }
}

/// `host` and the port after it, if any: `[::1]:8080`, `localhost:3000`, `docs.rs`.
fn split_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        return Some((&authority[..inside.len() + 2], port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port))),
        None => Some((authority, None)),
    }
}

impl HostPattern {
    fn parse(host: &str) -> Option<HostPattern> {
        if host == "*" {
            return Some(HostPattern::Any);
        }
        if host.contains('*') {
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            let labels: Vec<String> = host.split('.').map(str::to_owned).collect();
            if labels.iter().any(|l| l.is_empty()) {
                return None;
            }
            return Some(HostPattern::Wild(labels));
        }
        // The URL parser's own reading: `127.1`, `0x7f000001` and `LOCALHOST.` are written the
        // way the URLs they would be compared with are.
        let url = Url::parse(&format!("http://{host}/")).ok()?;
        let name = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
        Some(HostPattern::Exact(name))
    }

    fn matches(&self, host: &Host<&str>) -> bool {
        match (self, host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Exact(want), Host::Domain(name)) => name.trim_end_matches('.').eq_ignore_ascii_case(want),
            (HostPattern::Exact(want), Host::Ipv4(ip)) => ip.to_string() == *want,
            (HostPattern::Exact(want), Host::Ipv6(ip)) => format!("[{ip}]") == *want,
            (HostPattern::Wild(labels), Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                let have: Vec<&str> = name.split('.').collect();
                wild_labels(labels, &have)
            }
            (HostPattern::Wild(_), _) => false,
        }
    }
}

/// Whether a host's labels match the pattern's: a leading lone `*` takes one or more whole
/// labels; every other label matches one label, its stars within it.
fn wild_labels(pattern: &[String], have: &[&str]) -> bool {
    match pattern.split_first() {
        Some((first, rest)) if first == "*" && !rest.is_empty() => {
            have.len() > rest.len() && labels_equal(rest, &have[have.len() - rest.len()..])
        }
        _ => labels_equal(pattern, have),
    }
}

fn labels_equal(pattern: &[String], have: &[&str]) -> bool {
    pattern.len() == have.len() && pattern.iter().zip(have).all(|(p, h)| star_match(p, h))
}

/// A path pattern against a path (and its query): `*` runs over any characters; a pattern that
/// ends in `/*` also matches the path without that tail.
fn path_matches(pattern: &str, path: &str) -> bool {
    star_match(pattern, path)
        || pattern.strip_suffix("/*").is_some_and(|bare| star_match(if bare.is_empty() { "/" } else { bare }, path))
}

/// Whether `text` is `pattern` with each `*` standing for any run of characters.
fn star_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in middle {
        let Some(at) = rest.find(part) else { return false };
        rest = &rest[at + part.len()..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, url: &str) -> bool {
        UrlPattern::parse(pattern).is_some_and(|p| p.matches(&Url::parse(url).unwrap()))
    }

    #[test]
    fn a_host_wildcard_matches_labels_of_the_host_only() {
        assert!(m("http://*.example.org/*", "http://api.example.org/x"));
        assert!(m("http://*.example.org/*", "http://a.b.example.org/"));
        assert!(!m("http://*.example.org/*", "http://example.org/"));
        assert!(!m("http://*.example.org/*", "http://127.0.0.1/.example.org/"));
        assert!(!m("http://*.example.org/*", "http://127.0.0.1/x.example.org/y"));
        assert!(!m("http://*.example.org/*", "http://evil.net/?.example.org/"));
        assert!(!m("http://*.example.org/*", "http://evil.example.org.attacker.net/"));
        assert!(!m("*.example.org", "http://127.0.0.1/a.example.org"));
        assert!(m("api-*.example.org", "https://api-eu.example.org/"));
        assert!(!m("api-*.example.org", "https://api-eu.x.example.org/"));
        assert!(!m("*.0.0.1", "http://127.0.0.1/"), "a wildcard names domain names, not addresses");
    }

    #[test]
    fn scheme_port_and_path_are_each_their_own_part() {
        assert!(m("https://docs.rs/*", "https://docs.rs/serde"));
        assert!(m("https://docs.rs/*", "https://docs.rs"));
        assert!(!m("https://docs.rs/*", "http://docs.rs/serde"));
        assert!(!m("https://docs.rs/*", "https://docs.rs:8443/serde"));
        assert!(m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/public/a?b=c"));
        assert!(m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/public"));
        assert!(!m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/private/a"));
        assert!(!m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/public/../private/a"));
        assert!(!m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/public/%2e%2e/private/a"));
        assert!(!m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:9090/public/a"));
        assert!(!m("http://127.0.0.1:8080/public/*", "http://127.0.0.1:8080/publicity"));
        assert!(m("localhost:3000", "http://localhost:3000/x") && !m("localhost:3000", "http://localhost:3001/"));
        assert!(m("docs.rs", "http://docs.rs:8080/") && m("DOCS.rs", "https://docs.RS./x"));
        assert!(m("127.1", "http://127.0.0.1/"), "an address in any spelling is the same address");
        assert!(m("[::1]:8080", "http://[0:0::1]:8080/"));
        assert!(m("*://docs.rs:*/*", "http://docs.rs:1/"));
        assert!(!m("http://docs.rs@127.0.0.1/", "http://127.0.0.1/"), "a pattern with user info is not read");
        assert!(!m("docs.rs", "http://docs.rs@127.0.0.1/"));
    }

    #[test]
    fn only_a_pattern_that_names_a_host_names_it() {
        assert!(!UrlPattern::parse("*").unwrap().names_a_host());
        assert!(!UrlPattern::parse("https://*/*").unwrap().names_a_host());
        assert!(!UrlPattern::parse("*:8080").unwrap().names_a_host());
        assert!(UrlPattern::parse("*.corp.example").unwrap().names_a_host());
        assert!(UrlPattern::parse("localhost").unwrap().names_a_host());
        assert!(UrlPattern::parse("ftp://x/").is_none());
    }
}
