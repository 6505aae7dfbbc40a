//! The one renderer for the spec's `{{variable}}` texts.

/// Fills each `{{name}}` in `template` with the value `vars` gives for `name`.
///
/// A placeholder with no value is left as it is written, so a missing variable shows up in the
/// text (and in tests) instead of silently vanishing.
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        match after.find("}}") {
            Some(close) => {
                let name = &after[..close];
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&rest[open..open + 4 + close]),
                }
                rest = &after[close + 2..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names of the `{{variables}}` a template uses, in order of first appearance.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let name = &after[..close];
        if !names.contains(&name) {
            names.push(name);
        }
        rest = &after[close + 2..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_occurrence() {
        assert_eq!(render("{{a}} and {{a}}, {{b}}", &[("a", "x"), ("b", "y")]), "x and x, y");
    }

    #[test]
    fn leaves_unknown_and_unclosed_placeholders_visible() {
        assert_eq!(render("{{a}} {{missing}}", &[("a", "1")]), "1 {{missing}}");
        assert_eq!(render("open {{a", &[("a", "1")]), "open {{a");
    }

    #[test]
    fn values_are_not_rendered_again() {
        assert_eq!(render("{{a}}", &[("a", "{{b}}"), ("b", "no")]), "{{b}}");
    }

    #[test]
    fn lists_placeholders_once_each() {
        assert_eq!(placeholders("{{id}} {{path}} {{id}}"), vec!["id", "path"]);
    }
}
