//! The decision record: what was decided and why, in a stable, documented JSON shape.
//!
//! This is the contract machines read (`decide --format json`) and the memo templates render.
//! Field order and names are stable; new fields are only ever added.

use indexmap::IndexMap;
use serde::Serialize;

use decide_lang::value::Value;

use crate::kind::{ChecklistPart, NodeKind};

/// The outcome of evaluating a policy over one profile.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The profile's `name`.
    pub profile: String,
    /// The date prices were judged at (`--as-of`).
    pub as_of: String,
    /// Which policy decided.
    pub policy: PolicyStamp,
    /// The recommended way to buy (the values it takes are the policy's `outputs.promises`).
    pub deployment: String,
    /// The recommended offer id (the container offer for containers).
    pub offer: String,
    /// Every criterion with whether it is met and why.
    pub criteria: Vec<CriterionOutcome>,
    /// The scenario table row that matched, if any.
    pub scenario: Option<String>,
    /// The policy's figures, as its `outputs.costs` names them (`outputs.promises.costs` says
    /// which every record has). Kept as the values the rules computed, written as JSON when the
    /// record is (`decide --format json`) and read as they are by the memo templates.
    pub costs: IndexMap<String, Value>,
    /// The policy's further sections (`outputs.sections`), as top-level entries, in policy order.
    #[serde(flatten)]
    pub sections: IndexMap<String, Value>,
    /// What the policy's models predict for the profile, by offer (`outputs.calibration`):
    /// read by `decide calibrate`, not part of the record.
    #[serde(skip)]
    pub calibration: Option<Value>,
    /// For each criterion and for the deployment and offer, the nearest single changes to the
    /// profile that would change them (absent when not computed, e.g. in batches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<Vec<Flip>>,
    /// Warnings raised, in policy order.
    pub warnings: Vec<WarningOutcome>,
    /// Contract items to confirm, in policy order.
    pub checklist: Vec<ChecklistOutcome>,
    /// Every node in evaluation order with its value and why (absent when not asked for:
    /// `decide --trace`, `decide batch --trace`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TraceEntry>,
    /// What produced this record, for the people who sign it.
    pub audit: Audit,
}

/// The record's own top-level fields, which policy sections may not shadow: a batch's records
/// add `source` and `line`, and a failed profile's record is `source`, `line` and `error`.
pub const RECORD_FIELDS: &[&str] = &[
    "profile",
    "as_of",
    "policy",
    "deployment",
    "offer",
    "criteria",
    "scenario",
    "costs",
    "sensitivity",
    "warnings",
    "checklist",
    "trace",
    "audit",
    "source",
    "line",
    "error",
];

/// One change to one profile field that changes a decision: the record's `sensitivity` list.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    /// What changes: a criterion id, `deployment`, `offer` or a node the policy's
    /// `sensitivity.watch` names.
    pub id: String,
    /// The profile field changed (dotted path).
    pub field: String,
    /// The field's value in the profile.
    pub from: serde_json::Value,
    /// The nearest value at which the decision changes (with `given`: the line under that
    /// other change).
    pub flips_at: serde_json::Value,
    /// When `flips_at` is one step past a number the rules write (a table row's `>= 70`), that
    /// number: the change is said as "below 70B", not "at 69.5B".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<serde_json::Value>,
    /// What the decision becomes there.
    pub becomes: serde_json::Value,
    /// The relative size of the change (|Δ| / |from|; 1 for flags, choices and list items):
    /// smaller is nearer. Null with `given`.
    pub distance: Option<f64>,
    /// When no value of `field` alone changes the deployment or offer: the nearest change of
    /// another number field under which it does, at `flips_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given: Option<Given>,
    /// The policy's headline cost (`outputs.promises.headline_cost`) at `flips_at`, where it
    /// names one. Absent with `given`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<serde_json::Value>,
    /// The change in words, from the policy's `sensitivity.text`.
    pub text: String,
}

/// Another field's change under which a line is reported.
#[derive(Debug, Clone, Serialize)]
pub struct Given {
    pub field: String,
    pub value: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyStamp {
    pub name: String,
    pub version: String,
    /// `embedded` or the `--rules` folder as given.
    pub rules: String,
    /// The hash of what the rules mean (`sha256:` + 16 hex digits): it changes with any value
    /// and stays with comments, formatting, key order and file order.
    pub revision: String,
}

/// The audit trail of a record.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// The `decide` version that decided.
    pub decide_version: String,
    /// The hash of what the profile says (same canonical form as the policy revision), or none
    /// when the profile did not come from a file.
    pub profile_revision: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CriterionOutcome {
    pub id: String,
    pub title: String,
    pub met: bool,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WarningOutcome {
    pub id: String,
    pub title: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChecklistOutcome {
    pub id: String,
    pub title: String,
    /// The part of the memo the item is in: `signer` or `engineer`.
    pub part: ChecklistPart,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    pub id: String,
    pub kind: NodeKind,
    pub value: serde_json::Value,
    /// The ids this node read.
    pub inputs: Vec<String>,
    pub why: String,
}

/// A value the rules computed, as JSON (what `serde_json::to_value` makes of it; `null` where
/// it cannot). For readers that compare or print figures as JSON (`decide diff`, policy tests,
/// the trace).
pub fn to_json(v: &Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
