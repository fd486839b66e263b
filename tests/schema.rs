//! The committed `schema/profile.schema.json` matches the profile types.
//!
//! Regenerate with `DECIDE_WRITE_SCHEMA=1 cargo test --test schema`.

use std::path::Path;

#[test]
fn committed_profile_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/profile.schema.json");
    let mut fresh = serde_json::to_string_pretty(&decide::profile::json_schema()).unwrap();
    fresh.push('\n');
    if std::env::var_os("DECIDE_WRITE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "schema/profile.schema.json is out of date; run DECIDE_WRITE_SCHEMA=1 cargo test --test schema"
    );
    let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(
        schema["required"],
        serde_json::json!(["name", "workload", "usage"])
    );
}
