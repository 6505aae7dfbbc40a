//! The session's context ledger: the dedupe table and the reads a compaction covers.

use std::path::{Path, PathBuf};

use lembas_spec::{Cap, loop_spec, render};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::read::read_window_within;
use crate::{ReadWindow, ResultId, WindowError, cap, sha256_hex, short_sha};

/// What one insertion produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// The text the model is sent: the bracket, then the result (or a stub).
    pub text: String,
    /// What the session stores for `recall`: the result in full, before any cap — for a stub,
    /// the full text it stands for. Without the bracket.
    pub stored: String,
}

/// A full read that is still in the request being built.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReadEntry {
    id: ResultId,
    /// The path as the call gave it: what the compaction table shows.
    call_path: String,
    /// The absolute, resolved path: what identifies the file.
    file: PathBuf,
    sha: String,
    from: usize,
    to: usize,
    total: usize,
}

/// A full result of a `by_result` tool in the request being built. The text is kept as its hash:
/// the ledger is stored with the session after every step, and a search's output can be long.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OutputEntry {
    id: ResultId,
    key: String,
    sha: String,
}

/// Context hygiene state for one session. Serializable, so it is stored with the session and a
/// resumed session goes on exactly where it was.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "StoredLedger")]
pub struct Ledger {
    cap: Cap,
    /// Where a read's window stops, in characters, when a small model window wants it shorter
    /// than `read::WINDOW_MAX_CHARS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_chars: Option<usize>,
    /// Full reads since the previous compaction, in turns still in the history.
    reads: Vec<ReadEntry>,
    /// Where in `reads` the ones the request being built carries begin (the by-hash table): a
    /// read joins both at once, and each is emptied only from its start, so the reads a request
    /// carries are always the last ones. Kept once, since the ledger is stored after every step.
    in_request_from: usize,
    /// Full listing and search results the request carries (the by-result table).
    outputs_in_request: Vec<OutputEntry>,
}

/// A ledger as stored, now or by an earlier lembas, which kept the reads a request carries as a
/// second copy of the last reads.
#[derive(Deserialize)]
struct StoredLedger {
    cap: Cap,
    #[serde(default)]
    read_chars: Option<usize>,
    #[serde(default)]
    reads: Vec<ReadEntry>,
    #[serde(default)]
    in_request_from: usize,
    #[serde(default)]
    outputs_in_request: Vec<OutputEntry>,
    #[serde(default)]
    reads_in_request: Vec<ReadEntry>,
    #[serde(default)]
    reads_since_compaction: Vec<ReadEntry>,
}

impl From<StoredLedger> for Ledger {
    fn from(stored: StoredLedger) -> Ledger {
        let StoredLedger {
            cap,
            read_chars,
            reads,
            in_request_from,
            outputs_in_request,
            reads_in_request,
            reads_since_compaction,
        } = stored;
        if reads_in_request.is_empty() && reads_since_compaction.is_empty() {
            let in_request_from = in_request_from.min(reads.len());
            return Ledger { cap, read_chars, reads, in_request_from, outputs_in_request };
        }
        // The earlier form: the reads since the compaction, with those the request carries last.
        let mut reads = reads_since_compaction;
        reads.retain(|r| !reads_in_request.iter().any(|carried| carried.id == r.id));
        let in_request_from = reads.len();
        reads.extend(reads_in_request);
        Ledger { cap, read_chars, reads, in_request_from, outputs_in_request }
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::with_cap(loop_spec().context.cap)
    }
}

impl Ledger {
    /// A ledger with another output cap than `loop.json`'s (tests, and the conformance cases'
    /// `limits`).
    pub fn with_cap(cap: Cap) -> Self {
        Ledger { cap, read_chars: None, reads: Vec::new(), in_request_from: 0, outputs_in_request: Vec::new() }
    }

    /// A ledger for a model window that holds about `chars` characters in all, where that is
    /// small: each result's cap and each read's window take at most a fifth of it, so one
    /// result never fills the window (`loop.json`'s figures stand for any larger window).
    pub fn for_window(chars: usize) -> Self {
        let spec = loop_spec().context.cap;
        let max_chars = chars / 5;
        if max_chars >= spec.max_chars {
            return Ledger::default();
        }
        let scaled = |n: usize| (n * max_chars / spec.max_chars).max(1);
        let cap = Cap {
            max_lines: scaled(spec.max_lines).max(8),
            max_chars,
            head_lines: scaled(spec.head_lines).max(4),
            head_chars: scaled(spec.head_chars),
            tail_lines: scaled(spec.tail_lines).max(2),
            tail_chars: scaled(spec.tail_chars),
        };
        Ledger { read_chars: Some(max_chars), ..Ledger::with_cap(cap) }
    }

    /// A read of `file` (absolute) whose call gave `call_path`: the bracket and numbered lines,
    /// or a stub when an earlier full read in the request already shows those lines of the same
    /// content.
    pub fn read(
        &mut self,
        id: ResultId,
        call_path: &str,
        file: &Path,
        content: &str,
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<Inserted, WindowError> {
        let ctx = &loop_spec().context;
        let max_chars = self.read_chars.unwrap_or(crate::read::WINDOW_MAX_CHARS);
        let window: ReadWindow = read_window_within(content, offset, limit, max_chars)?;
        let sha = sha256_hex(content.as_bytes());
        let id_text = id.to_string();
        let header = if window.total == 0 {
            render(&ctx.read_header_empty, &[("id", &id_text), ("path", call_path), ("sha", short_sha(&sha))])
        } else {
            render(
                &ctx.read_header,
                &[
                    ("id", &id_text),
                    ("path", call_path),
                    ("from", &window.from.to_string()),
                    ("to", &window.to.to_string()),
                    ("of", &window.total.to_string()),
                    ("sha", short_sha(&sha)),
                ],
            )
        };

        let earlier = (window.total > 0)
            .then(|| {
                self.reads_in_request()
                    .iter()
                    .rev()
                    .find(|e| e.file == file && e.sha == sha && e.from <= window.from && window.to <= e.to)
            })
            .flatten();
        if let Some(earlier) = earlier {
            let stub = render(
                &ctx.unchanged,
                &[
                    ("earlier", &earlier.id.to_string()),
                    ("from", &earlier.from.to_string()),
                    ("to", &earlier.to.to_string()),
                ],
            );
            return Ok(Inserted { text: format!("{header} {stub}"), stored: window.body });
        }

        let entry = ReadEntry {
            id,
            call_path: call_path.to_owned(),
            file: file.to_path_buf(),
            sha,
            from: window.from,
            to: window.to,
            total: window.total,
        };
        self.reads.push(entry);
        Ok(Inserted { text: format!("{header}\n{}", window.body), stored: window.body })
    }

    /// Any other tool's result: capped, or a stub when a listing or search with the same
    /// arguments already gave the same text in this request.
    pub fn output(&mut self, id: ResultId, tool: &str, args: &Value, text: &str) -> Inserted {
        let ctx = &loop_spec().context;
        let header = render(&ctx.header, &[("id", &id.to_string())]);
        let dedupes = ctx.dedupe.by_result.iter().any(|t| t == tool);
        if dedupes {
            let key = format!("{tool}\u{0}{}", canonical_json(args));
            let sha = sha256_hex(text.as_bytes());
            if let Some(earlier) = self.outputs_in_request.iter().rev().find(|e| e.key == key && e.sha == sha) {
                let stub = render(&ctx.same_result, &[("earlier", &earlier.id.to_string())]);
                return Inserted { text: format!("{header} {stub}"), stored: text.to_owned() };
            }
            self.outputs_in_request.push(OutputEntry { id, key, sha });
        }
        Inserted { text: format!("{header}\n{}", cap(text, id, &self.cap)), stored: text.to_owned() }
    }

    /// A new request that does not carry the results inserted so far (a chat's next reply, a
    /// turn undone): no stub may name them any more. They stay in the history a compaction
    /// covers.
    pub fn request_without_earlier_results(&mut self) {
        self.in_request_from = self.reads.len();
        self.outputs_in_request.clear();
    }

    /// After a compaction's summary: the table of the reads it covers (empty when there were
    /// none), and a fresh start — the dedupe table is emptied.
    pub fn compact(&mut self) -> String {
        let comp = &loop_spec().context.compaction;
        // The newest full read of each file, newest last.
        let mut newest: Vec<&ReadEntry> = Vec::new();
        for entry in self.reads.iter().rev() {
            if !newest.iter().any(|e| e.file == entry.file) {
                newest.push(entry);
            }
        }
        newest.truncate(comp.rows);
        newest.reverse();

        let table = if newest.is_empty() {
            String::new()
        } else {
            let mut out =
                format!("{}\n\n{}\n\n| Path | Lines | sha | Result |\n|---|---|---|---|", comp.heading, comp.line);
            for e in newest {
                out.push_str(&format!(
                    "\n| {} | {}-{} of {} | {} | {} |",
                    e.call_path.replace('|', "\\|"),
                    e.from,
                    e.to,
                    e.total,
                    short_sha(&e.sha),
                    e.id
                ));
            }
            out
        };
        self.reads.clear();
        self.in_request_from = 0;
        self.outputs_in_request.clear();
        table
    }

    /// Whether `id` is a full result the request being built carries (stubs may point at it).
    pub fn in_request(&self, id: ResultId) -> bool {
        self.reads_in_request().iter().any(|e| e.id == id) || self.outputs_in_request.iter().any(|e| e.id == id)
    }

    /// The full reads the request being built carries.
    fn reads_in_request(&self) -> &[ReadEntry] {
        &self.reads[self.in_request_from..]
    }
}

/// JSON with object keys sorted at every level, so two calls' arguments compare equal whatever
/// order the model wrote them in.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> =
                keys.into_iter().map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": {"d": [1, {"z": 0, "y": 1}], "c": null}})),
            canonical_json(&json!({"a": {"c": null, "d": [1, {"y": 1, "z": 0}]}, "b": 1}))
        );
    }

    #[test]
    fn a_changed_file_is_read_in_full() {
        let mut l = Ledger::default();
        let f = Path::new("/p/a.txt");
        l.read(ResultId(1), "a.txt", f, "one\n", None, None).unwrap();
        let again = l.read(ResultId(2), "a.txt", f, "two\n", None, None).unwrap();
        assert!(again.text.ends_with("\n1: two"));
    }

    #[test]
    fn the_same_content_at_another_path_is_not_a_stub() {
        let mut l = Ledger::default();
        l.read(ResultId(1), "a", Path::new("/p/a"), "x\n", None, None).unwrap();
        let other = l.read(ResultId(2), "b", Path::new("/p/b"), "x\n", None, None).unwrap();
        assert!(!other.text.contains("Unchanged"));
    }

    #[test]
    fn the_same_file_by_another_spelling_is_a_stub() {
        let mut l = Ledger::default();
        l.read(ResultId(1), "a.txt", Path::new("/p/a.txt"), "x\n", None, None).unwrap();
        let again = l.read(ResultId(2), "./a.txt", Path::new("/p/a.txt"), "x\n", None, None).unwrap();
        assert_eq!(
            again.text,
            "[#0002 ./a.txt lines 1-1 of 1 sha 73cb3858] Unchanged since #0001, which already shows lines 1-1."
        );
        assert_eq!(again.stored, "1: x");
    }

    #[test]
    fn other_tools_are_never_deduplicated() {
        let mut l = Ledger::default();
        let args = json!({"command": "ls"});
        l.output(ResultId(1), "bash", &args, "a");
        assert_eq!(l.output(ResultId(2), "bash", &args, "a").text, "[#0002]\na");
        assert!(!l.in_request(ResultId(1)));
    }

    #[test]
    fn the_table_keeps_the_newest_rows() {
        let mut l = Ledger::default();
        for n in 1..=60u64 {
            let path = format!("f{n}");
            l.read(ResultId(n), &path, Path::new(&format!("/p/{path}")), "x\n", None, None).unwrap();
        }
        let table = l.compact();
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| f")).collect();
        assert_eq!(rows.len(), 50);
        assert!(rows[0].starts_with("| f11 |") && rows[49].starts_with("| f60 |"));
        assert_eq!(l.compact(), "");
    }

    #[test]
    fn the_ledger_survives_a_round_trip() {
        let mut l = Ledger::default();
        l.read(ResultId(1), "a", Path::new("/p/a"), "x\n", None, None).unwrap();
        let mut back: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert!(
            back.read(ResultId(2), "a", Path::new("/p/a"), "x\n", None, None)
                .unwrap()
                .text
                .contains("Unchanged since #0001")
        );
    }

    #[test]
    fn a_read_is_stored_once_and_the_request_carries_only_the_reads_since_it_began() {
        let mut l = Ledger::default();
        l.read(ResultId(1), "a", Path::new("/p/a"), "x\n", None, None).unwrap();
        l.request_without_earlier_results();
        l.read(ResultId(2), "b", Path::new("/p/b"), "y\n", None, None).unwrap();
        let stored = serde_json::to_value(&l).unwrap();
        assert_eq!(stored["reads"].as_array().unwrap().len(), 2);
        assert_eq!(stored["in_request_from"], 1);
        let mut back: Ledger = serde_json::from_value(stored).unwrap();
        assert!(!back.in_request(ResultId(1)) && back.in_request(ResultId(2)));
        // `a` is no longer in the request: read again in full; `b` still is.
        assert!(!back.read(ResultId(3), "a", Path::new("/p/a"), "x\n", None, None).unwrap().text.contains("Unchanged"));
        assert!(back.read(ResultId(4), "b", Path::new("/p/b"), "y\n", None, None).unwrap().text.contains("Unchanged"));
        // A compaction's table still names every read since the last one.
        let table = back.compact();
        assert!(table.contains("| a |") && table.contains("| b |"), "{table}");
    }

    #[test]
    fn a_ledger_stored_by_an_earlier_lembas_reads_as_the_same_ledger() {
        let entry = |id: u64, path: &str| {
            json!({"id": id, "call_path": path, "file": format!("/p/{path}"), "sha": sha256_hex(b"x\n"),
                   "from": 1, "to": 1, "total": 1})
        };
        let earlier = json!({
            "cap": Ledger::default().cap,
            "reads_in_request": [entry(2, "b")],
            "outputs_in_request": [],
            "reads_since_compaction": [entry(1, "a"), entry(2, "b")],
        });
        let mut l: Ledger = serde_json::from_value(earlier).unwrap();
        assert!(!l.in_request(ResultId(1)) && l.in_request(ResultId(2)));
        assert!(l.read(ResultId(3), "b", Path::new("/p/b"), "x\n", None, None).unwrap().text.contains("since #0002"));
        assert!(!l.read(ResultId(4), "a", Path::new("/p/a"), "x\n", None, None).unwrap().text.contains("Unchanged"));
        let stored = serde_json::to_value(&l).unwrap();
        assert!(stored.get("reads_since_compaction").is_none());
        assert_eq!(stored["reads"].as_array().unwrap().len(), 3);
        assert_eq!(stored["in_request_from"], 1);
    }
}
