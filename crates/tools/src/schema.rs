//! JSON Schemas of profiles, rule files and quote-sheet rows, generated from the types serde reads.
//!
//! Draft-07 is the default because the YAML language server (editor completion and checks)
//! supports only draft-07; 2020-12 is there for validators that want the current draft. The
//! schemas describe the two YAML formats a person writes and follow the types, so a field
//! added to a type shows up in the schema; the committed copies in `schema/` are what editors
//! load through the `# yaml-language-server: $schema=...` first line of every example and
//! rule file. Checks that need the whole profile or the whole rules folder (offer ids, one
//! `policy:` section, expressions) stay in `decide` itself.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::suite::CaseFile;
use decide_engine::policy::rules::RuleFile;
use decide_engine::profile::Profile;

/// The JSON Schema draft a schema is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Draft {
    /// Draft-07: what the YAML language server understands; the committed copies use it.
    #[default]
    Draft7,
    /// Draft 2020-12: the current draft, for validators that prefer it (`$defs` instead of
    /// `definitions`).
    Draft2020_12,
}

impl Draft {
    fn settings(self) -> SchemaSettings {
        match self {
            Draft::Draft7 => SchemaSettings::draft07(),
            Draft::Draft2020_12 => SchemaSettings::draft2020_12(),
        }
    }
}

/// The JSON Schema of a workload profile.
#[must_use]
pub fn profile(draft: Draft) -> Value {
    generate::<Profile>(draft)
}

/// The JSON Schema of one file of a rules folder (every section optional; the folder's files
/// are merged, so "exactly one file has `policy:`" is checked when the rules load, not here).
#[must_use]
pub fn rules(draft: Draft) -> Value {
    generate::<RuleFile>(draft)
}

/// The JSON Schema of a policy test case file (`rules/tests/*.yaml`).
#[must_use]
pub fn cases(draft: Draft) -> Value {
    generate::<CaseFile>(draft)
}

/// The JSON Schema of one row of a quote sheet (`quotes/*.csv`): each column a property,
/// every cell text. A sheet is CSV, not JSON; the schema documents its columns for people and
/// for tools that check rows as records (`decide quotes check` is the check `decide` runs).
#[must_use]
pub fn quote_sheet(draft: Draft) -> Value {
    generate::<decide_engine::policy::quotes::QuoteRecord>(draft)
}

/// The folder the committed schemas are in, beside the rules and examples that point at them.
pub const FOLDER: &str = "schema";

/// Every schema by the file name it is committed as in [`FOLDER`] (draft-07, as editors read
/// them): what `decide rules export` writes beside the files that point at them.
#[must_use]
pub fn files() -> [(&'static str, Value); 4] {
    [
        ("profile.schema.json", profile(Draft::Draft7)),
        ("rules.schema.json", rules(Draft::Draft7)),
        ("cases.schema.json", cases(Draft::Draft7)),
        ("quote-sheet.schema.json", quote_sheet(Draft::Draft7)),
    ]
}

/// The editor's schema line of a YAML file (`# yaml-language-server: $schema=PATH`) pointed at
/// `schema/NAME` of the folder the file is `depth` folders inside; a text without one is
/// returned as it is.
#[must_use]
pub fn repoint(text: &str, depth: usize) -> std::borrow::Cow<'_, str> {
    const MARK: &str = "# yaml-language-server: $schema=";
    let Some(line) = text.lines().find(|l| l.starts_with(MARK)) else {
        return text.into();
    };
    let name = line[MARK.len()..].rsplit('/').next().unwrap_or_default();
    let pointed = format!("{MARK}{}{FOLDER}/{name}", "../".repeat(depth));
    text.replacen(line, &pointed, 1).into()
}

/// A schema as the committed files hold it: pretty JSON with a trailing newline.
#[must_use]
pub fn to_text(schema: &Value) -> String {
    let mut text = format!("{schema:#}");
    text.push('\n');
    text
}

fn generate<T: JsonSchema>(draft: Draft) -> Value {
    draft
        .settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}
