//! The workload profile: what a buyer writes, parsed and range-checked, and its JSON Schema.
//!
//! Field names are a contract (examples, tests and the rules' expressions use them). Range checks
//! run while deserializing, so a bad value is reported at its own line and column with its field
//! path. Checks that need the policy (offer ids) happen in [`crate::decide`], not here: this
//! module knows nothing of rules.

use std::fmt;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::error::{Error, ErrorKind, Result};
use crate::source::Source;

/// A buyer's workload profile (format version 1).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "decide workload profile", extend("$id" = "https://decide.invalid/schema/profile.schema.json"))]
pub struct Profile {
    /// Free text naming the workload (may be Chinese). Shown in the memo, escaped.
    #[serde(deserialize_with = "non_empty")]
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    /// What runs: task, model size and how it is spread over GPUs.
    pub workload: Workload,
    /// How many GPUs are kept busy, and for how long.
    pub usage: Usage,
    /// Hard requirements; every flag defaults to false.
    #[serde(default)]
    pub requirements: Requirements,
    /// Money limits.
    #[serde(default)]
    pub budget: Budget,
    /// One job to cost: expected wall hours per offer id.
    #[serde(default)]
    pub job: Job,
    /// An offer the team is considering, to be checked against the recommendation.
    #[serde(default)]
    pub proposal: Proposal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    LoraFinetune,
    /// Low-rank adapters trained on 4-bit quantised weights (`QLoRA`).
    QloraFinetune,
    FullFinetune,
    Pretrain,
    Inference,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Parallelism {
    Data,
    Tensor,
    Pipeline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Concurrency {
    Low,
    High,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// `lora_finetune` | `qlora_finetune` | `full_finetune` | `pretrain` | `inference`
    pub task: Task,
    /// Parameters in billions, > 0.
    #[serde(deserialize_with = "positive")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub model_params_b: f64,
    /// How one job is split across GPUs; empty means independent single-GPU jobs or replicas.
    /// `data`: each GPU runs a replica of the model; where the model's state does not fit one
    /// GPU, the memory model takes it as sharded across them (ZeRO-3 / FSDP) and the memo says
    /// so. `tensor`, `pipeline`: one model split across GPUs (needs NVLink/HCCS-class links).
    #[serde(default, deserialize_with = "unique_parallelism")]
    #[schemars(extend("uniqueItems" = true))]
    pub parallelism: Vec<Parallelism>,
    /// Machines one job spans, >= 1.
    #[serde(default = "one", deserialize_with = "at_least_one")]
    #[schemars(range(min = 1))]
    pub nodes: u32,
    /// Training tokens in billions, > 0.
    #[serde(default, deserialize_with = "positive_opt")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tokens_b: Option<f64>,
    /// Inference concurrency: low | high.
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    /// Tokens of context per sequence (prompt plus output), >= 1: sizes the inference KV cache.
    #[serde(default, deserialize_with = "at_least_one_opt")]
    #[schemars(range(min = 1))]
    pub context_tokens: Option<u32>,
    /// Sequences served at once, >= 1: with `context_tokens`, sizes the inference KV cache.
    #[serde(default, deserialize_with = "at_least_one_opt")]
    #[schemars(range(min = 1))]
    pub concurrent_sequences: Option<u32>,
    /// The code relies on custom CUDA operators (kernels), which do not port to other
    /// accelerators by a conversion tool.
    #[serde(default)]
    pub custom_cuda_operators: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// GPUs kept busy at once, >= 1.
    #[serde(deserialize_with = "at_least_one")]
    #[schemars(range(min = 1))]
    pub gpus: u32,
    /// Busy hours per GPU per month, 0 to 744 (31 days).
    #[serde(deserialize_with = "hours_in_month")]
    #[schemars(range(min = 0, max = 744))]
    pub hours_per_gpu_month: f64,
    /// How many months the work lasts, >= 1.
    #[serde(default = "one", deserialize_with = "at_least_one")]
    #[schemars(range(min = 1))]
    pub months: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(clippy::struct_excessive_bools)]
pub struct Requirements {
    /// Compliance demands a dedicated physical machine (finance, medical, government).
    #[serde(default)]
    pub physical_isolation: bool,
    /// Xinchuang: domestic accelerators required.
    #[serde(default)]
    pub domestic_accelerator: bool,
    /// Kernel parameters or modules, specific driver versions.
    #[serde(default)]
    pub custom_kernel: bool,
    /// RDMA tuning, InfiniBand, special multi-machine topology.
    #[serde(default)]
    pub custom_network: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Monthly ceiling in yuan, > 0.
    #[serde(default, deserialize_with = "positive_opt")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub monthly_cny: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Expected wall hours of the job per offer id, each > 0.
    #[serde(default, deserialize_with = "job_hours")]
    #[schemars(with = "std::collections::BTreeMap<String, f64>")]
    pub hours: IndexMap<Spanned<String>, f64>,
    /// Offer ids whose claimed `hours` were measured on that hardware (a benchmark or an
    /// earlier run), so the policy may trust the claim over its own estimate. Each must be a
    /// key of `hours`, listed once.
    #[serde(default)]
    #[schemars(with = "Vec<String>", extend("uniqueItems" = true))]
    pub measured: Vec<Spanned<String>>,
    /// Days by which the job must be done, > 0.
    #[serde(default, deserialize_with = "positive_opt")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub deadline_days: Option<f64>,
    /// How often the job runs: `one_off` (delivered once) or `weekly` (iterated every week).
    #[serde(default)]
    pub cadence: Option<Cadence>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cadence {
    /// Trained and delivered once.
    OneOff,
    /// Run again every week.
    Weekly,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// An offer id from the catalog.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub offer: Option<Spanned<String>>,
}

impl Profile {
    /// Parses and range-checks a profile.
    pub fn from_source(source: &Source) -> Result<Self> {
        source.parse_yaml(ErrorKind::Profile)
    }

    /// The profile's revision (see [`crate::revision::value`]) as read, defaults filled in, so
    /// spelling out a default does not change it; no second parse of the YAML.
    #[must_use]
    pub fn revision(&self) -> Option<String> {
        serde_json::to_value(self)
            .ok()
            .map(|v| crate::revision::value(&v))
    }

    /// Offer ids the profile names (proposal, job hours, then measured hours), each with its
    /// place in the file.
    pub fn offer_references(&self) -> impl Iterator<Item = (&Spanned<String>, &'static str)> {
        let proposal = self.proposal.offer.iter().map(|o| (o, OFFER_FIELD));
        let jobs = self.job.hours.keys().map(|k| (k, OFFER_HOURS_FIELD));
        let measured = self.job.measured.iter().map(|m| (m, "job.measured"));
        proposal.chain(jobs).chain(measured)
    }

    /// Checks that each `job.measured` id is listed once and has claimed hours in `job.hours`,
    /// pointing at the offending entry of `source`.
    pub fn check_measured(&self, source: &Source) -> Result<()> {
        for (i, id) in self.job.measured.iter().enumerate() {
            let fail = |message: String| {
                Error::new(ErrorKind::Profile, message)
                    .at(
                        &source.name,
                        &source.text,
                        crate::policy::position(id.referenced),
                    )
                    .field("job.measured")
            };
            if self.job.measured[..i].iter().any(|m| m.value == id.value) {
                return Err(fail(format!("lists `{}` twice", id.value)));
            }
            if !self.job.hours.keys().any(|k| k.value == id.value) {
                let claimed: Vec<&str> = self.job.hours.keys().map(|k| k.value.as_str()).collect();
                let help = if claimed.is_empty() {
                    "add the offer's measured hours to `job.hours`".to_owned()
                } else {
                    format!(
                        "add the offer's measured hours to `job.hours`; it has: {}",
                        claimed.join(", ")
                    )
                };
                return Err(
                    fail(format!("`{}` has no claimed hours in job.hours", id.value)).help(help),
                );
            }
        }
        Ok(())
    }
}

/// The profile field that names one catalog offer.
pub const OFFER_FIELD: &str = "proposal.offer";
/// The profile field that maps catalog offer ids to a number (wall hours of the job).
pub const OFFER_HOURS_FIELD: &str = "job.hours";

/// The JSON Schema (draft-07, the version yaml-language-server understands) of the profile.
#[must_use]
pub fn json_schema() -> serde_json::Value {
    schema().clone()
}

/// The profile's JSON Schema, generated once per process: compiling a graph and every
/// sensitivity analysis read it.
pub(crate) fn schema() -> &'static serde_json::Value {
    static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| crate::schema::profile(crate::schema::Draft::Draft7))
}

/// Sets the field at `path` (segments) of a profile held as JSON, creating mappings on the way.
pub(crate) fn set_field<S: AsRef<str>>(
    profile: &mut serde_json::Value,
    path: &[S],
    value: serde_json::Value,
) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = profile;
    for key in parents {
        let key = key.as_ref();
        if !node.get(key).is_some_and(serde_json::Value::is_object) {
            node[key] = serde_json::Value::Object(serde_json::Map::new());
        }
        node = &mut node[key];
    }
    node[last.as_ref()] = value;
}

fn one() -> u32 {
    1
}

struct Expect(&'static str);

impl de::Expected for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(de::Error::custom("must not be empty"));
    }
    Ok(s)
}

fn check_positive<E: de::Error>(v: f64) -> Result<f64, E> {
    if !v.is_finite() {
        return Err(E::custom(format!("must be a finite number, got {v}")));
    }
    if v <= 0.0 {
        return Err(E::custom(format!("must be greater than 0, got {v}")));
    }
    Ok(v)
}

fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    check_positive(f64::deserialize(d)?)
}

fn positive_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(check_positive)
        .transpose()
}

fn at_least_one<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = i64::deserialize(d)?;
    match u32::try_from(v) {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(de::Error::invalid_value(
            de::Unexpected::Signed(v),
            &Expect("a whole number of at least 1"),
        )),
    }
}

fn at_least_one_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match Option::<i64>::deserialize(d)? {
        None => Ok(None),
        Some(v) => match u32::try_from(v) {
            Ok(v) if v >= 1 => Ok(Some(v)),
            _ => Err(de::Error::invalid_value(
                de::Unexpected::Signed(v),
                &Expect("a whole number of at least 1"),
            )),
        },
    }
}

fn hours_in_month<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if !v.is_finite() || !(0.0..=744.0).contains(&v) {
        return Err(de::Error::custom(format!(
            "must be between 0 and 744 hours (a 31-day month), got {v}"
        )));
    }
    Ok(v)
}

fn unique_parallelism<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Parallelism>, D::Error> {
    let list = Vec::<Parallelism>::deserialize(d)?;
    for (i, p) in list.iter().enumerate() {
        if list[..i].contains(p) {
            return Err(de::Error::custom(format!(
                "lists `{}` twice",
                serde_json::to_value(p)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            )));
        }
    }
    Ok(list)
}

fn job_hours<'de, D: Deserializer<'de>>(d: D) -> Result<IndexMap<Spanned<String>, f64>, D::Error> {
    let map = IndexMap::<Spanned<String>, f64>::deserialize(d)?;
    for (id, hours) in &map {
        if !hours.is_finite() || *hours <= 0.0 {
            return Err(de::Error::custom(format!(
                "hours for `{}` must be a number greater than 0, got {hours}",
                id.value
            )));
        }
    }
    Ok(map)
}
