//! A state change as the log keeps it. `json_patch::diff` makes adds, removes and replaces only;
//! each is written as a short array — `["+", path, value]`, `["=", path, value]`, `["-", path]`
//! — rather than as RFC 6902's objects, whose `"op"`, `"path"` and `"value"` keys were most of a
//! step's patch (a step that only counts the result ids on: 48 bytes that way, 22 this way). It
//! is read in one pass into the operations `json_patch` applies, without the RFC form's tagged
//! objects, which serde buffers whole before reading. A log written before holds RFC 6902 text,
//! read as it was.

use std::fmt;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Each operation's first element, as written and as read.
const ADD: &str = "+";
const REPLACE: &str = "=";
const REMOVE: &str = "-";

/// One operation as written.
#[derive(Serialize)]
#[serde(untagged)]
enum Written<'a> {
    WithValue(&'static str, &'a str, &'a Value),
    Path(&'static str, &'a str),
}

/// `patch` as the log keeps it.
pub(crate) fn to_text(patch: &json_patch::Patch) -> String {
    let mut ops = Vec::with_capacity(patch.0.len());
    for op in &patch.0 {
        ops.push(match op {
            PatchOperation::Add(op) => Written::WithValue(ADD, op.path.as_str(), &op.value),
            PatchOperation::Replace(op) => Written::WithValue(REPLACE, op.path.as_str(), &op.value),
            PatchOperation::Remove(op) => Written::Path(REMOVE, op.path.as_str()),
            // Never made by `diff`; kept in the form that holds any operation.
            _ => return serde_json::to_string(patch).expect("a patch serializes"),
        });
    }
    serde_json::to_string(&ops).expect("a patch serializes")
}

/// Applies a patch the log kept, in either form.
pub(crate) fn apply(state: &mut Value, text: &str) -> Result<(), String> {
    let ops = if text.trim_start().strip_prefix('[').is_some_and(|rest| rest.trim_start().starts_with('[')) {
        serde_json::from_str::<Vec<Read>>(text).map_err(|e| e.to_string())?.into_iter().map(|Read(op)| op).collect()
    } else {
        serde_json::from_str::<json_patch::Patch>(text).map_err(|e| e.to_string())?.0
    };
    // A patch that does not apply leaves the state half changed; it is then refused whole.
    json_patch::patch_unsafe(state, &ops).map_err(|e| e.to_string())
}

/// One operation, read from its array.
struct Read(PatchOperation);

impl<'de> Deserialize<'de> for Read {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(OpVisitor)
    }
}

struct OpVisitor;

impl<'de> Visitor<'de> for OpVisitor {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a state change: [\"+\" or \"=\", path, value] or [\"-\", path]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let kind: &str = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        if ![ADD, REPLACE, REMOVE].contains(&kind) {
            return Err(de::Error::unknown_variant(kind, &[ADD, REPLACE, REMOVE]));
        }
        let path: String = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
        let path = PointerBuf::parse(path).map_err(de::Error::custom)?;
        let mut value = || seq.next_element::<Value>()?.ok_or_else(|| de::Error::invalid_length(2, &self));
        let op = match kind {
            ADD => PatchOperation::Add(AddOperation { path, value: value()? }),
            REPLACE => PatchOperation::Replace(ReplaceOperation { path, value: value()? }),
            _ => PatchOperation::Remove(RemoveOperation { path }),
        };
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a state change with more than its path and value"));
        }
        Ok(Read(op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn changed(before: &Value, after: &Value) -> Value {
        let patch = json_patch::diff(before, after);
        let text = to_text(&patch);
        let mut state = before.clone();
        apply(&mut state, &text).unwrap();
        // The form an earlier lembas wrote gives the same state.
        let mut by_rfc = before.clone();
        apply(&mut by_rfc, &serde_json::to_string(&patch).unwrap()).unwrap();
        assert_eq!(state, by_rfc);
        state
    }

    #[test]
    fn every_change_diff_makes_comes_back_the_same() {
        let before = json!({"ids": {"last": 3}, "ledger": {"reads": [{"id": 1}, {"id": 2}]}, "a/b": {"~c": 1},
                            "gone": true, "plan": null});
        let after = json!({"ids": {"last": 4}, "ledger": {"reads": [{"id": 1}, {"id": 2}, {"id": 3}]},
                           "a/b": {"~c": 2, "": [1]}, "plan": "step one"});
        assert_eq!(changed(&before, &after), after);
        // Arrays that shrink, a whole value replaced by another kind.
        let shorter = json!({"ids": 0, "ledger": {"reads": [{"id": 9}]}});
        assert_eq!(changed(&after, &shorter), shorter);
    }

    #[test]
    fn a_counter_counted_on_is_a_short_change() {
        let patch = json_patch::diff(&json!({"ids": {"last": 39}}), &json!({"ids": {"last": 40}}));
        assert_eq!(to_text(&patch), r#"[["=","/ids/last",40]]"#);
    }

    #[test]
    fn a_change_that_is_not_one_is_refused() {
        let mut state = json!({"a": 1});
        for broken in
            [r#"[["*","/a",2]]"#, r#"[["+","/a"]]"#, r#"[["-","a"]]"#, r#"[["=","/a",2,3]]"#, r#"[["=","/b/c",1]]"#]
        {
            assert!(apply(&mut state, broken).is_err(), "{broken}");
        }
        assert_eq!(state, json!({"a": 1}));
    }
}
