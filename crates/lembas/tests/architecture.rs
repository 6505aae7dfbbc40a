//! The architecture, checked: front ends reach sessions only through the host's handle and the
//! protocol; the pure crates do no I/O; only the engine (and the start-up that opens it) touches
//! the store; the engine's modules import one another in one direction; no source file grows past
//! 600 lines, and no function past 120. Read from the workspace's own files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A crate's own dependencies (not its dev-dependencies) among lembas' crates and the rest.
fn dependencies(krate: &str) -> Vec<String> {
    let text = std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    manifest.get("dependencies").and_then(|d| d.as_table()).map(|d| d.keys().cloned().collect()).unwrap_or_default()
}

fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The front ends: they render events and send commands.
const FRONT_ENDS: &[&str] = &["lembas-tui", "lembas-acp"];

/// What a front end may depend on among lembas' crates besides the pure ones: the host's handle
/// and the protocol.
const SEAM: &[&str] = &["lembas-client", "lembas-protocol"];

/// Front ends that still reach the engine itself, each with why. The list only shrinks; it is
/// empty now, and stays to name one that must (with its reason) while it moves.
const NOT_YET_ON_THE_SEAM: &[(&str, &str)] = &[];

/// Every dependency of each of lembas' crates, as cargo reads them: its name, and whether only
/// its tests and benchmarks use it.
fn resolved_dependencies() -> BTreeMap<String, Vec<(String, bool)>> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (d["name"].as_str().unwrap().to_owned(), d["kind"] == "dev"));
            (p["name"].as_str().unwrap().to_owned(), deps.collect())
        })
        .collect()
}

/// The pure crates: spec data, context rules, paths, permissions, progress, models, protocol.
const PURE: &[&str] = &[
    "lembas-spec",
    "lembas-paths",
    "lembas-context",
    "lembas-permissions",
    "lembas-progress",
    "lembas-models",
    "lembas-protocol",
    "lembas-chunking",
    "lembas-fsview",
    "lembas-scheduled",
    "lembas-team",
];

/// Crates that do I/O, which no pure crate may depend on.
const IO_CRATES: &[&str] = &["tokio", "reqwest", "rusqlite", "axum", "nix", "landlock", "process-wrap", "ignore"];

/// What a pure crate's code may not name.
const IO_PATHS: &[&str] = &["std::fs", "std::process", "std::env", "tokio::", "reqwest::", "rusqlite::"];

/// The crates that may use the store: the engine, and — named exceptions — the binary, which
/// opens the store at start-up and hands it to the host; the test kit.
const STORE_USERS: &[(&str, &str)] =
    &[("lembas-core", "the engine"), ("lembas", "the start-up opens the store and hands it to the host")];

#[test]
fn front_ends_reach_sessions_through_the_handle_and_the_protocol_only() {
    let resolved = resolved_dependencies();
    let mut wrong = BTreeMap::new();
    for front in FRONT_ENDS {
        let not_yet = NOT_YET_ON_THE_SEAM.iter().any(|(name, _)| name == front);
        let ours: Vec<&String> = resolved[*front]
            .iter()
            // Tests may script the model; a front end not yet on the seam is held to its own code.
            .filter(|(d, dev)| !(*dev && (d == "lembas-testkit" || not_yet)))
            .map(|(d, _)| d)
            .filter(|d| d.starts_with("lembas") && !SEAM.contains(&d.as_str()) && !PURE.contains(&d.as_str()))
            .filter(|d| !(not_yet && d.as_str() == "lembas-core"))
            .collect();
        if !ours.is_empty() {
            wrong.insert(*front, format!("depends on {ours:?}"));
        }
        if not_yet {
            continue;
        }
        let root = workspace().join("crates").join(front);
        for file in ["src", "tests", "benches"].iter().flat_map(|dir| sources(&root.join(dir))) {
            if std::fs::read_to_string(&file).unwrap().contains("lembas_core") {
                wrong.insert(*front, format!("{} names lembas_core", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "a front end reaches past {SEAM:?} and the pure crates: {wrong:?}");
}

/// The link to a LLeMbas server is one more transport of the ACP server, never a second engine
/// client: it may carry `lembas-acp` and check the server through `lembas-login`, and reaches
/// sessions only through the handle.
#[test]
fn the_link_carries_the_acp_server_and_never_reaches_the_engine() {
    let resolved = resolved_dependencies();
    let engine = ["lembas-core", "lembas-store", "lembas-tools", "lembas-model"];
    let wrong: Vec<&String> = resolved["lembas-link"]
        .iter()
        .filter(|(d, dev)| !dev && engine.contains(&d.as_str()))
        .map(|(d, _)| d)
        .collect();
    assert!(wrong.is_empty(), "lembas-link depends on {wrong:?}");
    assert!(resolved["lembas-link"].iter().any(|(d, _)| d == "lembas-acp"), "the link serves lembas' one ACP server");
    for file in sources(&workspace().join("crates/lembas-link/src")) {
        assert!(
            !std::fs::read_to_string(&file).unwrap().contains("lembas_core"),
            "{} names lembas_core",
            file.display()
        );
    }
}

/// What the headless front end (`lembas run`, in the binary beside the start-up) may name of the
/// engine: the host's way to open a session, and the protocol's types it re-exports.
const HEADLESS_MAY_NAME: &[&str] =
    &["Answer", "Approval", "Ask", "Command", "DoneReason", "Event", "OpenSession", "Said", "Start", "Plan"];

#[test]
fn the_headless_run_reaches_its_session_through_the_host_only() {
    let text = std::fs::read_to_string(workspace().join("crates/lembas/src/run.rs")).unwrap();
    assert!(!text.contains("lembas_store") && !text.contains(".store()"), "run.rs reaches the store");
    let mut named: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("lembas_core::") {
        let rest = &text[at + "lembas_core::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let list = &list[..list.find('}').unwrap()];
            named.extend(list.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()));
        } else {
            named.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
        }
    }
    let beyond: Vec<&String> = named.iter().filter(|n| !HEADLESS_MAY_NAME.contains(&n.as_str())).collect();
    assert!(beyond.is_empty(), "run.rs names more of the engine than the host and the protocol: {beyond:?}");
}

#[test]
fn the_pure_crates_do_no_io() {
    let all = crates();
    for pure in PURE {
        assert!(all.iter().any(|c| c == pure), "{pure} is listed as pure but is not a crate");
        let deps = dependencies(pure);
        let io: Vec<&String> = deps.iter().filter(|d| IO_CRATES.contains(&d.as_str())).collect();
        assert!(io.is_empty(), "{pure} depends on {io:?}");
        let impure: Vec<&String> =
            deps.iter().filter(|d| d.starts_with("lembas") && !PURE.contains(&d.as_str())).collect();
        assert!(impure.is_empty(), "{pure} depends on crates that do I/O: {impure:?}");
        for file in sources(&workspace().join("crates").join(pure).join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            for path in IO_PATHS {
                assert!(!text.contains(path), "{} names {path}", file.display());
            }
        }
    }
}

#[test]
fn only_the_engine_uses_the_store() {
    for krate in crates() {
        if dependencies(&krate).iter().any(|d| d == "lembas-store") {
            assert!(
                krate == "lembas-store" || STORE_USERS.iter().any(|(name, _)| *name == krate),
                "{krate} depends on lembas-store: reach stored sessions through the host"
            );
        }
    }
}

/// The one file that may allow `unsafe` code: a command's process made without copying lembas
/// and its steps before it becomes the program (joining its sandbox), which only `clone` and
/// the C library's calls can take.
const UNSAFE_ALLOWED: &str = "crates/lembas-tools/src/process/start.rs";

#[test]
fn unsafe_code_is_allowed_in_one_file_only() {
    let root = workspace();
    let mut found = Vec::new();
    for krate in crates() {
        let dir = root.join("crates").join(&krate);
        for file in sources(&dir.join("src"))
            .into_iter()
            .chain(sources(&dir.join("tests")))
            .chain(sources(&dir.join("benches")))
        {
            let text = std::fs::read_to_string(&file).unwrap();
            let relative = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            // Spelled in pieces, so that this file does not name them whole.
            let allowing = [
                concat!("allow(", "unsafe_code)"),
                concat!("expect(", "unsafe_code)"),
                concat!("unsafe_code = ", "\"allow\""),
            ];
            if allowing.iter().any(|s| text.contains(s)) && relative != UNSAFE_ALLOWED {
                found.push(relative);
            }
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        if !manifest.contains("[lints]\nworkspace = true") {
            found.push(format!("crates/{krate}/Cargo.toml (its own lints)"));
        }
    }
    let workspace_manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(workspace_manifest.contains("unsafe_code = \"deny\""), "the workspace denies unsafe code");
    assert!(found.is_empty(), "unsafe code is allowed only in {UNSAFE_ALLOWED}: {found:?}");
}

#[test]
fn no_source_file_passes_600_lines_and_no_function_120() {
    let mut long = Vec::new();
    for krate in crates() {
        for file in sources(&workspace().join("crates").join(&krate).join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines = text.lines().count();
            if lines > 600 {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
            for (name, length) in long_functions(&text, 120) {
                long.push(format!("{}: fn {name} ({length} lines)", file.display()));
            }
        }
    }
    assert!(long.is_empty(), "split these by responsibility: {long:?}");
}

/// The functions of `text` longer than `most` lines: from a line that starts `fn` (after its
/// visibility and `async`) to the first line at the same indent that closes it.
fn long_functions(text: &str, most: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let head = line.trim_start();
        let head = ["pub(crate) ", "pub(super) ", "pub "].iter().find_map(|p| head.strip_prefix(p)).unwrap_or(head);
        let head = head.strip_prefix("async ").unwrap_or(head);
        if let Some(rest) = head.strip_prefix("fn ")
            && !line.trim_end().ends_with(';')
        {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let close = format!("{}}}", " ".repeat(indent));
            let end = (i + 1..lines.len()).find(|&j| lines[j].starts_with(&close)).unwrap_or(lines.len() - 1);
            if end - i + 1 > most {
                long.push((name, end - i + 1));
            }
            i = end;
        }
        i += 1;
    }
    long
}

#[test]
fn a_long_function_is_found_and_a_short_one_is_not() {
    let body = |n: usize| "    let x = 1;\n".repeat(n);
    let text = format!(
        "pub async fn long() {{\n{}}}\n\nfn short() {{\n{}}}\n\nimpl A {{\n    pub(crate) fn inner() {{\n{}    }}\n}}\n",
        body(130),
        body(3),
        body(125)
    );
    let found: Vec<String> = long_functions(&text, 120).into_iter().map(|(name, _)| name).collect();
    assert_eq!(found, ["long", "inner"]);
}

/// Where a tool's name may decide what happens, each with why: the registry of handlers, the
/// handlers it names, and the one place that reads the spec's blocks, some of whose names
/// (`read`, `edit`, `task`) are also tools'.
const TOOL_HANDLERS: &[(&str, &str)] = &[
    ("crates/lembas-core/src/handlers/", "the registry of tool handlers"),
    ("crates/lembas-tools/src/handlers.rs", "the tools on files, one static each"),
    ("crates/lembas-protocol/src/tools.rs", "a call's kind, from its definition's block"),
];

/// The crates that run calls, or draw them. (The permission rules' grammar names tools as the
/// spec writes rules — `Bash(git *)` — and stays with the pure crates.)
const RUN_OR_DRAW_CALLS: &[&str] = &[
    "lembas",
    "lembas-acp",
    "lembas-client",
    "lembas-core",
    "lembas-protocol",
    "lembas-team",
    "lembas-tools",
    "lembas-tui",
];

/// Every tool the spec defines, by name.
fn tool_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("spec/tools"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// The lines of `text`, before its tests, where one of `names` decides something: a match arm or
/// an alternative of one, a tuple pattern, or a comparison.
fn decided_by_a_tool_name(text: &str, names: &[String]) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut found = Vec::new();
    for line in code.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
        for name in names {
            let quoted = format!("\"{name}\"");
            for (at, _) in line.match_indices(&quoted) {
                let before = line[..at].trim_end();
                let after = line[at + quoted.len()..].trim_start();
                let alternative = |s: &str| s.starts_with('|') && !s.starts_with("||");
                let decides = after.starts_with("=>")
                    || after.starts_with("==")
                    || after.starts_with("!=")
                    || before.ends_with("==")
                    || before.ends_with("!=")
                    || (after.starts_with("if ") && after.contains("=>"))
                    || alternative(after)
                    || (before.ends_with('|') && !before.ends_with("||"))
                    || (before.ends_with('(') && after.starts_with(',') && after.contains(") =>"));
                if decides {
                    found.push(line.to_owned());
                }
            }
        }
    }
    found
}

#[test]
fn no_tool_name_decides_anything_outside_its_handler() {
    let names = tool_names();
    assert!(names.len() > 30, "spec/tools was not read: {names:?}");
    let mut found = Vec::new();
    for krate in RUN_OR_DRAW_CALLS {
        for file in sources(&workspace().join("crates").join(krate).join("src")) {
            let relative = file.strip_prefix(workspace()).unwrap().to_string_lossy().into_owned();
            if TOOL_HANDLERS.iter().any(|(place, _)| relative.starts_with(place)) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            found.extend(decided_by_a_tool_name(&text, &names).into_iter().map(|l| format!("{relative}: {l}")));
        }
    }
    assert!(found.is_empty(), "a tool's name decides this outside its handler (give the handler the say): {found:#?}");
}

#[test]
fn a_decision_by_a_tool_name_is_found_and_a_mention_is_not() {
    let names = vec!["bash".to_owned(), "read".to_owned(), "apply_patch".to_owned()];
    let decides = [
        r#""bash" => run(),"#,
        r#"if name == "bash" {"#,
        r#"matches!(name, "read" | "edit")"#,
        r#"| "read" => x,"#,
        r#"("apply_patch", _) => "patch","#,
        r#""read" if fresh => y,"#,
        r#"tools.retain(|t| t.name != "bash");"#,
    ];
    for line in decides {
        assert_eq!(decided_by_a_tool_name(line, &names).len(), 1, "{line}");
    }
    let mentions = [
        r#"let tool = handler("bash");"#,
        r#"Kind::Report => ("read", vec![]),"#,
        r#"NewResult { tool: "read".into() }"#,
        r#"if a || "bash".is_empty() {}"#,
        "#[cfg(test)]\nfn t() { assert!(name == \"bash\") }",
    ];
    for line in mentions {
        assert!(decided_by_a_tool_name(line, &names).is_empty(), "{line}");
    }
}

/// The crates whose top-level modules must import one another in one direction: a module that
/// another imports does not import it back, directly or through others. (A module's own
/// submodules may refer to it: a session's team holds sessions; the terminal UI's `App` holds
/// its menu, picker and settings form.)
const LAYERED: &[&str] = &["lembas-core", "lembas-tui"];

/// The names a crate's root re-exports, by the module they come from (`pub use session::Session`).
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in root.split(';') {
        let Some(rest) =
            ["pub use ", "pub(crate) use "].iter().find_map(|p| Some(&statement[statement.find(p)? + p.len()..]))
        else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else { continue };
        for name in names.trim().trim_matches(|c| c == '{' || c == '}').split(',') {
            let name = name.split(" as ").last().unwrap_or(name).trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    out
}

/// The first names of the paths a `crate::` prefix reaches in `text`: `crate::a::b` gives `a`,
/// `crate::{a, b::{c}}` gives `a` and `b`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        let Some(group) = rest.strip_prefix('{') else {
            out.push(ident(rest));
            continue;
        };
        let mut depth = 1;
        let mut expecting = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => expecting = true,
                c if c.is_whitespace() => {}
                _ if expecting && depth == 1 => {
                    out.push(ident(&group[i..]));
                    expecting = false;
                }
                _ => {}
            }
        }
    }
    out
}

/// Which of a crate's top-level modules each one imports (a file or a folder is one module;
/// tests are left out).
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root = ["lib.rs", "main.rs"].iter().find_map(|f| std::fs::read_to_string(src.join(f)).ok()).unwrap_or_default();
    let reexported = reexports(&root);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(src) {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let uses = graph.entry(module.clone()).or_default();
        for name in crate_paths(code) {
            let target = reexported.get(&name).cloned().unwrap_or(name);
            if target != module {
                uses.insert(target);
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for uses in graph.values_mut() {
        uses.retain(|m| modules.contains(m));
    }
    graph
}

/// A circle of imports in `graph`, as the modules along it (the first again at the end), if
/// there is one.
fn import_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_engine_s_and_the_terminal_ui_s_modules_import_one_another_in_one_direction() {
    for krate in LAYERED {
        let graph = module_imports(&workspace().join("crates").join(krate).join("src"));
        assert!(
            graph.len() > 10 && graph.values().any(|uses| !uses.is_empty()),
            "{krate}'s modules were read: {graph:?}"
        );
        if let Some(circle) = import_circle(&graph) {
            panic!("{krate}: these modules import one another in a circle: {}", circle.join(" → "));
        }
    }
}

#[test]
fn an_import_circle_is_found_and_a_line_is_not() {
    let root = "/// Why.\npub use session::{\n    Session,\n    SessionConfig as Config,\n};\npub(crate) use sink::EventSink;\n";
    assert_eq!(reexports(root).get("Config").map(String::as_str), Some("session"));
    assert_eq!(reexports(root).get("EventSink").map(String::as_str), Some("sink"));
    let found = crate_paths("use crate::a::B;\nuse crate::{c, d::{E, F}, g};\nlet x = mycrate::h;");
    assert_eq!(found, ["a", "c", "d", "g"]);
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry((*from).into()).or_default().insert((*to).into());
            g.entry((*to).into()).or_default();
        }
        g
    };
    assert_eq!(import_circle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(
        import_circle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
