//! `spec/permission/modes.json`: the four permission modes.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The parsed `permission/modes.json`, read once.
pub fn modes() -> &'static ModesSpec {
    static SPEC: OnceLock<ModesSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text = crate::file("permission/modes.json").expect("spec/permission/modes.json is embedded");
        serde_json::from_str(text).expect("spec/permission/modes.json is checked by this crate's tests")
    })
}

#[derive(Debug, Deserialize)]
pub struct ModesSpec {
    /// Mode names, loosest first.
    pub order: Vec<String>,
    /// Former names (`unrestricted` → `auto`).
    pub aliases: BTreeMap<String, String>,
    pub modes: BTreeMap<String, ModeSpec>,
}

/// What one mode does with each risk class.
#[derive(Debug, Deserialize)]
pub struct ModeSpec {
    pub summary: String,
    pub read: String,
    pub write: String,
    pub execute: String,
    pub interact: String,
    /// The refusal text (plan mode).
    pub refused: Option<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn four_modes_loosest_first() {
        let m = super::modes();
        assert_eq!(m.order, ["auto", "edit", "manual", "plan"]);
        assert!(m.order.iter().all(|name| m.modes.contains_key(name)));
        assert!(m.modes["plan"].refused.is_some());
    }
}
