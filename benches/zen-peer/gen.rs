//! The ZEN peer benchmark's profiles and its plain-Rust oracle, for `tests/zen_peer.rs` and
//! `benches/peer.rs` (each includes this file with `#[path]`).
//!
//! The generator is the peer's, draw for draw: splitmix64 from a seed, half of the model sizes
//! and budgets on rule boundaries, hours on whole or half hours. A [`ZenProfile`] holds ZEN's
//! eight inputs; [`ZenProfile::to_profile_json`] writes it as a `decide` profile (one JSON
//! line, every mapped field spelled out, as ZEN's input has all eight keys), with the mapping at
//! the top of `benches/zen-peer/rules/policy.yaml`. [`oracle`] is the peer's decision in plain
//! Rust, and [`check_record`] compares a `decide` JSON record with it.

// Each includer uses a part: the test all but the timing helpers, the bench the generator.
#![allow(dead_code)]

use std::fmt::Write as _;

/// The peer's seed for its measured profiles.
pub const SEED: u64 = 0x5EED_2024;

/// The rules folder of the ZEN decision, from the crate root.
pub const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/zen-peer/rules");

/// The profile format's bound on `usage.hours_per_gpu_month` (31 days).
const MAX_HOURS_PER_GPU_MONTH: f64 = 744.0;

/// splitmix64: the peer's small deterministic generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// ZEN's `task` values, in the peer's order (the draws index into it).
pub const TASKS: [&str; 4] = ["lora_finetune", "full_finetune", "pretrain", "inference"];

/// ZEN's eight inputs for one profile.
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)]
pub struct ZenProfile {
    pub model_params_b: f64,
    pub task: &'static str,
    pub gpu_hours_per_gpu_month: f64,
    pub needs_multi_gpu_interconnect: bool,
    pub compliance_isolation: bool,
    pub custom_kernel_or_network: bool,
    pub domestic_required: bool,
    pub budget_cny_month: f64,
}

/// The peer's `n` profiles from `seed`, in its order and with its draws.
pub fn generate(n: usize, seed: u64) -> Vec<ZenProfile> {
    const PARAMS_EDGE: [f64; 22] = [
        0.5, 1.5, 3.0, 6.9, 7.0, 8.0, 9.5, 10.0, 10.5, 13.0, 13.5, 14.0, 29.9, 30.0, 34.0, 50.0,
        65.0, 70.0, 72.0, 100.0, 120.0, 405.0,
    ];
    const BUDGET_EDGE: [f64; 10] = [
        3000.0, 7920.0, 9999.0, 10000.0, 15000.0, 21200.0, 50000.0, 86880.0, 200_000.0, 1e6,
    ];
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            // The draws in the peer's order: a struct literal would evaluate in field order too,
            // but named steps keep the order visible.
            let model_params_b = if r.chance(50) {
                r.pick(&PARAMS_EDGE)
            } else {
                (r.below(2000) as f64 + 5.0) / 10.0
            };
            let gpu_hours_per_gpu_month = if r.chance(80) {
                r.below(745) as f64
            } else {
                r.below(745) as f64 + 0.5
            };
            let budget_cny_month = if r.chance(50) {
                r.pick(&BUDGET_EDGE)
            } else {
                (r.below(300_000) + 1000) as f64
            };
            let task = r.pick(&TASKS);
            let needs_multi_gpu_interconnect = r.chance(30);
            let compliance_isolation = r.chance(20);
            let custom_kernel_or_network = r.chance(15);
            let domestic_required = r.chance(35);
            ZenProfile {
                model_params_b,
                task,
                gpu_hours_per_gpu_month,
                needs_multi_gpu_interconnect,
                compliance_isolation,
                custom_kernel_or_network,
                domestic_required,
                budget_cny_month,
            }
        })
        .collect()
}

impl ZenProfile {
    /// The profile in `decide`'s format, as one JSON line; `index` names it and chooses which
    /// of `custom_kernel` (even) and `custom_network` (odd) carries ZEN's
    /// `custom_kernel_or_network`, so both halves of the rule's `or` are exercised. Hours above
    /// the format's 744 become 744: both are above the break-even line, so the answer is the
    /// same.
    pub fn to_profile_json(&self, index: usize) -> String {
        let custom = self.custom_kernel_or_network;
        let mut line = String::with_capacity(320);
        // `{:?}` on an f64 writes it back exactly (and as `70.0`, a float, like ZEN's input).
        let _ = write!(
            line,
            "{{\"name\": \"zen-{index}\", \
             \"workload\": {{\"task\": \"{}\", \"model_params_b\": {:?}, \"nodes\": {}}}, \
             \"usage\": {{\"gpus\": 8, \"hours_per_gpu_month\": {:?}}}, \
             \"requirements\": {{\"physical_isolation\": {}, \"custom_kernel\": {}, \
             \"custom_network\": {}, \"domestic_accelerator\": {}}}, \
             \"budget\": {{\"monthly_cny\": {:?}}}}}",
            self.task,
            self.model_params_b,
            if self.needs_multi_gpu_interconnect {
                2
            } else {
                1
            },
            self.gpu_hours_per_gpu_month.min(MAX_HOURS_PER_GPU_MONTH),
            self.compliance_isolation,
            custom && index.is_multiple_of(2),
            custom && !index.is_multiple_of(2),
            self.domestic_required,
            self.budget_cny_month,
        );
        line
    }
}

/// What the ZEN decision answers, computed in plain Rust.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub bare_metal: bool,
    pub offer: &'static str,
    pub monthly_cny: i64,
    pub breakeven_hours: f64,
}

/// The peer's oracle: the ZEN decision in plain Rust.
// One branch a row of ZEN's table, as the peer writes it (rows 1 and 2 give the same offer).
#[allow(clippy::if_same_then_else)]
pub fn oracle(p: &ZenProfile) -> Expected {
    let breakeven_hours = 7920.0 / 8.0 / 1.96;
    let usage_over_breakeven = p.gpu_hours_per_gpu_month > breakeven_hours;
    let bare_metal = p.needs_multi_gpu_interconnect
        || usage_over_breakeven
        || p.compliance_isolation
        || p.custom_kernel_or_network;
    let m = p.model_params_b;
    let (offer, monthly_cny) = if p.task == "lora_finetune" && (7.0..=10.0).contains(&m) {
        ("rtx4090x8", 7920)
    } else if p.task == "inference" && (7.0..=13.0).contains(&m) {
        ("rtx4090x8", 7920)
    } else if (p.task == "full_finetune" || p.task == "pretrain")
        && (30.0..=70.0).contains(&m)
        && p.domestic_required
    {
        ("ascend910bx8", 21200)
    } else if p.task == "pretrain" && (70.0..=100.0).contains(&m) {
        ("h100x8", 86880)
    } else if p.budget_cny_month < 10000.0 {
        ("rtx4090x8", 7920)
    } else {
        ("h100x8", 86880)
    };
    Expected {
        bare_metal,
        offer,
        monthly_cny,
        breakeven_hours,
    }
}

/// Compares a `decide` JSON record with the oracle's answer, through the mapping of the rules
/// folder's header (ZEN's tolerance on the break-even hours: 1e-9).
pub fn check_record(record: &serde_json::Value, exp: &Expected) -> Result<(), String> {
    let deployment = record.pointer("/deployment").and_then(|v| v.as_str());
    let offer = record.pointer("/offer").and_then(|v| v.as_str());
    let monthly = record
        .pointer("/costs/recommended_monthly_cny")
        .and_then(serde_json::Value::as_f64);
    let breakeven = record
        .pointer("/costs/breakeven_hours_per_gpu")
        .and_then(serde_json::Value::as_f64);
    let want_deployment = if exp.bare_metal {
        "bare_metal"
    } else {
        "container"
    };
    let ok = deployment == Some(want_deployment)
        && offer == Some(exp.offer)
        && monthly == Some(exp.monthly_cny as f64)
        && breakeven.is_some_and(|b| (b - exp.breakeven_hours).abs() < 1e-9);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "got deployment {deployment:?}, offer {offer:?}, monthly {monthly:?}, \
             break-even {breakeven:?}; expected {exp:?}"
        ))
    }
}
