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

mod faults;
pub mod fields;
pub mod typed;

pub use fields::{Field, FieldKind, check_path, field, fields};

/// A buyer's workload profile (format version 1).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "decide workload profile", extend("$id" = "https://decide.invalid/schema/profile.schema.json"))]
pub struct Profile {
    /// Free text naming the workload (may be Chinese), 1 to 200 characters: the memo's title.
    /// Shown in the memo, escaped.
    #[serde(deserialize_with = "profile_name")]
    #[schemars(length(min = 1, max = MAX_NAME_CHARS))]
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
    /// Serving targets of an inference service: its traffic at the peak and the latency its
    /// users may see. Every field is optional; the policy states what it assumes for each one
    /// left out. Left out whole, the memo says what each configuration would carry.
    #[serde(default, skip_serializing_if = "Serving::is_empty")]
    pub serving: Serving,
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

/// A number format of a model's weights, and of the arithmetic that reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// 16-bit brain floating point: the format open models are published in.
    Bf16,
    /// 16-bit IEEE floating point.
    Fp16,
    /// 8-bit floating point weights and activations (`W8A8` FP8).
    Fp8,
    /// 8-bit integer weights and activations (`W8A8` INT8, `SmoothQuant`).
    Int8,
    /// 4-bit integer weights with 16-bit arithmetic (`W4A16`: AWQ, GPTQ, GGUF `Q4`).
    Int4,
}

/// A number format of the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KvPrecision {
    /// 16-bit brain floating point.
    Bf16,
    /// 16-bit IEEE floating point.
    Fp16,
    /// 8-bit floating point.
    Fp8,
    /// 8-bit integer.
    Int8,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// `lora_finetune` | `qlora_finetune` | `full_finetune` | `pretrain` | `inference`
    pub task: Task,
    /// Parameters in billions, at least 0.001 (a million parameters) and at most 100,000 (100
    /// trillion parameters): the largest models announced have a few thousand billion, so a
    /// larger number is a typo (or a count of parameters rather than of billions).
    #[serde(deserialize_with = "positive::<_, MIN_MODEL_PARAMS_B_MICRO, MAX_MODEL_PARAMS_B>")]
    #[schemars(extend("minimum" = micro(MIN_MODEL_PARAMS_B_MICRO), "maximum" = MAX_MODEL_PARAMS_B))]
    pub model_params_b: f64,
    /// For a mixture-of-experts model, the parameters each token runs through, in billions,
    /// at most `model_params_b` (Mixtral 8x7B: 12.9 of 46.7; DeepSeek-V3: 37 of 671): the
    /// arithmetic (training FLOPs, serving compute) reads these, the memory every parameter.
    /// Left out, the policy's figures for the `model` named, else all of `model_params_b`.
    #[serde(
        default,
        deserialize_with = "positive_opt::<_, MIN_MODEL_PARAMS_B_MICRO, MAX_MODEL_PARAMS_B>"
    )]
    #[schemars(extend("minimum" = micro(MIN_MODEL_PARAMS_B_MICRO), "maximum" = MAX_MODEL_PARAMS_B))]
    pub active_params_b: Option<f64>,
    /// The model, by name (`mixtral-8x7b`, `deepseek-v3`, `qwen3-235b-a22b`), 1 to 100
    /// characters: where the policy has figures for it (layers, KV heads, the attention kind),
    /// its KV cache and the share of its parameters each token runs through are its own, not a
    /// typical dense model's of its size. Compared without regard to case, with spaces and
    /// underscores read as hyphens.
    #[serde(default, deserialize_with = "model_name")]
    #[schemars(length(min = 1, max = MAX_MODEL_NAME_CHARS))]
    pub model: Option<String>,
    /// How one job is split across GPUs; empty means independent single-GPU jobs or replicas.
    /// `data`: each GPU runs a replica of the model; where the model's state does not fit one
    /// GPU, the memory model takes it as sharded across them (ZeRO-3 / FSDP) and the memo says
    /// so. `tensor`, `pipeline`: one model split across GPUs (needs NVLink/HCCS-class links).
    #[serde(default, deserialize_with = "unique_parallelism")]
    #[schemars(extend("uniqueItems" = true))]
    pub parallelism: Vec<Parallelism>,
    /// Machines one training job spans, 1 to 100,000: the largest clusters built hold some
    /// 100,000 to 200,000 GPUs, in a few tens of thousands of machines. For serving, machines of
    /// replicas (no fabric between them), or of one replica where pipeline parallelism is listed.
    #[serde(default = "one", deserialize_with = "whole::<_, MAX_NODES>")]
    #[schemars(range(min = 1, max = MAX_NODES))]
    pub nodes: u32,
    /// Training tokens in billions, at least 0.000001 (a thousand tokens) and at most 1,000,000
    /// (10^15 tokens): the largest training runs published read a few tens of trillions of
    /// tokens, some 30 times fewer.
    #[serde(
        default,
        deserialize_with = "positive_opt::<_, MIN_TOKENS_B_MICRO, MAX_TOKENS_B>"
    )]
    #[schemars(extend("minimum" = micro(MIN_TOKENS_B_MICRO), "maximum" = MAX_TOKENS_B))]
    pub tokens_b: Option<f64>,
    /// Inference concurrency: low | high.
    #[serde(default)]
    pub concurrency: Option<Concurrency>,
    /// Tokens of context per sequence (prompt plus output), 1 to 100,000,000: sizes the
    /// inference KV cache. The longest context windows offered hold up to 10 million tokens,
    /// ten times fewer.
    #[serde(default, deserialize_with = "whole_opt::<_, MAX_CONTEXT_TOKENS>")]
    #[schemars(range(min = 1, max = MAX_CONTEXT_TOKENS))]
    pub context_tokens: Option<u32>,
    /// Sequences served at once, 1 to 10,000,000: with `context_tokens`, sizes the inference KV
    /// cache. Ten million sequences at once is more than any one deployment serves (a GPU
    /// serves tens to hundreds at once, and the GPU bound is a million).
    #[serde(default, deserialize_with = "whole_opt::<_, MAX_CONCURRENT_SEQUENCES>")]
    #[schemars(range(min = 1, max = MAX_CONCURRENT_SEQUENCES))]
    pub concurrent_sequences: Option<u32>,
    /// The number format the weights are held and computed in: `bf16` | `fp16` | `fp8` |
    /// `int8` | `int4`. It sets the bytes a parameter holds and the rate the arithmetic runs
    /// at, and rules out the accelerators that cannot run it (the policy says which can). Left
    /// out, the policy's default. Training reads it for the arithmetic only (FP8 training keeps
    /// 16-bit weights and 32-bit optimizer state).
    #[serde(default)]
    pub precision: Option<Precision>,
    /// The number format of a service's KV cache: `bf16` | `fp16` | `fp8` | `int8`. Left out,
    /// the policy's default.
    #[serde(default)]
    pub kv_precision: Option<KvPrecision>,
    /// The code relies on custom CUDA operators (kernels), which do not port to other
    /// accelerators by a conversion tool.
    #[serde(default)]
    pub custom_cuda_operators: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// GPUs kept busy at once, 1 to 1,000,000: the largest clusters built hold some 100,000 to
    /// 200,000 GPUs.
    #[serde(deserialize_with = "whole::<_, MAX_GPUS>")]
    #[schemars(range(min = 1, max = MAX_GPUS))]
    pub gpus: u32,
    /// Busy hours per GPU per month, 0 to 744 (31 days).
    #[serde(deserialize_with = "hours_in_month")]
    #[schemars(range(min = 0, max = MAX_HOURS_PER_GPU_MONTH))]
    pub hours_per_gpu_month: f64,
    /// How many months the work lasts, 1 to 120 (ten years): longer than any hardware
    /// contract, and than the working life of a GPU.
    #[serde(default = "one", deserialize_with = "whole::<_, MAX_MONTHS>")]
    #[schemars(range(min = 1, max = MAX_MONTHS))]
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
    /// The purchase is by inquiry (询价): several vendors must quote what is bought (the
    /// policy says how many; the PRC Government Procurement Law asks at least three).
    #[serde(default)]
    pub inquiry: bool,
    /// The data may be processed outside mainland China, on a global cloud's hardware: data
    /// that is public, or personal or important data whose export the buyer has cleared (the
    /// PRC Personal Information Protection Law and Data Security Law; the CAC's rules on
    /// outbound data). Left false, an offer abroad is not considered.
    #[serde(default)]
    pub data_abroad_allowed: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Monthly ceiling in yuan, at least 1 and at most 100,000,000,000 (¥100 billion a month):
    /// a million GPUs (the `usage.gpus` bound) at ¥100,000 each a month, several times what a
    /// GPU-month of the fastest accelerators rents for.
    #[serde(
        default,
        deserialize_with = "positive_opt::<_, MIN_MONTHLY_CNY_MICRO, MAX_MONTHLY_CNY>"
    )]
    #[schemars(extend("minimum" = micro(MIN_MONTHLY_CNY_MICRO), "maximum" = MAX_MONTHLY_CNY))]
    pub monthly_cny: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Expected wall hours of the job per offer id, each at least 0.01 (36 seconds) and at most
    /// 87,600 (ten years of hours): a job that runs longer is not one job.
    #[serde(default, deserialize_with = "job_hours")]
    #[schemars(with = "std::collections::BTreeMap<String, JobHours>")]
    pub hours: IndexMap<Spanned<String>, f64>,
    /// Offer ids whose claimed `hours` were measured on that hardware (a benchmark or an
    /// earlier run), so the policy may trust the claim over its own estimate. Each must be a
    /// key of `hours`, listed once.
    #[serde(default)]
    #[schemars(with = "Vec<String>", extend("uniqueItems" = true))]
    pub measured: Vec<Spanned<String>>,
    /// Days by which the job must be done, at least 0.01 (about a quarter of an hour) and
    /// at most 3,650 (ten years), the longest a job's hours may run.
    #[serde(
        default,
        deserialize_with = "positive_opt::<_, MIN_DEADLINE_DAYS_MICRO, MAX_DEADLINE_DAYS>"
    )]
    #[schemars(extend("minimum" = micro(MIN_DEADLINE_DAYS_MICRO), "maximum" = MAX_DEADLINE_DAYS))]
    pub deadline_days: Option<f64>,
    /// How often the job runs: `one_off` (delivered once) or `weekly` (iterated every week).
    #[serde(default)]
    pub cadence: Option<Cadence>,
    /// The job saves checkpoints and resumes from the last one after an interruption, so it
    /// may run on preemptible (spot) capacity, which the vendor can take back at short notice.
    /// Left out: it does not, and no spot offer is considered for it. (Not written back when
    /// false, so a profile without it reads and hashes as before.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checkpoints: bool,
}

// The schema of one value of `job.hours`; the field itself holds plain `f64`s.
/// Wall hours of the job on one offer, at least 0.01 and at most 87,600 (ten years).
#[derive(JsonSchema)]
#[schemars(transparent, inline)]
struct JobHours(
    #[schemars(extend("minimum" = micro(MIN_JOB_HOURS_MICRO), "maximum" = MAX_JOB_HOURS))]
    #[allow(dead_code)]
    f64,
);

// The schema of one value of `serving.measured_output_tokens_per_s`; the field holds `f64`s.
/// Output tokens a second one replica of the offer carried in a benchmark, at least 0.01 and at
/// most 1,000,000,000.
#[derive(JsonSchema)]
#[schemars(transparent, inline)]
struct MeasuredTokens(
    #[schemars(extend("minimum" = micro(MIN_TOKENS_PER_S_MICRO), "maximum" = MAX_TOKENS_PER_S))]
    #[allow(dead_code)]
    f64,
);

/// Serving targets (only an inference profile is sized by them). A field left out is not
/// written back (nor hashed into the profile's revision), so a profile without them reads and
/// hashes as it did before they existed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// Output tokens per second across the whole service at its busiest, at least 0.01 and
    /// at most 1,000,000,000: a billion tokens a second is some 86 trillion a day, more than
    /// the largest public services report serving.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "positive_opt::<_, MIN_TOKENS_PER_S_MICRO, MAX_TOKENS_PER_S>"
    )]
    #[schemars(extend("minimum" = micro(MIN_TOKENS_PER_S_MICRO), "maximum" = MAX_TOKENS_PER_S))]
    pub peak_output_tokens_per_s: Option<f64>,
    /// Prompt tokens of a typical request, 1 to 100,000,000 (as `workload.context_tokens`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt::<_, MAX_CONTEXT_TOKENS>"
    )]
    #[schemars(range(min = 1, max = MAX_CONTEXT_TOKENS))]
    pub prompt_tokens: Option<u32>,
    /// Output tokens of a typical request, 1 to 100,000,000.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt::<_, MAX_CONTEXT_TOKENS>"
    )]
    #[schemars(range(min = 1, max = MAX_CONTEXT_TOKENS))]
    pub output_tokens: Option<u32>,
    /// Time between two output tokens a user may see, in milliseconds, at least 0.01 and
    /// at most 3,600,000 (an hour).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "positive_opt::<_, MIN_LATENCY_MS_MICRO, MAX_LATENCY_MS>"
    )]
    #[schemars(extend("minimum" = micro(MIN_LATENCY_MS_MICRO), "maximum" = MAX_LATENCY_MS))]
    pub time_per_output_token_ms: Option<f64>,
    /// Time from a request to its first output token, in milliseconds, at least 0.01 and
    /// at most 3,600,000 (an hour).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "positive_opt::<_, MIN_LATENCY_MS_MICRO, MAX_LATENCY_MS>"
    )]
    #[schemars(extend("minimum" = micro(MIN_LATENCY_MS_MICRO), "maximum" = MAX_LATENCY_MS))]
    pub time_to_first_token_ms: Option<f64>,
    /// Sequences a replica decodes at once, 1 to 10,000,000 (as
    /// `workload.concurrent_sequences`): where given, every replica shape runs this batch (a
    /// deployment whose scheduler is capped, or a benchmark at a fixed concurrency) instead of
    /// the largest its memory and the latency target allow.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt::<_, MAX_CONCURRENT_SEQUENCES>"
    )]
    #[schemars(range(min = 1, max = MAX_CONCURRENT_SEQUENCES))]
    pub batch: Option<u32>,
    /// GPUs one replica is split over by tensor parallelism, 1 to 1,024: where given, only
    /// replica shapes of this degree are considered (a deployment already fixed, or a
    /// benchmark run at a stated degree).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_opt::<_, MAX_TENSOR_PARALLEL>"
    )]
    #[schemars(range(min = 1, max = MAX_TENSOR_PARALLEL))]
    pub tensor_parallel: Option<u32>,
    /// Output tokens a second one replica carried in your own benchmark, per offer id: at the
    /// profile's lengths, `serving.tensor_parallel` GPUs and `serving.batch` requests at once,
    /// within the latency target. The decision then sizes that offer's replicas, and those of
    /// every offer of the same hardware, on the measured rate instead of the model's (the
    /// model's rate scaled by measured ÷ modelled at that shape); each value at least 0.01 and
    /// at most 1,000,000,000.
    #[serde(
        default,
        skip_serializing_if = "IndexMap::is_empty",
        deserialize_with = "measured_tokens"
    )]
    #[schemars(with = "std::collections::BTreeMap<String, MeasuredTokens>")]
    pub measured_output_tokens_per_s: IndexMap<Spanned<String>, f64>,
}

impl Serving {
    /// No field given: the section is left out when the profile is written or hashed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.peak_output_tokens_per_s.is_none()
            && self.prompt_tokens.is_none()
            && self.output_tokens.is_none()
            && self.time_per_output_token_ms.is_none()
            && self.time_to_first_token_ms.is_none()
            && self.batch.is_none()
            && self.tensor_parallel.is_none()
            && self.measured_output_tokens_per_s.is_empty()
    }
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

/// How a profile's text is written, which decides how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// YAML: a profile file, a document of a YAML stream.
    Yaml,
    /// One JSON object: a line of JSON lines ([`Profile::from_json`]).
    Json,
}

impl Profile {
    /// Parses and range-checks a profile. A profile with faults is refused with every one of
    /// them ([`faults`]), each placed as if it were the only one.
    pub fn from_source(source: &Source) -> Result<Self> {
        let profile: Self = source
            .parse_yaml(ErrorKind::Profile)
            .map_err(|first| faults::every(source).unwrap_or(first))?;
        profile.check_consistent(source)?;
        Ok(profile)
    }

    /// Parses and range-checks a profile written in `syntax`.
    pub fn read(source: &Source, syntax: Syntax) -> Result<Self> {
        match syntax {
            Syntax::Yaml => Self::from_source(source),
            Syntax::Json => Self::from_json(source),
        }
    }

    /// Parses and range-checks a profile written as one JSON object (a line of JSON lines) with
    /// `serde_json`, some twenty times faster than the YAML reader, into the same profile with
    /// the same checks. JSON has no places to point at, so a text it refuses is read again as
    /// YAML (JSON is YAML), which words the error exactly as for a YAML profile: file, line,
    /// column, field, what would be valid, a snippet. A text that is YAML but not JSON (a flow
    /// mapping with bare keys) is thereby read as it always was.
    ///
    /// The profile's offer ids carry no place either ([`Spanned`] locations are unknown); a
    /// caller that reports a bad offer id reads the text with [`Profile::from_source`] to point
    /// at it, as [`crate::decide_text`] does.
    pub fn from_json(source: &Source) -> Result<Self> {
        match serde_json::from_str::<Self>(&source.text) {
            Ok(profile) => profile.check_consistent(source).map(|()| profile),
            Err(_) => Self::from_source(source),
        }
    }

    /// The profile's revision (see [`crate::revision::value`]) as read, defaults filled in, so
    /// spelling out a default does not change it; no second parse of the text. Its canonical
    /// JSON is written straight from the profile ([`crate::canonical`]), the same bytes as
    /// through a `serde_json::Value` at a third of the cost.
    #[must_use]
    pub fn revision(&self) -> Option<String> {
        crate::canonical::to_vec(self)
            .ok()
            .map(|doc| crate::revision::digest(&doc))
    }

    /// Offer ids the profile names (proposal, job hours, then measured hours), each with its
    /// place in the file.
    pub fn offer_references(&self) -> impl Iterator<Item = (&Spanned<String>, &'static str)> {
        let proposal = self.proposal.offer.iter().map(|o| (o, OFFER_FIELD));
        let jobs = self.job.hours.keys().map(|k| (k, OFFER_HOURS_FIELD));
        let measured = self.job.measured.iter().map(|m| (m, "job.measured"));
        let served =
            (self.serving.measured_output_tokens_per_s.keys()).map(|k| (k, OFFER_TOKENS_FIELD));
        proposal.chain(jobs).chain(measured).chain(served)
    }

    /// Two fields that contradict each other, if any: the field at fault, what is wrong with
    /// it (naming the other) and how to mend it. A profile with one is refused when read
    /// ([`Profile::check_consistent`]), and generated profiles with one are left out.
    #[must_use]
    pub fn contradiction(&self) -> Option<(&'static str, String, String)> {
        let w = &self.workload;
        if w.nodes > self.usage.gpus {
            return Some((
                "workload.nodes",
                format!(
                    "is {}, more machines than the {} GPU{} of `usage.gpus` can fill",
                    w.nodes,
                    self.usage.gpus,
                    if self.usage.gpus == 1 { "" } else { "s" }
                ),
                "a machine of the job holds at least one of its GPUs: lower `workload.nodes`, or raise `usage.gpus`".to_owned(),
            ));
        }
        let v = &self.serving;
        if !v.measured_output_tokens_per_s.is_empty()
            && (v.tensor_parallel.is_none() || v.batch.is_none())
        {
            return Some((
                OFFER_TOKENS_FIELD,
                format!(
                    "is given without {}: the shape the replica was measured at",
                    match (v.tensor_parallel, v.batch) {
                        (None, None) => "`serving.tensor_parallel` and `serving.batch`",
                        (None, Some(_)) => "`serving.tensor_parallel`",
                        _ => "`serving.batch`",
                    }
                ),
                "state the GPUs the measured replica ran on (`serving.tensor_parallel`) and the requests it ran at once (`serving.batch`), as in the benchmark".to_owned(),
            ));
        }
        if let Some(active) = w.active_params_b
            && active > w.model_params_b
        {
            return Some((
                "workload.active_params_b",
                format!(
                    "is {}, more than the {} of `workload.model_params_b`",
                    shown(active),
                    shown(w.model_params_b)
                ),
                "a mixture-of-experts model runs part of its parameters for each token: `model_params_b` counts them all (Mixtral 8x7B: 46.7), `active_params_b` the part (12.9)".to_owned(),
            ));
        }
        None
    }

    /// Refuses a profile whose fields contradict each other ([`Profile::contradiction`]),
    /// pointing at the field at fault in `source` where it can be found.
    pub fn check_consistent(&self, source: &Source) -> Result<()> {
        let Some((field, message, help)) = self.contradiction() else {
            return Ok(());
        };
        Err(Error::new(ErrorKind::Profile, message)
            .at(&source.name, &source.text, place_of(source, field))
            .field(field)
            .help(help))
    }

    /// Checks that each `job.measured` id is listed once and has claimed hours in `job.hours`,
    /// pointing at the offending entry of `source`; an id `reported` already (one the catalog
    /// does not have) is not said again.
    pub fn check_measured(&self, source: &Source, reported: &[&str]) -> Result<()> {
        for (i, id) in self.job.measured.iter().enumerate() {
            if reported.contains(&id.value.as_str()) {
                continue;
            }
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

/// Where the value of `field` (one a contradiction names) is written in `source`.
fn place_of(source: &Source, field: &str) -> Option<crate::error::Position> {
    crate::places::Places::of(&source.text)?
        .get(field)
        .map(|node| node.start.position())
}

/// The profile field that names one catalog offer.
pub const OFFER_FIELD: &str = "proposal.offer";
/// The profile field that maps catalog offer ids to a number (wall hours of the job).
pub const OFFER_HOURS_FIELD: &str = "job.hours";
/// The profile field that maps catalog offer ids to a number (output tokens a second one
/// replica was measured to carry).
pub const OFFER_TOKENS_FIELD: &str = "serving.measured_output_tokens_per_s";

// The upper bounds of the profile's numbers: far above what a real workload reaches (each
// field's doc comment says why), so that a typo or a nonsense value such as `1e300` is refused
// at its line instead of being decided. They are part of the profile format: the schema shows
// them (`maximum`) and `decide init` checks answers against them.

/// Upper bound of `workload.model_params_b` (billions of parameters).
pub const MAX_MODEL_PARAMS_B: u64 = 100_000;
/// The fewest parameters, in millionths of a billion: 1,000 = 0.001 B, a million parameters.
pub const MIN_MODEL_PARAMS_B_MICRO: u64 = 1_000;
/// Upper bound of `workload.nodes` (machines one job spans).
pub const MAX_NODES: u32 = 100_000;
/// Upper bound of `workload.tokens_b` (billions of training tokens).
pub const MAX_TOKENS_B: u64 = 1_000_000;
/// The fewest training tokens, in millionths of a billion: 1 = 0.000001 B, a thousand tokens.
pub const MIN_TOKENS_B_MICRO: u64 = 1;
/// Upper bound of `workload.context_tokens` (tokens per sequence).
pub const MAX_CONTEXT_TOKENS: u32 = 100_000_000;
/// Upper bound of `workload.concurrent_sequences` (sequences served at once).
pub const MAX_CONCURRENT_SEQUENCES: u32 = 10_000_000;
/// Upper bound of `serving.tensor_parallel` (GPUs a replica is split over): far above the
/// 8 of one box or the 72 of the largest `NVLink` domain sold.
pub const MAX_TENSOR_PARALLEL: u32 = 1_024;
/// Upper bound of `serving.peak_output_tokens_per_s`.
pub const MAX_TOKENS_PER_S: u64 = 1_000_000_000;
/// The least peak, in millionths of a token a second: 0.01.
pub const MIN_TOKENS_PER_S_MICRO: u64 = 10_000;
/// Upper bound of the serving latencies, in milliseconds (an hour).
pub const MAX_LATENCY_MS: u64 = 3_600_000;
/// The least latency, in millionths of a millisecond: 0.01 ms.
pub const MIN_LATENCY_MS_MICRO: u64 = 10_000;
/// Upper bound of `usage.gpus` (GPUs kept busy at once).
pub const MAX_GPUS: u32 = 1_000_000;
/// Upper bound of `usage.hours_per_gpu_month` (a 31-day month).
pub const MAX_HOURS_PER_GPU_MONTH: u64 = 744;
/// Upper bound of `usage.months` (ten years).
pub const MAX_MONTHS: u32 = 120;
/// Upper bound of `budget.monthly_cny` (yuan a month).
pub const MAX_MONTHLY_CNY: u64 = 100_000_000_000;
/// The smallest monthly budget, in millionths of a yuan: ¥1.
pub const MIN_MONTHLY_CNY_MICRO: u64 = 1_000_000;
/// Upper bound of each value of `job.hours` (ten years of hours).
pub const MAX_JOB_HOURS: u64 = 87_600;
/// The shortest job, in millionths of an hour: 0.01 h (36 seconds).
pub const MIN_JOB_HOURS_MICRO: u64 = 10_000;
/// Upper bound of `job.deadline_days` (ten years of days).
pub const MAX_DEADLINE_DAYS: u64 = 3_650;
/// The shortest deadline, in millionths of a day: 0.01 days (about a quarter of an hour).
pub const MIN_DEADLINE_DAYS_MICRO: u64 = 10_000;

/// The JSON Schema (draft-07, the version yaml-language-server understands) of the profile.
#[must_use]
pub fn json_schema() -> serde_json::Value {
    schema().clone()
}

/// The profile's JSON Schema, generated once per process from the type itself (not through
/// [`crate::schema`], which reaches the rules' and test cases' types): [`fields`] reads it.
pub(crate) fn schema() -> &'static serde_json::Value {
    static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        schemars::generate::SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<Profile>()
            .to_value()
    })
}

/// Sets the field at `path` (segments) of a profile held as JSON, creating mappings on the way.
pub fn set_field<S: AsRef<str>>(
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

/// What a whole-number field accepts: 1 to its bound.
struct Whole(u32);

impl de::Expected for Whole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a whole number of at least 1 and at most {}", self.0)
    }
}

/// The longest `name`, in characters (Unicode scalar values, as JSON Schema's `maxLength`
/// counts them): a title of a few words, in any language, fits many times over; a longer one
/// is a document pasted in by mistake, and each of its characters is work for every memo.
pub const MAX_NAME_CHARS: usize = 200;

/// The `name`: not empty, at most [`MAX_NAME_CHARS`] characters.
fn profile_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(de::Error::custom("must not be empty"));
    }
    let chars = s.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(de::Error::custom(crate::error::with_help(
            &format!("is {chars} characters long; a name has at most {MAX_NAME_CHARS}"),
            "name the workload in a few words, as the memo's title (e.g. `Support-bot 7B \
             LoRA`); keep the details in the documents the memo goes with",
        )));
    }
    Ok(s)
}

/// Longest `workload.model` name, in characters.
pub const MAX_MODEL_NAME_CHARS: usize = 100;

/// The `workload.model`: 1 to [`MAX_MODEL_NAME_CHARS`] characters, kept trimmed and lower-case
/// with spaces and underscores as hyphens, so `Mixtral 8x7B` and `mixtral-8x7b` are one model.
fn model_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let Some(s) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    let name: String = s
        .trim()
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '_' {
                '-'
            } else {
                c
            }
        })
        .flat_map(char::to_lowercase)
        .collect();
    if name.is_empty() {
        return Err(de::Error::custom(crate::error::with_help(
            "must not be empty",
            "name the model as its publisher does (`mixtral-8x7b`), or leave the field out",
        )));
    }
    let chars = name.chars().count();
    if chars > MAX_MODEL_NAME_CHARS {
        return Err(de::Error::custom(format!(
            "is {chars} characters long; a model name has at most {MAX_MODEL_NAME_CHARS}"
        )));
    }
    Ok(Some(name))
}

/// A number as a message shows it: as written for everyday magnitudes, in exponent notation
/// for huge or tiny ones (`1e300`, not three hundred digits).
fn shown(v: f64) -> String {
    let magnitude = v.abs();
    if magnitude != 0.0 && !(1e-6..1e16).contains(&magnitude) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A bound given in millionths as a number: `micro(1_000)` is 0.001.
#[allow(clippy::cast_precision_loss)] // the bounds are round numbers well within f64's range
const fn micro(millionths: u64) -> f64 {
    millionths as f64 / 1e6
}

/// The number `v` of a field that takes `min` (the smallest value the rules can decide on: a
/// smaller one is a typo or a unit slip, and would leave the arithmetic nothing to work with)
/// to `max`.
#[allow(clippy::cast_precision_loss)] // the bounds are round numbers well within f64's range
fn check_positive<E: de::Error>(v: f64, min: f64, max: u64) -> Result<f64, E> {
    if !v.is_finite() {
        return Err(E::custom(format!("must be a finite number, got {v}")));
    }
    if v < min {
        return Err(E::custom(format!(
            "must be at least {min}, got {}",
            shown(v)
        )));
    }
    if v > max as f64 {
        return Err(E::custom(format!(
            "must be at most {max}, got {}",
            shown(v)
        )));
    }
    Ok(v)
}

/// A number from `MIN` millionths to `MAX`.
fn positive<'de, D: Deserializer<'de>, const MIN: u64, const MAX: u64>(
    d: D,
) -> Result<f64, D::Error> {
    check_positive(f64::deserialize(d)?, micro(MIN), MAX)
}

fn positive_opt<'de, D: Deserializer<'de>, const MIN: u64, const MAX: u64>(
    d: D,
) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|v| check_positive(v, micro(MIN), MAX))
        .transpose()
}

fn check_whole<E: de::Error>(v: i64, max: u32) -> Result<u32, E> {
    match u32::try_from(v) {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(E::invalid_value(de::Unexpected::Signed(v), &Whole(max))),
    }
}

/// A whole number from 1 to the bound it holds, as a profile writes it: in decimal digits, as a
/// number field is. It is read as a number (`deserialize_f64`), whose YAML reading knows
/// decimal spellings only, so that the YAML 1.1 spellings an integer reading takes (`1_0` for
/// 10, `0x8`, `0o10`, `0b1000`, `+0x8` for 8) are refused as a number field refuses them, not
/// decided on; a whole number written with a point (`8.0`) is that number, as `decide init`
/// reads it.
struct Decimal(u32);

impl de::Visitor<'_> for Decimal {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        de::Expected::fmt(&Whole(self.0), f)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
        check_whole(v, self.0)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
        match i64::try_from(v) {
            Ok(v) => check_whole(v, self.0),
            Err(_) => Err(E::invalid_value(
                de::Unexpected::Unsigned(v),
                &Whole(self.0),
            )),
        }
    }

    #[allow(clippy::cast_possible_truncation)] // whole and within ±2^53: exact
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u32, E> {
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            check_whole(v as i64, self.0)
        } else if v.fract() == 0.0 {
            let number = format!("number {}", shown(v));
            Err(E::invalid_value(
                de::Unexpected::Other(&number),
                &Whole(self.0),
            ))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &Whole(self.0)))
        }
    }
}

/// Reads a [`Decimal`] up to `max`; a spelling the number reader refuses is said as what it is.
fn decimal<'de, D: Deserializer<'de>>(d: D, max: u32) -> Result<u32, D::Error> {
    d.deserialize_f64(Decimal(max)).map_err(|e| {
        if e.to_string().starts_with("invalid floating point") {
            de::Error::custom(crate::error::with_help(
                &format!("expected a whole number of at least 1 and at most {max}"),
                "write it in decimal digits, e.g. `8`; a profile does not read `1_0`, `0x8`, \
                 `0o10` or `0b1000` (spellings of YAML 1.1)",
            ))
        } else {
            e
        }
    })
}

/// A whole number from 1 to `MAX`.
fn whole<'de, D: Deserializer<'de>, const MAX: u32>(d: D) -> Result<u32, D::Error> {
    decimal(d, MAX)
}

fn whole_opt<'de, D: Deserializer<'de>, const MAX: u32>(d: D) -> Result<Option<u32>, D::Error> {
    /// A present whole number.
    struct Present<const MAX: u32>(u32);
    impl<'de, const MAX: u32> Deserialize<'de> for Present<MAX> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            decimal(d, MAX).map(Present)
        }
    }
    Ok(Option::<Present<MAX>>::deserialize(d)?.map(|p| p.0))
}

#[allow(clippy::cast_precision_loss)] // 744
fn hours_in_month<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if !v.is_finite() || !(0.0..=MAX_HOURS_PER_GPU_MONTH as f64).contains(&v) {
        return Err(de::Error::custom(format!(
            "must be between 0 and {MAX_HOURS_PER_GPU_MONTH} hours (a 31-day month), got {}",
            shown(v)
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

/// The offer ids of a map keyed by them (`job.hours`, `serving.measured_output_tokens_per_s`)
/// with their numbers, each id once. The YAML reader refuses a key
/// given twice itself; JSON readers keep the last silently, and `Spanned` keys read from JSON
/// carry no place to tell two apart, so a repeated id is refused here.
struct OfferNumbers;

impl<'de> de::Visitor<'de> for OfferNumbers {
    type Value = IndexMap<Spanned<String>, f64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // What `IndexMap` itself says, so that messages stay as they were.
        f.write_str("a map")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut entries: A) -> Result<Self::Value, A::Error> {
        let mut map = IndexMap::with_capacity(entries.size_hint().unwrap_or(0).min(64));
        while let Some((id, hours)) = entries.next_entry::<Spanned<String>, f64>()? {
            if map.keys().any(|k: &Spanned<String>| k.value == id.value) {
                return Err(de::Error::custom(format!(
                    "the key `{}` is given twice; each key may appear once",
                    id.value
                )));
            }
            map.insert(id, hours);
        }
        Ok(map)
    }
}

/// A map keyed by offer id whose every number is within `min` and `max`: `what` names a number
/// in the message ("hours"), `most` says the bound as the message shows it.
fn offer_numbers<'de, D: Deserializer<'de>>(
    d: D,
    what: &str,
    min: f64,
    max: f64,
    most: &str,
) -> Result<IndexMap<Spanned<String>, f64>, D::Error> {
    let map = d.deserialize_map(OfferNumbers)?;
    for (id, &n) in &map {
        if !n.is_finite() || n < min || n > max {
            return Err(de::Error::custom(format!(
                "{what} for `{}` must be a number of at least {} and at most {most}, got {}",
                id.value,
                min,
                shown(n)
            )));
        }
    }
    Ok(map)
}

fn measured_tokens<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<IndexMap<Spanned<String>, f64>, D::Error> {
    #[allow(clippy::cast_precision_loss)] // a billion
    let max = MAX_TOKENS_PER_S as f64;
    let most = MAX_TOKENS_PER_S.to_string();
    offer_numbers(
        d,
        "output tokens a second",
        micro(MIN_TOKENS_PER_S_MICRO),
        max,
        &most,
    )
}

fn job_hours<'de, D: Deserializer<'de>>(d: D) -> Result<IndexMap<Spanned<String>, f64>, D::Error> {
    #[allow(clippy::cast_precision_loss)] // 87,600
    let max = MAX_JOB_HOURS as f64;
    let most = format!("{MAX_JOB_HOURS} (ten years)");
    offer_numbers(d, "hours", micro(MIN_JOB_HOURS_MICRO), max, &most)
}
