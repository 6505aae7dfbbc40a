//! Reading a command line with bash's own grammar (tree-sitter-bash): every simple command the
//! line would run — in pipelines, lists, loops, conditionals, functions, subshells, command and
//! process substitutions and unquoted here-document bodies — with its words spelled plainly,
//! the files its redirections write, the variables it sets, and the (sub)shell it runs in.
//!
//! A hand-written splitter read `if …; then rm -rf /; fi` as a program named `then`, and skipped
//! here-document bodies whose `$(…)` bash runs; a grammar leaves no such gaps.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use crate::command::{SUBSTITUTION, SimpleCommand};

thread_local! {
    /// Making a parser costs about 20 µs; a thread keeps its own.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Past this many nested nodes a line is not read further (it would only exhaust the stack):
/// what was read is kept and an empty command, which no rule allows, stands for the rest.
const MAX_NODE_DEPTH: usize = 512;

/// The syntax tree of `line`, or `None` when the parser gives none.
fn parse(line: &str) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(line, None)
    })
}

/// Reads `line` as run in the shell `shell` (a chain of subshell ids; empty for the call's own
/// shell). Commands come out in the order they start: a substitution's before the command it
/// is part of. `new_shell` hands out subshell ids unique within one call.
pub(crate) fn read(line: &str, shell: &[u32], new_shell: &mut dyn FnMut() -> u32) -> Vec<SimpleCommand> {
    let unreadable = || SimpleCommand { shell: shell.to_vec(), ..Default::default() };
    let Some(tree) = parse(line) else { return vec![unreadable()] };
    let root = tree.root_node();
    let mut walker = Walker { src: line, out: Vec::new(), shell: shell.to_vec(), new_shell, too_deep: false };
    walker.statements(root, 0);
    if root.has_error() || walker.too_deep {
        walker.out.push(unreadable());
    }
    walker.out
}

struct Walker<'a> {
    src: &'a str,
    out: Vec<SimpleCommand>,
    shell: Vec<u32>,
    new_shell: &'a mut dyn FnMut() -> u32,
    too_deep: bool,
}

/// Node kinds that are commands or hold commands (as opposed to words).
fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "command"
            | "redirected_statement"
            | "pipeline"
            | "list"
            | "subshell"
            | "compound_statement"
            | "do_group"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "case_item"
            | "function_definition"
            | "negated_command"
            | "test_command"
            | "declaration_command"
            | "unset_command"
            | "variable_assignment"
            | "variable_assignments"
            | "program"
            | "ERROR"
    )
}

impl<'a> Walker<'a> {
    fn text(&self, node: Node) -> &'a str {
        let src: &'a str = self.src;
        src.get(node.byte_range()).unwrap_or("")
    }

    fn push(&mut self, mut command: SimpleCommand) {
        command.shell = self.shell.clone();
        self.out.push(command);
    }

    /// Runs `f` in a new subshell of the current one.
    fn in_subshell(&mut self, f: impl FnOnce(&mut Self)) {
        let id = (self.new_shell)();
        self.shell.push(id);
        f(self);
        self.shell.pop();
    }

    fn deep(&mut self, depth: usize) -> bool {
        if depth > MAX_NODE_DEPTH {
            self.too_deep = true;
        }
        self.too_deep
    }

    /// The commands among `node`'s children; a statement followed by `&` runs in a subshell.
    fn statements(&mut self, node: Node, depth: usize) {
        if self.deep(depth) {
            return;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            let backgrounded = children.get(i + 1).is_some_and(|next| next.kind() == "&");
            if backgrounded {
                self.in_subshell(|w| w.node(*child, depth + 1));
            } else {
                self.node(*child, depth + 1);
            }
        }
    }

    /// One child of a statement: a statement, or a word whose substitutions are commands.
    fn node(&mut self, node: Node, depth: usize) {
        if !node.is_named() || node.kind() == "comment" {
            return;
        }
        if is_statement(node.kind()) {
            self.statement(node, depth);
        } else {
            let mut subs = Vec::new();
            self.word(node, &mut subs, depth);
        }
    }

    fn statement(&mut self, node: Node, depth: usize) {
        if self.deep(depth) {
            return;
        }
        match node.kind() {
            "command" => {
                let mut command = SimpleCommand::default();
                let mut after = Vec::new();
                self.command_parts(node, &mut command, &mut after, depth);
                self.push(command);
                for n in after {
                    self.node(n, depth + 1);
                }
            }
            "redirected_statement" => self.redirected(node, depth),
            "pipeline" => {
                let mut cursor = node.walk();
                let members: Vec<Node> = node.named_children(&mut cursor).collect();
                // Each member of a pipeline runs in a subshell of its own.
                for member in members {
                    if member.kind() == "comment" {
                        continue;
                    }
                    self.in_subshell(|w| w.node(member, depth + 1));
                }
            }
            "subshell" => self.in_subshell(|w| w.statements(node, depth + 1)),
            "variable_assignment" => {
                let mut command = SimpleCommand::default();
                self.assignment(node, &mut command, depth);
                self.push(command);
            }
            "variable_assignments" => {
                let mut command = SimpleCommand::default();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.assignment(child, &mut command, depth);
                }
                self.push(command);
            }
            "declaration_command" | "unset_command" => {
                // `export X=…`, `local Y`, `unset Z`: a command of its own that also sets.
                let mut command = SimpleCommand::default();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for child in children {
                    if !child.is_named() {
                        command.argv.push(self.text(child).to_owned());
                        continue;
                    }
                    if child.kind() == "variable_assignment" {
                        self.assignment(child, &mut command, depth);
                        command.argv.push(self.text(child).to_owned());
                    } else {
                        let mut subs = Vec::new();
                        let word = self.word(child, &mut subs, depth);
                        command.argv.push(word);
                        command.substitutions.extend(subs);
                    }
                }
                self.push(command);
            }
            // A test (`[[ … ]]`, `[ … ]`) changes nothing; what its substitutions run does.
            _ => self.statements(node, depth + 1),
        }
    }

    /// `NAME=value`: what it sets (the value spelled plainly).
    fn assignment(&mut self, node: Node, command: &mut SimpleCommand, depth: usize) {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_owned()).unwrap_or_default();
        let mut subs = Vec::new();
        let value = match node.child_by_field_name("value") {
            Some(value) => self.word(value, &mut subs, depth + 1),
            None => String::new(),
        };
        command.assigns.push((name, value));
    }

    /// The words, assignments and redirections of a `command` node; statements found inside
    /// a redirection (the rest of a pipeline after a here-document) go to `after`.
    fn command_parts<'t>(
        &mut self,
        node: Node<'t>,
        command: &mut SimpleCommand,
        after: &mut Vec<Node<'t>>,
        depth: usize,
    ) {
        let children = with_fields(node);
        for (child, field) in children {
            if !child.is_named() {
                continue;
            }
            match (child.kind(), field) {
                ("variable_assignment", _) => self.assignment(child, command, depth),
                (_, Some("redirect")) => self.redirect(child, command, after, depth),
                ("herestring_redirect" | "file_redirect" | "heredoc_redirect", _) => {
                    self.redirect(child, command, after, depth)
                }
                ("comment", _) => {}
                (kind, _) if is_statement(kind) => after.push(child),
                _ => {
                    let mut subs = Vec::new();
                    let word = self.word(child, &mut subs, depth + 1);
                    command.argv.push(word);
                    command.substitutions.extend(subs);
                }
            }
        }
    }

    /// A statement with redirections: on a simple command they are its own; on anything else
    /// (a group, a loop) they stand as a command of their own that only writes.
    fn redirected(&mut self, node: Node, depth: usize) {
        let body = node.child_by_field_name("body");
        let mut command = SimpleCommand::default();
        let mut after = Vec::new();
        let simple = body.is_some_and(|b| b.kind() == "command");
        if let Some(body) = body {
            if simple {
                self.command_parts(body, &mut command, &mut after, depth + 1);
            } else {
                self.node(body, depth + 1);
            }
        }
        let mut cursor = node.walk();
        let redirects: Vec<Node> =
            node.named_children(&mut cursor).filter(|c| Some(c.id()) != body.map(|b| b.id())).collect();
        for redirect in redirects {
            self.redirect(redirect, &mut command, &mut after, depth + 1);
        }
        if simple || !command.writes.is_empty() || !command.reads.is_empty() {
            self.push(command);
        }
        for n in after {
            self.node(n, depth + 1);
        }
    }

    fn redirect<'t>(&mut self, node: Node<'t>, command: &mut SimpleCommand, after: &mut Vec<Node<'t>>, depth: usize) {
        match node.kind() {
            "file_redirect" => {
                let mut cursor = node.walk();
                let operator = node
                    .children(&mut cursor)
                    .find(|c| !c.is_named())
                    .map(|c| self.text(c).to_owned())
                    .unwrap_or_default();
                let mut cursor = node.walk();
                let destinations: Vec<Node> = node.children_by_field_name("destination", &mut cursor).collect();
                let Some((destination, more)) = destinations.split_first() else { return };
                let mut subs = Vec::new();
                let target = self.word(*destination, &mut subs, depth + 1);
                // The grammar reads the words after a target (`echo > f x y`) as more targets;
                // bash gives them to the command.
                for word in more {
                    let mut subs = Vec::new();
                    let word = self.word(*word, &mut subs, depth + 1);
                    command.argv.push(word);
                    command.substitutions.extend(subs);
                }
                // `>&2`, `2>&1`, `>&-` copy or close a descriptor; `>&file` writes the file.
                let duplicate = matches!(operator.as_str(), ">&" | "<&" | ">&-" | "<&-")
                    && (target == "-" || target.chars().all(|c| c.is_ascii_digit()));
                let writes = matches!(operator.as_str(), ">" | ">>" | "&>" | "&>>" | ">|" | "<>" | ">&");
                if matches!(operator.as_str(), "<" | "<>") || (operator == "<&" && !duplicate) {
                    command.reads.push(target.clone());
                    command.read_substitutions.extend(subs.iter().cloned());
                }
                if writes && !duplicate {
                    command.writes.push(target);
                    command.write_substitutions.extend(subs);
                }
            }
            "heredoc_redirect" => {
                let children = with_fields(node);
                for (child, field) in children {
                    match (child.kind(), field) {
                        (_, Some("redirect")) | ("file_redirect" | "herestring_redirect", _) => {
                            self.redirect(child, command, after, depth + 1)
                        }
                        // An unquoted body's substitutions run before the command.
                        ("heredoc_body", _) => {
                            let mut subs = Vec::new();
                            self.word(child, &mut subs, depth + 1);
                        }
                        (kind, _) if is_statement(kind) => after.push(child),
                        _ => {}
                    }
                }
            }
            // `<<< word` only reads; its substitutions still run.
            _ => {
                let mut subs = Vec::new();
                self.word(node, &mut subs, depth + 1);
            }
        }
    }

    /// A word spelled plainly, as the program would see it where it can be known: quotes and
    /// escapes taken away, ANSI-C strings decoded, each command or process substitution shown
    /// as [`SUBSTITUTION`] with its text added to `subs` (and its commands read), variables
    /// left as written.
    fn word(&mut self, node: Node, subs: &mut Vec<String>, depth: usize) -> String {
        if self.deep(depth) {
            return String::new();
        }
        let text = self.text(node);
        match node.kind() {
            "word" => unescape_bare(text),
            "raw_string" => text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).unwrap_or(text).to_owned(),
            "ansi_c_string" => {
                decode_ansi_c(text.strip_prefix("$'").and_then(|t| t.strip_suffix('\'')).unwrap_or(text))
            }
            "string" => {
                let start = node.start_byte() + text.find('"').map_or(0, |i| i + 1);
                let end = if text.len() > 1 && text.ends_with('"') { node.end_byte() - 1 } else { node.end_byte() };
                self.spliced(node, start, end, subs, depth, unescape_double)
            }
            "concatenation" | "translated_string" => {
                self.spliced(node, node.start_byte(), node.end_byte(), subs, depth, |s| s.to_owned())
            }
            "command_substitution" | "process_substitution" => {
                let inner = text
                    .strip_prefix("$(")
                    .or_else(|| text.strip_prefix("<("))
                    .or_else(|| text.strip_prefix(">("))
                    .and_then(|t| t.strip_suffix(')'))
                    .or_else(|| text.strip_prefix('`').and_then(|t| t.strip_suffix('`')))
                    .unwrap_or(text);
                subs.push(inner.trim().to_owned());
                self.in_subshell(|w| w.statements(node, depth + 1));
                SUBSTITUTION.to_owned()
            }
            "string_content" | "heredoc_content" => text.to_owned(),
            "command_name" => self.spliced(node, node.start_byte(), node.end_byte(), subs, depth, |s| s.to_owned()),
            // Variables and arithmetic stay as written; commands inside them still run.
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    if is_statement(child.kind()) {
                        self.in_subshell(|w| w.node(child, depth + 1));
                    } else {
                        let mut inner = Vec::new();
                        self.word(child, &mut inner, depth + 1);
                    }
                }
                text.to_owned()
            }
        }
    }

    /// The text from `start` to `end` with each named child spelled by [`Walker::word`] and the
    /// text between children passed through `plain`.
    fn spliced(
        &mut self,
        node: Node,
        start: usize,
        end: usize,
        subs: &mut Vec<String>,
        depth: usize,
        plain: fn(&str) -> String,
    ) -> String {
        let mut out = String::new();
        let mut at = start;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.start_byte() < at || child.end_byte() > end {
                continue;
            }
            out.push_str(&plain(self.src.get(at..child.start_byte()).unwrap_or("")));
            if child.kind() == "string_content" {
                out.push_str(&plain(self.text(child)));
            } else {
                out.push_str(&self.word(child, subs, depth + 1));
            }
            at = child.end_byte();
        }
        out.push_str(&plain(self.src.get(at..end.max(at)).unwrap_or("")));
        out
    }
}

/// A node's children, each with the name of the field it fills (if any).
fn with_fields<'t>(node: Node<'t>) -> Vec<(Node<'t>, Option<&'t str>)> {
    let mut cursor = node.walk();
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.node(), cursor.field_name()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// A bare word's backslashes taken away: `\x` is `x`, a backslash-newline is nothing.
fn unescape_bare(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only escapes `"`, `\`, `$`, `` ` `` and a newline.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => out.extend(chars.next()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The body of `$'…'` decoded as bash does (`$'\x72m'` is `rm`).
fn decode_ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let number = |chars: &mut std::iter::Peekable<std::str::Chars>, radix: u32, max: usize| {
        let mut digits = String::new();
        while digits.len() < max && chars.peek().is_some_and(|c| c.is_digit(radix)) {
            digits.extend(chars.next());
        }
        u32::from_str_radix(&digits, radix).ok()
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match kind {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(kind),
            'x' => number(&mut chars, 16, 2).and_then(char::from_u32),
            'u' => number(&mut chars, 16, 4).and_then(char::from_u32),
            'U' => number(&mut chars, 16, 8).and_then(char::from_u32),
            'c' => chars.next().map(|c| char::from((c as u8) & 0x1f)),
            '0'..='7' => {
                let mut digits = kind.to_string();
                while digits.len() < 3 && chars.peek().is_some_and(|c| c.is_digit(8)) {
                    digits.extend(chars.next());
                }
                u32::from_str_radix(&digits, 8).ok().and_then(char::from_u32)
            }
            other => {
                out.push('\\');
                Some(other)
            }
        };
        out.extend(decoded);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode_as_bash_does() {
        assert_eq!(decode_ansi_c(r"\x72m"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155 -rf"), "rm -rf");
        assert_eq!(decode_ansi_c(r"a\tb\'\u0041\q"), "a\tb'A\\q");
    }

    #[test]
    fn backslashes_are_taken_away_as_bash_does() {
        assert_eq!(unescape_bare(r"\/a\ b\\"), r"/a b\");
        assert_eq!(unescape_double(r#"\"\$x\n\\"#), r#""$x\n\"#);
    }
}
