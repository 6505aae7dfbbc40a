//! How much of a command an approval "for the session" covers (`permission/arity.json`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

fn table() -> &'static BTreeMap<String, usize> {
    static TABLE: OnceLock<BTreeMap<String, usize>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = lembas_spec::file("permission/arity.json").expect("spec/permission/arity.json is embedded");
        let json: serde_json::Value = serde_json::from_str(text).expect("arity.json parses");
        serde_json::from_value(json["arity"].clone()).expect("arity is a map of numbers")
    })
}

/// The bash rule pattern an approval of `argv` for the session adds: the command's first
/// `arity` words and anything after them — or the command exactly as written when it is not
/// in the table.
pub fn always_pattern(argv: &[String]) -> String {
    let table = table();
    // The longest listed prefix decides (`npm run` before `npm`).
    let arity = (1..=argv.len().min(3)).rev().find_map(|n| table.get(&argv[..n].join(" ")).copied());
    match arity {
        Some(n) if argv.len() >= n => format!("{} *", argv[..n].join(" ")),
        _ => argv.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Action, RuleSet, Source, Subject};

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn what_an_always_covers() {
        let cases = [
            ("git status", "git status -s", true),
            ("git status", "git push", false),
            ("npm run test", "npm run test -- --watch", true),
            ("npm run test", "npm run deploy", false),
            ("cargo test -p core", "cargo test", true),
            ("docker compose up", "docker compose down", false),
            ("./deploy.sh prod", "./deploy.sh staging", false),
            ("./deploy.sh prod", "./deploy.sh prod", true),
        ];
        for (approved, later, covered) in cases {
            let mut rules = RuleSet::default();
            rules.add("bash", Some(&always_pattern(&words(approved))), Action::Allow, Source::Session);
            let got = rules.matching("bash", Subject::Command(later)) == Some(Action::Allow);
            assert_eq!(got, covered, "{approved} → {later}");
        }
    }
}
