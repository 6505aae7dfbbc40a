//! The names MCP tools go by in a session: `mcp__<server>__<tool>`, so the model (and a
//! permission rule) can tell whose a tool is, within what every chat API accepts for a
//! function name (`[A-Za-z0-9_-]`, at most 64 characters).

/// The longest function name the chat APIs accept.
pub const MAX_NAME: usize = 64;

/// What a name may hold, with anything else turned into `_`.
fn clean(part: &str) -> String {
    part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The session's name for `tool` of `server`.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let mut name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() > MAX_NAME {
        // Every character is ASCII by now, so any cut is on a character boundary.
        name.truncate(MAX_NAME);
    }
    name
}

/// Whether a tool name is an MCP tool's.
pub fn is_mcp_name(name: &str) -> bool {
    name.starts_with("mcp__")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_server_and_fit_the_apis() {
        assert_eq!(exposed_name("tickets", "create"), "mcp__tickets__create");
        assert_eq!(exposed_name("my server", "read.file"), "mcp__my_server__read_file");
        let long = exposed_name("s", &"x".repeat(100));
        assert_eq!(long.len(), MAX_NAME);
        assert!(is_mcp_name(&long) && !is_mcp_name("bash"));
    }
}
