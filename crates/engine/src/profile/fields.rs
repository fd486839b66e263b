//! The profile's fields as one list (path, type, bounds, nullable, default, choices), read once
//! from the profile's JSON Schema.
//!
//! Everything that needs to know what a profile holds asks here: the rule compiler (which
//! `profile.` paths exist, with "did you mean" hints), `decide validate` (the profiles it
//! generates), the sensitivity analysis (which values a field may take), `decide init` (how each
//! question is asked) and the tests' profile generators. The list follows the schema, which
//! follows the [`Profile`](super::Profile) type, so a field added there shows up everywhere.

use std::sync::OnceLock;

use serde_json::Value as J;

use crate::error::suggest;

/// One field of the profile: a section (`workload`) or a value (`workload.model_params_b`).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Dotted path from the profile's root, without `profile.` (`usage.gpus`).
    pub path: String,
    /// What the field holds.
    pub kind: FieldKind,
    /// The profile must give it when it gives its section (`usage.gpus`; `name` at the root).
    pub required: bool,
    /// `null` (`none` in YAML) is a valid value: an optional field with no value.
    pub nullable: bool,
    /// The value taken when the field is left out, where the format has one.
    pub default: Option<J>,
    /// What the field means, from the type's doc comment.
    pub description: Option<String>,
    /// The most characters a text may have (`maxLength`), where the format bounds it (`name`).
    pub max_length: Option<usize>,
}

/// What a profile field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A section of other fields (`workload`).
    Object,
    /// A flag.
    Bool,
    /// A number within bounds (whole numbers only when `integer`).
    Number(Bounds),
    /// Free text.
    String,
    /// One of fixed values, in the order the schema lists them.
    Enum(Vec<Choice>),
    /// A list of items of one type (`workload.parallelism`).
    List(Box<FieldKind>),
    /// Free keys, each with a value of one type (`job.hours`: hours per offer id).
    Map(Box<FieldKind>),
}

/// One value of an enumerated field.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value as a profile writes it (`lora_finetune`).
    pub value: String,
    /// What it means, where the type documents the variant.
    pub description: Option<String>,
}

/// The bounds of a number field, as the schema states them (from the profile's `MAX_*`
/// constants and range attributes).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    /// Whole numbers only.
    pub integer: bool,
    /// At least this.
    pub min: Option<f64>,
    /// Greater than this.
    pub exclusive_min: Option<f64>,
    /// At most this.
    pub max: Option<f64>,
}

impl Bounds {
    /// The smallest step between two values of the field: 1 for whole numbers, the float
    /// epsilon otherwise.
    #[must_use]
    pub fn step(&self) -> f64 {
        if self.integer { 1.0 } else { f64::EPSILON }
    }

    /// The lowest value the field accepts: its minimum, or one step above its exclusive
    /// minimum; none when unbounded below.
    #[must_use]
    pub fn lowest(&self) -> Option<f64> {
        self.min.or(self.exclusive_min.map(|m| m + self.step()))
    }

    /// Whether the field accepts `v` (within bounds, and whole where it must be).
    #[must_use]
    pub fn admits(&self, v: f64) -> bool {
        self.min.is_none_or(|m| v >= m)
            && self.exclusive_min.is_none_or(|m| v > m)
            && self.max.is_none_or(|m| v <= m)
            && (!self.integer || v.fract() == 0.0)
    }
}

impl Field {
    /// The field's last path segment (`gpus` for `usage.gpus`).
    #[must_use]
    pub fn name(&self) -> &str {
        self.path.rsplit('.').next().unwrap_or(&self.path)
    }

    /// The path of the section holding the field (`usage` for `usage.gpus`; empty at the root).
    #[must_use]
    pub fn parent(&self) -> &str {
        self.path.rsplit_once('.').map_or("", |(head, _)| head)
    }

    /// The number bounds, for a number field.
    #[must_use]
    pub fn bounds(&self) -> Option<&Bounds> {
        match &self.kind {
            FieldKind::Number(bounds) => Some(bounds),
            _ => None,
        }
    }
}

/// Every field of the profile, depth first in the order the profile format lists them (a
/// section before its fields).
#[must_use]
pub fn fields() -> &'static [Field] {
    static FIELDS: OnceLock<Vec<Field>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let root = super::schema();
        let mut out = Vec::new();
        read_section(root, root, "", &mut out);
        out
    })
}

/// The field at `path` (dotted, without `profile.`), if the profile has it.
#[must_use]
pub fn field(path: &str) -> Option<&'static Field> {
    fields().iter().find(|f| f.path == path)
}

/// The fields directly inside the section at `path` (`""` for the profile's top level).
pub fn children(path: &str) -> impl Iterator<Item = &'static Field> {
    fields().iter().filter(move |f| f.parent() == path)
}

/// Every field at or under `path` (the field itself, then the fields of its sections).
pub fn under(path: &str) -> impl Iterator<Item = &'static Field> {
    fields().iter().filter(move |f| {
        path.is_empty()
            || f.path == path
            || f.path
                .strip_prefix(path)
                .is_some_and(|r| r.starts_with('.'))
    })
}

/// Checks a path as the rules write it (`profile.workload.task`): `Ok` when the profile has it
/// (or it lies under free keys, as in `profile.job.hours.<offer>`), otherwise a hint for the
/// message: "did you mean `profile.workload.task`?", or what the nearest section has.
pub fn check_path(path: &str) -> Result<(), String> {
    let known = |p: &str| p == "profile" || p.strip_prefix("profile.").and_then(field).is_some();
    if known(path) {
        return Ok(());
    }
    let mut prefix = path;
    while let Some((head, _)) = prefix.rsplit_once('.') {
        let inner = head
            .strip_prefix("profile.")
            .or((head == "profile").then_some(""));
        if inner
            .and_then(field)
            .is_some_and(|f| matches!(f.kind, FieldKind::Map(_)))
        {
            return Ok(());
        }
        if let Some(inner) = inner.filter(|_| known(head)) {
            let names: Vec<&str> = children(inner).map(Field::name).collect();
            let wrong = &path[head.len() + 1..];
            let wrong = wrong.split('.').next().unwrap_or(wrong);
            if let Some(s) = suggest(wrong, names.iter().copied()) {
                return Err(format!("did you mean `{head}.{s}`?"));
            }
            let mut names = names;
            names.sort_unstable();
            return Err(format!("`{head}` has: {}", names.join(", ")));
        }
        prefix = head;
    }
    Err("see the profile format in docs/profile.md".to_owned())
}

/// Follows a local `$ref` (`#/definitions/...` or `#/$defs/...`).
fn resolve<'a>(root: &'a J, schema: &'a J) -> &'a J {
    match schema.get("$ref").and_then(J::as_str) {
        Some(r) => r
            .strip_prefix("#/")
            .and_then(|p| p.split('/').try_fold(root, |v, k| v.get(k)))
            .unwrap_or(schema),
        None => schema,
    }
}

/// One schema node with `$ref`, `allOf`, `anyOf` and `oneOf` followed: its parts (the node
/// first), and whether one of them admits `null`.
fn flatten<'a>(root: &'a J, schema: &'a J, out: &mut Vec<&'a J>, nullable: &mut bool) {
    let schema = resolve(root, schema);
    match schema.get("type") {
        Some(J::String(t)) if t == "null" => {
            *nullable = true;
            return;
        }
        Some(J::Array(types)) if types.iter().any(|t| t == "null") => *nullable = true,
        _ => {}
    }
    out.push(schema);
    for key in ["allOf", "anyOf", "oneOf"] {
        for sub in schema.get(key).and_then(J::as_array).into_iter().flatten() {
            flatten(root, sub, out, nullable);
        }
    }
}

/// The fields of the section whose schema is `schema`, at `prefix`, appended to `out`.
fn read_section(root: &J, schema: &J, prefix: &str, out: &mut Vec<Field>) {
    let mut parts = Vec::new();
    flatten(root, schema, &mut parts, &mut false);
    let required: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("required").and_then(J::as_array))
        .flatten()
        .filter_map(J::as_str)
        .collect();
    let Some(props) = parts
        .iter()
        .find_map(|p| p.get("properties").and_then(J::as_object))
    else {
        return;
    };
    for (key, sub) in props {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let mut parts = Vec::new();
        let mut nullable = false;
        flatten(root, sub, &mut parts, &mut nullable);
        let kind = read_type(root, &parts);
        out.push(Field {
            path: path.clone(),
            required: required.contains(&key.as_str()),
            nullable,
            default: sub.get("default").cloned(),
            description: parts
                .iter()
                .find_map(|p| p.get("description").and_then(J::as_str))
                .map(str::to_owned),
            max_length: parts
                .iter()
                .find_map(|p| p.get("maxLength").and_then(J::as_u64))
                .and_then(|m| usize::try_from(m).ok()),
            kind: kind.clone(),
        });
        if kind == FieldKind::Object {
            read_section(root, sub, &path, out);
        }
    }
}

/// The type of a value whose schema has `parts` (see [`flatten`]).
fn read_type(root: &J, parts: &[&J]) -> FieldKind {
    let get = |key: &str| parts.iter().find_map(|p| p.get(key));
    let has_type = |name: &str| {
        parts.iter().any(|p| match p.get("type") {
            Some(J::String(t)) => t == name,
            Some(J::Array(list)) => list.iter().any(|t| t == name),
            _ => false,
        })
    };
    let mut choices: Vec<Choice> = Vec::new();
    for p in parts {
        let description = p.get("description").and_then(J::as_str).map(str::to_owned);
        let values = p.get("enum").and_then(J::as_array).into_iter().flatten();
        for value in values.chain(p.get("const")).filter_map(J::as_str) {
            choices.push(Choice {
                value: value.to_owned(),
                description: p.get("const").and(description.clone()),
            });
        }
    }
    if !choices.is_empty() {
        return FieldKind::Enum(choices);
    }
    if has_type("boolean") {
        return FieldKind::Bool;
    }
    let integer = has_type("integer");
    if integer || has_type("number") {
        let bound = |key: &str| get(key).and_then(J::as_f64);
        return FieldKind::Number(Bounds {
            integer,
            min: bound("minimum"),
            exclusive_min: bound("exclusiveMinimum"),
            max: bound("maximum"),
        });
    }
    let inner = |schema: &J| {
        let mut parts = Vec::new();
        flatten(root, schema, &mut parts, &mut false);
        Box::new(read_type(root, &parts))
    };
    if has_type("array")
        && let Some(items) = get("items")
    {
        return FieldKind::List(inner(items));
    }
    if let Some(values) = get("additionalProperties").filter(|v| v.is_object()) {
        return FieldKind::Map(inner(values));
    }
    if get("properties").is_some() {
        return FieldKind::Object;
    }
    FieldKind::String
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::profile::{MAX_GPUS, MAX_JOB_HOURS, MAX_MODEL_PARAMS_B, Profile};

    /// Every key path of `value`, not descending into the model's free maps.
    fn key_paths(value: &J, prefix: &str, out: &mut BTreeSet<String>) {
        for (key, v) in value.as_object().into_iter().flatten() {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            let open = field(&path).is_some_and(|f| matches!(f.kind, FieldKind::Map(_)));
            if !open {
                key_paths(v, &path, out);
            }
            out.insert(path);
        }
    }

    #[test]
    fn the_model_has_every_field_a_profile_has_and_no_other() {
        // serde, not the schema, says what a profile holds: a profile written back has every
        // field (an unset option as null), but for the serving targets and `job.checkpoints`,
        // written only where given (so that profiles without them keep their revisions): they
        // are given here.
        let source = crate::Source::new(
            "p.yaml",
            "name: x\nworkload: {task: pretrain, model_params_b: 70}\nusage: {gpus: 8, hours_per_gpu_month: 600}\n\
             serving: {peak_output_tokens_per_s: 1, prompt_tokens: 1, output_tokens: 1, \
             time_per_output_token_ms: 1, time_to_first_token_ms: 1, batch: 1, tensor_parallel: 1, \
             measured_output_tokens_per_s: {h100-x8-ningxia1: 1}}\njob: {checkpoints: true}\n",
        );
        let profile = Profile::from_source(&source).unwrap();
        let mut written = BTreeSet::new();
        key_paths(&serde_json::to_value(&profile).unwrap(), "", &mut written);
        let model: BTreeSet<String> = fields().iter().map(|f| f.path.clone()).collect();
        assert_eq!(written, model);
    }

    #[test]
    fn bounds_come_from_the_profile_constants() {
        let gpus = field("usage.gpus").unwrap();
        let bounds = gpus.bounds().unwrap();
        assert!(bounds.integer && gpus.required && !gpus.nullable);
        assert_eq!(bounds.min, Some(1.0));
        assert_eq!(bounds.max, Some(f64::from(MAX_GPUS)));
        let params = field("workload.model_params_b").unwrap().bounds().unwrap();
        assert_eq!(params.exclusive_min, None);
        assert_eq!(params.min, Some(0.001));
        assert_eq!(params.max, Some(MAX_MODEL_PARAMS_B as f64));
        assert_eq!(params.lowest(), Some(0.001));
        assert!(!params.admits(0.0005) && params.admits(0.5) && !params.admits(1e9));
        let Some(FieldKind::Map(hours)) = field("job.hours").map(|f| &f.kind) else {
            panic!("job.hours is a map");
        };
        let FieldKind::Number(hours) = &**hours else {
            panic!("of numbers");
        };
        assert_eq!(hours.max, Some(MAX_JOB_HOURS as f64));
    }

    #[test]
    fn nullable_defaults_and_required() {
        let tokens = field("workload.tokens_b").unwrap();
        assert!(tokens.nullable && !tokens.required);
        assert_eq!(tokens.default, Some(J::Null));
        assert_eq!(field("workload.nodes").unwrap().default, Some(J::from(1)));
        assert!(field("workload.concurrency").unwrap().nullable);
        assert_eq!(field("workload").unwrap().kind, FieldKind::Object);
        let required: Vec<&str> = children("")
            .filter(|f| f.required)
            .map(Field::name)
            .collect();
        assert_eq!(required, ["name", "workload", "usage"]);
        assert_eq!(
            under("usage").map(|f| f.path.as_str()).collect::<Vec<_>>(),
            [
                "usage",
                "usage.gpus",
                "usage.hours_per_gpu_month",
                "usage.months"
            ]
        );
    }

    #[test]
    fn choices_keep_their_descriptions() {
        let Some(FieldKind::Enum(tasks)) = field("workload.task").map(|f| &f.kind) else {
            panic!("task is a choice");
        };
        let values: Vec<&str> = tasks.iter().map(|c| c.value.as_str()).collect();
        assert_eq!(
            values,
            [
                "lora_finetune",
                "full_finetune",
                "pretrain",
                "inference",
                "qlora_finetune"
            ]
        );
        assert!(tasks[4].description.as_deref().unwrap().contains("QLoRA"));
        let Some(FieldKind::List(parallelism)) = field("workload.parallelism").map(|f| &f.kind)
        else {
            panic!("parallelism is a list");
        };
        assert!(matches!(&**parallelism, FieldKind::Enum(c) if c.len() == 3));
        let cadence = field("job.cadence").unwrap();
        assert!(matches!(&cadence.kind, FieldKind::Enum(c) if c.len() == 2));
    }

    #[test]
    fn paths_get_the_hints_the_compiler_has_always_given() {
        for ok in [
            "profile",
            "profile.workload",
            "profile.workload.task",
            "profile.job.hours.abc",
            "profile.job.hours.a.b",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for (path, hint) in [
            (
                "profile.workload.tsk",
                "did you mean `profile.workload.task`?",
            ),
            ("profile.usage.gpu", "did you mean `profile.usage.gpus`?"),
            (
                "profile.requirement.x",
                "did you mean `profile.requirements`?",
            ),
            (
                "profile.budget.monthly",
                "did you mean `profile.budget.monthly_cny`?",
            ),
            (
                "profile.x",
                "`profile` has: budget, job, name, proposal, requirements, serving, usage, workload",
            ),
            (
                "profile.workload.zzz",
                "`profile.workload` has: active_params_b, concurrency, concurrent_sequences, \
                 context_tokens, custom_cuda_operators, kv_precision, model, model_params_b, nodes, \
                 parallelism, precision, task, tokens_b",
            ),
            ("profile.workload.task.x", "`profile.workload.task` has: "),
            ("other", "see the profile format in docs/profile.md"),
        ] {
            assert_eq!(check_path(path), Err(hint.to_owned()), "{path}");
        }
    }
}
