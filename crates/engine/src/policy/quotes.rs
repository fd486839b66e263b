//! Quote sheets: dated CSV price lists (`quotes/*.csv`), read with located errors, and the catalog they price at a date.
//!
//! A sheet is one vendor's quotes of one day, one row per quote (the columns are
//! [`QuoteRecord`]'s fields, documented in `docs/quotes.md` and `schema/quote-sheet.schema.json`).
//! Every row is checked against the catalog (the hardware ids) and the policy's
//! `quote_sheets:` vocabulary (currency, units, VAT, commitments); a bad cell is an error with
//! the file, line, column, the column's name, what would be valid and a snippet, like a YAML
//! error. Resolving the sheets at a date gives, per hardware and vendor, the quote in force
//! (the latest whose `valid_from` is on or before the date) with the quotes before it; each
//! becomes one offer: the catalog's hardware fields plus `price`, `billing`, `source`, `as_of`
//! (the quote's first day), `vendor`, `hardware`, `quote` (sheet and line), `history` (the
//! earlier quotes, oldest first) and `previous` (the one just before). The vendor the catalog
//! names in `id_vendor` keeps the catalog id (a hardware quoted by one vendor needs none); every
//! other vendor's offer is `<id>@<vendor>`, so ids never change as sheets are added.

use std::collections::HashMap;
use std::sync::OnceLock;

use jiff::civil::Date;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as J};

use super::rules::{ExchangeRate, QuoteSheets};
use super::{Located, Offer};
use crate::error::{Error, ErrorKind, Position};
use crate::source::Source;

/// The extension of quote sheets.
pub const SHEET_EXTENSIONS: &[&str] = &["csv"];

/// The folder of a rules folder that holds its quote sheets.
pub const SHEETS_FOLDER: &str = "quotes";

/// The fields of an offer that its quote gives, when the policy has quote sheets: a catalog
/// entry may not write them.
pub const QUOTED_FIELDS: &[&str] = &[
    "price",
    "billing",
    "source",
    "as_of",
    "vendor",
    "vendor_name",
    "hardware",
    "quote",
    "history",
    "previous",
    "data_abroad",
];

/// The paths below an offer that a quote may give or leave out ([`offer_fields`] and
/// [`resolve`] write them): the typechecker knows them as an offer's fields even at a date
/// where no quote gives them (`price.daily_cny` on a sheet with no daily prices, say).
pub const QUOTED_PATHS: &[&str] = &[
    "price.unit",
    "price.list_cny",
    "price.discounted_cny",
    "price.daily_cny",
    "price.terms",
    "price.term_units",
    "price.least_hourly_cny",
    "price.quoted_list_cny",
    "price.quoted_discounted_cny",
    "price.currency",
    "price.quoted_amount",
    "price.quoted_list_amount",
    "price.exchange.currency",
    "price.exchange.rate",
    "price.exchange.from",
    "price.exchange.source",
    "billing.unit",
    "billing.discount_commits",
    "billing.min_term",
    "billing.min_months",
    "billing.month_days",
    "billing.month_hours",
    "billing.auto_renew",
    "billing.refund_share",
    "billing.notice_days",
    "billing.stopped_keeps_gpu",
    "billing.preemptible",
    "billing.vat",
    "billing.vat_rate",
    "billing.vat_basis",
    "billing.contract_kind",
    "billing.invoice",
    "region",
    "data_abroad",
    "source",
    "id",
    "as_of",
    "vendor",
    "vendor_name",
    "hardware",
    "quote.sheet",
    "quote.line",
    "history",
    "previous.as_of",
    "previous.currency",
    "previous.quoted_amount",
    "previous.quoted_list_amount",
    "previous.exchange.currency",
    "previous.exchange.rate",
    "previous.exchange.from",
    "previous.exchange.source",
    "previous.unit",
    "previous.list_cny",
    "previous.discounted_cny",
    "previous.daily_cny",
    "previous.terms",
    "previous.term_units",
    "previous.least_hourly_cny",
    "previous.quoted_list_cny",
    "previous.quoted_discounted_cny",
    "previous.quote.sheet",
    "previous.quote.line",
];

/// One row of a quote sheet as written: every cell as text (numbers and dates are read, and
/// refused with their column, by [`read_sheet`]). Empty cells of optional columns, and
/// optional columns left out, are absent.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    title = "decide quote sheet row",
    description = "One row of a quote sheet (`quotes/*.csv` in a rules folder): a CSV file with a header line naming these columns, in any order, one quote per line. Lines starting with `#` are comments.",
    extend("$id" = "https://decide.invalid/schema/quote-sheet.schema.json")
)]
pub struct QuoteRecord {
    /// The hardware quoted: an offer id of the catalog (`offers[].id`, e.g.
    /// `rtx4090-x8-sichuan2`).
    pub offer: String,
    /// Who quotes it: lowercase letters, digits and dashes (e.g. `marketplace`). The vendor
    /// with the hardware's earliest quote keeps the catalog id; another vendor's offer is
    /// `<offer>@<vendor>`.
    pub vendor: String,
    /// The vendor's name as a memo says it, where it is not the id (`jygpu.com`). The offer's
    /// `vendor_name` (default: `vendor`).
    #[serde(default)]
    pub vendor_name: Option<QuoteText>,
    /// The vendor's name in Chinese (default: `vendor_name`).
    #[serde(default)]
    pub vendor_name_zh: Option<QuoteText>,
    /// Where the vendor delivers it, when not the catalog's `region` (English or plain text).
    #[serde(default)]
    pub region: Option<QuoteText>,
    /// The region in Chinese (default: `region`).
    #[serde(default)]
    pub region_zh: Option<QuoteText>,
    /// Whether the vendor runs the hardware outside mainland China, so that the buyer's data
    /// leaves China (a global cloud): `yes`, or `no` and left out where it stays. The offer's
    /// `data_abroad`; the policy considers such an offer only where the profile allows it
    /// (`requirements.data_abroad_allowed`).
    #[serde(default)]
    pub data_abroad: Option<String>,
    /// What the prices are for: one of the policy's `quote_sheets.price_units` (e.g. `month`
    /// for a whole box, `gpu_hour` for one container GPU). The offer's `price.unit`.
    pub unit: String,
    /// The list price per `unit`, at least 0.01. The offer's `price.list_cny`.
    pub list_price: String,
    /// The price paid per `unit` (e.g. the monthly-payment price), at least 0.01 and at most
    /// the list price. The offer's `price.discounted_cny`.
    pub discounted_price: String,
    /// A whole box's price by the day, at least 0.01, where the vendor lists one. The offer's
    /// `price.daily_cny`.
    #[serde(default)]
    pub daily_price: Option<String>,
    /// A whole box's price by the hour (按量), at least 0.01, where the vendor sells one so.
    /// One of the offer's `price.terms` (unit `hour`).
    #[serde(default)]
    pub hourly_price: Option<String>,
    /// A whole box's price for a week (包周, 7 days), at least 0.01. One of the offer's
    /// `price.terms` (unit `week`).
    #[serde(default)]
    pub weekly_price: Option<String>,
    /// A whole box's price for a year (包年), at least 0.01. One of the offer's `price.terms`
    /// (unit `year`).
    #[serde(default)]
    pub yearly_price: Option<String>,
    /// The fewest hours sold where the box is sold by the hour (`hourly_price`): a whole
    /// number from 1 to 1000. The hour term's `min` among the offer's `price.terms`.
    #[serde(default)]
    pub min_hours: Option<String>,
    /// The fewest days sold where the box is sold by the day (`daily_price`, e.g. `3` for a
    /// 包日 of at least three days): a whole number from 1 to 1000. The day term's `min`.
    #[serde(default)]
    pub min_days: Option<String>,
    /// The fewest weeks sold where the box is sold by the week (`weekly_price`): a whole
    /// number from 1 to 1000. The week term's `min`.
    #[serde(default)]
    pub min_weeks: Option<String>,
    /// The fewest years sold where the box is sold by the year (`yearly_price`): a whole
    /// number from 1 to 1000. The year term's `min`.
    #[serde(default)]
    pub min_years: Option<String>,
    /// How long the vendor's month is, where its monthly term is not the policy's month
    /// (`quote_sheets.term_hours.month`): a number of days from 28 to 31 (`30`: a month of 30
    /// days, as many Chinese vendors bill 包月), or `calendar` (a calendar month, 730 hours on
    /// average: 365 days over 12). The offer's `billing.month_days`.
    #[serde(default)]
    pub month_days: Option<String>,
    /// Whether the term renews itself at its end unless the buyer turns it off (自动续费): `yes`
    /// or `no`; left out where the vendor does not say. The offer's `billing.auto_renew`; a
    /// term that renews is a checklist item (turn it off when the job ends).
    #[serde(default)]
    pub auto_renew: Option<String>,
    /// Whether the capacity is preemptible (spot, 抢占式实例): `yes` where the vendor may take
    /// it back at short notice for a lower price, `no` or left out where not. The offer's
    /// `billing.preemptible`; the policy adds its interruption assumption to a job's time on
    /// it, and considers it only for a job that checkpoints and never for a service.
    #[serde(default)]
    pub preemptible: Option<String>,
    /// The currency of the prices: the policy's `quote_sheets.currency` (e.g. `CNY`).
    pub currency: String,
    /// What a bill is made of: one of `quote_sheets.billing_units` (default: `unit`). The
    /// offer's `billing.unit`.
    #[serde(default)]
    pub billing_unit: Option<String>,
    /// What the discounted price commits the buyer to: one of
    /// `quote_sheets.discount_commits`. The offer's `billing.discount_commits`.
    pub discount_commits: String,
    /// The shortest contract, in words (e.g. `1 month, paid ahead`). The offer's
    /// `billing.min_term`.
    pub min_term: QuoteText,
    /// The shortest contract in Chinese (default: `min_term`).
    #[serde(default)]
    pub min_term_zh: Option<QuoteText>,
    /// The shortest contract in whole months, where the vendor bills at least that many
    /// months (e.g. `3`): a whole number from 1 to 120. Costing bills every plan at least
    /// these months of the offer's monthly bill, and the memo says so. Left out: no minimum
    /// beyond one billing unit. The offer's `billing.min_months`.
    #[serde(default)]
    pub min_months: Option<String>,
    /// Whether the prices include VAT: one of `quote_sheets.vat` (e.g. `unknown`). The offer's
    /// `billing.vat`.
    pub vat: String,
    /// What the contract is for VAT: one of the policy's `quote_sheets.vat_rates` (`service`,
    /// an information-technology service at 6%; `lease`, a lease of tangible movable property
    /// at 13%); default the policy's `contract_kind`. The offer's `billing.contract_kind`.
    #[serde(default)]
    pub contract_kind: Option<String>,
    /// The VAT rate the vendor states for this contract, as a share from 0 to 0.2, where it is
    /// not its kind's rate (`quote_sheets.vat_rates`). A price of the other VAT basis than the
    /// policy's (`quote_sheets.vat_basis`) is converted at it. The offer's `billing.vat_rate`
    /// (default: the contract kind's).
    #[serde(default)]
    pub vat_rate: Option<String>,
    /// The share of unused prepaid time the vendor refunds when the contract ends early, from
    /// 0 (nothing) to 1 (all of it, pro rata), where the vendor states it. The offer's
    /// `billing.refund_share`; the checklist quotes it.
    #[serde(default)]
    pub refund_share: Option<String>,
    /// The days of notice the vendor asks before the contract ends early, 0 to 365. The offer's
    /// `billing.notice_days`.
    #[serde(default)]
    pub notice_days: Option<String>,
    /// Whether a stopped instance keeps its GPU (`yes`) or gives it back and may wait for one
    /// when started again (`no`), where the vendor says. The offer's
    /// `billing.stopped_keeps_gpu`.
    #[serde(default)]
    pub stopped_keeps_gpu: Option<String>,
    /// The invoice issued (e.g. a VAT special invoice), or `unknown`. The offer's
    /// `billing.invoice`.
    pub invoice: QuoteText,
    /// The first day the quote holds, `YYYY-MM-DD`: it is used from that day until the same
    /// vendor's next quote for the same hardware. The offer's `as_of`.
    pub valid_from: String,
    /// Where the quote comes from (a vendor page, an e-mail, an article's section): the memo
    /// cites it. The offer's `source`.
    pub source: QuoteText,
    /// The source in Chinese (default: `source`).
    #[serde(default)]
    pub source_zh: Option<QuoteText>,
}

/// A vendor's free text in a quote sheet's cell: a region, a term, an invoice, a source. Every
/// text column of [`QuoteRecord`] is one, and this type is the one way such a cell reaches an
/// offer: [`offer_fields`] writes it with [`Quoted::text`], which marks its place among the
/// offer's [`Offer::texts`], and the compiled graph gives each marked field to the rules and the
/// memos as Markdown-escaped text (the same escape as the `md` filter), so no template prints it
/// raw however it is written. The record and `decide offers --format json` keep it as written
/// (it serializes as its text).
/// Its schema is a string of `contentMediaType: text/plain`, which is how [`text_columns`] (and
/// with it `decide quotes check`'s warnings) knows every text column without a list of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct QuoteText(String);

impl QuoteText {
    /// Whether the cell is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The media type [`QuoteText`]'s schema gives its cells: text, never markup.
const TEXT_MEDIA_TYPE: &str = "text/plain";

impl JsonSchema for QuoteText {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QuoteText".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "contentMediaType": TEXT_MEDIA_TYPE})
    }
}

/// The record's schema, generated once.
fn record_schema() -> &'static J {
    static SCHEMA: OnceLock<J> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(QuoteRecord)).unwrap_or_default()
    })
}

/// The columns of vendor text ([`QuoteText`]), in the record's order, read off its schema.
pub fn text_columns() -> &'static [String] {
    static TEXT: OnceLock<Vec<String>> = OnceLock::new();
    TEXT.get_or_init(|| {
        record_schema()["properties"]
            .as_object()
            .map(|p| {
                p.iter()
                    .filter(|(_, s)| s["contentMediaType"] == TEXT_MEDIA_TYPE)
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// The columns a sheet may have, and whether each is required, read off [`QuoteRecord`]'s
/// schema so the two never disagree.
pub fn columns() -> &'static [(String, bool)] {
    static COLUMNS: OnceLock<Vec<(String, bool)>> = OnceLock::new();
    COLUMNS.get_or_init(|| {
        let schema = record_schema();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|a| a.iter().filter_map(J::as_str).collect())
            .unwrap_or_default();
        schema["properties"]
            .as_object()
            .map(|p| {
                p.keys()
                    .map(|k| (k.clone(), required.contains(&k.as_str())))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// One quote read from a sheet: who quotes which hardware from when, and the offer fields it
/// gives.
#[derive(Debug, Clone)]
pub struct Quote {
    /// The index of its sheet among the policy's sources.
    pub sheet: usize,
    /// The line of its row.
    pub line: usize,
    /// Where its `valid_from` cell is.
    pub valid_from_at: Position,
    pub hardware: String,
    pub vendor: String,
    pub valid_from: Date,
    /// `price`, `billing`, `source` and, when given, `region`.
    pub fields: Map<String, J>,
    /// The places in `fields` of vendor text ([`QuoteText`]), as dotted paths
    /// (`billing.invoice`): what the offer's [`Offer::texts`] says.
    pub texts: Vec<&'static str>,
    /// The row as written, column by column (empty cells left out), for `decide diff`.
    pub cells: Vec<(String, String)>,
    /// The row's non-empty text cells ([`text_columns`]): the column, where the cell is, its text.
    pub text_cells: Vec<(String, Position, String)>,
}

impl Quote {
    /// The price paid per unit.
    #[must_use]
    pub fn discounted(&self) -> Option<f64> {
        self.fields.get("price")?.get("discounted_cny")?.as_f64()
    }

    /// The currency the sheet priced the quote in, where it is not the policy's (its amounts
    /// are in it until [`resolve`] converts them).
    #[must_use]
    pub fn currency(&self) -> Option<&str> {
        self.fields.get("price")?.get("currency")?.as_str()
    }

    /// Where the sheet's price is on the other VAT basis than the policy's and was converted
    /// to compare it (`quote_sheets.vat_basis`): the price paid as the sheet wrote it, the
    /// rate, and the basis it was converted to (`included`: VAT added; `excluded`: taken out).
    #[must_use]
    pub fn vat_converted(&self) -> Option<(f64, f64, &str)> {
        let quoted = self
            .fields
            .get("price")?
            .get("quoted_discounted_cny")?
            .as_f64()?;
        let billing = self.fields.get("billing")?;
        let rate = billing.get("vat_rate")?.as_f64()?;
        let basis = billing.get("vat_basis")?.as_str()?;
        Some((quoted, rate, basis))
    }
}

/// Reads one sheet: every quote whose row is valid, and an error for every bad row (all of
/// them, so one run shows every fault).
#[must_use]
pub fn read_sheet(
    sources: &[Source],
    sheet: usize,
    vocabulary: &QuoteSheets,
    hardware: &[&str],
) -> (Vec<Quote>, Vec<Error>) {
    let source = &sources[sheet];
    let text = &source.text;
    let err = |line: usize, column: usize, message: String| {
        Error::new(ErrorKind::Rules, message).at(
            &source.name,
            text,
            Some(Position { line, column }),
        )
    };
    if let Some(e) = sheet_name_error(source) {
        return (Vec::new(), vec![e]);
    }
    if text.lines().all(|l| {
        let l = l.trim().trim_start_matches('\u{feff}');
        l.is_empty() || l.starts_with('#')
    }) {
        return (
            Vec::new(),
            vec![
                Error::new(
                    ErrorKind::Rules,
                    "file is empty, expected a CSV header line",
                )
                .in_file(&source.name)
                .help(header_help()),
            ],
        );
    }
    let lf = with_lf(text);
    let mut reader = csv_reader(&lf);
    let headers = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => return (Vec::new(), vec![csv_error(source, &e)]),
    };
    let header_line = header_line(text);
    let mut errors = check_headers(&headers, |index, message| {
        err(header_line, cell_column(text, header_line, index), message)
    });
    if !errors.is_empty() {
        return (Vec::new(), errors);
    }
    let mut quotes = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                errors.push(csv_error(source, &e));
                // A row with the wrong number of cells is reported and skipped; anything
                // else (bad UTF-8 cannot happen: the text is a `str`) ends the sheet.
                if matches!(e.kind(), csv::ErrorKind::UnequalLengths { .. }) {
                    continue;
                }
                break;
            }
        }
        if let Some(quote) = read_row(
            sources,
            sheet,
            &headers,
            &record,
            vocabulary,
            hardware,
            &mut errors,
        ) {
            quotes.push(quote);
        }
    }
    if quotes.is_empty() && errors.is_empty() {
        errors.push(
            err(
                header_line,
                1,
                "the sheet has a header but no quotes".to_owned(),
            )
            .help("add one line per quote under the header, or delete the file"),
        );
    }
    (quotes, errors)
}

/// Reads the sheets `sheets` of `sources` in order, their errors added to `errors`, up to
/// [`MAX_QUOTES`] quotes in all (the sheets after the one that passes it are not read).
pub fn read_sheets(
    sources: &[Source],
    sheets: &[usize],
    vocabulary: &QuoteSheets,
    hardware: &[&str],
    errors: &mut Vec<Error>,
) -> Vec<Quote> {
    let mut all_quotes = Vec::new();
    for &sheet in sheets {
        let (mut q, mut e) = read_sheet(sources, sheet, vocabulary, hardware);
        all_quotes.append(&mut q);
        errors.append(&mut e);
        if all_quotes.len() > MAX_QUOTES {
            errors.push(
                Error::new(
                    ErrorKind::Rules,
                    format!(
                        "the quote sheets hold more than {MAX_QUOTES} quotes (the limit); the \
                         sheets after this one are not read"
                    ),
                )
                .in_file(&sources[sheet].name)
                .help(
                    "keep the quotes a decision can use: remove old sheets, or split the \
                     catalog into policies by team or region",
                ),
            );
            break;
        }
    }
    all_quotes
}

/// One record of a sheet: its quote, or its errors added to `errors`.
fn read_row(
    sources: &[Source],
    sheet: usize,
    headers: &csv::StringRecord,
    record: &csv::StringRecord,
    vocabulary: &QuoteSheets,
    hardware: &[&str],
    errors: &mut Vec<Error>,
) -> Option<Quote> {
    let source = &sources[sheet];
    let text = &source.text;
    let line = record
        .position()
        .map_or(1, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
    let at = |column_name: &str| {
        let index = headers.iter().position(|h| h == column_name).unwrap_or(0);
        Position {
            line,
            column: cell_column(text, line, index),
        }
    };
    let row: QuoteRecord = match record.deserialize(Some(headers)) {
        Ok(row) => row,
        Err(e) => {
            errors.push(csv_error(source, &e));
            return None;
        }
    };
    let cells: Vec<(String, String)> = headers
        .iter()
        .zip(record.iter())
        .filter(|(_, v)| !v.is_empty())
        .map(|(h, v)| (h.to_owned(), v.to_owned()))
        .collect();
    let text_cells = cells
        .iter()
        .filter(|(h, _)| text_columns().contains(h))
        .map(|(h, v)| (h.clone(), at(h), v.clone()))
        .collect();
    let mut faults: Vec<(Position, Error)> = Vec::new();
    let mut fail = |column: &str, message: String, help: String| {
        let position = at(column);
        faults.push((
            position,
            Error::new(ErrorKind::Rules, message)
                .at(&source.name, text, Some(position))
                .field(column)
                .help(help),
        ));
    };
    let checked = check_row(&row, vocabulary, hardware, &mut fail);
    // A row's faults in the order of its cells.
    faults.sort_by_key(|(p, _)| p.column);
    errors.extend(faults.into_iter().map(|(_, e)| e));
    let (given, valid_from) = checked?;
    Some(Quote {
        sheet,
        line,
        valid_from_at: at("valid_from"),
        hardware: row.offer,
        vendor: row.vendor,
        valid_from,
        fields: given.fields,
        texts: given.texts,
        cells,
        text_cells,
    })
}

/// Every column known, every required column there, none twice.
/// The most columns a sheet's header may have: the sheet's own columns are fewer than 20.
pub const MAX_COLUMNS: usize = 64;

/// The most quotes a rules folder's sheets may hold in all: each becomes an offer at some date,
/// and a policy compares every offer with every other.
pub const MAX_QUOTES: usize = 10_000;

fn check_headers(headers: &csv::StringRecord, err: impl Fn(usize, String) -> Error) -> Vec<Error> {
    let known = columns();
    if headers.len() > MAX_COLUMNS {
        // Checked before the columns one by one, so a header of any width costs one pass.
        return vec![
            err(
                0,
                format!(
                    "the header has {} columns; a quote sheet has at most {MAX_COLUMNS}",
                    headers.len()
                ),
            )
            .help(header_help()),
        ];
    }
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (index, name) in headers.iter().enumerate() {
        if !known.iter().any(|(c, _)| c == name) {
            let mut e = err(index, format!("unknown column `{name}`"))
                .field(name)
                .help(header_help());
            if let Some(s) = crate::error::suggest(name, known.iter().map(|(c, _)| c.as_str())) {
                e = e.help(format!("did you mean `{s}`?"));
            }
            errors.push(e);
        } else if !seen.insert(name) {
            errors.push(err(index, format!("the column `{name}` is given twice")).field(name));
        }
    }
    let missing: Vec<&str> = known
        .iter()
        .filter(|(c, required)| *required && !headers.iter().any(|h| h == c))
        .map(|(c, _)| c.as_str())
        .collect();
    if !missing.is_empty() {
        errors.push(
            err(
                0,
                format!(
                    "the header lacks the required column{} {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .help(header_help()),
        );
    }
    errors
}

fn header_help() -> String {
    let names: Vec<String> = columns()
        .iter()
        .map(|(c, required)| {
            if *required {
                c.clone()
            } else {
                format!("{c} (optional)")
            }
        })
        .collect();
    format!(
        "a quote sheet's first line names its columns: {}",
        names.join(", ")
    )
}

/// Checks one row's cells; the offer fields and first day of a valid row.
fn check_row(
    row: &QuoteRecord,
    vocabulary: &QuoteSheets,
    hardware: &[&str],
    fail: &mut impl FnMut(&str, String, String),
) -> Option<(Quoted, Date)> {
    let names_ok = check_names(row, vocabulary, hardware, fail);
    let prices = check_prices(row, fail);
    let valid_from = check_date(row, fail);
    let texts_ok = check_texts(row, fail);
    let min_months = check_min_months(row, fail);
    let vat_rate = check_vat_rate(row, fail);
    let month_days = check_month_days(row, fail);
    let auto_renew = check_auto_renew(row, fail);
    let currency_ok = valid_from.is_none_or(|d| check_currency(row, vocabulary, d, fail));
    let (prices, valid_from) = (prices?, valid_from?);
    let (min_months, vat_rate) = (min_months.ok()?, vat_rate.ok()?);
    let contract_kind = row
        .contract_kind
        .clone()
        .unwrap_or_else(|| vocabulary.contract_kind.clone());
    let vat_rate = vat_rate.or_else(|| vocabulary.vat_rates.get(&contract_kind).copied());
    let exit = check_exit(row, fail);
    let data_abroad = check_yes_no(
        row.data_abroad.as_deref(),
        "data_abroad",
        "write `yes` where the vendor runs the hardware outside mainland China, so that the \
         buyer's data leaves China (a global cloud), `no` or nothing where it stays in China",
        fail,
    );
    let (month_days, auto_renew) = (month_days.ok()?, auto_renew.ok()?);
    let data_abroad = data_abroad.ok()?;
    let exit = exit.ok()?;
    let lengths = check_term_units(row, &prices, vocabulary, month_days, fail).ok()?;
    (names_ok && texts_ok && currency_ok).then(|| {
        let terms = Terms {
            min_months,
            contract_kind,
            vat_rate,
            month_days,
            auto_renew,
            exit,
            data_abroad,
            lengths,
        };
        (offer_fields(row, &prices, &terms, vocabulary), valid_from)
    })
}

/// The terms of a row read from its cells: the minimum months, the VAT rate, the month's
/// length, auto-renewal, and the hours of each term priced (the row's unit first).
struct Terms {
    min_months: Option<u32>,
    /// What the contract is for VAT: the row's `contract_kind`, else the policy's default.
    contract_kind: String,
    vat_rate: Option<f64>,
    month_days: Option<MonthDays>,
    auto_renew: Option<bool>,
    exit: Exit,
    /// Whether the hardware is outside mainland China (`data_abroad`).
    data_abroad: Option<bool>,
    lengths: Vec<(String, u32)>,
}

/// A vendor's month: a number of days, or the calendar's.
#[derive(Clone, Copy)]
enum MonthDays {
    Days(u32),
    Calendar,
}

impl MonthDays {
    /// Its hours: a calendar month lasts 730 on average (365 days × 24 over 12).
    fn hours(self) -> u32 {
        match self {
            MonthDays::Days(d) => d * 24,
            MonthDays::Calendar => 365 * 24 / 12,
        }
    }
}

/// The `month_days` cell: absent, a number of days from 28 to 31, or `calendar`.
fn check_month_days(
    row: &QuoteRecord,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<MonthDays>, ()> {
    if row.month_days.as_deref() == Some("calendar") {
        return Ok(Some(MonthDays::Calendar));
    }
    check_number(
        row.month_days.as_deref(),
        "month_days",
        28..=31,
        "a month's days",
        "write how many days the vendor's month lasts (`30` for a 30-day 包月), or `calendar` \
         for a calendar month; leave the cell empty for the policy's month",
        fail,
    )
    .map(|d| d.map(MonthDays::Days))
}

/// The `auto_renew` cell: absent, `yes` or `no`.
fn check_auto_renew(
    row: &QuoteRecord,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<bool>, ()> {
    check_yes_no(
        row.auto_renew.as_deref(),
        "auto_renew",
        "write `yes` where the term renews itself unless turned off (自动续费), `no` where it \
         ends with its term; leave the cell empty where the vendor does not say",
        fail,
    )
}

/// An optional `yes`/`no` cell of `column`: absent, or whether it says yes; otherwise the
/// fault (with `help`) is reported and `Err` given.
fn check_yes_no(
    cell: Option<&str>,
    column: &str,
    help: &str,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<bool>, ()> {
    match cell {
        None => Ok(None),
        Some("yes") => Ok(Some(true)),
        Some("no") => Ok(Some(false)),
        Some(other) => {
            fail(
                column,
                format!("`{other}` is not `yes` or `no`"),
                help.to_owned(),
            );
            Err(())
        }
    }
}

/// The exit cells: the refunded share (0 to 1), the days of notice (0 to 365), whether a
/// stopped instance keeps its GPU.
fn check_exit(row: &QuoteRecord, fail: &mut impl FnMut(&str, String, String)) -> Result<Exit, ()> {
    let refund_share = check_number(
        row.refund_share.as_deref(),
        "refund_share",
        0.0..=1.0,
        "a share",
        "write the share of unused prepaid time refunded on early termination: `0.8` for 80%, \
         `0` for none; leave the cell empty where the vendor does not say",
        fail,
    );
    let notice_days = check_number(
        row.notice_days.as_deref(),
        "notice_days",
        0..=365,
        "a number of days",
        "write the days of notice asked before the contract ends early, e.g. `7`",
        fail,
    );
    let stopped_keeps_gpu = check_yes_no(
        row.stopped_keeps_gpu.as_deref(),
        "stopped_keeps_gpu",
        "write `yes` where a stopped instance keeps its GPU, `no` where it gives it back and \
         may wait for one when started again",
        fail,
    );
    let preemptible = check_yes_no(
        row.preemptible.as_deref(),
        "preemptible",
        "write `yes` for spot capacity the vendor may take back at short notice (抢占式实例), \
         `no` or nothing for capacity that stays the buyer's for its term",
        fail,
    );
    Ok(Exit {
        refund_share: refund_share?,
        notice_days: notice_days?,
        stopped_keeps_gpu: stopped_keeps_gpu?,
        preemptible: preemptible?,
    })
}

/// How a quote's contract ends early, where the vendor says: by the buyer (a refund, notice,
/// a stopped instance) or by the vendor (preemptible capacity taken back).
#[derive(Clone, Copy)]
struct Exit {
    refund_share: Option<f64>,
    notice_days: Option<u32>,
    stopped_keeps_gpu: Option<bool>,
    preemptible: Option<bool>,
}

/// The hours of each term the row prices: its unit's, where the policy's
/// `quote_sheets.term_hours` knows it (a month as long as `month_days` says), then each term
/// column's. A term column, or `month_days`, on a row whose unit is not a term (a container
/// GPU by the GPU-hour), or a term the policy does not know, is refused at its cell.
fn check_term_units(
    row: &QuoteRecord,
    prices: &Prices,
    vocabulary: &QuoteSheets,
    month_days: Option<MonthDays>,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Vec<(String, u32)>, ()> {
    let known = || {
        vocabulary
            .term_hours
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let hours = |unit: &str| {
        let h = vocabulary.term_hours.get(unit).copied()?;
        Some(match month_days {
            Some(m) if unit == "month" => m.hours(),
            _ => h,
        })
    };
    let Some(own) = hours(&row.unit) else {
        let mut stray: Vec<&str> = prices.terms.iter().map(|t| t.column).collect();
        if row.month_days.is_some() {
            stray.push("month_days");
        }
        for column in &stray {
            fail(
                column,
                format!(
                    "`{column}` prices a term of a box, and this row's unit `{}` is not a term",
                    row.unit
                ),
                format!(
                    "a term's price goes on a row priced by a term (the policy's \
                     `quote_sheets.term_hours`: {}); leave it empty on this row",
                    known()
                ),
            );
        }
        return if stray.is_empty() {
            Ok(Vec::new())
        } else {
            Err(())
        };
    };
    let mut lengths = vec![(row.unit.clone(), own)];
    let mut ok = true;
    for &TermPrice { unit, column, .. } in &prices.terms {
        match hours(unit) {
            Some(h) if unit != row.unit => lengths.push((unit.to_owned(), h)),
            Some(_) => {
                ok = false;
                fail(
                    column,
                    format!("`{column}` prices the row's own unit `{unit}` a second time"),
                    "the row's own unit is priced by `list_price` and `discounted_price`; \
                     leave this cell empty"
                        .to_owned(),
                );
            }
            None => {
                ok = false;
                fail(
                    column,
                    format!("the policy knows no term `{unit}` for `{column}`"),
                    format!(
                        "the policy's `quote_sheets.term_hours` names the terms: {}",
                        known()
                    ),
                );
            }
        }
    }
    if ok { Ok(lengths) } else { Err(()) }
}

/// The highest VAT rate a quote may state: above every rate of PRC VAT (13% at most since
/// 2019), so that a percentage written as a whole number (`13`) is caught.
const MAX_VAT_RATE: f64 = 0.2;

/// The `vat_rate` cell: absent, or a share from 0 to [`MAX_VAT_RATE`] (`Err` once the fault
/// is reported).
fn check_vat_rate(
    row: &QuoteRecord,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<f64>, ()> {
    check_number(
        row.vat_rate.as_deref(),
        "vat_rate",
        0.0..=MAX_VAT_RATE,
        "a VAT rate",
        "write the rate as a share: `0.06` for 6% (a technical service), `0.13` for 13% (a \
         lease of tangible movable property); leave the cell empty for the policy's rate",
        fail,
    )
}

/// The most months a minimum term may be: the most a profile's `usage.months` may be.
const MAX_MIN_MONTHS: u32 = 120;

/// The `min_months` cell: absent, or a whole number of months from 1 to [`MAX_MIN_MONTHS`]
/// (`Err` once the fault is reported).
fn check_min_months(
    row: &QuoteRecord,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<u32>, ()> {
    check_number(
        row.min_months.as_deref(),
        "min_months",
        1..=MAX_MIN_MONTHS,
        "a number of months",
        "write the shortest contract as whole months, e.g. `3` for a 3-month minimum (leave \
         the cell empty when there is none beyond one billing unit), and keep the words in \
         `min_term`",
        fail,
    )
}

/// An optional number cell of `column`: absent, or a number in `range`; otherwise the fault
/// ("`TEXT` is not WHAT from LOW to HIGH", with `help`) is reported and `Err` given.
fn check_number<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    cell: Option<&str>,
    column: &str,
    range: std::ops::RangeInclusive<T>,
    what: &str,
    help: &str,
    fail: &mut impl FnMut(&str, String, String),
) -> Result<Option<T>, ()> {
    let Some(text) = cell else {
        return Ok(None);
    };
    match text.parse::<T>() {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => {
            fail(
                column,
                format!(
                    "`{text}` is not {what} from {} to {}",
                    range.start(),
                    range.end()
                ),
                help.to_owned(),
            );
            Err(())
        }
    }
}

/// The `currency` cell: the policy's currency, or one `quote_sheets.exchange_rates` has a rate
/// for on or before the quote's first day `valid_from` (so that the quote can be converted on
/// every day it is in force).
fn check_currency(
    row: &QuoteRecord,
    vocabulary: &QuoteSheets,
    valid_from: Date,
    fail: &mut impl FnMut(&str, String, String),
) -> bool {
    let currency = row.currency.as_str();
    if currency == vocabulary.currency {
        return true;
    }
    if !is_currency_code(currency) {
        fail(
            "currency",
            format!("`{currency}` is not a currency code"),
            format!(
                "write the ISO 4217 code of the prices' currency in capitals: `{}` (the \
                 policy's), or another with a rate in `quote_sheets.exchange_rates`, e.g. `USD`",
                vocabulary.currency
            ),
        );
        return false;
    }
    if rate_on(&vocabulary.exchange_rates, currency, valid_from).is_some() {
        return true;
    }
    let later: Vec<&str> = vocabulary
        .exchange_rates
        .iter()
        .filter(|r| r.currency == currency)
        .map(|r| r.from.as_str())
        .collect();
    fail(
        "currency",
        format!("no {currency} exchange rate on or before {valid_from}, the quote's first day"),
        if later.is_empty() {
            format!(
                "add a rate to `quote_sheets.exchange_rates`: `{{currency: {currency}, from: \
                 {valid_from}, rate: ..., source: ...}}` ({} for one {currency}, and where the \
                 rate comes from), or convert the prices to {} and write `{}`",
                vocabulary.currency, vocabulary.currency, vocabulary.currency
            )
        } else {
            format!(
                "`quote_sheets.exchange_rates` has {currency} only from {}: add a rate from \
                 {valid_from} or earlier",
                later.join(", ")
            )
        },
    );
    false
}

/// Whether `code` has the shape of an ISO 4217 currency code: three capital letters.
fn is_currency_code(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// The rate of `currency` in force on `date`: the latest of `rates` for it whose `from` is on
/// or before `date`.
#[must_use]
pub fn rate_on<'a>(
    rates: &'a [ExchangeRate],
    currency: &str,
    date: Date,
) -> Option<&'a ExchangeRate> {
    rates
        .iter()
        .filter(|r| r.currency == currency)
        .filter_map(|r| Some((r.from.parse::<Date>().ok()?, r)))
        .filter(|(from, _)| *from <= date)
        .max_by_key(|(from, _)| *from)
        .map(|(_, r)| r)
}

/// What is wrong with the policy's exchange rates: each a currency code other than the
/// policy's, a date, a rate above 0, and no currency twice on one day.
#[must_use]
pub fn exchange_rate_errors(source: &Source, vocabulary: &QuoteSheets) -> Vec<Error> {
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, r) in vocabulary.exchange_rates.iter().enumerate() {
        let mut fault = |message: String, help: String| {
            errors.push(
                Error::new(ErrorKind::Rules, message)
                    .in_file(&source.name)
                    .field(format!("quote_sheets.exchange_rates[{i}]"))
                    .help(help),
            );
        };
        if !is_currency_code(&r.currency) || r.currency == vocabulary.currency {
            fault(
                format!("`{}` is not a currency to convert from", r.currency),
                format!(
                    "an ISO 4217 code in capitals other than the policy's {}, e.g. `USD`",
                    vocabulary.currency
                ),
            );
        }
        let date = r.from.parse::<Date>().ok().filter(|_| r.from.len() == 10);
        if date.is_none() {
            fault(
                format!("`from` `{}` is not a date", r.from),
                "a date is written YYYY-MM-DD, e.g. 2026-09-01".to_owned(),
            );
        }
        if !(r.rate.is_finite() && r.rate > 0.0) {
            fault(
                format!("`rate` {} is not a rate above 0", r.rate),
                format!(
                    "write how many {} one {} costs, e.g. 7.1",
                    vocabulary.currency, r.currency
                ),
            );
        }
        if r.source.trim().is_empty() {
            fault(
                "`source` is empty".to_owned(),
                "say where the rate comes from, e.g. the day's central parity rate".to_owned(),
            );
        }
        if let Some(d) = date
            && !seen.insert((r.currency.clone(), d))
        {
            fault(
                format!("{} has two rates from {d}", r.currency),
                "keep one rate a currency a day".to_owned(),
            );
        }
    }
    errors
}

/// The offer, the vendor, the words of the policy's vocabulary and the currency.
fn check_names(
    row: &QuoteRecord,
    vocabulary: &QuoteSheets,
    hardware: &[&str],
    fail: &mut impl FnMut(&str, String, String),
) -> bool {
    let mut ok = true;
    if !hardware.contains(&row.offer.as_str()) {
        ok = false;
        let mut help = format!("the catalog's offers: {}", hardware.join(", "));
        if let Some(s) = crate::error::suggest(&row.offer, hardware.iter().copied()) {
            help = format!("did you mean `{s}`? {help}");
        }
        let what = if row.offer.is_empty() {
            "the offer is empty".to_owned()
        } else {
            format!("unknown offer `{}`", row.offer)
        };
        fail("offer", what, help);
    }
    if !is_vendor(&row.vendor) {
        ok = false;
        fail(
            "vendor",
            format!("`{}` is not a vendor name", row.vendor),
            "a vendor is lowercase letters, digits and dashes, e.g. `marketplace`".to_owned(),
        );
    }
    // Without a `billing_unit` cell the bill is made of the price's unit, checked once.
    let billing_unit = row
        .billing_unit
        .as_deref()
        .map(|b| ("billing_unit", b, &vocabulary.billing_units, "billing unit"));
    let contract_kinds: Vec<String> = vocabulary.vat_rates.keys().cloned().collect();
    let words = [
        Some(("unit", row.unit.as_str(), &vocabulary.price_units, "unit")),
        billing_unit,
        Some(("vat", row.vat.as_str(), &vocabulary.vat, "VAT status")),
        row.contract_kind.as_deref().map(|k| {
            (
                "contract_kind",
                k,
                &contract_kinds,
                "contract kind (for VAT)",
            )
        }),
        Some((
            "discount_commits",
            row.discount_commits.as_str(),
            &vocabulary.discount_commits,
            "commitment",
        )),
    ];
    for (column, value, allowed, what) in words.into_iter().flatten() {
        if allowed.iter().any(|a| a == value) {
            continue;
        }
        ok = false;
        let mut help = format!(
            "{what} is one of: {} (the policy's `quote_sheets:`)",
            allowed.join(", ")
        );
        if let Some(s) = crate::error::suggest(value, allowed.iter().map(String::as_str)) {
            help = format!("did you mean `{s}`? {help}");
        }
        fail(column, format!("unknown {what} `{value}`"), help);
    }
    ok
}

/// The list, discounted and term prices of a row, each at least 0.01.
struct Prices {
    list: serde_json::Number,
    discounted: serde_json::Number,
    /// The prices of the other terms given (`hourly_price`, `daily_price`, `weekly_price`,
    /// `yearly_price`).
    terms: Vec<TermPrice>,
}

/// One term a row prices besides its own unit.
struct TermPrice {
    /// The unit of `quote_sheets.term_hours` it prices.
    unit: &'static str,
    /// The column that prices it.
    column: &'static str,
    price: serde_json::Number,
    /// The fewest of it that may be bought where any is (its `min_*` column).
    min: Option<u32>,
}

/// The term columns of a row: each price column with the unit of `quote_sheets.term_hours`
/// it prices and the column of its minimum.
const TERM_COLUMNS: &[(&str, &str, &str)] = &[
    ("hourly_price", "hour", "min_hours"),
    ("daily_price", "day", "min_days"),
    ("weekly_price", "week", "min_weeks"),
    ("yearly_price", "year", "min_years"),
];

/// The most of a term a minimum may ask for (a thousand days, weeks or years).
const MAX_TERM_MIN: u32 = 1000;

impl QuoteRecord {
    /// The cell of a term column or of its minimum ([`TERM_COLUMNS`]).
    fn term_cell(&self, column: &str) -> Option<&str> {
        match column {
            "hourly_price" => self.hourly_price.as_deref(),
            "daily_price" => self.daily_price.as_deref(),
            "weekly_price" => self.weekly_price.as_deref(),
            "yearly_price" => self.yearly_price.as_deref(),
            "min_hours" => self.min_hours.as_deref(),
            "min_days" => self.min_days.as_deref(),
            "min_weeks" => self.min_weeks.as_deref(),
            "min_years" => self.min_years.as_deref(),
            _ => None,
        }
    }
}

/// The least a price may be: one fen, the smallest amount a bill in yuan charges. A price
/// below it (`5e-324`) passed "greater than 0" and was recommended at ¥0.00 a month.
pub const MIN_PRICE_CNY: f64 = 0.01;

/// One price cell: a number of at least [`MIN_PRICE_CNY`] (whole numbers stay whole in the
/// record).
fn price(
    column: &str,
    text: &str,
    fail: &mut impl FnMut(&str, String, String),
) -> Option<serde_json::Number> {
    const FORM: &str =
        "written plainly with a dot for decimals, without currency sign or thousands separators";
    let number = text
        .parse::<i64>()
        .ok()
        .map(serde_json::Number::from)
        .or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .and_then(serde_json::Number::from_f64)
        });
    match number {
        Some(n) if n.as_f64().is_some_and(|v| v >= MIN_PRICE_CNY) => Some(n),
        Some(_) => {
            fail(
                column,
                format!("the price {text} is less than {MIN_PRICE_CNY} (one fen)"),
                format!(
                    "a price is an amount of at least {MIN_PRICE_CNY}, the least a bill can \
                     charge, {FORM}; a free offer is not a quote"
                ),
            );
            None
        }
        None => {
            let what = if text.is_empty() {
                "the price is empty".to_owned()
            } else {
                format!("`{text}` is not a price")
            };
            fail(
                column,
                what,
                format!("a price is a number of at least {MIN_PRICE_CNY}, {FORM}"),
            );
            None
        }
    }
}

fn check_prices(row: &QuoteRecord, fail: &mut impl FnMut(&str, String, String)) -> Option<Prices> {
    let list = price("list_price", &row.list_price, fail);
    let discounted = price("discounted_price", &row.discounted_price, fail);
    let mut terms = Vec::new();
    let mut terms_ok = true;
    for &(column, unit, min_column) in TERM_COLUMNS {
        let min = check_number(
            row.term_cell(min_column),
            min_column,
            1..=MAX_TERM_MIN,
            "a whole number",
            &format!(
                "write the fewest {unit}s the vendor sells where it sells any, e.g. `3` for a \
                 {unit} term of at least three; leave it empty where one is enough"
            ),
            fail,
        );
        match (row.term_cell(column), min) {
            (Some(cell), Ok(min)) => match price(column, cell, fail) {
                Some(price) => terms.push(TermPrice {
                    unit,
                    column,
                    price,
                    min,
                }),
                None => terms_ok = false,
            },
            (None, Ok(Some(_))) => {
                terms_ok = false;
                fail(
                    min_column,
                    format!(
                        "`{min_column}` is the fewest of a {unit} term, and this row sells no {unit} (`{column}` is empty)"
                    ),
                    format!("give the {unit}'s price in `{column}`, or leave `{min_column}` empty"),
                );
            }
            (Some(cell), Err(())) => {
                let _ = price(column, cell, fail);
                terms_ok = false;
            }
            (None, _) => {}
        }
    }
    let (list, discounted) = (list?, discounted?);
    if !terms_ok {
        return None;
    }
    if discounted.as_f64() > list.as_f64() {
        fail(
            "discounted_price",
            format!("the discounted price {discounted} is above the list price {list}"),
            "`discounted_price` is what is paid after discounts, at most `list_price`".to_owned(),
        );
        return None;
    }
    Some(Prices {
        list,
        discounted,
        terms,
    })
}

fn check_date(row: &QuoteRecord, fail: &mut impl FnMut(&str, String, String)) -> Option<Date> {
    match row.valid_from.parse::<Date>() {
        Ok(d) if row.valid_from.len() == 10 => Some(d),
        _ => {
            fail(
                "valid_from",
                format!("`{}` is not a date", row.valid_from),
                "a date is written YYYY-MM-DD, e.g. 2026-09-04".to_owned(),
            );
            None
        }
    }
}

fn check_texts(row: &QuoteRecord, fail: &mut impl FnMut(&str, String, String)) -> bool {
    let mut ok = true;
    for (column, text, help) in [
        (
            "min_term",
            &row.min_term,
            "write the shortest contract in words, e.g. `1 month, paid ahead`",
        ),
        (
            "source",
            &row.source,
            "say where the quote comes from: the vendor's page, the e-mail, the article's section",
        ),
    ] {
        if text.is_empty() {
            ok = false;
            fail(column, "the cell is empty".to_owned(), help.to_owned());
        }
    }
    ok
}

/// What is wrong with the policy's VAT words: `vat` must hold `included` and `excluded` (the
/// two statuses a price is converted between), `vat_basis` must be one of them, every rate of
/// `vat_rates` a share from 0 to [`MAX_VAT_RATE`], and `contract_kind` one of its kinds.
#[must_use]
pub fn vat_errors(source: &Source, vocabulary: &QuoteSheets) -> Vec<Error> {
    let mut errors = Vec::new();
    let field = |message: String, help: String| {
        Error::new(ErrorKind::Rules, message)
            .in_file(&source.name)
            .field("quote_sheets")
            .help(help)
    };
    for status in VAT_BASES {
        if !vocabulary.vat.iter().any(|v| v == status) {
            errors.push(field(
                format!("`vat` lacks `{status}`"),
                format!(
                    "`vat` lists what a quote may say of VAT, and must hold {}: add `{status}`",
                    VAT_BASES.join(" and ")
                ),
            ));
        }
    }
    if !VAT_BASES.contains(&vocabulary.vat_basis.as_str()) {
        errors.push(field(
            format!(
                "`vat_basis` `{}` is not a basis prices are compared on",
                vocabulary.vat_basis
            ),
            "write `vat_basis: included` (prices with VAT in) or `vat_basis: excluded` (before \
             VAT, for a buyer who deducts the input VAT)"
                .to_owned(),
        ));
    }
    for (kind, rate) in &vocabulary.vat_rates {
        if !(0.0..=MAX_VAT_RATE).contains(rate) {
            errors.push(field(
                format!("`vat_rates.{kind}` {rate} is not a rate from 0 to {MAX_VAT_RATE}"),
                "write the rate as a share: 0.06 for 6%".to_owned(),
            ));
        }
    }
    if !vocabulary.vat_rates.contains_key(&vocabulary.contract_kind) {
        let kinds: Vec<&str> = vocabulary.vat_rates.keys().map(String::as_str).collect();
        errors.push(field(
            format!(
                "`contract_kind` `{}` is not one of `vat_rates`",
                vocabulary.contract_kind
            ),
            format!(
                "the kinds with a rate: {}",
                if kinds.is_empty() {
                    "none (add `vat_rates: {service: 0.06, lease: 0.13}`)".to_owned()
                } else {
                    kinds.join(", ")
                }
            ),
        ));
    }
    errors
}

/// The two VAT statuses a price is converted between, and the bases it may be compared on.
const VAT_BASES: [&str; 2] = ["included", "excluded"];

/// `amount` times `factor` (VAT added or taken out), to the fen (whole amounts stay whole).
fn scaled(amount: &serde_json::Number, factor: f64) -> serde_json::Number {
    let fen = (amount.as_f64().unwrap_or(0.0) * factor * 100.0).round();
    if fen % 100.0 == 0.0 && fen.abs() < 9.0e15 {
        serde_json::Number::from((fen / 100.0) as i64)
    } else {
        serde_json::Number::from_f64(fen / 100.0).unwrap_or_else(|| amount.clone())
    }
}

/// An offer's fields as a quote gives them, and the places among them of vendor text.
#[derive(Debug, Default)]
struct Quoted {
    fields: Map<String, J>,
    texts: Vec<&'static str>,
}

impl Quoted {
    /// Writes `value` at the dotted `path`, making the maps above it.
    fn set(&mut self, path: &str, value: J) {
        let mut map = &mut self.fields;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                map.insert(part.to_owned(), value);
                return;
            }
            let below = map
                .entry(part.to_owned())
                .or_insert_with(|| J::Object(Map::new()));
            if !below.is_object() {
                *below = J::Object(Map::new());
            }
            let J::Object(below) = below else {
                unreachable!("made a map just above")
            };
            map = below;
        }
    }

    /// Writes a vendor's text at `path` (`{en, zh}` when a Chinese version differs), marked as
    /// such: the only way a [`QuoteText`] gets into an offer.
    fn text(&mut self, path: &'static str, en: &QuoteText, zh: Option<&QuoteText>) {
        let value = match zh {
            Some(zh) if *zh != *en => serde_json::json!({"en": en.0, "zh": zh.0}),
            _ => J::from(en.0.clone()),
        };
        self.set(path, value);
        self.texts.push(path);
    }
}

/// The offer fields a valid row gives: `price`, `billing`, `source` and maybe `region`. A
/// price the policy says leaves VAT out (`quote_sheets.vat_added`) gets the quote's `vat_rate`
/// (else the policy's) added, so that every comparison is between prices with VAT in; the
/// sheet's figures are kept beside.
fn offer_fields(
    row: &QuoteRecord,
    prices: &Prices,
    terms: &Terms,
    vocabulary: &QuoteSheets,
) -> Quoted {
    let vat_rate = terms.vat_rate;
    let basis = vocabulary.vat_basis.as_str();
    // A price of the other basis is converted: VAT added to compare with VAT in, taken out to
    // compare before it. A price whose VAT is not stated is compared as quoted.
    let known = VAT_BASES.contains(&row.vat.as_str());
    let factor = vat_rate.filter(|_| known && row.vat != basis).map(|r| {
        if basis == "included" {
            1.0 + r
        } else {
            1.0 / (1.0 + r)
        }
    });
    let billed =
        |n: &serde_json::Number| J::Number(factor.map_or_else(|| n.clone(), |f| scaled(n, f)));
    let mut given = Quoted::default();
    let id = QuoteText(row.vendor.clone());
    let name = row
        .vendor_name
        .as_ref()
        .filter(|n| !n.is_empty())
        .unwrap_or(&id);
    let name_zh = row.vendor_name_zh.as_ref().filter(|n| !n.is_empty());
    given.text("vendor_name", name, name_zh);
    if let Some(region) = &row.region {
        given.text("region", region, row.region_zh.as_ref());
    }
    if let Some(abroad) = terms.data_abroad {
        given.set("data_abroad", J::from(abroad));
    }
    given.set("price.unit", J::from(row.unit.clone()));
    // Amounts stay in the sheet's currency until the date they are priced at is known
    // ([`resolve`] converts them).
    if row.currency != vocabulary.currency {
        given.set("price.currency", J::from(row.currency.clone()));
    }
    given.set("price.list_cny", billed(&prices.list));
    given.set("price.discounted_cny", billed(&prices.discounted));
    // The daily price again by its own name, for rules that read it so.
    if let Some(daily) = prices.terms.iter().find(|t| t.column == "daily_price") {
        given.set("price.daily_cny", billed(&daily.price));
    }
    set_terms(&mut given, row, prices, terms, &billed);
    if factor.is_some() {
        given.set("price.quoted_list_cny", J::Number(prices.list.clone()));
        given.set(
            "price.quoted_discounted_cny",
            J::Number(prices.discounted.clone()),
        );
    }
    given.set(
        "billing.unit",
        J::from(row.billing_unit.as_deref().unwrap_or(&row.unit)),
    );
    given.set(
        "billing.discount_commits",
        J::from(row.discount_commits.clone()),
    );
    given.text("billing.min_term", &row.min_term, row.min_term_zh.as_ref());
    if let Some(months) = terms.min_months {
        given.set("billing.min_months", J::from(months));
    }
    if let Some(m) = terms.month_days {
        given.set(
            "billing.month_days",
            match m {
                MonthDays::Days(d) => J::from(d),
                MonthDays::Calendar => J::from("calendar"),
            },
        );
        given.set("billing.month_hours", J::from(m.hours()));
    }
    set_renewal_and_exit(&mut given, terms);
    given.set("billing.vat", J::from(row.vat.clone()));
    given.set(
        "billing.contract_kind",
        J::from(terms.contract_kind.clone()),
    );
    given.set("billing.vat_basis", J::from(basis));
    if let Some(r) = vat_rate {
        given.set(
            "billing.vat_rate",
            serde_json::Number::from_f64(r).map_or(J::Null, J::Number),
        );
    }
    given.text("billing.invoice", &row.invoice, None);
    given.text("source", &row.source, row.source_zh.as_ref());
    given
}

/// The offer's `billing.auto_renew` and its exit terms (`billing.refund_share`,
/// `billing.notice_days`, `billing.stopped_keeps_gpu`, `billing.preemptible`), where the row
/// states them.
fn set_renewal_and_exit(given: &mut Quoted, terms: &Terms) {
    if let Some(renews) = terms.auto_renew {
        given.set("billing.auto_renew", J::from(renews));
    }
    if let Some(share) = terms
        .exit
        .refund_share
        .and_then(serde_json::Number::from_f64)
    {
        given.set("billing.refund_share", J::Number(share));
    }
    if let Some(days) = terms.exit.notice_days {
        given.set("billing.notice_days", J::from(days));
    }
    if let Some(keeps) = terms.exit.stopped_keeps_gpu {
        given.set("billing.stopped_keeps_gpu", J::from(keeps));
    }
    if let Some(spot) = terms.exit.preemptible {
        given.set("billing.preemptible", J::from(spot));
    }
}

/// A day of notice in the terms' lengths (`quote_sheets.term_hours` counts hours).
const HOURS_A_DAY: u32 = 24;

/// The offer's `price.terms` (each `{unit, length, cny, min}`, shortest first: the row's own
/// unit at the price paid, a month with its minimum, then each term column's price with its
/// minimum, each
/// `billed` with VAT as the row's prices are) and `price.term_units`, where the row's unit is
/// a term. Where the quote refunds unused prepaid time (`refund_share` above 0), each term
/// says so: `refund` (the share) and `notice` (its days in hours), which `cover` reads to end
/// the last term bought early.
fn set_terms(
    given: &mut Quoted,
    row: &QuoteRecord,
    prices: &Prices,
    terms: &Terms,
    billed: &dyn Fn(&serde_json::Number) -> J,
) {
    if terms.lengths.is_empty() {
        return;
    }
    let mut sold_on: Vec<(String, u32, J, Option<u32>)> = terms
        .lengths
        .iter()
        .map(|(unit, hours)| {
            let (price, min) = if *unit == row.unit {
                (&prices.discounted, terms.min_months)
            } else {
                prices
                    .terms
                    .iter()
                    .find(|t| t.unit == unit)
                    .map_or((&prices.discounted, None), |t| (&t.price, t.min))
            };
            (unit.clone(), *hours, billed(price), min)
        })
        .collect();
    sold_on.sort_by_key(|(_, hours, _, _)| *hours);
    given.set(
        "price.term_units",
        J::Array(
            sold_on
                .iter()
                .map(|(unit, ..)| J::from(unit.clone()))
                .collect(),
        ),
    );
    let list = sold_on
        .into_iter()
        .map(|(unit, hours, cny, min)| {
            let mut term = serde_json::json!({"unit": unit, "length": hours, "cny": cny});
            if let Some(m) = min {
                term["min"] = J::from(m);
            }
            if let Some(share) = terms.exit.refund_share.filter(|s| *s > 0.0) {
                term["refund"] = J::from(share);
                term["notice"] = J::from(terms.exit.notice_days.unwrap_or(0) * HOURS_A_DAY);
            }
            term
        })
        .collect::<Vec<J>>();
    if let Some(least) = least_hourly(&list) {
        given.set("price.least_hourly_cny", J::Number(least));
    }
    given.set("price.terms", J::Array(list));
}

/// The least an hour costs on any of `terms` (each `{cny, length}`): what a box busy all the
/// time costs an hour.
fn least_hourly(terms: &[J]) -> Option<serde_json::Number> {
    terms
        .iter()
        .filter_map(|t| Some(t.get("cny")?.as_f64()? / t.get("length")?.as_f64()?))
        .min_by(f64::total_cmp)
        .and_then(serde_json::Number::from_f64)
}

/// A catalog title names the catalog's region (`H100 80G ×8 (Ningxia zone 1)`): a vendor that
/// quotes the hardware in another region (`region`) gets that region in the title, in each
/// language, so that every title, table and checklist item names where this vendor delivers.
/// A title that does not name the catalog's region is kept. Whether the title changed.
fn retitle(fields: &mut Map<String, J>, catalog: &J, quoted: &J) -> bool {
    let words = |value: &J, lang: &str| -> Option<String> {
        match value {
            J::String(text) => Some(text.clone()),
            J::Object(map) => map
                .get(lang)
                .or_else(|| map.get("en"))
                .and_then(J::as_str)
                .map(str::to_owned),
            _ => None,
        }
    };
    let swap = |title: &str, lang: &str| -> Option<String> {
        let (from, to) = (words(catalog, lang)?, words(quoted, lang)?);
        (!from.is_empty() && from != to && title.contains(&from))
            .then(|| title.replacen(&from, &to, 1))
    };
    let Some(title) = fields.get_mut("title") else {
        return false;
    };
    match title {
        J::String(text) => match swap(text, "en") {
            Some(new) => {
                *text = new;
                true
            }
            None => false,
        },
        J::Object(map) => {
            let mut changed = false;
            for (lang, text) in map.iter_mut() {
                if let Some(new) = text.as_str().and_then(|t| swap(t, lang)) {
                    *text = J::from(new);
                    changed = true;
                }
            }
            changed
        }
        _ => false,
    }
}

/// The error of a sheet whose file name is not plain (letters, digits, spaces and `-_.()+`):
/// the memo and `decide offers` show the name in a code span, where it must stay text.
fn sheet_name_error(source: &Source) -> Option<Error> {
    let file = crate::source::file_name(&source.name);
    let plain = file
        .chars()
        .all(|c| c.is_alphanumeric() || c == ' ' || "-_.()+".contains(c));
    (!plain).then(|| {
        Error::new(
            ErrorKind::Rules,
            "a quote sheet's file name may hold letters, digits, spaces and `-_.()+` only",
        )
        .in_file(crate::error::visible(&source.name).into_owned())
        .help("rename it as the shipped sheets are named, e.g. 2026-09-04-marketplace.csv")
    })
}

fn is_vendor(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `text` with LF line endings. What a spreadsheet saves ends its lines with CRLF, and the csv
/// crate counts a CRLF after a comment line as no line at all: read with LF endings, every
/// record keeps its line.
pub fn with_lf(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A reader of a CSV sheet as the rules folder's sheets are written (quotes, measurements): a
/// header, `#` comment lines, cells trimmed.
pub fn csv_reader(lf: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(lf.as_bytes())
}

/// The 1-based line of a sheet's header: the first that is neither blank nor a comment.
pub fn header_line(text: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim().trim_start_matches('\u{feff}');
            !l.is_empty() && !l.starts_with('#')
        })
        .map_or(1, |i| i + 1)
}

/// A CSV reading error (a row with the wrong number of cells, a stray quote) at its place.
pub fn csv_error(source: &Source, e: &csv::Error) -> Error {
    let line = e
        .position()
        .map(|p| usize::try_from(p.line()).unwrap_or(usize::MAX));
    let (message, help) = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => (
            format!("this row has {len} cells, the header has {expected_len}"),
            "every row has one cell per column of the header; quote a cell that holds a comma \
             (\"1 month, paid ahead\"), and close every quote: a cell that starts with `\"` runs \
             to the next `\"`"
                .to_owned(),
        ),
        csv::ErrorKind::Deserialize { err, .. } => (
            err.to_string(),
            "every cell is text; check the header's column names".to_owned(),
        ),
        _ => (
            format!("the sheet is not valid CSV: {e}"),
            "a quote sheet is comma-separated, one row per line, cells with commas in double quotes"
                .to_owned(),
        ),
    };
    Error::new(ErrorKind::Rules, message)
        .at(
            &source.name,
            &source.text,
            line.map(|line| Position { line, column: 1 }),
        )
        .help(help)
}

/// The 1-based column (in characters) where cell `index` of line `line` starts, skipping the
/// spaces before it; quoted commas are not separators.
pub fn cell_column(text: &str, line: usize, index: usize) -> usize {
    let Some(row) = text.lines().nth(line.saturating_sub(1)) else {
        return 1;
    };
    let mut cell = 0;
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in row.chars().enumerate() {
        if cell == index {
            start = i;
            break;
        }
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                cell += 1;
                if cell == index {
                    start = i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let skip = row
        .chars()
        .skip(start)
        .take_while(|c| *c == ' ' || *c == '\t' || *c == '\u{feff}')
        .count();
    // An empty last cell is shown at the comma before it, not past the end of the line.
    (start + skip + 1).min(row.chars().count().max(1))
}

/// A second quote for the same hardware, vendor and first day is an error at the second one.
#[must_use]
pub fn duplicates(sources: &[Source], quotes: &[Quote]) -> Vec<Error> {
    let mut seen: HashMap<(&str, &str, Date), &Quote> = HashMap::new();
    let mut errors = Vec::new();
    for q in quotes {
        let key = (q.hardware.as_str(), q.vendor.as_str(), q.valid_from);
        if let Some(first) = seen.get(&key) {
            let source = &sources[q.sheet];
            errors.push(
                Error::new(
                    ErrorKind::Rules,
                    format!(
                        "duplicate quote: `{}` from {} valid from {} is already quoted",
                        q.hardware, q.vendor, q.valid_from
                    ),
                )
                .at(&source.name, &source.text, Some(q.valid_from_at))
                .field("valid_from")
                .help(format!(
                    "first quoted at {}:{}; a vendor has one quote per offer and day: delete \
                     one row, or give the newer price its own `valid_from`",
                    sources[first.sheet].name, first.line
                )),
            );
        } else {
            seen.insert(key, q);
        }
    }
    errors
}

/// Quotes dated after `as_of`: an error each (`decide quotes check`: a sheet is committed when
/// its prices hold).
#[must_use]
pub fn in_the_future(
    sources: &[Source],
    quotes: &[Quote],
    sheets: &[usize],
    as_of: Date,
) -> Vec<Error> {
    quotes
        .iter()
        .filter(|q| sheets.contains(&q.sheet) && q.valid_from > as_of)
        .map(|q| {
            let source = &sources[q.sheet];
            Error::new(
                ErrorKind::Rules,
                format!(
                    "the quote is valid from {}, in the future of {as_of}",
                    q.valid_from
                ),
            )
            .at(&source.name, &source.text, Some(q.valid_from_at))
            .field("valid_from")
            .help(
                "check the date; a price announced ahead is checked with `--as-of` its first \
                 day (decisions before that day do not use it)",
            )
        })
        .collect()
}

/// Text cells ([`text_columns`]) with line breaks, control characters or Markdown and HTML
/// markup: a warning each, at the cell (`decide quotes check`). The memos escape them, so they
/// show as written, which is seldom what a vendor's spreadsheet meant (a pasted link, a cell
/// from a web page).
#[must_use]
pub fn text_warnings(sources: &[Source], quotes: &[Quote], sheets: &[usize]) -> Vec<Error> {
    let mut warnings = Vec::new();
    for q in quotes.iter().filter(|q| sheets.contains(&q.sheet)) {
        let source = &sources[q.sheet];
        for (column, at, text) in &q.text_cells {
            let Some(what) = markup(text) else {
                continue;
            };
            warnings.push(
                Error::new(
                    ErrorKind::Rules,
                    format!(
                        "the `{column}` cell holds {what}: `{}`",
                        crate::error::visible(text)
                            .replace('\n', "\\n")
                            .replace('\r', "\\r")
                    ),
                )
                .at(&source.name, &source.text, Some(*at))
                .field(column.clone())
                .help("the memo shows it escaped, as text; write plain words on one line")
                .as_warning(),
            );
        }
    }
    warnings
}

/// What of markup `text` holds, said for a warning: a line break, a control character, a
/// character of Markdown or HTML markup, or a Markdown heading's `#` at its start.
fn markup(text: &str) -> Option<&'static str> {
    if text.contains(['\n', '\r']) {
        Some("a line break")
    } else if text.chars().any(crate::error::is_unsafe_char) {
        Some("a control character")
    } else if text.contains(['<', '>', '`', '[', ']', '|', '*']) {
        Some("markup (one of < > ` [ ] | *)")
    } else if text.starts_with('#') {
        Some("a Markdown heading (`#` at its start)")
    } else {
        None
    }
}

/// The catalog field that names the vendor whose quotes a hardware's catalog id stands for.
pub const ID_VENDOR: &str = "id_vendor";

/// The vendors of each hardware id: the one the catalog names in [`ID_VENDOR`] first (it keeps
/// the catalog id, whatever sheets and dates are added), then the others by name. A hardware
/// quoted by one vendor only and naming none gives that vendor the id.
fn vendors<'a>(
    hardware: &'a [Located<Offer>],
    quotes: &'a [Quote],
) -> HashMap<&'a str, Vec<&'a str>> {
    let mut by: HashMap<&str, Vec<&str>> = HashMap::new();
    for q in quotes {
        let list = by.entry(q.hardware.as_str()).or_default();
        if !list.contains(&q.vendor.as_str()) {
            list.push(q.vendor.as_str());
        }
    }
    for (id, list) in &mut by {
        let named = hardware
            .iter()
            .find(|h| h.item.id == *id)
            .and_then(|h| h.item.fields.get(ID_VENDOR))
            .and_then(J::as_str);
        list.sort_by_key(|v| (Some(*v) != named, *v));
    }
    by
}

/// An error for each hardware quoted by more than one vendor whose catalog entry does not say
/// which vendor keeps its id ([`ID_VENDOR`]), or names one that quotes it nowhere: without it,
/// which quote an id (a profile's `proposal`, its `job.hours`) stands for would depend on
/// which sheets exist.
#[must_use]
pub fn id_vendor_errors(
    sources: &[Source],
    hardware: &[Located<Offer>],
    quotes: &[Quote],
) -> Vec<Error> {
    let mut errors = Vec::new();
    for h in hardware {
        let mut quoting: Vec<&str> = quotes
            .iter()
            .filter(|q| q.hardware == h.item.id)
            .map(|q| q.vendor.as_str())
            .collect();
        quoting.sort_unstable();
        quoting.dedup();
        let named = h.item.fields.get(ID_VENDOR).and_then(J::as_str);
        let source = &sources[h.file];
        let at = |e: Error| {
            e.at(
                &source.name,
                &source.text,
                crate::policy::position(h.item.location),
            )
            .field(format!("{}.{ID_VENDOR}", h.item.id))
        };
        match named {
            None if quoting.len() > 1 => errors.push(at(Error::new(
                ErrorKind::Rules,
                format!(
                    "`{}` is quoted by {}: say which vendor's quote the id `{}` stands for",
                    h.item.id,
                    quoting.join(" and "),
                    h.item.id
                ),
            )
            .help(format!(
                "add `{ID_VENDOR}: {}` to the hardware in the catalog; the other vendors' \
                 offers are `{}@<vendor>`, so an id never changes its vendor as sheets are added",
                quoting[0], h.item.id
            )))),
            Some(v) if !quoting.is_empty() && !quoting.contains(&v) => {
                errors.push(at(Error::new(
                    ErrorKind::Rules,
                    format!(
                        "`{}` names `{v}` as the vendor of its id, but no sheet of `{v}` quotes it",
                        h.item.id
                    ),
                )
                .help(format!("the vendors quoting it: {}", quoting.join(", ")))));
            }
            _ => {}
        }
    }
    errors
}

/// An error for each quote whose price unit the policy does not price for its hardware's kind
/// (`quote_sheets.price_units_by_kind`), at its `unit` cell; and for each kind listed there
/// with a unit that is not a price unit, at the vocabulary.
#[must_use]
pub fn unpriced_units(
    sources: &[Source],
    hardware: &[Located<Offer>],
    quotes: &[Quote],
    vocabulary: &Located<QuoteSheets>,
) -> Vec<Error> {
    let by_kind = &vocabulary.item.price_units_by_kind;
    let mut errors = Vec::new();
    for (kind, units) in by_kind {
        if let Some(u) = units
            .iter()
            .find(|u| !vocabulary.item.price_units.contains(u))
        {
            errors.push(
                Error::new(
                    ErrorKind::Rules,
                    format!(
                        "`quote_sheets.price_units_by_kind.{kind}` names `{u}`, which is not one of the `price_units`"
                    ),
                )
                .in_file(&sources[vocabulary.file].name)
                .field(format!("quote_sheets.price_units_by_kind.{kind}"))
                .help(format!(
                    "the price units: {}",
                    vocabulary.item.price_units.join(", ")
                )),
            );
        }
    }
    for q in quotes {
        let Some(kind) = hardware
            .iter()
            .find(|h| h.item.id == q.hardware)
            .and_then(|h| h.item.fields.get("kind"))
            .and_then(J::as_str)
        else {
            continue;
        };
        let unit = q
            .fields
            .get("price")
            .and_then(|p| p.get("unit"))
            .and_then(J::as_str)
            .unwrap_or_default();
        let Some(priced) = by_kind.get(kind) else {
            continue;
        };
        if priced.iter().any(|u| u == unit) {
            continue;
        }
        let source = &sources[q.sheet];
        let lf = with_lf(&source.text);
        let index = csv_reader(&lf)
            .headers()
            .ok()
            .and_then(|h| h.iter().position(|c| c == "unit"))
            .unwrap_or(0);
        let at = Position {
            line: q.line,
            column: cell_column(&source.text, q.line, index),
        };
        errors.push(
            Error::new(
                ErrorKind::Rules,
                format!(
                    "`{}` is {kind} quoted by the `{unit}`, and the rules price {kind} only by the {}",
                    q.hardware,
                    priced.join(" or the ")
                ),
            )
            .at(&source.name, &source.text, Some(at))
            .field("unit")
            .help(format!(
                "a bill in a unit the facts do not price would be a guess: quote it by the {} \
                 (the policy's `quote_sheets.price_units_by_kind`), or price the unit in the \
                 facts first (`offer_monthly_cny`, `offer_unit_hourly_cny`) and list it there",
                priced.join(" or the ")
            )),
        );
    }
    errors
}

/// The offer id of `hardware` quoted by `vendor`.
#[must_use]
pub fn offer_id(hardware: &str, vendor: &str, primary: bool) -> String {
    if primary {
        hardware.to_owned()
    } else {
        format!("{hardware}@{vendor}")
    }
}

/// The catalog at `at` (every quote when `None`): per hardware (catalog order) and vendor
/// (first vendor first), one offer from the quote in force, with its history.
#[must_use]
pub fn resolve(
    hardware: &[Located<Offer>],
    quotes: &[Quote],
    sources: &[Source],
    rates: &[ExchangeRate],
    at: Option<Date>,
) -> Vec<Located<Offer>> {
    let vendors = vendors(hardware, quotes);
    let mut offers = Vec::new();
    for h in hardware {
        let Some(list) = vendors.get(h.item.id.as_str()) else {
            continue;
        };
        for (rank, vendor) in list.iter().enumerate() {
            let mut valid: Vec<&Quote> = quotes
                .iter()
                .filter(|q| {
                    q.hardware == h.item.id
                        && q.vendor == *vendor
                        && at.is_none_or(|d| q.valid_from <= d)
                })
                .collect();
            valid.sort_by_key(|q| q.valid_from);
            let Some((current, earlier)) = valid.split_last() else {
                continue;
            };
            let id = offer_id(&h.item.id, vendor, rank == 0);
            let mut fields = h.item.fields.clone();
            fields.insert("id".into(), J::from(id.clone()));
            fields.insert("vendor".into(), J::from(*vendor));
            fields.insert("hardware".into(), J::from(h.item.id.clone()));
            // Priced on `at`, or (every quote at once) each on its own first day.
            let on = |q: &Quote| at.unwrap_or(q.valid_from);
            for (k, v) in &current.fields {
                let v = match (k.as_str(), v) {
                    ("price", J::Object(price)) => {
                        J::Object(in_policy_currency(price, rates, on(current)))
                    }
                    _ => v.clone(),
                };
                fields.insert(k.clone(), v);
            }
            fields.insert("as_of".into(), J::from(current.valid_from.to_string()));
            fields.insert("quote".into(), reference(sources, current));
            let history: Vec<J> = earlier
                .iter()
                .map(|q| {
                    let mut entry = Map::new();
                    entry.insert("as_of".into(), J::from(q.valid_from.to_string()));
                    if let Some(price) = q.fields.get("price").and_then(J::as_object) {
                        for (k, v) in in_policy_currency(price, rates, on(q)) {
                            entry.insert(k, v);
                        }
                    }
                    entry.insert("quote".into(), reference(sources, q));
                    J::Object(entry)
                })
                .collect();
            if let Some(previous) = history.last() {
                fields.insert("previous".into(), previous.clone());
            }
            fields.insert("history".into(), J::Array(history));
            let mut texts = current.texts.clone();
            if let (Some(quoted), Some(region)) =
                (current.fields.get("region"), h.item.fields.get("region"))
                && retitle(&mut fields, region, quoted)
            {
                texts.push("title");
            }
            offers.push(Located {
                file: h.file,
                item: Offer {
                    id,
                    fields,
                    texts,
                    location: h.item.location,
                },
            });
        }
    }
    offers
}

/// A quote's `price` in the policy's currency on `date`. Where the sheet priced it in another
/// currency (`price.currency`), every amount (each `*_cny` and each term's `cny`) is multiplied
/// by the rate in force on `date` ([`rate_on`]), to the fen; the sheet's own discounted and list
/// prices are kept as `quoted_amount` and `quoted_list_amount`, the rate as `exchange`
/// (`{currency, rate, from, source}`), and the least an hour costs is read again from the terms
/// converted. A price in the policy's currency is returned as it is.
fn in_policy_currency(
    price: &Map<String, J>,
    rates: &[ExchangeRate],
    date: Date,
) -> Map<String, J> {
    let mut price = price.clone();
    let Some(rate) = price
        .get("currency")
        .and_then(J::as_str)
        .and_then(|c| rate_on(rates, c, date))
    else {
        return price;
    };
    let sheet = |key: &str, fallback: &str| price.get(key).or_else(|| price.get(fallback)).cloned();
    let quoted = sheet("quoted_discounted_cny", "discounted_cny");
    let quoted_list = sheet("quoted_list_cny", "list_cny");
    let convert = |v: &mut J| {
        if let J::Number(n) = v {
            *v = J::Number(scaled(n, rate.rate));
        }
    };
    for (key, value) in &mut price {
        if key.ends_with("_cny") && key != "least_hourly_cny" {
            convert(value);
        }
    }
    if let Some(J::Array(terms)) = price.get_mut("terms") {
        for term in terms.iter_mut() {
            if let Some(cny) = term.get_mut("cny") {
                convert(cny);
            }
        }
    }
    if let Some(least) = price
        .get("terms")
        .and_then(J::as_array)
        .and_then(|terms| least_hourly(terms))
    {
        price.insert("least_hourly_cny".into(), J::Number(least));
    }
    if let Some(q) = quoted {
        price.insert("quoted_amount".into(), q);
    }
    if let Some(q) = quoted_list {
        price.insert("quoted_list_amount".into(), q);
    }
    price.insert(
        "exchange".into(),
        serde_json::json!({
            "currency": rate.currency, "rate": rate.rate, "from": rate.from, "source": rate.source,
        }),
    );
    price
}

/// Where a quote was read: its sheet's file name and its line.
fn reference(sources: &[Source], q: &Quote) -> J {
    let name = &sources[q.sheet].name;
    let file = crate::source::file_name(name);
    serde_json::json!({"sheet": file, "line": q.line})
}

/// Every offer id the sheets give at any date.
#[must_use]
pub fn all_ids(hardware: &[Located<Offer>], quotes: &[Quote]) -> Vec<String> {
    let vendors = vendors(hardware, quotes);
    hardware
        .iter()
        .flat_map(|h| {
            vendors
                .get(h.item.id.as_str())
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(rank, v)| offer_id(&h.item.id, v, rank == 0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_found_by_column_with_quoted_commas() {
        let text = "a,b,c\nx, \"1, 2\",  z\n";
        assert_eq!(cell_column(text, 2, 0), 1);
        assert_eq!(cell_column(text, 2, 1), 4);
        assert_eq!(cell_column(text, 2, 2), 13);
        assert_eq!(cell_column("a,b\nx,\n", 2, 1), 2);
        assert_eq!(cell_column(text, 9, 2), 1);
    }

    #[test]
    fn the_columns_come_from_the_record() {
        let cols = columns();
        assert!(cols.contains(&("offer".to_owned(), true)));
        assert!(cols.contains(&("daily_price".to_owned(), false)));
        assert!(cols.contains(&("vendor_name_zh".to_owned(), false)));
        assert!(cols.contains(&("vat_rate".to_owned(), false)));
        assert!(cols.contains(&("weekly_price".to_owned(), false)));
        assert!(cols.contains(&("auto_renew".to_owned(), false)));
        assert!(cols.contains(&("refund_share".to_owned(), false)));
        assert!(cols.contains(&("contract_kind".to_owned(), false)));
        assert!(cols.contains(&("preemptible".to_owned(), false)));
        assert!(cols.contains(&("data_abroad".to_owned(), false)));
        for min in ["min_hours", "min_days", "min_weeks", "min_years"] {
            assert!(cols.contains(&(min.to_owned(), false)), "{min}");
        }
        assert_eq!(cols.len(), 37);
    }
}
