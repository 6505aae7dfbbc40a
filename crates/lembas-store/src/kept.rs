//! How a message is kept in the `messages` table: its role as a letter in the `role` column, and
//! its JSON without the opening `{"role":"…",` that would say the role again.
//!
//! The engine writes each message as JSON that begins with its role. A long session repeated
//! that word on every row (`"role":"assistant",` is 19 bytes; a step's messages are ~100 bytes
//! each on a bench of short ones), and the `role` column holds it already. The JSON is kept from
//! its second key on (it then begins with `"`, never `{`), and made whole again as it is read, in
//! the query itself. A row from an earlier lembas keeps its whole JSON and its role's word, and is
//! read as it is.

/// The roles the engine writes, each with the letter the `messages` table keeps for it.
const ROLE_LETTERS: [(&str, &str); 4] = [("user", "u"), ("assistant", "a"), ("tool", "t"), ("system", "s")];

/// The letter kept for `role` (a role without one is kept as it is).
pub(crate) fn role(role: &str) -> &str {
    ROLE_LETTERS.iter().find(|(word, _)| *word == role).map_or(role, |(_, letter)| letter)
}

/// The role's word for what the `role` column holds.
pub(crate) fn role_read(kept: String) -> String {
    ROLE_LETTERS.iter().find(|(_, letter)| *letter == kept).map_or(kept, |(word, _)| (*word).to_owned())
}

/// What is kept of a message's `json` whose role is `role`: the JSON after `{"role":"<role>",`
/// when it begins so, else the whole of it.
pub(crate) fn json<'a>(role: &str, json: &'a str) -> &'a str {
    json.strip_prefix("{\"role\":\"")
        .and_then(|rest| rest.strip_prefix(role))
        .and_then(|rest| rest.strip_prefix("\","))
        // A message with nothing after its role is kept whole: what is left must begin a key.
        .filter(|rest| rest.starts_with('"'))
        .unwrap_or(json)
}

/// The SQL that reads a row's JSON whole again (from its `role` and `json` columns).
pub(crate) fn whole_json_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let words: String =
            ROLE_LETTERS.iter().map(|(word, letter)| format!(" WHEN '{letter}' THEN '{word}'")).collect();
        format!(
            "CASE WHEN substr(json, 1, 1) = '{{' THEN json \
             ELSE '{{\"role\":\"' || CASE role{words} ELSE role END || '\",' || json END"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(role_column: &str, kept: &str) -> String {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.query_row(
            &format!("SELECT {} FROM (SELECT ?1 AS role, ?2 AS json)", whole_json_sql()),
            [role_column, kept],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn a_message_is_kept_without_its_role_and_read_back_whole() {
        for (word, whole) in [
            ("assistant", r#"{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read"}]}"#),
            ("user", r#"{"role":"user","content":"what does {\"role\":\"user\", say?","turn":true}"#),
            ("tool", r#"{"role":"tool","tool_call_id":"c1","content":"[#0001]\n1: fn main() {}"}"#),
            ("system", r#"{"role":"system","content":"note"}"#),
        ] {
            let kept = json(word, whole);
            assert!(kept.len() < whole.len() && kept.starts_with('"'), "{kept}");
            assert_eq!(read_back(role(word), kept), whole);
        }
    }

    #[test]
    fn what_does_not_begin_with_its_role_is_kept_whole_and_rows_from_before_read_as_they_are() {
        // Another role's word, a role with nothing after it, another first key. (Every message
        // the engine writes is a JSON object, so a whole one begins with `{`.)
        for (word, whole) in [
            ("user", r#"{"role":"assistant","content":"x"}"#),
            ("user", r#"{"role":"user"}"#),
            ("tool", r#"{"content":"x","role":"tool"}"#),
        ] {
            assert_eq!(json(word, whole), whole);
            assert_eq!(read_back(role(word), json(word, whole)), whole);
        }
        // A store from before: the role's word in its column and the whole JSON.
        let old = r#"{"role":"assistant","content":"in the fridge"}"#;
        assert_eq!(read_back("assistant", old), old);
        assert_eq!(read_back("assistant", json("assistant", old)), old);
        // A role with no letter keeps its word, and is made whole with it.
        assert_eq!(
            read_back(role("developer"), json("developer", r#"{"role":"developer","c":1}"#)),
            r#"{"role":"developer","c":1}"#
        );
    }
}
