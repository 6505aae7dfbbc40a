//! Where a URL leads, as the permission rules judge it: the web tools read `http` and `https`
//! only, and never the person's own network — a loopback, private, link-local or otherwise
//! unroutable address, or a name that means this machine — unless a rule allows that URL or host
//! by name. A page a model fetched can tell it to fetch another: without this, a prompt injected
//! into a page could read the router's admin page or the cloud's metadata service and carry what
//! it found away in the next URL.
//!
//! Judged here from the URL alone; a name that resolves to such an address is refused where it is
//! resolved (`lembas-web`), by [`is_private`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use crate::{Action, Subject};

/// A URL the web tools may be asked to fetch, read once: the text the model gave, parsed.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: Url,
}

/// Why a URL is not one the web tools fetch at all.
pub fn parse(text: &str) -> Result<Target, String> {
    let url = Url::parse(text.trim())
        .map_err(|e| format!("{text:?} is not a URL ({e}); give a full http:// or https:// URL."))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(Target { url }),
        "http" | "https" => Err(format!("{text:?} names no host.")),
        other => Err(format!("web_fetch reads http:// and https:// URLs only, not {other}:.")),
    }
}

impl Target {
    /// The host as rules name it: a name in lower case, an address as written in a URL.
    pub fn host(&self) -> String {
        self.url.host_str().unwrap_or_default().to_ascii_lowercase()
    }

    /// The host and the port a URL names or implies, `host:port`.
    pub fn host_and_port(&self) -> String {
        format!("{}:{}", self.host(), self.url.port_or_known_default().unwrap_or(0))
    }

    /// Why this URL leads into the person's own network, if it does: an address that is not
    /// on the public internet, or a name that always means this machine.
    pub fn private(&self) -> Option<String> {
        let host = self.host();
        let private = match self.url.host() {
            Some(Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
            None => false,
        };
        private.then(|| private_reason(&host))
    }
}

impl crate::Judge {
    /// A URL is fetched only over http or https, and never from the person's own network unless
    /// a rule names that URL or host and allows it or has it asked (a rule for the whole tool
    /// does not).
    pub(crate) fn url_floor(&self, tool: &str, url: &str) -> Result<(), String> {
        let target = parse(url)?;
        match target.private() {
            Some(reason) if !self.opens(tool, &target) => Err(reason),
            _ => Ok(()),
        }
    }

    fn opens(&self, tool: &str, target: &Target) -> bool {
        matches!(self.rules.matching_by_name(tool, Subject::Url(target)), Some(Action::Allow | Action::Ask))
    }

    /// Whether a fetch of `from` may follow the server's redirect to `to`: a redirect is a new
    /// fetch, so it is followed only on the same site (the same scheme, host and port — another
    /// port of one address is another server) and only where the rules and `mode` would run a
    /// fetch of `to` itself without asking, over the private-network floor. Else why not, for
    /// the model, which may then fetch `to` as a call of its own (judged, and asked, as any).
    pub fn redirect(&self, mode: crate::Mode, tool: &str, from: &str, to: &str) -> Result<(), String> {
        let (start, target) = (parse(from)?, parse(to)?);
        let site = |t: &Target| (t.url.scheme().to_owned(), t.host(), t.url.port_or_known_default());
        if site(&start) != site(&target) {
            return Err("it leads to another site".to_owned());
        }
        let risk = lembas_spec::tool(tool).map_or(lembas_spec::RiskClass::Execute, |d| d.risk);
        let call = crate::Call { url: Some(to), ..crate::Call::new(tool, risk, None, &[]) };
        match self.evaluate(mode, &call, &self.ctx.root, &|p: &std::path::Path| p.to_path_buf()) {
            crate::Decision::Allow => Ok(()),
            crate::Decision::Ask => Err("the permission rules would ask before fetching it".to_owned()),
            crate::Decision::Refuse(why) => Err(why),
        }
    }

    /// Whether a rule names the URL `url` and allows it or has it asked: what lets a fetch the
    /// judge let through reach an address in the person's own network when a name resolves to
    /// one.
    pub fn opens_private(&self, tool: &str, url: &str) -> bool {
        parse(url).is_ok_and(|target| self.opens(tool, &target))
    }
}

/// What the model is told when a URL leads into the person's own network.
pub fn private_reason(host: &str) -> String {
    format!("Refused: {host} is on this computer or its private network. {UNLESS_ALLOWED}")
}

/// How the person lets the web tools reach their own network, said with every refusal of it.
pub const UNLESS_ALLOWED: &str = "web_fetch does not reach those unless the person allows it with a rule naming \
     the URL or host ([permissions.web_fetch] in lembas' config.toml).";

/// Whether `ip` is not a public internet address: loopback, private, shared (carrier NAT),
/// link-local (the cloud metadata services), unspecified, multicast, broadcast, documentation
/// and benchmarking ranges, reserved; an IPv6 address by the IPv4 address it carries, if any.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => is_private_v6(v6),
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // 100.64.0.0/10: shared address space, carrier NAT.
        || (a == 100 && (64..128).contains(&b))
        // 192.0.0.0/24: protocol assignments.
        || (a == 192 && b == 0 && c == 0)
        // 198.18.0.0/15: benchmarking.
        || (a == 198 && (18..20).contains(&b))
        // 240.0.0.0/4: reserved.
        || a >= 240
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_private_v4(v4);
    }
    let segments = ip.segments();
    // 64:ff9b::/96, NAT64: the IPv4 address is the last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., hi, lo] = segments;
        return is_private_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 the former site-local.
        || (segments[0] & 0xfe00) == 0xfc00
        || (segments[0] & 0xffc0) == 0xfe80
        || (segments[0] & 0xffc0) == 0xfec0
        // 2001:db8::/32, documentation.
        || (segments[0] == 0x2001 && segments[1] == 0x0db8)
        // ::/96, the former IPv4-compatible addresses.
        || segments[..6] == [0; 6]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private(url: &str) -> bool {
        parse(url).unwrap().private().is_some()
    }

    #[test]
    fn addresses_of_this_machine_and_its_network_are_private_however_they_are_written() {
        for url in [
            "http://127.0.0.1/",
            "http://127.1:8080/x",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://localhost:3000/",
            "http://LOCALHOST./",
            "http://app.localhost/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/admin",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[64:ff9b::a00:1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::]/",
        ] {
            assert!(private(url), "{url} is private");
        }
        for url in
            ["https://docs.rs/serde", "http://93.184.216.34/", "http://[2606:4700::1111]/", "https://172.32.0.1/"]
        {
            assert!(!private(url), "{url} is public");
        }
    }

    #[test]
    fn only_http_and_https_urls_with_a_host_are_fetched() {
        assert!(parse("file:///etc/passwd").unwrap_err().contains("http:// and https:// URLs only"));
        assert!(parse("ftp://example.com/").is_err());
        assert!(parse("docs.rs").unwrap_err().contains("not a URL"));
        let t = parse(" https://Docs.RS/serde ").unwrap();
        assert_eq!((t.host(), t.host_and_port()), ("docs.rs".to_owned(), "docs.rs:443".to_owned()));
    }

    #[test]
    fn a_fetch_is_asked_where_commands_are_and_never_reaches_the_private_network_unless_a_rule_names_it() {
        use crate::{Action, Call, Decision, Judge, Mode, Source};
        use lembas_spec::RiskClass;
        use std::path::{Path, PathBuf};
        let mut judge = judge_with(&[]);
        let fetch = |judge: &Judge, mode: Mode, url: &str| {
            let call = Call { url: Some(url), ..Call::new("web_fetch", RiskClass::Execute, None, &[]) };
            judge.evaluate(mode, &call, Path::new("/home/ada/app"), &|p: &Path| PathBuf::from(p))
        };
        assert_eq!(fetch(&judge, Mode::Manual, "https://docs.rs/"), Decision::Ask);
        assert_eq!(fetch(&judge, Mode::Edit, "https://docs.rs/"), Decision::Ask);
        assert_eq!(fetch(&judge, Mode::Auto, "https://docs.rs/"), Decision::Allow);
        assert!(matches!(fetch(&judge, Mode::Plan, "https://docs.rs/"), Decision::Refuse(_)));
        for mode in [Mode::Auto, Mode::Manual] {
            let Decision::Refuse(why) = fetch(&judge, mode, "http://169.254.169.254/latest/") else { panic!() };
            assert!(why.contains("169.254.169.254") && why.contains("[permissions.web_fetch]"), "{why}");
            assert!(matches!(fetch(&judge, mode, "file:///etc/passwd"), Decision::Refuse(_)));
        }
        // A rule for the whole tool does not open the private network; one that names it does.
        judge.rules.add("web_fetch", None, Action::Allow, Source::Global);
        assert_eq!(fetch(&judge, Mode::Plan, "https://docs.rs/"), Decision::Allow);
        assert!(matches!(fetch(&judge, Mode::Auto, "http://127.0.0.1:8080/x"), Decision::Refuse(_)));
        judge.rules.add("web_fetch", Some("http://127.0.0.1:8080/*"), Action::Allow, Source::Global);
        judge.rules.add("web_fetch", Some("tracker.example"), Action::Deny, Source::Project);
        assert_eq!(fetch(&judge, Mode::Manual, "http://127.0.0.1:8080/x"), Decision::Allow);
        assert!(judge.opens_private("web_fetch", "http://127.0.0.1:8080/x"));
        assert!(!judge.opens_private("web_fetch", "https://docs.rs/"));
        // A rule naming a private host that has it asked: asked, not refused (auto mode runs
        // what a rule asks, as it does every other tool's).
        judge.rules.add("web_fetch", Some("192.168.1.1"), Action::Ask, Source::Global);
        assert_eq!(fetch(&judge, Mode::Manual, "http://192.168.1.1/admin"), Decision::Ask);
        assert_eq!(fetch(&judge, Mode::Auto, "http://192.168.1.1/admin"), Decision::Allow);
        assert!(matches!(fetch(&judge, Mode::Plan, "http://192.168.1.1/admin"), Decision::Refuse(_)));
        assert!(matches!(fetch(&judge, Mode::Auto, "https://tracker.example/p?q=1"), Decision::Refuse(_)));
    }

    fn judge_with(rules: &[(Option<&str>, crate::Action)]) -> crate::Judge {
        let ctx = crate::Context {
            home: Some("/home/ada".into()),
            root: "/home/ada/app".into(),
            lembas_config: None,
            lembas_private: Vec::new(),
            plans_dir: None,
            skills_dir: None,
            unsealed_home: false,
        };
        let mut judge = crate::Judge::with_defaults(ctx);
        for (pattern, action) in rules {
            judge.rules.add("web_fetch", *pattern, *action, crate::Source::Global);
        }
        judge
    }

    #[test]
    fn a_catch_all_pattern_is_the_whole_tool_rule_and_never_opens_this_computer() {
        use crate::{Action, Call, Decision, Mode};
        use lembas_spec::RiskClass;
        use std::path::{Path, PathBuf};
        for catch_all in ["*", "*://*", "https://*/*", "http://*/*", "*:*", "*:8080"] {
            let judge = judge_with(&[(Some(catch_all), Action::Allow)]);
            for url in ["http://127.0.0.1:8080/", "http://localhost/", "http://[::1]/", "http://169.254.169.254/"] {
                let call = Call { url: Some(url), ..Call::new("web_fetch", RiskClass::Execute, None, &[]) };
                let d = judge.evaluate(Mode::Auto, &call, Path::new("/home/ada/app"), &|p: &Path| PathBuf::from(p));
                assert!(matches!(d, Decision::Refuse(_)), "{catch_all} opened {url}: {d:?}");
                assert!(!judge.opens_private("web_fetch", url), "{catch_all} opened {url}");
            }
        }
        let judge = judge_with(&[(Some("http://*.example.org/*"), Action::Allow)]);
        for url in
            ["http://127.0.0.1/.example.org/", "http://localhost/a.example.org/b", "http://10.0.0.1/?x=.example.org/"]
        {
            assert!(!judge.opens_private("web_fetch", url), "the host's star ran into {url}");
        }
    }

    #[test]
    fn a_redirect_is_followed_only_on_the_same_site_and_where_the_rules_would_fetch_it() {
        use crate::{Action, Mode};
        let judge = judge_with(&[(Some("http://127.0.0.1:8080/public/*"), Action::Allow)]);
        let from = "http://127.0.0.1:8080/public/a";
        assert_eq!(judge.redirect(Mode::Manual, "web_fetch", from, "http://127.0.0.1:8080/public/b"), Ok(()));
        for to in [
            "http://127.0.0.1:8080/private/key",
            "http://127.0.0.1:8080/public/../private/key",
            "http://127.0.0.1:9090/public/a",
            "https://127.0.0.1:8080/public/a",
            "http://localhost:8080/public/a",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            assert!(judge.redirect(Mode::Auto, "web_fetch", from, to).is_err(), "followed to {to}");
        }
        // On a public site: followed in auto mode (it would fetch it anyway), not where a fetch
        // is asked, nor where a rule denies it.
        let judge = judge_with(&[(Some("https://docs.example/private/*"), Action::Deny)]);
        let from = "https://docs.example/a";
        assert_eq!(judge.redirect(Mode::Auto, "web_fetch", from, "https://docs.example/b"), Ok(()));
        let asked = judge.redirect(Mode::Manual, "web_fetch", from, "https://docs.example/b").unwrap_err();
        assert!(asked.contains("ask"), "{asked}");
        assert!(judge.redirect(Mode::Auto, "web_fetch", from, "https://docs.example/private/x").is_err());
        assert!(judge.redirect(Mode::Auto, "web_fetch", from, "http://docs.example/b").is_err(), "a downgrade");
    }
}
