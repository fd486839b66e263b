//! The repository's structure: the crates, the modules inside each library, read from
//! `crates/engine/src/` and `crates/tools/src/`, and the README and manual.
//!
//! The crates: the engine (`crates/engine`, `decide-engine`), the tools built on it
//! (`crates/tools`, `decide-tools`: the memo, what would change the answer, the policy owner's
//! toolkit) and `decide serve` (`crates/serve`) have no command-line dependency (clap, inquire,
//! indicatif, anstream, signal-hook, rustix): the binary (`src/main.rs`, `src/cli/`) is a crate on
//! top of them. The compiler keeps the arrows between crates down (the engine does not depend on
//! the tools); the manifests are read, and `cargo tree` asked, to keep command-line crates out.
//!
//! Inside each library: no import cycle, no backward arrow, no type name twice. Every `.rs` file
//! is read into tokens (proc-macro2's lexer: comments and string literals are none) and items
//! (syn), and each file's references to the crate's
//! top-level modules (`crate::x::...`, `use crate::{x, y::z}`, `super::` chains that climb to the
//! crate root) become arrows between modules: `graph/scope.rs` is module `graph`, `kind.rs` is
//! `kind`, `lib.rs` is the crate root, shown as `crate`. A name the root re-exports
//! (`crate::Graph`) is an arrow to the module it comes from; an item defined in the root
//! (`crate::decide_with`) is an arrow to `crate`. Rust compiles a cycle between modules of one
//! crate without a word, so this test is what keeps the layers inside a crate apart.
//!
//! The documentation's own checks are `tests/docs.rs`.

use crate::common::{repo_text, root};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;

use petgraph::graphmap::DiGraphMap;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// A crate's root (`src/lib.rs`) as a node of its module graph.
const ROOT: &str = "crate";

/// Library crates below the ones scanned: a file that names one of its modules
/// (`decide_lang::parser::parse`, `use decide_lang::{parser, types}`) makes an arrow from its own
/// module to that module (`decide_lang::parser`), and a name at its root (`decide_lang::Expr`)
/// an arrow to the crate (`decide_lang`), so a layer can be kept from a part of a crate below.
const BELOW: &[&Library] = &[&LANG];

/// The crate below a node of a module graph names, and the module of it if the node names one
/// (`decide_lang::parser`): `None` for a module of the crate scanned.
fn below(node: &str) -> Option<(&'static Library, Option<&str>)> {
    let (head, module) = match node.split_once("::") {
        Some((head, module)) => (head, Some(module)),
        None => (node, None),
    };
    BELOW
        .iter()
        .find(|l| crate_name(l) == head)
        .map(|l| (*l, module))
}

/// Whether a node of a module graph is a crate below, or one of its modules.
fn is_below(node: &str) -> bool {
    below(node).is_some()
}

/// Whether a node is a crate below or one of its modules that exists.
fn is_below_module(node: &str) -> bool {
    below(node).is_some_and(|(l, module)| module.is_none_or(|m| l.modules.contains(&m)))
}

/// A library's name in code: its folder's name after `decide_` (`crates/lang` is `decide_lang`).
fn crate_name(library: &Library) -> String {
    let folder = library.dir.rsplit('/').next().unwrap_or(library.dir);
    format!("decide_{folder}")
}

/// The arrows a file's tokens make to the crates below, each as its node.
fn below_references(tokens: &[Token]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Some(library) = token
            .ident()
            .and_then(|name| BELOW.iter().find(|l| crate_name(l) == name))
        else {
            continue;
        };
        let name = crate_name(library);
        let node = |head: &str| {
            if library.modules.contains(&head) {
                format!("{name}::{head}")
            } else {
                name.clone()
            }
        };
        match (tokens.get(i + 1), tokens.get(i + 2)) {
            (Some(Token::PathSep), Some(Token::Ident(head))) => found.push(node(head)),
            (Some(Token::PathSep), Some(Token::Punct('{'))) => {
                found.extend(group_heads(tokens, i + 2).iter().map(|h| node(h)));
            }
            _ => found.push(name.clone()),
        }
    }
    found
}

/// Modules of the engine that import no other module of it: the vocabulary everything shares.
const LEAVES: &[&str] = &["error", "kind", "lang", "revision"];

/// A library crate whose top-level modules the scan reads.
struct Library {
    /// Its folder, from the repository's root.
    dir: &'static str,
    /// Every top-level module, so a new one must be placed (and a gone one leave the list).
    modules: &'static [&'static str],
    /// Arrows the scan must find in the real files (it would otherwise pass without looking).
    known: &'static [(&'static str, &'static str)],
    /// Arrows that must never exist, directly or through other modules: (from, to, why).
    never: &'static [(
        &'static [&'static str],
        &'static [&'static str],
        &'static str,
    )],
}

/// The rule language: tokens, syntax, vocabulary, types, the compiler and evaluator.
const LANG: Library = Library {
    dir: "crates/lang",
    modules: &[
        "ast",
        "code",
        "functions",
        "jinja",
        "lexer",
        "limits",
        "message",
        "numbers",
        "parser",
        "template",
        "text",
        "types",
        "unary",
        "value",
        "vocabulary",
    ],
    known: &[("parser", "lexer"), ("parser", "ast"), ("code", "ast")],
    never: &[
        (
            &["lexer", "ast", "parser"],
            &["types", "code", "text", "unary"],
            "an expression is read into its syntax before anything types or compiles it",
        ),
        (
            &["value"],
            &["jinja", "functions", "code", "text"],
            "the value is the language's own; minijinja sees it only through the adapter",
        ),
    ],
};

/// The engine: reading rules and profiles, compiling and evaluating the graph, the record.
/// What is built on it is another crate (`crates/tools`), so the compiler keeps that arrow.
const ENGINE: Library = Library {
    dir: "crates/engine",
    modules: &[
        "canonical",
        "decision",
        "error",
        "eval",
        "graph",
        "kind",
        "lang",
        "policy",
        "profile",
        "revision",
        "source",
        "today",
    ],
    known: &[
        ("eval", "graph"),
        ("graph", "policy"),
        ("graph", "decide_lang"),
    ],
    never: &[
        (
            &["policy"],
            &[
                "graph",
                "eval",
                "profile",
                "decide_lang",
                "decide_lang::lexer",
                "decide_lang::parser",
                "decide_lang::types",
                "decide_lang::code",
                "decide_lang::text",
                "decide_lang::unary",
            ],
            "the rules as written are read before anything compiles or evaluates them",
        ),
        (
            &["graph"],
            &["eval"],
            "the compiled graph is what evaluation runs, not the other way round",
        ),
    ],
};

/// What is built on the engine: the memo, the policy author's toolkit, batches, `init`'s
/// questions and the root's `decide` functions.
const TOOLS: Library = Library {
    dir: "crates/tools",
    modules: &[
        "batch",
        "calibrate",
        "catalog",
        "check",
        "diagram",
        "diff",
        "html",
        "memo",
        "questionnaire",
        "schema",
        "sensitivity",
        "suite",
        ROOT,
    ],
    known: &[("memo", "html"), (ROOT, "sensitivity"), ("check", "memo")],
    never: &[
        (
            &["sensitivity"],
            &["check"],
            "what `decide` prints at run time does not borrow from what `decide validate` checks",
        ),
        (
            &["memo", "html"],
            &["check", "suite", "diff", "calibrate"],
            "the memo renders an evaluation: it does not need the policy owner's toolkit",
        ),
    ],
};

/// The library crates the scan reads.
const LIBRARIES: [&Library; 3] = [&LANG, &ENGINE, &TOOLS];

/// One `.rs` file of a library: its crate's folder, its path under the crate's `src/` (with
/// `/`) and its text.
struct SourceFile {
    dir: &'static str,
    path: String,
    text: String,
}

impl SourceFile {
    /// Its path from the repository's root.
    fn place(&self) -> String {
        format!("{}/src/{}", self.dir, self.path)
    }
}

/// Every file of a library under its `src/`, in path order.
fn library_files(library: &Library) -> Vec<SourceFile> {
    let src = root().join(library.dir).join("src");
    let mut files = Vec::new();
    let mut folders = vec![src.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a folder of the crate's src/") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(&src)
                    .expect("under the crate's src/")
                    .to_string_lossy()
                    .replace('\\', "/");
                let text = std::fs::read_to_string(&path).expect("a source file");
                files.push(SourceFile {
                    dir: library.dir,
                    path: relative,
                    text,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    assert!(
        files.iter().any(|f| f.path == "lib.rs"),
        "{}/src/lib.rs is one of the library's files",
        library.dir
    );
    files
}

/// The module path of a file under a crate's `src/`: `lib.rs` is the root (empty), `graph/mod.rs` and
/// `graph.rs` are `[graph]`, `graph/scope.rs` is `[graph, scope]`.
fn module_path(path: &str) -> Vec<String> {
    let stem = path.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] {
        parts.clear();
    }
    parts
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

impl Token {
    fn ident(&self) -> Option<&str> {
        match self {
            Token::Ident(s) => Some(s),
            _ => None,
        }
    }
}

/// Identifiers, `::` and punctuation of a file's code as the compiler reads them
/// (proc-macro2's lexer): comments, doc comments, strings and characters are no tokens, so a
/// `crate::x` in a sentence or a string is no arrow.
fn tokens(text: &str) -> Vec<Token> {
    fn flatten(stream: TokenStream, out: &mut Vec<Token>) {
        let mut trees = stream.into_iter().peekable();
        while let Some(tree) = trees.next() {
            match tree {
                TokenTree::Ident(i) => out.push(Token::Ident(i.to_string())),
                TokenTree::Punct(p)
                    if p.as_char() == ':'
                        && p.spacing() == Spacing::Joint
                        && matches!(trees.peek(), Some(TokenTree::Punct(q)) if q.as_char() == ':') =>
                {
                    trees.next();
                    out.push(Token::PathSep);
                }
                TokenTree::Punct(p) => out.push(Token::Punct(p.as_char())),
                TokenTree::Group(g) => {
                    let ends = match g.delimiter() {
                        Delimiter::Brace => Some(('{', '}')),
                        Delimiter::Parenthesis => Some(('(', ')')),
                        Delimiter::Bracket => Some(('[', ']')),
                        Delimiter::None => None,
                    };
                    out.extend(ends.map(|(open, _)| Token::Punct(open)));
                    flatten(g.stream(), out);
                    out.extend(ends.map(|(_, close)| Token::Punct(close)));
                }
                TokenTree::Literal(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    flatten(text.parse().expect("a library file lexes"), &mut out);
    out
}

/// The first path segments of `{a, b::c, d::{e, f}}` starting at the `{` at `start`.
fn group_heads(tokens: &[Token], start: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for token in &tokens[start..] {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Token::Punct(',') if depth == 1 => expect_head = true,
            Token::Ident(name) if depth == 1 && expect_head => {
                if name != "self" {
                    heads.push(name.clone());
                }
                expect_head = false;
            }
            _ => {}
        }
    }
    heads
}

/// The names at the crate root a file's code refers to: the segment after `crate::` (or
/// `$crate::`), each head of a `crate::{...}` group, and a top-level module reached through a
/// `super::` chain that climbs to the root from the file's module `path`.
fn root_references(path: &[String], tokens: &[Token], modules: &BTreeSet<String>) -> Vec<String> {
    let mut names = Vec::new();
    let heads_at = |j: usize| -> Vec<String> {
        match tokens.get(j) {
            Some(Token::Ident(name)) => vec![name.clone()],
            Some(Token::Punct('{')) => group_heads(tokens, j),
            _ => Vec::new(),
        }
    };
    let mut i = 0;
    while i < tokens.len() {
        let after_sep = i > 0 && tokens[i - 1] == Token::PathSep;
        match tokens[i].ident() {
            Some("crate") if !after_sep && tokens.get(i + 1) == Some(&Token::PathSep) => {
                names.extend(heads_at(i + 2));
                i += 2;
            }
            Some("super") if !after_sep => {
                let mut j = i;
                let mut climbs = 0;
                while tokens.get(j).and_then(Token::ident) == Some("super")
                    && tokens.get(j + 1) == Some(&Token::PathSep)
                {
                    climbs += 1;
                    j += 2;
                }
                if climbs > 0 && climbs == path.len() {
                    // An inline module (`mod tests { use super::... }`) is one level deeper than
                    // its file, so only a top-level module's name counts as reaching the root.
                    names.extend(heads_at(j).into_iter().filter(|n| modules.contains(n)));
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    names
}

/// A root statement that declares: whether it is `pub`, its keyword (`mod`, `use`, `fn`...)
/// and the tokens after it; attributes and the visibility's `(crate)` are skipped.
fn declaration(statement: &[Token]) -> Option<(bool, &str, &[Token])> {
    let mut i = 0;
    while statement.get(i) == Some(&Token::Punct('#')) {
        i += 1;
        if statement.get(i) == Some(&Token::Punct('!')) {
            i += 1;
        }
        let mut depth = 0usize;
        while let Some(token) = statement.get(i) {
            i += 1;
            match token {
                Token::Punct('[') => depth += 1,
                Token::Punct(']') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let public = statement.get(i).and_then(Token::ident) == Some("pub");
    if public {
        i += 1;
        if statement.get(i) == Some(&Token::Punct('(')) {
            while statement.get(i).is_some_and(|t| *t != Token::Punct(')')) {
                i += 1;
            }
            i += 1;
        }
    }
    let keyword = statement.get(i)?.ident()?;
    Some((public, keyword, &statement[i + 1..]))
}

/// The names a crate's `lib.rs` re-exports (`pub use graph::Graph;`), each with its module.
fn root_reexports(tokens: &[Token], modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut aliases = BTreeMap::new();
    for statement in root_statements(tokens) {
        let Some((true, "use", [Token::Ident(module), rest @ ..])) = declaration(statement) else {
            continue;
        };
        if !modules.contains(module) {
            continue;
        }
        for name in rest.iter().filter_map(Token::ident) {
            if name != "self" && name != "as" {
                aliases.insert(name.to_owned(), module.clone());
            }
        }
    }
    aliases
}

/// The root's code as `;`-separated statements at brace depth 0 (a `fn` body is part of the
/// statement it opens).
fn root_statements(tokens: &[Token]) -> Vec<&[Token]> {
    let mut statements = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    statements.push(&tokens[start..=i]);
                    start = i + 1;
                }
            }
            Token::Punct(';') if depth == 0 => {
                statements.push(&tokens[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    statements.push(&tokens[start..]);
    statements
}

/// The module graph: for each top-level module (and `crate`), the modules it refers to, each
/// with the files that make the arrow.
type ModuleGraph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_graph(files: &[SourceFile]) -> ModuleGraph {
    let parsed: Vec<(&SourceFile, Vec<String>, Vec<Token>)> = files
        .iter()
        .map(|f| (f, module_path(&f.path), tokens(&f.text)))
        .collect();
    let modules: BTreeSet<String> = parsed
        .iter()
        .filter_map(|(_, path, _)| path.first().cloned())
        .collect();
    let root_tokens: &[Token] = parsed
        .iter()
        .find(|(_, path, _)| path.is_empty())
        .map_or(&[], |(_, _, t)| t);
    let aliases = root_reexports(root_tokens, &modules);
    let resolve = |name: &str| -> String {
        if modules.contains(name) {
            name.to_owned()
        } else if let Some(module) = aliases.get(name) {
            module.clone()
        } else {
            ROOT.to_owned()
        }
    };
    let mut graph = ModuleGraph::new();
    for module in modules.iter().map(String::as_str).chain([ROOT]) {
        graph.entry(module.to_owned()).or_default();
    }
    for (file, path, tokens) in &parsed {
        let from = path.first().map_or(ROOT, String::as_str);
        let targets: Vec<String> = if path.is_empty() {
            // The root: its own code, not its `mod` declarations and re-exports (the tree and the
            // facade); a name in scope there is a module (`sensitivity::analyse`) or a re-export.
            root_statements(tokens)
                .into_iter()
                .filter(|s| !matches!(declaration(s), Some((_, "mod", _) | (true, "use", _))))
                .flat_map(|s| s.iter().enumerate())
                .filter_map(|(i, t)| t.ident().map(|name| (i, name)))
                .filter(|&(_, name)| modules.contains(name) || aliases.contains_key(name))
                .map(|(_, name)| resolve(name))
                .collect()
        } else {
            root_references(path, tokens, &modules)
                .iter()
                .map(|name| resolve(name))
                .collect()
        };
        for to in targets.into_iter().chain(below_references(tokens)) {
            if to != from {
                graph
                    .entry(from.to_owned())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(file.place());
            }
        }
    }
    graph
}

/// Each import cycle as its path (`a → b → c → a`), one per strongly connected group.
fn cycles(graph: &ModuleGraph) -> Vec<Vec<String>> {
    let mut g = DiGraphMap::<&str, ()>::new();
    for (from, tos) in graph {
        g.add_node(from.as_str());
        for to in tos.keys() {
            g.add_edge(from.as_str(), to.as_str(), ());
        }
    }
    let mut found = Vec::new();
    for mut group in petgraph::algo::tarjan_scc(&g) {
        if group.len() < 2 {
            continue;
        }
        group.sort_unstable();
        let members: BTreeSet<&str> = group.iter().copied().collect();
        let start = group[0];
        // The shortest way from `start` back to itself inside the group.
        let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(node) = queue.pop_front() {
            for next in g.neighbors(node) {
                if !members.contains(next) {
                    continue;
                }
                if next == start {
                    let mut path = vec![start.to_owned(), node.to_owned()];
                    let mut at = node;
                    while at != start {
                        at = previous[at];
                        path.push(at.to_owned());
                    }
                    path.reverse();
                    found.push(path);
                    break 'search;
                }
                if next != start && !previous.contains_key(next) {
                    previous.insert(next, node);
                    queue.push_back(next);
                }
            }
        }
    }
    found
}

/// The path from `from` to `to` along the graph's arrows, if there is one.
fn path_between(graph: &ModuleGraph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            let next = next.as_str();
            if next == from || previous.contains_key(next) {
                continue;
            }
            previous.insert(next, node);
            if next == to {
                let mut path = vec![to.to_owned()];
                let mut at = to;
                while at != from {
                    at = previous[at];
                    path.push(at.to_owned());
                }
                path.reverse();
                return Some(path);
            }
            queue.push_back(next);
        }
    }
    None
}

/// A path with the files that make each of its arrows.
fn explain(graph: &ModuleGraph, path: &[String]) -> String {
    let mut out = path.join(" → ");
    for pair in path.windows(2) {
        let files = &graph[&pair[0]][&pair[1]];
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let _ = write!(out, "\n    {} → {}: {}", pair[0], pair[1], files.join(", "));
    }
    out
}

/// The whole graph, one line a module, for a failure message.
fn render(graph: &ModuleGraph) -> String {
    let mut out = String::new();
    for (from, tos) in graph {
        let tos: Vec<&str> = tos.keys().map(String::as_str).collect();
        let _ = writeln!(out, "  {from} → {}", tos.join(", "));
    }
    out
}

/// Struct, enum, union, type alias and trait definitions: (name, `file:line`), in modules and
/// function bodies too (syn's items). An associated type (`type Item = u8;` in an `impl` or a
/// `trait`) defines no type of its own.
fn type_definitions(file: &SourceFile) -> Vec<(String, String)> {
    fn walk(items: &[syn::Item], place: &str, out: &mut Vec<(String, String)>) {
        for item in items {
            let ident = match item {
                syn::Item::Struct(i) => &i.ident,
                syn::Item::Enum(i) => &i.ident,
                syn::Item::Union(i) => &i.ident,
                syn::Item::Type(i) => &i.ident,
                syn::Item::Trait(i) => &i.ident,
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        walk(items, place, out);
                    }
                    continue;
                }
                syn::Item::Fn(f) => {
                    let inner: Vec<syn::Item> = f
                        .block
                        .stmts
                        .iter()
                        .filter_map(|s| match s {
                            syn::Stmt::Item(i) => Some(i.clone()),
                            _ => None,
                        })
                        .collect();
                    walk(&inner, place, out);
                    continue;
                }
                _ => continue,
            };
            out.push((
                ident.to_string(),
                format!("{place}:{}", ident.span().start().line),
            ));
        }
    }
    let parsed = syn::parse_file(&file.text).expect("a library file parses");
    let mut found = Vec::new();
    walk(&parsed.items, &file.place(), &mut found);
    found
}

/// Names defined more than once, each with where.
fn duplicate_types(files: &[SourceFile]) -> BTreeMap<String, Vec<String>> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        for (name, place) in type_definitions(file) {
            by_name.entry(name).or_default().push(place);
        }
    }
    by_name.retain(|_, places| places.len() > 1);
    by_name
}

#[test]
fn the_libraries_have_no_import_cycle() {
    for library in LIBRARIES {
        let graph = module_graph(&library_files(library));
        for (from, to) in library.known {
            assert!(
                graph.get(*from).is_some_and(|tos| tos.contains_key(*to)),
                "the scan of {}/src/ misses {from} → {to}:\n{}",
                library.dir,
                render(&graph)
            );
        }
        let cycles = cycles(&graph);
        assert!(
            cycles.is_empty(),
            "import cycles between the top-level modules of {} (one per group of modules that \
             reach each other; break it and run again):\n  {}\n\nthe module graph:\n{}",
            library.dir,
            cycles
                .iter()
                .map(|c| explain(&graph, c))
                .collect::<Vec<_>>()
                .join("\n  "),
            render(&graph)
        );
    }
}

#[test]
fn no_arrow_runs_backwards() {
    let mut wrong = Vec::new();
    let engine = module_graph(&library_files(&ENGINE));
    for leaf in LEAVES {
        let Some(tos) = engine.get(*leaf) else {
            wrong.push(format!("{leaf} is listed in LEAVES but is no module"));
            continue;
        };
        // (A crate below, such as the rule language's message helpers, is no module of it.)
        let imports: Vec<&str> = tos
            .keys()
            .map(String::as_str)
            .filter(|m| !is_below(m))
            .collect();
        if !imports.is_empty() {
            wrong.push(format!(
                "{leaf} is a leaf (the shared vocabulary) but imports {}",
                imports.join(", ")
            ));
        }
    }
    for to in engine.get("decision").into_iter().flat_map(BTreeMap::keys) {
        if !LEAVES.contains(&to.as_str()) && to != "decide_lang::value" {
            wrong.push(format!(
                "decision (the record: plain data) imports only leaves ({}) and the language's \
                 values, not {}",
                LEAVES.join(", "),
                explain(&engine, &["decision".to_owned(), to.clone()])
            ));
        }
    }
    let mut graphs = String::new();
    for library in LIBRARIES {
        let graph = module_graph(&library_files(library));
        for (froms, tos, why) in library.never {
            for from in *froms {
                for to in *tos {
                    if let Some(path) = path_between(&graph, from, to) {
                        wrong.push(format!("{why}: {}", explain(&graph, &path)));
                    }
                }
            }
        }
        let _ = write!(graphs, "{}:\n{}", library.dir, render(&graph));
    }
    assert!(
        wrong.is_empty(),
        "arrows that must not exist:\n  {}\n\nthe module graphs:\n{graphs}",
        wrong.join("\n  ")
    );
}

#[test]
fn every_module_is_placed_in_the_layers() {
    // A new top-level module must be placed (in the engine, or on top of it), and a module
    // that is gone must leave the lists, or the checks above would pass without looking.
    for library in LIBRARIES {
        let graph = module_graph(&library_files(library));
        let unplaced: Vec<&str> = graph
            .keys()
            .map(String::as_str)
            .filter(|m| *m != ROOT && !is_below(m) && !library.modules.contains(m))
            .collect();
        assert!(
            unplaced.is_empty(),
            "modules of {} not listed in tests/architecture.rs: {}",
            library.dir,
            unplaced.join(", ")
        );
        let leaves = if library.dir == ENGINE.dir {
            LEAVES
        } else {
            &[]
        };
        let named = library
            .never
            .iter()
            .flat_map(|(from, to, _)| from.iter().chain(*to))
            .chain(library.known.iter().flat_map(|(a, b)| [a, b]));
        let gone: BTreeSet<&str> = library
            .modules
            .iter()
            .chain(leaves)
            .chain(named)
            .copied()
            .filter(|m| !graph.contains_key(*m) && !is_below_module(m))
            .collect();
        assert!(
            gone.is_empty(),
            "tests/architecture.rs names modules {} does not have: {gone:?}",
            library.dir
        );
    }
}

#[test]
fn no_two_types_share_a_name() {
    // Across the libraries: a name says which type it is wherever it is read.
    let files: Vec<SourceFile> = LIBRARIES.iter().flat_map(|l| library_files(l)).collect();
    let defined: BTreeSet<String> = files
        .iter()
        .flat_map(type_definitions)
        .map(|(name, _)| name)
        .collect();
    for known in ["Profile", "Policy", "Graph", "Decision", "Error", "Memo"] {
        assert!(
            defined.contains(known),
            "the scan of the libraries misses type {known}"
        );
    }
    let duplicates = duplicate_types(&files);
    let mut list = String::new();
    for (name, places) in &duplicates {
        let _ = writeln!(list, "  {name}: {}", places.join(", "));
    }
    assert!(
        duplicates.is_empty(),
        "types defined more than once in the libraries (give each a name of its own):\n{list}"
    );
}

/// What only the command line needs: none of these may be a dependency of the engine.
const COMMAND_LINE_CRATES: &[&str] = &[
    "clap",
    "clap_complete",
    "clap_mangen",
    "inquire",
    "indicatif",
    "anstream",
    "signal-hook",
    "rustix",
];

/// The crates a manifest depends on, in every `[...dependencies]` table (`[dependencies]`,
/// `[dev-dependencies]`, `[target.'cfg(unix)'.dependencies]`, `[dependencies.clap]`, ...):
/// (table, crate). A renamed dependency (`cli = { package = "clap" }`) is its package's name.
fn declared_dependencies(manifest: &str) -> Vec<(String, String)> {
    let mut table = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            header
                .trim_matches(['[', ']'])
                .trim()
                .clone_into(&mut table);
            if let Some((_, name)) = table.rsplit_once("dependencies.") {
                found.push((table.clone(), name.trim_matches('"').to_owned()));
            }
            continue;
        }
        if line.starts_with('#') || !table.ends_with("dependencies") {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let package = value
            .split_once("package")
            .and_then(|(_, rest)| rest.split('"').nth(1));
        let name = package.unwrap_or_else(|| key.trim().split('.').next().unwrap_or_default());
        found.push((table.clone(), name.trim_matches('"').to_owned()));
    }
    found
}

#[test]
fn the_libraries_declare_no_command_line_dependency() {
    for library in LIBRARIES {
        let path = format!("{}/Cargo.toml", library.dir);
        let declared = declared_dependencies(&repo_text(&path));
        for known in ["minijinja", "jiff"] {
            assert!(
                declared.iter().any(|(_, name)| name == known),
                "the scan of {path} misses {known}: {declared:?}"
            );
        }
        let wrong: Vec<String> = declared
            .iter()
            .filter(|(_, name)| COMMAND_LINE_CRATES.contains(&name.as_str()))
            .map(|(table, name)| format!("{name} in [{table}]"))
            .collect();
        assert!(
            wrong.is_empty(),
            "{path} depends on what only the command line needs ({}); it belongs to the \
             binary's Cargo.toml: {}",
            COMMAND_LINE_CRATES.join(", "),
            wrong.join(", ")
        );
    }
}

#[test]
fn the_manifest_scan_finds_a_dependency_in_a_small_input() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nserde.workspace = true\n\
                    cli = { package = \"clap\", version = \"4\" }\n# inquire = \"0.9\"\n\n\
                    [target.'cfg(unix)'.dependencies]\nrustix = \"1\"\n\n\
                    [dependencies.indicatif]\nversion = \"0.18\"\n\n[lints]\nworkspace = true\n";
    let names: Vec<String> = declared_dependencies(manifest)
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    assert_eq!(names, ["serde", "clap", "rustix", "indicatif"]);
}

/// The crates `cargo tree` lists for `package`, normal dependencies only, on every target
/// (`rustix` is a Unix-only dependency), or why `cargo tree` could not run.
fn dependency_tree(package: &str) -> Result<BTreeSet<String>, String> {
    // Cargo sets `CARGO` for the tests it runs; the tree is read from Cargo.lock. Not offline:
    // on a fresh machine the crates only other targets build (Windows' for tokio and anstream)
    // were never downloaded, and `cargo tree --target all` needs their manifests.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(&cargo)
        .args(["tree", "--locked", "--target", "all", "-e", "normal"])
        .args([
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
            "--manifest-path",
        ])
        .arg(root().join("Cargo.toml"))
        .output()
        .map_err(|e| format!("`{} tree` does not run: {e}", cargo.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo tree -p {package}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect())
}

#[test]
fn the_libraries_dependency_trees_have_no_command_line_crate() {
    // The binary's tree has clap: the check below can see one.
    let binary = dependency_tree("decide").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        binary.contains("clap"),
        "`cargo tree -p decide`: {binary:?}"
    );
    for package in [
        "decide-lang",
        "decide-engine",
        "decide-tools",
        "decide-serve",
    ] {
        let tree = dependency_tree(package).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            tree.contains("minijinja"),
            "`cargo tree -p {package}`: {tree:?}"
        );
        let wrong: Vec<&str> = COMMAND_LINE_CRATES
            .iter()
            .copied()
            .filter(|name| tree.contains(*name))
            .collect();
        assert!(
            wrong.is_empty(),
            "`cargo tree -p {package} -e normal` has command-line crates (through its \
             dependencies or their features): {}",
            wrong.join(", ")
        );
    }
}

/// A small crate in memory: (path under `crates/engine/src/`, text).
fn synthetic(files: &[(&str, &str)]) -> Vec<SourceFile> {
    files
        .iter()
        .map(|(path, text)| SourceFile {
            dir: ENGINE.dir,
            path: (*path).to_owned(),
            text: (*text).to_owned(),
        })
        .collect()
}

const LIB: &str = "pub mod a;\npub mod b;\npub mod c;\npub use a::Thing;\n\
                   pub fn run() -> Thing { c::go() }\n";

#[test]
fn the_parser_finds_a_cycle_in_a_small_input() {
    let files = synthetic(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::{b::X, self as me};\npub struct Thing;"),
        ("b/mod.rs", "mod inner;\npub struct X;"),
        (
            "b/inner.rs",
            "fn f() -> crate::Thing { super::super::c::go(); todo!() }",
        ),
        (
            "c.rs",
            "// use crate::a;\n/// [`crate::b`]\n/* crate::a /* nested */ crate::b */\n\
             const S: &str = \"crate::a\";\nconst R: &str = r#\"crate::\"b\"#;\n\
             fn q<'a>(_: &'a str) -> char { '\"' }\npub fn go() {}\n",
        ),
    ]);
    let graph = module_graph(&files);
    let arrows = |m: &str| -> Vec<&str> { graph[m].keys().map(String::as_str).collect() };
    assert_eq!(
        arrows("a"),
        ["b"],
        "a `crate::{{...}}` group; `self` is no module"
    );
    assert_eq!(
        arrows("b"),
        ["a", "c"],
        "a re-export resolves to its module; `super::super::` from b/inner.rs is the root"
    );
    assert_eq!(
        arrows("c"),
        Vec::<&str>::new(),
        "comments, doc comments, strings and raw strings are no arrows"
    );
    assert_eq!(arrows(ROOT), ["a", "c"], "the root's code, not its tree");
    assert_eq!(cycles(&graph), [["a", "b", "a"]]);
    assert!(explain(&graph, &cycles(&graph)[0]).contains("b → a: crates/engine/src/b/inner.rs"));

    let without = synthetic(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::b::X;\npub struct Thing;"),
        ("b/mod.rs", "pub struct X;"),
        ("c.rs", "pub fn go() {}"),
    ]);
    assert!(cycles(&module_graph(&without)).is_empty());

    let long = synthetic(&[
        ("lib.rs", "pub fn f() { crate::d::g() }"),
        ("a.rs", "use crate::b;"),
        ("b.rs", "use crate::c::x;"),
        ("c.rs", "use crate::{a::y, d};"),
        ("d.rs", ""),
    ]);
    assert_eq!(cycles(&module_graph(&long)), [["a", "b", "c", "a"]]);
}

#[test]
fn the_type_scan_ignores_associated_types() {
    let files = synthetic(&[
        (
            "a.rs",
            "pub struct Item;\nimpl Iterator for Item {\n    type Item = u8;\n    \
             fn next(&mut self) -> Option<u8> { None }\n}\n\
             trait Walk { type Item; }\n// struct Item;\n",
        ),
        ("b.rs", "pub(crate) enum Item { A }\npub type Other = u8;\n"),
    ]);
    let duplicates = duplicate_types(&files);
    assert_eq!(duplicates.len(), 1, "{duplicates:?}");
    assert_eq!(
        duplicates["Item"],
        ["crates/engine/src/a.rs:1", "crates/engine/src/b.rs:1"]
    );
}
