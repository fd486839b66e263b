//! The catalog at a date as a table (`decide offers`): each quote in force with its hardware,
//! vendor, unit, price, VAT, term, age and trend.
//!
//! Like `sky show-gpus`, it answers "what is on offer, from whom, at what price" without a
//! profile: one row per offer of a policy priced at a date ([`Policy::at`]), and the hardware
//! no quote prices yet. The numbers are the quote sheets' own; nothing is decided here.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value as J;
use unicode_width::UnicodeWidthStr;

use decide_engine::lang::Lang;
use decide_engine::policy::{Located, Offer, Policy};
use decide_lang::{group_thousands, md_escape, table_cell};

/// What is on offer at a date.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// The date the offers are priced at.
    pub as_of: String,
    /// The policy's revision (`sha256:` + 16 hex digits).
    pub revision: String,
    /// One row per offer, in catalog order.
    pub offers: Vec<Listed>,
    /// The catalog's hardware with no quote in force at `as_of`.
    pub not_on_offer: Vec<Unquoted>,
}

/// One offer: its quote in force and how its price moved.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub id: String,
    /// The hardware's catalog id (the offer id for the first vendor).
    pub hardware: String,
    pub title: String,
    pub kind: String,
    pub vendor: Option<String>,
    /// The vendor's name as the sheet gives it (`vendor_name`), in English.
    pub vendor_name: Option<String>,
    /// What the prices are for (`month`, `gpu_hour`, ...).
    pub unit: String,
    /// The prices as the sheet writes them (whole numbers stay whole).
    pub list_cny: Option<J>,
    pub discounted_cny: Option<J>,
    pub daily_cny: Option<J>,
    /// The quote's first day.
    pub valid_from: String,
    /// Days from `valid_from` to the listing's date.
    pub age_days: Option<i64>,
    /// Whether the sheet's prices include VAT, as it says: `included`, `excluded` or `unknown`
    /// (the offer's `billing.vat`).
    pub vat: Option<String>,
    /// The VAT rate added to the sheet's prices, where they leave VAT out and the policy
    /// compares with VAT in (`quote_sheets.vat_basis`): the prices above include it, the
    /// sheet's own are `quoted_*`.
    pub vat_added: Option<f64>,
    /// The VAT rate taken out of the sheet's prices, where they include VAT and the policy
    /// compares before VAT: the prices above leave it out, the sheet's own are `quoted_*`.
    pub vat_taken_out: Option<f64>,
    /// Where the sheet quotes another currency than the policy's: its code (e.g. `USD`), the
    /// discounted price as the sheet wrote it, and the rate it was converted at (the policy's
    /// currency for one unit, `quote_sheets.exchange_rates` on the listing's date).
    pub currency: Option<String>,
    pub quoted_amount: Option<J>,
    pub exchange_rate: Option<f64>,
    /// The sheet's own prices, before they were converted to the policy's VAT basis (only
    /// when they were).
    pub quoted_list_cny: Option<J>,
    pub quoted_discounted_cny: Option<J>,
    /// The shortest contract, as the sheet writes it (the offer's `billing.min_term`).
    pub min_term: Option<String>,
    /// The same vendor's quote before, when there is one.
    pub previous: Option<Previous>,
    /// The sheet and line the quote was read from.
    pub sheet: Option<String>,
    pub line: Option<u64>,
}

/// The quote before the one in force.
#[derive(Debug, Clone, Serialize)]
pub struct Previous {
    pub valid_from: String,
    pub discounted_cny: J,
    /// (now − before) / before, rounded to 4 places.
    pub change: f64,
}

/// Hardware that no quote prices at the listing's date.
#[derive(Debug, Clone, Serialize)]
pub struct Unquoted {
    pub hardware: String,
    pub title: String,
    /// The first day a sheet quotes it, if one does.
    pub first_quoted: Option<String>,
}

/// The offers of `policy` (already priced at `as_of`, see [`Policy::at`]).
#[must_use]
/// A field's text in English (empty when absent).
fn text(v: Option<&J>) -> String {
    v.map(|v| decide_engine::lang::localize(v, Lang::En))
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// One offer in force as the listing shows it.
fn listed(o: &Located<Offer>, as_of: jiff::civil::Date) -> Listed {
    let f = &o.item.fields;
    let at = |path: &str| path.split('.').try_fold(f, |m, k| m.get(k)?.as_object());
    let price = at("price");
    let exchange = at("price.exchange");
    let value = |k: &str| price.and_then(|p| p.get(k)).cloned();
    let number = |k: &str| value(k).as_ref().and_then(J::as_f64);
    let valid_from = f
        .get("as_of")
        .and_then(J::as_str)
        .unwrap_or_default()
        .to_owned();
    let age_days = valid_from
        .parse::<jiff::civil::Date>()
        .ok()
        .and_then(|d| d.until((jiff::Unit::Day, as_of)).ok())
        .map(|s| i64::from(s.get_days()));
    let previous = f.get("previous").and_then(|p| {
        let was = p.get("discounted_cny")?;
        let before = was.as_f64()?;
        let now = number("discounted_cny")?;
        Some(Previous {
            valid_from: p.get("as_of")?.as_str()?.to_owned(),
            discounted_cny: was.clone(),
            change: ((now - before) / before * 10_000.0).round() / 10_000.0,
        })
    });
    let quote = f.get("quote");
    let billing = f.get("billing");
    let quoted_list_cny = value("quoted_list_cny");
    let quoted_discounted_cny = value("quoted_discounted_cny");
    let converted = billing
        .and_then(|b| b.get("vat_rate"))
        .and_then(J::as_f64)
        .filter(|_| quoted_discounted_cny.is_some() || quoted_list_cny.is_some());
    let to_basis = |basis: &str| {
        converted
            .filter(|_| billing.and_then(|b| b.get("vat_basis")).and_then(J::as_str) == Some(basis))
    };
    let (vat_added, vat_taken_out) = (to_basis("included"), to_basis("excluded"));
    Listed {
        id: o.item.id.clone(),
        hardware: f
            .get("hardware")
            .and_then(J::as_str)
            .unwrap_or(&o.item.id)
            .to_owned(),
        title: text(f.get("title")),
        kind: text(f.get("kind")),
        vendor: f.get("vendor").and_then(J::as_str).map(str::to_owned),
        vendor_name: Some(text(f.get("vendor_name"))).filter(|n| !n.is_empty()),
        unit: price
            .and_then(|p| p.get("unit"))
            .and_then(J::as_str)
            .unwrap_or_default()
            .to_owned(),
        list_cny: value("list_cny"),
        discounted_cny: value("discounted_cny"),
        daily_cny: value("daily_cny"),
        vat: billing
            .and_then(|b| b.get("vat"))
            .and_then(J::as_str)
            .map(str::to_owned),
        vat_added,
        vat_taken_out,
        currency: exchange
            .and_then(|x| x.get("currency"))
            .and_then(J::as_str)
            .map(str::to_owned),
        quoted_amount: value("quoted_amount"),
        exchange_rate: exchange.and_then(|x| x.get("rate")).and_then(J::as_f64),
        quoted_list_cny,
        quoted_discounted_cny,
        min_term: billing
            .and_then(|b| b.get("min_term"))
            .map(|t| text(Some(t)))
            .filter(|t| !t.is_empty()),
        valid_from,
        age_days,
        previous,
        sheet: quote
            .and_then(|q| q.get("sheet"))
            .and_then(J::as_str)
            .map(str::to_owned),
        line: quote.and_then(|q| q.get("line")).and_then(J::as_u64),
    }
}

pub fn listing(policy: &Policy, as_of: jiff::civil::Date) -> Listing {
    let offers = policy.offers.iter().map(|o| listed(o, as_of)).collect();
    let not_on_offer = policy
        .not_on_offer()
        .into_iter()
        .map(|(h, first)| Unquoted {
            hardware: h.item.id.clone(),
            title: text(h.item.fields.get("title")),
            first_quoted: first.map(|d| d.to_string()),
        })
        .collect();
    Listing {
        as_of: as_of.to_string(),
        revision: policy.revision.clone(),
        offers,
        not_on_offer,
    }
}

/// One offer's cells, as both tables show them (Markdown adds its quoting).
struct Cells {
    money: [String; 2],
    vat: String,
    term: String,
    age: String,
    trend: String,
}

fn cells(o: &Listed) -> Cells {
    let digits = if o.unit == "gpu_hour" { 2 } else { 0 };
    let money = |v: &Option<J>| {
        v.as_ref()
            .and_then(J::as_f64)
            .map_or_else(String::new, |v| cny(v, digits))
    };
    let trend = match &o.previous {
        None => "first quote".to_owned(),
        Some(p) if p.change == 0.0 => format!("unchanged since {}", p.valid_from),
        Some(p) => format!(
            "{}{}% since {} ({})",
            if p.change > 0.0 { "+" } else { "" },
            group_thousands(p.change * 100.0, 1),
            p.valid_from,
            money(&Some(p.discounted_cny.clone()))
        ),
    };
    let vat = match (&o.vat, o.vat_added, o.vat_taken_out) {
        (Some(v), Some(rate), _) => format!("{v}, +{}% added", group_thousands(rate * 100.0, 0)),
        (Some(v), None, Some(rate)) => {
            format!("{v}, {}% taken out", group_thousands(rate * 100.0, 0))
        }
        (Some(v), None, None) => v.clone(),
        (None, ..) => String::new(),
    };
    Cells {
        money: [
            match (&o.currency, o.quoted_amount.as_ref().and_then(J::as_f64)) {
                (Some(c), Some(a)) => format!("{} ({c} {a})", money(&o.discounted_cny)),
                _ => money(&o.discounted_cny),
            },
            money(&o.list_cny),
        ],
        vat,
        term: o.min_term.clone().unwrap_or_default(),
        age: o.age_days.map_or_else(String::new, |d| format!("{d} d")),
        trend,
    }
}

/// What the listing's columns mean, after its heading.
fn legend(listing: &Listing) -> String {
    format!(
        "Policy revision `{}`. Prices are the quotes in force on {} (the latest per offer and \
         vendor whose `valid_from` is on or before it); VAT is how the sheet quotes them \
         (`included`, `excluded` or `unknown`; a price quoted on the other basis than the \
         policy compares on is shown converted, VAT added or taken out, and a price quoted in \
         another currency is shown in yuan at the date's rate, the sheet's own figure beside \
         it); term is the shortest contract as the sheet \
         writes it; age is days since the quote's first day; trend is the change from the same \
         vendor's quote before.",
        listing.revision, listing.as_of
    )
}

/// The listing as a Markdown table.
#[must_use]
pub fn markdown(listing: &Listing) -> String {
    let mut out = format!("# Offers at {}\n\n{}\n\n", listing.as_of, legend(listing));
    out.push_str(
        "| Offer | Hardware | Vendor | Unit | Price | List | VAT | Term | Quoted | Age | Trend | Sheet |\n\
         |---|---|---|---|---:|---:|---|---|---|---:|---|---|\n",
    );
    for o in &listing.offers {
        let c = cells(o);
        let sheet = match (&o.sheet, o.line) {
            (Some(s), Some(l)) => format!("`{s}`:{l}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.id,
            table_cell(&md_escape(&o.title)),
            table_cell(&md_escape(&vendor(o))),
            o.unit.replace('_', "-"),
            c.money[0],
            c.money[1],
            c.vat,
            table_cell(&md_escape(&c.term)),
            o.valid_from,
            c.age,
            c.trend,
            sheet
        );
    }
    if !listing.not_on_offer.is_empty() {
        let _ = writeln!(
            out,
            "\nNot on offer at {} (no quote in force):\n",
            listing.as_of
        );
        for u in &listing.not_on_offer {
            let _ = writeln!(
                out,
                "- `{}`: {} ({})",
                u.hardware,
                md_escape(&u.title),
                first_quoted(u)
            );
        }
    }
    out
}

/// The vendor as a table names it: its name, with the sheet's id where the two differ.
fn vendor(o: &Listed) -> String {
    match (&o.vendor_name, &o.vendor) {
        (Some(name), Some(id)) if name != id => format!("{name} ({id})"),
        (Some(name), _) => name.clone(),
        (None, id) => id.clone().unwrap_or_default(),
    }
}

fn first_quoted(u: &Unquoted) -> String {
    u.first_quoted.as_ref().map_or_else(
        || "no sheet quotes it".to_owned(),
        |d| format!("first quoted {d}"),
    )
}

/// The columns of the plain-text and HTML tables.
const HEADER: [&str; 12] = [
    "Offer", "Hardware", "Vendor", "Unit", "Price", "List", "VAT", "Term", "Quoted", "Age",
    "Trend", "Sheet",
];
/// Which columns hold numbers, aligned on the right.
const RIGHT: [bool; 12] = [
    false, false, false, false, true, true, false, false, false, true, false, false,
];

/// One offer's row of the plain-text and HTML tables, in [`HEADER`]'s order, as plain text.
fn row(o: &Listed) -> [String; 12] {
    let c = cells(o);
    let [price, list] = c.money;
    let sheet = match (&o.sheet, o.line) {
        (Some(s), Some(l)) => format!("{s}:{l}"),
        _ => String::new(),
    };
    [
        o.id.clone(),
        o.title.clone(),
        vendor(o),
        o.unit.replace('_', "-"),
        price,
        list,
        c.vat,
        c.term,
        o.valid_from.clone(),
        c.age,
        c.trend,
        sheet,
    ]
}

/// The listing as an HTML fragment (the legend, a `<table>`, and what is not on offer), as
/// `decide serve` shows it: every text escaped, numbers in cells of class `num`.
#[must_use]
pub fn html(listing: &Listing) -> String {
    use crate::html::escape;
    // The legend's `code` spans as <code>.
    let mut out = String::from("<p>");
    for (i, part) in escape(&legend(listing)).split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out.push_str("</p>\n<table>\n<thead><tr>");
    for h in HEADER {
        let _ = write!(out, "<th scope=\"col\">{h}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for o in &listing.offers {
        let mut row = row(o).map(|cell| escape(&cell));
        row[0] = format!("<code>{}</code>", row[0]);
        out.push_str("<tr>");
        for (cell, right) in row.iter().zip(RIGHT) {
            let class = if right { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    if !listing.not_on_offer.is_empty() {
        let _ = write!(
            out,
            "<p>Not on offer at {} (no quote in force):</p>\n<ul>\n",
            escape(&listing.as_of)
        );
        for u in &listing.not_on_offer {
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {} ({})</li>",
                escape(&u.hardware),
                escape(&u.title),
                escape(&first_quoted(u))
            );
        }
        out.push_str("</ul>\n");
    }
    out
}

/// The listing as a plain-text table for a terminal: columns aligned by display width (a
/// Chinese character takes two columns), numbers right-aligned. `bold` styles the header row
/// (e.g. with ANSI codes when colour is on).
#[must_use]
pub fn table(listing: &Listing, bold: &dyn Fn(&str) -> String) -> String {
    let rows: Vec<[String; 12]> = listing
        .offers
        .iter()
        .map(|o| {
            let mut row = row(o);
            row[1] = one_line(&row[1]);
            row[7] = one_line(&row[7]);
            row
        })
        .collect();
    let mut widths = HEADER.map(UnicodeWidthStr::width);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let line = |cells: &[&str]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.width());
            if i > 0 {
                text.push_str("  ");
            }
            if RIGHT[i] {
                text.push_str(&pad);
                text.push_str(cell);
            } else {
                text.push_str(cell);
                text.push_str(&pad);
            }
        }
        text.truncate(text.trim_end().len());
        text
    };
    let mut out = format!(
        "Offers at {} (policy revision {})\n\n",
        listing.as_of, listing.revision
    );
    let _ = writeln!(out, "{}", bold(&line(&HEADER)));
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        let _ = writeln!(out, "{}", line(&cells));
    }
    out.push_str(
        "\nPrices include VAT where the policy adds it (VAT column); term is the shortest \
         contract; trend is the change from the vendor's quote before.\n",
    );
    if !listing.not_on_offer.is_empty() {
        let _ = writeln!(
            out,
            "\nNot on offer at {} (no quote in force):",
            listing.as_of
        );
        for u in &listing.not_on_offer {
            let _ = writeln!(
                out,
                "  {}: {} ({})",
                u.hardware,
                one_line(&u.title),
                first_quoted(u)
            );
        }
    }
    out
}

/// Text on one line: line breaks and tabs as spaces, other control characters left out (a
/// terminal would act on them).
fn one_line(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

fn cny(value: f64, digits: usize) -> String {
    format!("¥{}", group_thousands(value, digits))
}
