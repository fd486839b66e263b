//! Revision hashes: exactly which policy and which profile a memo was decided from.
//!
//! An approved memo is an audit record, so it names the policy by the hash of what the rules
//! mean, not of their bytes: each file is read as YAML, written back as canonical JSON (mapping
//! keys sorted, no whitespace, no comments) and the files are hashed in a fixed order, so
//! reformatting, comments, key order and file order do not change the revision, while any
//! changed value (a price, a threshold, a row) does. Quote sheets are read as CSV, each row a
//! mapping from column to cell, rows sorted. Profiles are hashed the same way. This file
//! is also compiled into `build.rs`, which stamps the embedded rules' revision at build time.

use sha2::{Digest, Sha256};

/// The canonical JSON text of a value: mapping keys sorted, no whitespace. Strings and numbers
/// are written by `serde_json` itself, straight into the buffer.
fn canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(&String, &serde_json::Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Writing to a `Vec` cannot fail.
                let _ = serde_json::to_writer(&mut *out, key);
                out.push(b':');
                canonical(item, out);
            }
            out.push(b'}');
        }
        serde_json::Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// The canonical JSON bytes of a value (UTF-8: `serde_json` writes only valid text).
fn canonical_bytes(value: &serde_json::Value) -> Vec<u8> {
    let mut out = Vec::new();
    canonical(value, &mut out);
    out
}

/// The canonical JSON text of one YAML document.
///
/// # Errors
/// The text is not YAML (the caller has already reported why, so the message is short).
pub fn canonical_yaml(text: &str) -> Result<String, String> {
    let options = serde_saphyr::options! { strict_booleans: true };
    let value: serde_json::Value =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| e.to_string())?;
    String::from_utf8(canonical_bytes(&value)).map_err(|e| e.to_string())
}

fn hex(digest: &[u8], chars: usize) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(chars);
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    out.truncate(chars);
    out
}

/// The canonical JSON text of a quote sheet: its rows as mappings from column to cell (cells
/// trimmed, empty cells and comment lines left out), sorted, so that column order, row order,
/// spacing and comments do not change it.
///
/// # Errors
/// The text is not CSV (the caller has already reported why, so the message is short).
pub fn canonical_csv(text: &str) -> Result<String, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| e.to_string())?.clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        let row: serde_json::Map<String, serde_json::Value> = headers
            .iter()
            .zip(record.iter())
            .filter(|(_, cell)| !cell.is_empty())
            .map(|(h, cell)| (h.to_owned(), serde_json::Value::from(cell)))
            .collect();
        let row = canonical_bytes(&serde_json::Value::Object(row));
        rows.push(String::from_utf8(row).map_err(|e| e.to_string())?);
    }
    rows.sort();
    Ok(format!("[{}]", rows.join(",")))
}

/// The revision of a policy made of these rule files: `sha256:` and 16 hex digits.
///
/// # Errors
/// A file is not YAML.
pub fn policy(texts: &[&str]) -> Result<String, String> {
    policy_with_sheets(texts, &[])
}

/// The revision of a policy made of these rule files and quote sheets: `sha256:` and 16 hex
/// digits. A policy without sheets has the revision [`policy`] gives.
///
/// # Errors
/// A rule file is not YAML or a sheet is not CSV.
pub fn policy_with_sheets(texts: &[&str], sheets: &[&str]) -> Result<String, String> {
    let docs = texts
        .iter()
        .map(|t| canonical_yaml(t))
        .chain(sheets.iter().map(|t| canonical_csv(t)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(policy_of_canonical(docs))
}

/// The revision of a policy whose files' canonical JSON texts (rule files' and quote sheets',
/// in any order) are `docs`: what [`policy_with_sheets`] gives for the files themselves.
#[must_use]
pub fn policy_of_canonical(mut docs: Vec<String>) -> String {
    docs.sort();
    let mut hasher = Sha256::new();
    for doc in &docs {
        hasher.update(doc.len().to_le_bytes());
        hasher.update(doc.as_bytes());
    }
    format!("sha256:{}", hex(&hasher.finalize(), 16))
}

/// The revision of a value already parsed: `sha256:` and 16 hex digits of its canonical JSON.
/// (A profile's is written straight from the typed profile, `crate::canonical`, to the same
/// bytes.)
#[must_use]
pub fn value(value: &serde_json::Value) -> String {
    digest(&canonical_bytes(value))
}

/// The revision of a canonical JSON text: `sha256:` and 16 hex digits of its SHA-256.
#[must_use]
pub fn digest(canonical: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(canonical), 16))
}
