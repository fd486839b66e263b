//! The layers the compiler cannot keep. Between crates it does (the engine cannot name the
//! tools); inside a crate Rust compiles a cycle between modules without a word, and no manifest
//! says "no command-line crate". So: each library's files are parsed with syn, every path its
//! code names (`crate::graph::Body`, `use crate::{a, b::c}`, a `super::` chain that climbs to the
//! root, `decide_lang::parser`, also inside `format!`-like macros) becomes an arrow from the
//! file's top-level module to the one named, and the graph is checked for cycles, for arrows
//! that run backwards and for modules not placed; and `cargo tree` keeps command-line crates out
//! of the libraries. (That no two types share a name is `tests/names.rs`.)

use crate::common::{root, rust_files};
use petgraph::graphmap::DiGraphMap;
use std::collections::{BTreeMap, BTreeSet};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};

/// A crate's root (`src/lib.rs`) as a node of its module graph.
const ROOT: &str = "crate";

/// A library whose top-level modules are read: each named in `modules` (so that a new one is
/// placed, and a list cannot name what is gone and pass without looking); `never`, arrows that
/// must not exist, directly or through other modules: "from ... ↛ to ...: why".
struct Library {
    dir: &'static str,
    modules: &'static str,
    never: &'static [&'static str],
}

const LANG: Library = Library {
    dir: "crates/lang",
    modules: "ast code cover functions jinja lexer limits measure message numbers parser \
              template text types unary value vocabulary",
    never: &[
        "measure ↛ ast code cover functions jinja lexer parser template text types unary value \
         vocabulary: what a number measures is a plain product of units, read from the policy's \
         words; the typechecker uses it, not the other way round",
        "cover ↛ ast code jinja lexer parser template text types: the cheapest cover of a length \
         by billing terms is arithmetic over the language's values, called by the evaluator and \
         the templates alike",
        "lexer ast parser ↛ types code text unary: an expression is read into its syntax before \
         anything types or compiles it",
        "value ↛ jinja functions code text: the value is the language's own; minijinja sees it \
         only through the adapter",
    ],
};

const ENGINE: Library = Library {
    dir: "crates/engine",
    modules: "canonical decision error eval graph kind lang places policy profile revision source \
              today",
    never: &[
        "error kind lang revision ↛ canonical decision eval graph policy profile source today: a \
         leaf (the vocabulary every module shares) imports no other module",
        "decision ↛ canonical eval graph policy profile source today decide_lang::code \
         decide_lang::types decide_lang::text decide_lang::jinja: the record is plain data: it \
         imports only the leaves and the language's values",
        "policy ↛ graph eval profile decide_lang::lexer decide_lang::parser decide_lang::types \
         decide_lang::code decide_lang::text: the rules as written are read before anything \
         compiles or evaluates them",
        "graph ↛ eval: evaluation runs the compiled graph, not the other way round",
    ],
};

const TOOLS: Library = Library {
    dir: "crates/tools",
    modules: "batch calibrate catalog check diagram diff html memo questionnaire schema \
              sensitivity suite",
    never: &[
        "sensitivity ↛ check: what `decide` prints does not borrow from what `validate` checks",
        "memo html ↛ check suite diff calibrate: the memo renders an evaluation: it does not need \
         the policy owner's toolkit",
    ],
};

const LIBRARIES: [&Library; 3] = [&LANG, &ENGINE, &TOOLS];

/// The crate below whose modules a file may name: `decide_lang::parser` is a node of the graph.
const BELOW: (&str, &Library) = ("decide_lang", &LANG);

/// What a file's code names, read by syn's visitor: every path (with how many inline modules
/// deep, `mod tests { ... }`), and the names a root's `use` makes reachable as `crate::name`
/// (each with its module).
#[derive(Default)]
struct Scan {
    place: String,
    /// The file's top-level module (`graph` for `graph/scope.rs`), `crate` for `lib.rs`.
    module: String,
    /// How deep the file is below the root: `lib.rs` 0, `graph/mod.rs` 1, `graph/scope.rs` 2.
    depth: usize,
    inline: usize,
    paths: Vec<(usize, Vec<String>)>,
    reexports: BTreeMap<String, String>,
}

fn scan(dir: &str, relative: &str, text: &str) -> Scan {
    let mut path: Vec<&str> = relative.trim_end_matches(".rs").split('/').collect();
    if path.last().is_some_and(|p| *p == "mod" || *p == "lib") {
        path.pop();
    }
    let place = format!("{dir}/src/{relative}");
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{place} parses: {e}"));
    let module = path.first().unwrap_or(&ROOT).to_string();
    let mut scan = Scan {
        place,
        module,
        depth: path.len(),
        ..Scan::default()
    };
    scan.visit_file(&file);
    scan
}

fn library_files(library: &Library) -> Vec<Scan> {
    let files = rust_files(library.dir).into_iter();
    files
        .map(|(path, text)| scan(library.dir, &path, &text))
        .collect()
}

impl Scan {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, root_use: bool) {
        let (ident, alias) = match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, root_use);
                prefix.pop();
                return;
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree, root_use);
                }
                return;
            }
            syn::UseTree::Glob(_) => return self.paths.push((self.inline, prefix.clone())),
            syn::UseTree::Name(n) => (&n.ident, &n.ident),
            syn::UseTree::Rename(r) => (&r.ident, &r.rename),
        };
        if root_use && !prefix.is_empty() {
            self.reexports.insert(alias.to_string(), prefix[0].clone());
        } else {
            let last = (ident != "self").then(|| ident.to_string());
            let path = prefix.iter().cloned().chain(last).collect();
            self.paths.push((self.inline, path));
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.paths.push((self.inline, segments));
        visit::visit_path(self, path);
    }
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        // A `use` in the root makes a name every module may reach as `crate::name`; a private
        // one is the root's own code too. `mod` items (the tree) are no arrows.
        let root = self.depth == 0;
        if root {
            self.use_tree(&mut Vec::new(), &item.tree, true);
        }
        if !root || matches!(item.vis, syn::Visibility::Inherited) {
            self.use_tree(&mut Vec::new(), &item.tree, false);
        }
    }
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let inline = usize::from(item.content.is_some() && self.depth > 0);
        self.inline += inline;
        visit::visit_item_mod(self, item);
        self.inline -= inline;
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // `format!("{}", crate::x::y())`, `assert!(...)`: arguments that parse as expressions.
        let parser = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = mac.parse_body_with(parser) {
            args.iter().for_each(|e| self.visit_expr(e));
        }
        visit::visit_macro(self, mac);
    }
}

/// For each top-level module (and `crate`), the modules it names, each with the files that do.
type ModuleGraph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_graph(files: &[Scan]) -> ModuleGraph {
    let mut graph: ModuleGraph = files
        .iter()
        .map(|f| (f.module.clone(), BTreeMap::new()))
        .collect();
    let reexports = &files
        .iter()
        .find(|f| f.depth == 0)
        .expect("lib.rs")
        .reexports;
    let resolve = |name: &str| match reexports.get(name) {
        _ if graph.contains_key(name) => Some(name.to_owned()),
        Some(module) if graph.contains_key(module) => Some(module.clone()),
        _ => Some(ROOT.to_owned()),
    };
    let mut arrows = Vec::new();
    for file in files {
        for (inline, segments) in &file.paths {
            let (head, next) = (segments[0].as_str(), segments.get(1).map(String::as_str));
            let climbs = segments.iter().take_while(|s| *s == "super").count();
            let to = if head == BELOW.0 {
                let module = next.filter(|m| BELOW.1.modules.split_whitespace().any(|n| n == *m));
                Some(module.map_or(head.to_owned(), |m| format!("{head}::{m}")))
            } else if head == "crate" && next.is_some() {
                resolve(&segments[1])
            } else if climbs > 0 && climbs == file.depth + inline && segments.len() > climbs {
                resolve(&segments[climbs])
            } else if file.depth == 0 && (graph.contains_key(head) || reexports.contains_key(head))
            {
                resolve(head)
            } else {
                None
            };
            arrows.extend(to.filter(|to| *to != file.module).map(|to| (file, to)));
        }
    }
    for (file, to) in arrows {
        let tos = graph.get_mut(&file.module).expect("every module is a node");
        tos.entry(to).or_default().insert(file.place.clone());
    }
    graph
}

/// The shortest path from `from` to `to` along the arrows, if there is one.
fn path_between(graph: &ModuleGraph, from: &str, to: &str) -> Option<Vec<String>> {
    let edges = graph
        .iter()
        .flat_map(|(a, tos)| tos.keys().map(move |b| (a.as_str(), b.as_str())));
    let g = DiGraphMap::<&str, ()>::from_edges(edges);
    let (_, path) = petgraph::algo::astar(&g, from, |n| n == to, |_| 1, |_| 0)?;
    Some(path.into_iter().map(str::to_owned).collect())
}

/// Each import cycle (`a → b → a`): for each group of modules that reach each other, the
/// shortest way from its first module back to itself.
fn cycles(graph: &ModuleGraph) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for (start, tos) in graph {
        let back = tos
            .keys()
            .filter_map(|n| path_between(graph, n, start))
            .min_by_key(Vec::len);
        if let Some(back) = back.filter(|b| b.iter().all(|m| !seen.contains(m))) {
            seen.extend(back.iter().cloned());
            found.push(std::iter::once(start.clone()).chain(back).collect());
        }
    }
    found
}

/// A path with the files that make each of its arrows.
fn explain(graph: &ModuleGraph, path: &[String]) -> String {
    let arrows = path.windows(2).map(|pair| {
        let files: Vec<&str> = graph[&pair[0]][&pair[1]]
            .iter()
            .map(String::as_str)
            .collect();
        format!("\n    {} → {}: {}", pair[0], pair[1], files.join(", "))
    });
    path.join(" → ") + &arrows.collect::<String>()
}

/// Whether a name in a library's lists is a module of the graph, or of the crate below.
fn exists(graph: &ModuleGraph, name: &str) -> bool {
    let below = name
        .strip_prefix(BELOW.0)
        .and_then(|m| m.strip_prefix("::"));
    graph.contains_key(name) || below.is_some_and(|m| BELOW.1.modules.split(' ').any(|n| n == m))
}

#[test]
fn the_libraries_have_no_import_cycle_and_no_arrow_backwards() {
    let mut wrong = Vec::new();
    for library in LIBRARIES {
        let graph = module_graph(&library_files(library));
        let mut fail = |what: String| wrong.push(format!("{}: {what}", library.dir));
        let modules: Vec<&str> = library.modules.split_whitespace().collect();
        let mut never = Vec::new();
        for rule in library.never {
            let (arrow, why) = rule.split_once(": ").expect("a rule says why");
            let (froms, tos) = arrow.split_once(" ↛ ").expect("a rule has an arrow");
            for from in froms.split_whitespace() {
                never.extend(tos.split_whitespace().map(|to| (from, to, why)));
            }
        }
        // A new module must be placed, and a gone one leave the lists, or this looks at nothing.
        let named = modules
            .iter()
            .chain(never.iter().flat_map(|(a, b, _)| [a, b]));
        for name in named.filter(|n| !exists(&graph, n)) {
            fail(format!(
                "tests/architecture.rs names {name}, which is no module"
            ));
        }
        for module in graph
            .keys()
            .filter(|m| *m != ROOT && !modules.contains(&m.as_str()))
        {
            fail(format!(
                "module {module} is in no list of tests/architecture.rs"
            ));
        }
        for cycle in cycles(&graph) {
            fail(format!("an import cycle: {}", explain(&graph, &cycle)));
        }
        for (from, to, why) in never {
            if let Some(path) = path_between(&graph, from, to) {
                fail(format!("{why}: {}", explain(&graph, &path)));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The crates `cargo tree` lists for a package, normal dependencies on every target (not
/// offline: a fresh machine never downloaded the crates only other targets build).
fn dependency_tree(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = "tree --locked --target=all -e=normal --prefix=none --format={p} --manifest-path";
    let mut command = std::process::Command::new(&cargo);
    command.args(args.split(' ')).arg(root().join("Cargo.toml"));
    let out = command.args(["-p", package]).output().expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo tree -p {package}: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(|l| l.split(' ').next().unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn the_libraries_dependency_trees_have_no_command_line_crate() {
    // What only the command line needs: no library may depend on one, even through others.
    let cli = "clap clap_complete clap_mangen inquire indicatif anstream signal-hook rustix";
    assert!(dependency_tree("decide").contains("clap"), "it sees one");
    for package in "decide-lang decide-engine decide-tools decide-serve".split(' ') {
        let tree = dependency_tree(package);
        assert!(tree.contains("minijinja"), "{package}: {tree:?}");
        let wrong: Vec<&str> = cli.split(' ').filter(|c| tree.contains(*c)).collect();
        assert!(wrong.is_empty(), "{package} depends on {wrong:?}");
    }
}

/// A small crate in memory: (path under `crates/engine/src/`, text).
fn synthetic(files: &[(&str, &str)]) -> Vec<Scan> {
    files
        .iter()
        .map(|(path, text)| scan(ENGINE.dir, path, text))
        .collect()
}

/// The graph, a line a module: `a → b c`.
fn render(graph: &ModuleGraph) -> String {
    let line = |(from, tos): (&String, &BTreeMap<String, _>)| {
        let tos: Vec<&str> = tos.keys().map(String::as_str).collect();
        format!("{from} → {}\n", tos.join(" "))
    };
    graph.iter().map(line).collect()
}

#[test]
fn the_scan_reads_a_small_crate() {
    let lib = "pub mod a;\npub mod b;\npub mod c;\npub use a::Thing;\nfn f() -> Thing { c::go() }";
    let c = "// use crate::a;\n/// [`crate::b`]\n/* crate::a /* nested */ crate::b */\n\
             const S: &str = \"crate::a\";\nconst R: &str = r#\"crate::\"b\"#;\n\
             fn q<'a>(_: &'a str) -> String { format!(\"{}\", decide_lang::parser::x()) }\n";
    let graph = module_graph(&synthetic(&[
        ("lib.rs", lib),
        ("a.rs", "use crate::{b::X, self as me};\npub struct Thing;"),
        (
            "b/mod.rs",
            "mod inner;\npub struct X;\nmod t { use super::inner::f; }",
        ),
        (
            "b/inner.rs",
            "fn f() -> crate::Thing { super::super::c::go(); todo!() }",
        ),
        ("c.rs", c),
    ]));
    // a: a `crate::{...}` group, where `self` is no module; b: a re-export is its module, and
    // `super::super::` from b/inner.rs climbs to the root (`super::` in b's inline `mod t` stays
    // in b); c: comments and strings are no arrows, a macro's arguments are; the root: its code,
    // not its tree.
    let expected = "a → b\nb → a c\nc → decide_lang::parser\ncrate → a c\n";
    assert_eq!(render(&graph), expected);
    assert_eq!(cycles(&graph), [["a", "b", "a"]]);
    assert!(explain(&graph, &cycles(&graph)[0]).contains("b → a: crates/engine/src/b/inner.rs"));

    let long = synthetic(&[
        ("lib.rs", "pub fn f() { crate::d::g() }"),
        ("a.rs", "use crate::b;"),
        ("b.rs", "use crate::c::x;"),
        ("c.rs", "use crate::{a::y, d};"),
        ("d.rs", ""),
    ]);
    assert_eq!(cycles(&module_graph(&long)), [["a", "b", "c", "a"]]);
}
