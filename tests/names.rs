//! No two types of the libraries share a name: a name says which type it is wherever it is
//! read. Each library's files are parsed with syn; structs, enums, unions, type aliases and
//! traits count, in modules and function bodies too; an associated type (`type Item = u8;` in
//! an `impl`) defines none.

use crate::common::rust_files;
use std::collections::BTreeMap;
use syn::visit::{self, Visit};

/// The type names defined in files (crate folder, path under `src/`, text), each with its
/// places (`crates/engine/src/a.rs:1`).
fn type_names(files: &[(&str, String, String)]) -> BTreeMap<String, Vec<String>> {
    struct Types(String, BTreeMap<String, Vec<String>>);
    impl<'ast> Visit<'ast> for Types {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            let ident = match item {
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                _ => None,
            };
            if let Some(ident) = ident {
                let place = format!("{}:{}", self.0, ident.span().start().line);
                self.1.entry(ident.to_string()).or_default().push(place);
            }
            visit::visit_item(self, item);
        }
    }
    let mut types = Types(String::new(), BTreeMap::new());
    for (dir, path, text) in files {
        let place = format!("{dir}/src/{path}");
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{place} parses: {e}"));
        types.0 = place;
        types.visit_file(&file);
    }
    types.1
}

#[test]
fn no_two_types_share_a_name() {
    let dirs = ["crates/lang", "crates/engine", "crates/tools"];
    let files: Vec<_> = dirs
        .iter()
        .flat_map(|dir| rust_files(dir).into_iter().map(move |(p, t)| (*dir, p, t)))
        .collect();
    let mut types = type_names(&files);
    for known in [
        "Profile", "Policy", "Graph", "Decision", "Error", "Memo", "Value",
    ] {
        assert!(types.contains_key(known), "the scan misses type {known}");
    }
    types.retain(|_, places| places.len() > 1);
    assert!(
        types.is_empty(),
        "types defined more than once in the libraries (give each a name of its own): {types:#?}"
    );
}

#[test]
fn the_type_scan_reads_function_bodies_and_skips_associated_types() {
    let a = "pub struct Item;\nimpl Iterator for Item { type Item = u8; fn next(&mut self) \
             -> Option<u8> { fn inner() { struct Deep; } None } }\ntrait Walk { type Item; }";
    let b = "pub(crate) enum Item { A }\npub type Other = u8;\n";
    let files = [("crates/engine", "a.rs", a), ("crates/engine", "b.rs", b)];
    let files: Vec<_> = files
        .map(|(d, p, t)| (d, p.to_owned(), t.to_owned()))
        .to_vec();
    let mut types = type_names(&files);
    assert_eq!(types["Deep"], ["crates/engine/src/a.rs:2"], "in a function");
    types.retain(|_, places| places.len() > 1);
    let item = ["crates/engine/src/a.rs:1", "crates/engine/src/b.rs:1"];
    let expected = BTreeMap::from([("Item".to_owned(), item.map(String::from).to_vec())]);
    assert_eq!(types, expected, "associated types define none");
}
