//! The catalog at a date as a table (`decide offers`): each quote in force with its hardware, vendor, unit, price, age and trend.
//!
//! Like `sky show-gpus`, it answers "what is on offer, from whom, at what price" without a
//! profile: one row per offer of a policy priced at a date ([`Policy::at`]), and the hardware
//! no quote prices yet. The numbers are the quote sheets' own; nothing is decided here.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value as J;

use crate::expr::{group_thousands, md_escape, table_cell};
use crate::lang::Lang;
use crate::policy::Policy;

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
pub fn listing(policy: &Policy, as_of: jiff::civil::Date) -> Listing {
    let text = |v: Option<&J>| {
        v.map(|v| crate::lang::localize(v, Lang::En))
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let offers = policy
        .offers
        .iter()
        .map(|o| {
            let f = &o.item.fields;
            let at = |path: &str| path.split('.').try_fold(f, |m, k| m.get(k)?.as_object());
            let price = at("price");
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
                unit: price
                    .and_then(|p| p.get("unit"))
                    .and_then(J::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                list_cny: value("list_cny"),
                discounted_cny: value("discounted_cny"),
                daily_cny: value("daily_cny"),
                valid_from,
                age_days,
                previous,
                sheet: quote
                    .and_then(|q| q.get("sheet"))
                    .and_then(J::as_str)
                    .map(str::to_owned),
                line: quote.and_then(|q| q.get("line")).and_then(J::as_u64),
            }
        })
        .collect();
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

/// The listing as a Markdown table.
#[must_use]
pub fn markdown(listing: &Listing) -> String {
    let mut out = format!(
        "# Offers at {}\n\nPolicy revision `{}`. Prices are the quotes in force on {} (the latest \
         per offer and vendor whose `valid_from` is on or before it); age is days since the \
         quote's first day; trend is the change from the same vendor's quote before.\n\n",
        listing.as_of, listing.revision, listing.as_of
    );
    out.push_str(
        "| Offer | Hardware | Vendor | Unit | Price | List | Quoted | Age | Trend | Sheet |\n\
         |---|---|---|---|---:|---:|---|---:|---|---|\n",
    );
    for o in &listing.offers {
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
        let sheet = match (&o.sheet, o.line) {
            (Some(s), Some(l)) => format!("`{s}`:{l}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.id,
            table_cell(&md_escape(&o.title)),
            o.vendor.as_deref().unwrap_or(""),
            o.unit.replace('_', "-"),
            money(&o.discounted_cny),
            money(&o.list_cny),
            o.valid_from,
            o.age_days.map_or_else(String::new, |d| format!("{d} d")),
            trend,
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
            let when = u.first_quoted.as_ref().map_or_else(
                || "no sheet quotes it".to_owned(),
                |d| format!("first quoted {d}"),
            );
            let _ = writeln!(out, "- `{}`: {} ({when})", u.hardware, md_escape(&u.title));
        }
    }
    out
}

fn cny(value: f64, digits: usize) -> String {
    format!("¥{}", group_thousands(value, digits))
}
