//! Embeds every file of `rules/`, `rules/quotes/`, `rules/tests/`, `templates/` and `examples/`
//! (folders at the repository's root, two levels above this crate) into the library, so an
//! installed `decide` works anywhere and adding a rule file or a policy test needs no Rust change.
//! The rule files are also parsed here, once, into a table the binary reads without a YAML
//! parser (`src/policy/prepared.rs`).

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/revision.rs"]
#[allow(dead_code)]
mod revision;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // The rules, templates and examples stay where users know them, at the repository's root.
    let root = Path::new(&manifest)
        .ancestors()
        .nth(2)
        .expect("the engine crate sits at crates/engine/ of the repository");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut code = String::new();
    for (dir, name) in [
        ("rules", "RULES"),
        ("rules/quotes", "QUOTES"),
        ("rules/measurements", "MEASUREMENTS"),
        ("rules/tests", "CASES"),
        ("templates", "TEMPLATES"),
        ("examples", "EXAMPLES"),
    ] {
        let path = root.join(dir);
        println!("cargo:rerun-if-changed={}", path.display());
        let mut files: Vec<_> = std::fs::read_dir(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        writeln!(code, "pub static {name}: &[(&str, &str)] = &[").unwrap();
        for file in files {
            let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
            if file_name.starts_with('.') {
                continue;
            }
            writeln!(
                code,
                "    ({file_name:?}, include_str!({:?})),",
                file.display().to_string()
            )
            .unwrap();
        }
        writeln!(code, "];").unwrap();
    }
    // The embedded rules' revision, computed once here rather than at every start.
    let rules_dir = root.join("rules");
    let texts = texts_of(&rules_dir, &["yaml", "yml"]);
    let sheets = texts_of(&rules_dir.join("quotes"), &["csv"]);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let sheet_refs: Vec<&str> = sheets.iter().map(String::as_str).collect();
    let revision = revision::policy_with_sheets(&refs, &sheet_refs)
        .unwrap_or_else(|e| panic!("rules/ is not YAML and CSV: {e}"));
    writeln!(code, "pub static RULES_REVISION: &str = {revision:?};").unwrap();
    std::fs::write(Path::new(&out).join("embedded.rs"), code).expect("cannot write embedded.rs");
    std::fs::write(
        Path::new(&out).join("prepared.rs"),
        prepared::tables(&rules_dir),
    )
    .expect("cannot write prepared.rs");
}

/// The texts of the files of `dir` with one of `extensions`, in name order (none when `dir`
/// does not exist).
fn texts_of(dir: &Path, extensions: &[&str]) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .is_some_and(|x| extensions.iter().any(|e| x == *e))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("rule files and quote sheets are UTF-8"))
        .collect()
}

/// The rule files parsed at build time: every YAML node of every file with its locations, as
/// the static tables `src/policy/prepared.rs` reads (see there for their shape).
mod prepared {
    use std::fmt::{self, Write as _};
    use std::path::Path;

    use serde::Deserialize;
    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_saphyr::{Location, Spanned};

    /// One YAML node as serde-saphyr's `deserialize_any` gives it.
    enum Tree {
        Null,
        Bool(bool),
        I64(i64),
        U64(u64),
        F64(f64),
        Str(String),
        Seq(Vec<Spanned<Tree>>),
        Map(Vec<(String, Spanned<Tree>)>),
    }

    impl<'de> Deserialize<'de> for Tree {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(TreeVisitor)
        }
    }

    struct TreeVisitor;

    impl<'de> Visitor<'de> for TreeVisitor {
        type Value = Tree;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any YAML value")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
            Ok(Tree::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<Tree, E> {
            Ok(Tree::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
            Tree::deserialize(d)
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
            Ok(Tree::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
            Ok(Tree::I64(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
            Ok(Tree::U64(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
            Ok(Tree::F64(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
            Ok(Tree::Str(v.to_owned()))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(Tree::Seq(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
            let mut entries = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                entries.push((key, map.next_value()?));
            }
            Ok(Tree::Map(entries))
        }
    }

    /// The tables being written: nodes, map entries and locations, each deduplicated location
    /// written once.
    #[derive(Default)]
    struct Out {
        nodes: Vec<String>,
        entries: Vec<(String, usize)>,
        locations: Vec<String>,
        location_index: std::collections::HashMap<String, usize>,
    }

    impl Out {
        fn location(&mut self, l: Location) -> usize {
            let unknown = serde_saphyr::Span::UNKNOWN.offset();
            let span = l.span();
            let text = format!(
                "L({}, {}, {}, {}, {}, {}, {})",
                l.line(),
                l.column(),
                span.offset(),
                span.len(),
                span.byte_offset().unwrap_or(unknown),
                span.byte_len().unwrap_or(unknown),
                l.source_id()
            );
            let next = self.locations.len();
            *self.location_index.entry(text.clone()).or_insert_with(|| {
                self.locations.push(text);
                next
            })
        }

        /// Writes `tree` (located at `at`) into node `slot`, its items and entries after it.
        fn place(&mut self, tree: &Tree, at: (Location, Location), slot: usize) {
            let value = match tree {
                Tree::Null => "Null".to_owned(),
                Tree::Bool(b) => format!("Bool({b})"),
                Tree::I64(i) => format!("I64({i})"),
                Tree::U64(u) => format!("U64({u})"),
                Tree::F64(x) => format!("F64({:#x})", x.to_bits()),
                Tree::Str(s) => format!("Str({s:?})"),
                Tree::Seq(items) => {
                    let start = self.nodes.len();
                    self.nodes.extend(items.iter().map(|_| String::new()));
                    for (i, item) in items.iter().enumerate() {
                        self.place(&item.value, (item.referenced, item.defined), start + i);
                    }
                    format!("Seq({start}, {})", items.len())
                }
                Tree::Map(entries) => {
                    let start = self.entries.len();
                    self.entries
                        .extend(entries.iter().map(|(k, _)| (k.clone(), 0)));
                    for (i, (_, item)) in entries.iter().enumerate() {
                        let node = self.nodes.len();
                        self.nodes.push(String::new());
                        self.entries[start + i].1 = node;
                        self.place(&item.value, (item.referenced, item.defined), node);
                    }
                    format!("Map({start}, {})", entries.len())
                }
            };
            let referenced = self.location(at.0);
            let defined = self.location(at.1);
            self.nodes[slot] = format!("N({value}, {referenced}, {defined}),");
        }
    }

    /// The Rust source of the tables of every `*.yaml` / `*.yml` file of `dir`.
    pub fn tables(dir: &Path) -> String {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("rules/ is readable")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.extension().is_some_and(|x| x == "yaml" || x == "yml")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        files.sort();
        let mut out = Out::default();
        let mut roots = String::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("rule files are UTF-8");
            let options = serde_saphyr::options! { strict_booleans: true };
            let tree: Tree = serde_saphyr::from_str_with_options(&text, options)
                .unwrap_or_else(|e| panic!("{} is not YAML: {e}", file.display()));
            let root = out.nodes.len();
            out.nodes.push(String::new());
            let unknown = Location::UNKNOWN;
            out.place(&tree, (unknown, unknown), root);
            writeln!(
                roots,
                "    (include_str!({:?}), {root}),",
                file.display().to_string()
            )
            .unwrap();
        }
        let mut code = String::new();
        writeln!(
            code,
            "pub(super) static FILES: &[(&str, u32)] = &[\n{roots}];"
        )
        .unwrap();
        writeln!(code, "pub(super) static NODES: &[YamlNode] = &[").unwrap();
        for n in &out.nodes {
            writeln!(code, "{n}").unwrap();
        }
        writeln!(code, "];\npub(super) static ENTRIES: &[(&str, u32)] = &[").unwrap();
        for (k, n) in &out.entries {
            writeln!(code, "({k:?}, {n}),").unwrap();
        }
        writeln!(code, "];\npub(super) static LOCATIONS: &[Loc] = &[").unwrap();
        for l in &out.locations {
            writeln!(code, "{l},").unwrap();
        }
        writeln!(code, "];").unwrap();
        code
    }
}
