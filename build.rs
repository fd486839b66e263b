//! Embeds every file of `rules/`, `rules/quotes/`, `rules/tests/` and `templates/` into the binary, so an
//! installed `decide` works anywhere and adding a rule file or a policy test needs no Rust change.

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/revision.rs"]
#[allow(dead_code)]
mod revision;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut code = String::new();
    for (dir, name) in [
        ("rules", "RULES"),
        ("rules/quotes", "QUOTES"),
        ("rules/tests", "CASES"),
        ("templates", "TEMPLATES"),
    ] {
        let path = Path::new(&root).join(dir);
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
    let rules_dir = Path::new(&root).join("rules");
    let texts = texts_of(&rules_dir, &["yaml", "yml"]);
    let sheets = texts_of(&rules_dir.join("quotes"), &["csv"]);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let sheet_refs: Vec<&str> = sheets.iter().map(String::as_str).collect();
    let revision = revision::policy_with_sheets(&refs, &sheet_refs)
        .unwrap_or_else(|e| panic!("rules/ is not YAML and CSV: {e}"));
    writeln!(code, "pub static RULES_REVISION: &str = {revision:?};").unwrap();
    std::fs::write(Path::new(&out).join("embedded.rs"), code).expect("cannot write embedded.rs");
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
