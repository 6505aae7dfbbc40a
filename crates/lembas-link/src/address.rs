//! Where the link is dialled (`docs/spec-decisions.md`): the server root's `/api/v1/device/link`
//! as a WebSocket (`ws://` for `http://`, `wss://` for `https://`), unless the server's discovery
//! names another place.

/// The link's path under the server root when discovery names none.
pub const LINK_PATH: &str = "/api/v1/device/link";

/// The WebSocket URL of the link of the server at `root`; `said` is discovery's `link`, if any — a
/// `ws(s)://` or `http(s)://` URL, or a path on the server root.
pub fn link_url(root: &str, said: Option<&str>) -> Result<String, String> {
    let root = root.trim_end_matches('/');
    let url = match said.map(str::trim).filter(|s| !s.is_empty()) {
        None => format!("{root}{LINK_PATH}"),
        Some(path) if path.starts_with('/') => format!("{root}{path}"),
        Some(url) => url.to_owned(),
    };
    for (from, to) in [("https://", "wss://"), ("http://", "ws://"), ("wss://", "wss://"), ("ws://", "ws://")] {
        if let Some(rest) = url.strip_prefix(from) {
            return Ok(format!("{to}{rest}"));
        }
    }
    Err(format!("{url} is not a link this computer can dial (it wants ws://, wss://, http:// or https://)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_is_the_server_roots_unless_discovery_says_another() {
        assert_eq!(link_url("http://h:8080/", None).unwrap(), "ws://h:8080/api/v1/device/link");
        assert_eq!(link_url("https://h", None).unwrap(), "wss://h/api/v1/device/link");
        assert_eq!(link_url("https://h", Some("/link/v2")).unwrap(), "wss://h/link/v2");
        assert_eq!(link_url("https://h", Some("wss://other/l")).unwrap(), "wss://other/l");
        assert_eq!(link_url("http://h", Some("https://other/l")).unwrap(), "wss://other/l");
        assert!(link_url("ftp://h", None).is_err());
        assert!(link_url("https://h", Some("gopher://x")).is_err());
    }
}
