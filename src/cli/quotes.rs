//! `decide quotes check`: quote sheets validated against a policy before they are committed.

use std::fmt::Write as _;
use std::path::PathBuf;

use decide_engine::Policy;
use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::policy::quotes;
use decide_engine::source::{Source, file_name};

use super::Outcome;

/// Work with quote sheets (dated CSV price lists in a rules folder's `quotes/`).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Check(CheckArgs),
}

/// Check quote sheets before committing them: every row against the rules' catalog and
/// vocabulary, duplicates against the rules' own sheets, and no quote dated after `--as-of`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A FILE named like one of the rules' sheets replaces it, so a sheet already in the rules folder
can be checked again. A text cell (source, min_term, invoice, region and their _zh) with a line
break, a control character or markup is a warning at its line and column: the memo shows it
escaped, as text. Exit codes: 0 every sheet is valid (warnings or not), 1 a bad row (each is
listed with its file, line, column and what would be valid), 2 usage error.

Examples:
  decide quotes check my-rules/quotes/2026-09-04-marketplace.csv
  decide quotes check new-quotes.csv --rules my-rules --as-of 2026-10-01")]
// `--as-of` says what this command reads at the date.
#[command(mut_args(super::config::as_of_help(
    "No quote may be valid from a day after this one (YYYY-MM-DD); default today"
)))]
pub struct CheckArgs {
    /// The quote sheets to check (CSV).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
}

pub fn run(args: &Args) -> Result<Outcome> {
    match &args.command {
        Command::Check(a) => check(a),
    }
}

fn check(args: &CheckArgs) -> Result<Outcome> {
    let config = super::Config::new(&args.rules, args.as_of);
    let as_of = config.as_of();
    let mut checked = Vec::new();
    for path in &args.files {
        let source = Source::read(path, ErrorKind::Rules)?;
        if !decide_engine::policy::is_sheet(&source) {
            return Err(Error::new(
                ErrorKind::Usage,
                "expected a quote sheet, a file named *.csv",
            )
            .in_file(source.name));
        }
        checked.push(source);
    }
    let (rules, origin) = config.rules().sources()?;
    let names: Vec<&str> = checked.iter().map(|s| file_name(&s.name)).collect();
    let mut sources: Vec<Source> = rules
        .into_iter()
        .filter(|s| !(decide_engine::policy::is_sheet(s) && names.contains(&file_name(&s.name))))
        .collect();
    let first = sources.len();
    sources.extend(checked);
    let files: Vec<usize> = (first..sources.len()).collect();
    let (policy, mut errors) = Policy::from_sources_lenient(&sources, origin);
    if let Some(policy) = &policy {
        errors.extend(quotes::in_the_future(
            &sources,
            &policy.quotes,
            &files,
            as_of,
        ));
    }
    if let Some(e) = Error::many(errors) {
        return Err(e);
    }
    let policy = policy.expect("a policy when there is no error");
    for warning in quotes::text_warnings(&sources, &policy.quotes, &files) {
        super::stdio::err(&format!("{}\n\n", super::render(&warning)));
    }
    let mut out = String::new();
    for &file in &files {
        let mine: Vec<&quotes::Quote> = policy.quotes.iter().filter(|q| q.sheet == file).collect();
        let _ = writeln!(
            out,
            "{}: {} quote{}, valid",
            sources[file].name,
            mine.len(),
            if mine.len() == 1 { "" } else { "s" }
        );
        for q in mine {
            let before = policy
                .quotes
                .iter()
                .filter(|p| {
                    p.hardware == q.hardware && p.vendor == q.vendor && p.valid_from < q.valid_from
                })
                .max_by_key(|p| p.valid_from);
            let now = q.discounted().unwrap_or_default();
            let change = match before.and_then(|b| Some((b, b.discounted()?))) {
                // Both are prices as written in a sheet: equal means the same cell text.
                #[allow(clippy::float_cmp)]
                Some((b, was)) if was == now => format!("unchanged since {}", b.valid_from),
                Some((b, was)) => format!(
                    "{:+.1}% from {was} of {}",
                    (now - was) / was * 100.0,
                    b.valid_from
                ),
                None => "first quote of this offer and vendor".to_owned(),
            };
            let price = price_said(q, &policy, as_of, now);
            let _ = writeln!(
                out,
                "  line {}: {} from {}, valid from {}: {price} ({change}){}",
                q.line,
                q.hardware,
                q.vendor,
                q.valid_from,
                terms_said(q)
            );
        }
    }
    super::print(&out)?;
    Ok(Outcome::Clean)
}

/// A quote's price as `decide quotes check` says it: as compared, with the sheet's own figure
/// where it was converted to the policy's VAT basis, and in the policy's currency at the rate
/// of `as_of` (or of the quote's first day, if later) where the sheet quotes another.
fn price_said(q: &quotes::Quote, policy: &Policy, as_of: jiff::civil::Date, now: f64) -> String {
    // A price of the other VAT basis than the policy's is converted: both are shown.
    let price = match q.vat_converted() {
        Some((quoted, rate, basis)) => {
            let pct = decide_lang::group_thousands(rate * 100.0, 1);
            let pct = pct.trim_end_matches(".0");
            if basis == "included" {
                format!(
                    "{now} with VAT ({quoted} as quoted, without VAT; {pct}% VAT added so that \
                     every price compares with VAT in)"
                )
            } else {
                format!(
                    "{now} before VAT ({quoted} as quoted, with VAT; its {pct}% VAT taken out so \
                     that every price compares before VAT)"
                )
            }
        }
        None => now.to_string(),
    };
    let (Some(currency), Some(sheets)) = (q.currency(), policy.quote_sheets.as_ref()) else {
        return price;
    };
    let home = &sheets.item.currency;
    match quotes::rate_on(
        &sheets.item.exchange_rates,
        currency,
        as_of.max(q.valid_from),
    ) {
        Some(r) => format!(
            "{price} {currency}; {} {home} at {} {home} a {currency}, the rate from {} ({})",
            (now * r.rate * 100.0).round() / 100.0,
            r.rate,
            r.from,
            r.source
        ),
        None => format!("{price} {currency}"),
    }
}

/// The terms a quote sells its box on, where it is more than its month, the month is not the
/// policy's or the quote says whether the term renews itself, and how it ends early: "; terms:
/// day 400 (24 h), week 2500 (168 h), month 7920 (744 h, at least 3); renews itself unless
/// turned off; refunds 80% of unused prepaid time if ended early; 7 days' notice", and where
/// its hardware is: "; outside mainland China: ...".
fn terms_said(q: &quotes::Quote) -> String {
    let terms = q
        .fields
        .get("price")
        .and_then(|p| p.get("terms"))
        .and_then(serde_json::Value::as_array);
    let billing = q.fields.get("billing");
    let month_days = billing.and_then(|b| b.get("month_days"));
    let renews = billing
        .and_then(|b| b.get("auto_renew"))
        .and_then(serde_json::Value::as_bool);
    let mut said = String::new();
    if let Some(terms) = terms.filter(|t| t.len() > 1 || month_days.is_some()) {
        let each: Vec<String> = terms
            .iter()
            .map(|t| {
                let min = t
                    .get("min")
                    .map_or_else(String::new, |m| format!(", at least {m}"));
                format!(
                    "{} {} ({} h{min})",
                    t["unit"].as_str().unwrap_or_default(),
                    t["cny"],
                    t["length"]
                )
            })
            .collect();
        let _ = write!(said, "; terms: {}", each.join(", "));
    }
    match renews {
        Some(true) => said.push_str("; renews itself unless turned off"),
        Some(false) => said.push_str("; ends with its term"),
        None => {}
    }
    let field = |name: &str| billing.and_then(|b| b.get(name));
    if let Some(share) = field("refund_share").and_then(serde_json::Value::as_f64) {
        let _ = write!(
            said,
            "; refunds {}% of unused prepaid time if ended early",
            decide_lang::group_thousands(share * 100.0, 1).trim_end_matches(".0")
        );
    }
    if let Some(days) = field("notice_days") {
        let _ = write!(said, "; {days} days' notice");
    }
    match field("stopped_keeps_gpu").and_then(serde_json::Value::as_bool) {
        Some(true) => said.push_str("; a stopped instance keeps its GPU"),
        Some(false) => said.push_str("; a stopped instance gives its GPU back"),
        None => {}
    }
    if field("preemptible").and_then(serde_json::Value::as_bool) == Some(true) {
        said.push_str("; preemptible (spot): the vendor may take it back at short notice");
    }
    if q.fields
        .get("data_abroad")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
    {
        said.push_str("; outside mainland China: the buyer's data leaves China (`data_abroad`)");
    }
    // The VAT a quote states, at its contract's rate.
    let text = |name: &str| field(name).and_then(serde_json::Value::as_str);
    if let (Some(vat @ ("included" | "excluded")), Some(rate), Some(kind)) = (
        text("vat"),
        field("vat_rate").and_then(serde_json::Value::as_f64),
        text("contract_kind"),
    ) {
        let _ = write!(
            said,
            "; VAT {vat}, {}% ({kind} contract)",
            decide_lang::group_thousands(rate * 100.0, 1).trim_end_matches(".0")
        );
    }
    said
}
