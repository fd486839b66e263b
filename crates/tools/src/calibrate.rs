//! Calibration: the policy's serving and training models against published measurements
//! (`decide calibrate`).
//!
//! A measurement sheet (`rules/measurements/*.csv`, or a buyer's own) gives one measured figure
//! a row with the conditions it was measured under. Each row becomes a profile (the model, its
//! prompt and output lengths, the concurrency as `serving.batch`, the tensor-parallel degree,
//! the GPUs and nodes), decided on the catalog's offer of the measured accelerator family with
//! the offers' fabric set to the measured one; the policy's `outputs.calibration` says what the
//! models predict for it. Nothing here knows a formula: a row the policy cannot predict is
//! reported as not compared, with why.

use std::collections::BTreeMap;

use serde::Serialize;

use decide_engine::error::{Error, ErrorKind, Position, Result};
use decide_engine::graph::Graph;
use decide_engine::policy::quotes;
use decide_engine::source::Source;

/// The columns of a measurement sheet, in order.
pub const COLUMNS: &[&str] = &[
    "id",
    "kind",
    "hardware",
    "gpus",
    "tp",
    "nodes",
    "fabric",
    "model",
    "model_params_b",
    "active_params_b",
    "precision",
    "kv_precision",
    "stack",
    "prompt_tokens",
    "output_tokens",
    "concurrency",
    "seq_len",
    "metric",
    "value",
    "source",
    "date",
    "note",
];

/// The metrics a row may measure: serving's output tokens a second of all its GPUs, time per
/// output token and time to first token, and training's tokens a second per GPU.
pub const METRICS: &[&str] = &[
    "output_tokens_s",
    "tpot_ms",
    "ttft_ms",
    "train_tokens_s_per_gpu",
];

/// One published measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub id: String,
    /// `serving` or `training`.
    pub kind: String,
    /// The accelerator family, as the catalog's `gpu.family` names it.
    pub hardware: String,
    pub gpus: u32,
    pub tp: Option<u32>,
    pub nodes: u32,
    /// The fabric between nodes, as the catalog names fabrics (`none` on one node).
    pub fabric: String,
    pub model: String,
    pub model_params_b: f64,
    pub active_params_b: Option<f64>,
    pub precision: String,
    pub kv_precision: String,
    pub stack: String,
    pub prompt_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    pub concurrency: Option<u32>,
    /// Serving: every request was sent at once (`concurrency` written `burst`), so the figure
    /// includes the queue of prefills a steady service does not have.
    pub burst: bool,
    pub seq_len: Option<u32>,
    pub metric: String,
    pub value: f64,
    pub source: String,
    pub date: String,
    pub note: String,
    /// The sheet and line the row was read from.
    pub sheet: String,
    pub line: usize,
}

/// A measurement with what the model predicts for it.
#[derive(Debug, Clone, Serialize)]
pub struct Compared {
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The catalog offer the prediction was read on.
    pub offer: Option<String>,
    /// What the model predicts (none where it was not compared).
    pub predicted: Option<f64>,
    /// predicted ÷ measured.
    pub ratio: Option<f64>,
    /// The batch the model ran (serving), where it differs from the measured concurrency
    /// because the memory could not hold more.
    pub batch: Option<f64>,
    /// The regime the policy puts the row in (`regime` of `outputs.calibration`: serving at
    /// low load or at load, training in one box or across boxes).
    pub regime: Option<String>,
    /// Why the row was not compared.
    pub skipped: Option<String>,
}

/// The error of a group of compared rows: |predicted ÷ measured − 1|.
#[derive(Debug, Clone, Serialize)]
pub struct GroupError {
    /// `serving` or `training`, with the metric or family where the group is one.
    pub group: String,
    pub compared: usize,
    pub median: f64,
    pub p90: f64,
    pub worst: f64,
    /// The row of the worst error.
    pub worst_id: String,
}

/// Every measurement against the model, and the error by group.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub as_of: String,
    pub rows: Vec<Compared>,
    pub groups: Vec<GroupError>,
}

/// Reads a measurement sheet: every row, or every fault found (file, line, column, field).
///
/// # Errors
/// A sheet that is not CSV, a header that is not [`COLUMNS`], or a cell that is not what its
/// column takes.
pub fn read_sheet(source: &Source) -> Result<Vec<Measurement>> {
    let text = quotes::with_lf(&source.text);
    let mut reader = quotes::csv_reader(&text);
    let headers = reader
        .headers()
        .map_err(|e| quotes::csv_error(source, &e))?
        .clone();
    let header_line = quotes::header_line(&text);
    let names: Vec<&str> = headers.iter().collect();
    if names != COLUMNS {
        let index = names
            .iter()
            .zip(COLUMNS)
            .position(|(a, b)| a != b)
            .unwrap_or(names.len().min(COLUMNS.len()));
        return Err(Error::new(
            ErrorKind::Rules,
            format!(
                "the header is not a measurement sheet's: column {} is `{}`, expected `{}`",
                index + 1,
                names.get(index).copied().unwrap_or(""),
                COLUMNS.get(index).copied().unwrap_or("")
            ),
        )
        .at(
            &source.name,
            &source.text,
            Some(Position {
                line: header_line,
                column: quotes::cell_column(&text, header_line, index),
            }),
        )
        .help(format!("the columns are: {}", COLUMNS.join(","))));
    }
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                errors.push(quotes::csv_error(source, &e));
                if matches!(e.kind(), csv::ErrorKind::UnequalLengths { .. }) {
                    continue;
                }
                break;
            }
        }
        let line = record
            .position()
            .map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
        match read_row(source, &text, &record, line) {
            Ok(row) => rows.push(row),
            Err(e) => errors.push(e),
        }
    }
    if rows.is_empty() && errors.is_empty() {
        errors.push(
            Error::new(
                ErrorKind::Rules,
                "the sheet has a header but no measurements",
            )
            .at(
                &source.name,
                &source.text,
                Some(Position {
                    line: header_line,
                    column: 1,
                }),
            )
            .help("add one line per measured figure under the header, or delete the file"),
        );
    }
    match Error::many(errors) {
        Some(e) => Err(e),
        None => Ok(rows),
    }
}

/// One row of a sheet being read: its cells by column name, and errors that point at them.
struct SheetRow<'a> {
    source: &'a Source,
    text: &'a str,
    record: &'a csv::StringRecord,
    line: usize,
}

impl SheetRow<'_> {
    fn text(&self, name: &str) -> String {
        let i = COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
        self.record.get(i).unwrap_or("").to_owned()
    }

    fn fail(&self, name: &str, message: String, help: &str) -> Error {
        let i = COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
        Error::new(ErrorKind::Rules, message)
            .at(
                &self.source.name,
                &self.source.text,
                Some(Position {
                    line: self.line,
                    column: quotes::cell_column(self.text, self.line, i),
                }),
            )
            .field(name.to_owned())
            .help(help.to_owned())
    }

    /// A positive number, or none where the cell is empty and may be.
    fn number(&self, name: &str, required: bool) -> Result<Option<f64>> {
        let v = self.text(name);
        if v.is_empty() {
            if required {
                return Err(self.fail(
                    name,
                    format!("`{name}` is empty"),
                    "give a positive number",
                ));
            }
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 => Ok(Some(n)),
            _ => Err(self.fail(
                name,
                format!("`{name}` is `{v}`, not a positive number"),
                "give a positive number, such as 8 or 0.5",
            )),
        }
    }

    /// A positive whole number, or none where the cell is empty and may be.
    fn whole(&self, name: &str, required: bool) -> Result<Option<u32>> {
        match self.number(name, required)? {
            None => Ok(None),
            Some(n) if n.fract() == 0.0 && n <= f64::from(u32::MAX) => {
                // Checked just above: a whole number within u32.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(Some(n as u32))
            }
            Some(n) => Err(self.fail(
                name,
                format!("`{name}` is {n}, not a whole number"),
                "give a whole number, such as 8",
            )),
        }
    }

    /// `kind` and `metric`, checked against each other.
    fn kind_and_metric(&self) -> Result<(String, String)> {
        let kind = self.text("kind");
        if kind != "serving" && kind != "training" {
            return Err(self.fail(
                "kind",
                format!("`kind` is `{kind}`"),
                "`serving` or `training`",
            ));
        }
        let metric = self.text("metric");
        if !METRICS.contains(&metric.as_str()) {
            return Err(self.fail(
                "metric",
                format!("`metric` is `{metric}`"),
                &format!("one of: {}", METRICS.join(", ")),
            ));
        }
        if (kind == "training") != (metric == "train_tokens_s_per_gpu") {
            return Err(self.fail(
                "metric",
                format!("a {kind} row cannot measure `{metric}`"),
                "training rows measure `train_tokens_s_per_gpu`; serving rows `output_tokens_s`, `tpot_ms` or `ttft_ms`",
            ));
        }
        Ok((kind, metric))
    }
}

fn read_row(
    source: &Source,
    text: &str,
    record: &csv::StringRecord,
    line: usize,
) -> Result<Measurement> {
    let cells = SheetRow {
        source,
        text,
        record,
        line,
    };
    let (kind, metric) = cells.kind_and_metric()?;
    let id = cells.text("id");
    if id.is_empty() {
        return Err(cells.fail(
            "id",
            "`id` is empty".to_owned(),
            "give each row a short unique name",
        ));
    }
    let serving = kind == "serving";
    let burst = cells.text("concurrency") == "burst";
    let concurrency = if burst {
        None
    } else {
        cells.whole("concurrency", false)?
    };
    if serving && concurrency.is_none() && !burst {
        return Err(cells.fail(
            "concurrency",
            "a serving row's `concurrency` is empty".to_owned(),
            "give the requests in flight, or `burst` for a run that sent every request at once",
        ));
    }
    Ok(Measurement {
        id,
        hardware: cells.text("hardware"),
        gpus: cells.whole("gpus", true)?.unwrap_or(1),
        tp: cells.whole("tp", false)?,
        nodes: cells.whole("nodes", false)?.unwrap_or(1),
        fabric: cells.text("fabric"),
        model: cells.text("model"),
        model_params_b: cells.number("model_params_b", true)?.unwrap_or(1.0),
        active_params_b: cells.number("active_params_b", false)?,
        precision: cells.text("precision"),
        kv_precision: cells.text("kv_precision"),
        stack: cells.text("stack"),
        prompt_tokens: cells.whole("prompt_tokens", serving)?,
        output_tokens: cells.whole("output_tokens", serving)?,
        concurrency,
        burst,
        seq_len: cells.whole("seq_len", false)?,
        kind,
        metric,
        value: cells.number("value", true)?.unwrap_or(1.0),
        source: cells.text("source"),
        date: cells.text("date"),
        note: cells.text("note"),
        sheet: source.name.clone(),
        line,
    })
}

/// The measurements shipped with the embedded rules.
///
/// # Errors
/// A shipped sheet that does not read (a fault of the build).
pub fn shipped() -> Result<Vec<Measurement>> {
    let mut rows = Vec::new();
    for (name, text) in decide_engine::policy::embedded_measurements() {
        let source = Source::new(
            format!(
                "rules/{}/{name}",
                decide_engine::policy::MEASUREMENTS_FOLDER
            ),
            *text,
        );
        rows.extend(read_sheet(&source)?);
    }
    Ok(rows)
}

/// The measurements of a rules folder: every sheet of its `measurements/`, in name order (none
/// where it has no such folder).
///
/// # Errors
/// The folder or a sheet that cannot be read, or a sheet that does not read as one.
pub fn in_folder(rules: &std::path::Path) -> Result<Vec<Measurement>> {
    let dir = rules.join(decide_engine::policy::MEASUREMENTS_FOLDER);
    let files = match decide_engine::source::files_in(&dir, quotes::SHEET_EXTENSIONS) {
        Ok(files) => files,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(Error::new(
                ErrorKind::Rules,
                format!("cannot read the measurements folder: {e}"),
            )
            .in_file(dir.display().to_string()));
        }
    };
    let mut rows = Vec::new();
    for file in files {
        rows.extend(read_sheet(&Source::read(&file, ErrorKind::Rules)?)?);
    }
    Ok(rows)
}

/// Every measurement against what `graph`'s models predict at `as_of`.
///
/// # Errors
/// A policy without `outputs.calibration`, or one that no longer compiles with a measured
/// fabric.
pub fn calibrate(
    graph: &Graph,
    rows: Vec<Measurement>,
    as_of: jiff::civil::Date,
) -> Result<Calibration> {
    if graph.policy().outputs.item.calibration.is_none() {
        return Err(Error::new(
            ErrorKind::Rules,
            "the policy says nothing of what its models predict for a measurement",
        )
        .field("outputs.calibration")
        .help("add `outputs.calibration:` to policy.yaml: an expression giving, per offer, a map of metric to predicted value (see the embedded rules' calibration.yaml)"));
    }
    let mut variants: BTreeMap<String, Graph> = BTreeMap::new();
    let mut compared = Vec::new();
    for row in rows {
        let fabric = if row.nodes > 1 {
            row.fabric.clone()
        } else {
            String::new()
        };
        if !fabric.is_empty() && !variants.contains_key(&fabric) {
            variants.insert(fabric.clone(), on_fabric(graph, &fabric)?);
        }
        let on = variants.get(&fabric).unwrap_or(graph);
        compared.push(compare(on, row, as_of));
    }
    let groups = groups(&compared);
    Ok(Calibration {
        as_of: as_of.to_string(),
        rows: compared,
        groups,
    })
}

/// `graph`'s policy with every offer's fabric set to `fabric`, compiled again.
fn on_fabric(graph: &Graph, fabric: &str) -> Result<Graph> {
    let mut policy = graph.policy().clone();
    for offer in &mut policy.offers {
        offer.item.fields.insert(
            "fabric".to_owned(),
            serde_json::Value::String(fabric.to_owned()),
        );
    }
    Graph::compile_in(policy, graph.lang())
}

/// The catalog offer of the measured family: the first, in catalog order.
fn offer_of(graph: &Graph, family: &str) -> Option<String> {
    graph
        .policy()
        .offers
        .iter()
        .find(|o| {
            o.item
                .fields
                .get("gpu")
                .and_then(|g| g.get("family"))
                .and_then(serde_json::Value::as_str)
                == Some(family)
        })
        .map(|o| o.item.id.clone())
}

fn compare(graph: &Graph, row: Measurement, as_of: jiff::civil::Date) -> Compared {
    let skip = |row: Measurement, offer: Option<String>, why: String| Compared {
        measurement: row,
        offer,
        predicted: None,
        ratio: None,
        batch: None,
        regime: None,
        skipped: Some(why),
    };
    let Some(offer) = offer_of(graph, &row.hardware) else {
        let why = format!("no offer of the catalog has the `{}` family", row.hardware);
        return skip(row, None, why);
    };
    if row.burst {
        let why = "every request was sent at once: the figure includes a queue of prefills (a mean time to first token of seconds), not the steady service the model sizes".to_owned();
        return skip(row, Some(offer), why);
    }
    let profile = profile_of(&row);
    let source = Source::new(format!("{}:{}", row.sheet, row.line), profile);
    let decided = crate::decide_text(
        graph,
        &source,
        decide_engine::Syntax::Json,
        as_of,
        crate::Detail::LEAN,
    );
    let decision = match decided {
        Ok((_, evaluation)) => evaluation.decision,
        Err(e) => {
            let why = format!("the profile of this row is not decided: {}", e.message());
            return skip(row, Some(offer), why);
        }
    };
    let of_offer = decision
        .calibration
        .as_ref()
        .map(|c| c.get_attr(&offer))
        .filter(|v| !v.is_undefined())
        .filter(|v| !v.is_undefined() && !v.is_none());
    let read = |name: &str| of_offer.as_ref().and_then(|v| v.get_attr(name).as_number());
    let Some(predicted) = read(&row.metric) else {
        let why = "the model predicts nothing for it (no replica of this tensor-parallel degree holds the model and a sequence)".to_owned();
        return skip(row, Some(offer), why);
    };
    let batch = read("batch").filter(|b| {
        row.concurrency
            .is_some_and(|c| (f64::from(c) - b).abs() > 0.5)
    });
    let regime = of_offer
        .as_ref()
        .and_then(|v| v.get_attr("regime").as_str().map(str::to_owned));
    Compared {
        ratio: Some(predicted / row.value),
        measurement: row,
        offer: Some(offer),
        predicted: Some(predicted),
        batch,
        regime,
        skipped: None,
    }
}

/// The profile a row describes, as one JSON object.
fn profile_of(row: &Measurement) -> String {
    use serde_json::json;
    let training = row.kind == "training";
    let mut profile = json!({
        "name": row.id,
        "workload": {
            "task": if training { "pretrain" } else { "inference" },
            "model_params_b": row.model_params_b,
        },
        "usage": {"gpus": row.gpus, "hours_per_gpu_month": 720},
    });
    let workload = &mut profile["workload"];
    if !row.precision.is_empty() {
        workload["precision"] = json!(row.precision);
    }
    if !training && !row.kv_precision.is_empty() {
        workload["kv_precision"] = json!(row.kv_precision);
    }
    if let Some(active) = row.active_params_b.filter(|a| *a < row.model_params_b) {
        workload["active_params_b"] = json!(active);
    }
    if training {
        workload["parallelism"] = json!(["data", "tensor", "pipeline"]);
        if row.nodes > 1 {
            workload["nodes"] = json!(row.nodes);
        }
        if let Some(seq) = row.seq_len {
            workload["context_tokens"] = json!(seq);
        }
    } else {
        profile["serving"] = json!({
            "prompt_tokens": row.prompt_tokens.unwrap_or(1),
            "output_tokens": row.output_tokens.unwrap_or(1),
            "batch": row.concurrency.unwrap_or(1),
            "tensor_parallel": row.tp.unwrap_or(1),
        });
    }
    profile.to_string()
}

/// The error of every compared row by kind, by kind and metric, by kind and family, by kind and
/// the weights' number format, and by the policy's regime, alone and by family.
fn groups(rows: &[Compared]) -> Vec<GroupError> {
    let mut by: BTreeMap<String, Vec<(f64, &str)>> = BTreeMap::new();
    for row in rows {
        let Some(ratio) = row.ratio else { continue };
        let m = &row.measurement;
        let error = (ratio - 1.0).abs();
        let mut keys = vec![
            m.kind.clone(),
            format!("{} {}", m.kind, m.metric),
            format!("{} on {}", m.kind, m.hardware),
        ];
        if !m.precision.is_empty() {
            keys.push(format!("{} at {}", m.kind, m.precision));
        }
        if let Some(regime) = &row.regime {
            keys.push(regime.clone());
            keys.push(format!("{regime} on {}", m.hardware));
        }
        for key in keys {
            by.entry(key).or_default().push((error, m.id.as_str()));
        }
    }
    by.into_iter()
        .map(|(group, mut errors)| {
            errors.sort_by(|a, b| a.0.total_cmp(&b.0));
            let at = |q: f64| {
                // The nearest-rank quantile: the smallest error at or above the share q.
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss
                )]
                let rank = ((q * errors.len() as f64).ceil() as usize).clamp(1, errors.len());
                errors[rank - 1].0
            };
            let (worst, worst_id) = errors[errors.len() - 1];
            GroupError {
                group,
                compared: errors.len(),
                median: at(0.5),
                p90: at(0.9),
                worst,
                worst_id: worst_id.to_owned(),
            }
        })
        .collect()
}

/// The calibration as text: every row, then the error by group.
#[must_use]
pub fn text(calibration: &Calibration) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "The models against {} published measurements (prices at {}): model ÷ measured.\n",
        calibration.rows.len(),
        calibration.as_of
    );
    let _ = writeln!(
        out,
        "{:<44} {:<10} {:<22} {:>12} {:>12} {:>7}",
        "measurement", "hardware", "metric", "measured", "model", "ratio"
    );
    for row in &calibration.rows {
        let m = &row.measurement;
        match (row.predicted, row.ratio) {
            (Some(p), Some(r)) => {
                let _ = write!(
                    out,
                    "{:<44} {:<10} {:<22} {:>12} {:>12} {:>7.2}",
                    m.id,
                    m.hardware,
                    m.metric,
                    figure(m.value),
                    figure(p),
                    r
                );
                if let Some(b) = row.batch {
                    let _ = write!(
                        out,
                        "  (the memory holds a batch of {b}, not {})",
                        m.concurrency.unwrap_or(0)
                    );
                }
                out.push('\n');
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{:<44} {:<10} {:<22} {:>12} {:>12}  not compared: {}",
                    m.id,
                    m.hardware,
                    m.metric,
                    figure(m.value),
                    "-",
                    row.skipped.as_deref().unwrap_or("")
                );
            }
        }
    }
    let _ = writeln!(out, "\nError |model ÷ measured − 1| by group:\n");
    let _ = writeln!(
        out,
        "{:<36} {:>8} {:>8} {:>8} {:>8}  worst row",
        "group", "compared", "median", "p90", "worst"
    );
    for g in &calibration.groups {
        let _ = writeln!(
            out,
            "{:<36} {:>8} {:>7.0}% {:>7.0}% {:>7.0}%  {}",
            g.group,
            g.compared,
            g.median * 100.0,
            g.p90 * 100.0,
            g.worst * 100.0,
            g.worst_id
        );
    }
    out
}

/// A figure with as many decimals as it needs to be read (three significant digits at least).
fn figure(value: f64) -> String {
    if value >= 100.0 {
        decide_lang::group_thousands(value.round(), 0)
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}
