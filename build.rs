//! Embeds every file of `rules/`, `rules/tests/` and `templates/` into the binary, so an
//! installed `decide` works anywhere and adding a rule file or a policy test needs no Rust change.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut code = String::new();
    for (dir, name) in [
        ("rules", "RULES"),
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
    std::fs::write(Path::new(&out).join("embedded.rs"), code).expect("cannot write embedded.rs");
}
