//! Units through the rules: every price column of the quote sheets is a number of a declared
//! unit (`offer_quantities:` in the shipped catalog), and no rule may add, compare, choose or
//! weigh two of different units: the rules do not load, and the error points at the place.

use crate::common;

use decide_engine::Policy;

/// The shipped catalog's price columns (the offer paths under `price.`), each as an expression
/// of a bound offer (a list's items' fields read off its first item), with its unit.
fn price_columns() -> Vec<(String, String)> {
    let policy = Policy::embedded().unwrap();
    let columns: Vec<(String, String)> = policy
        .offer_quantities
        .iter()
        .filter(|(path, _)| path.starts_with("price."))
        .map(|(path, unit)| {
            let read = match path.strip_prefix("price.terms.") {
                Some(field) => format!("offer.price.terms[0].{field}"),
                None => format!("offer.{path}"),
            };
            (read, unit.to_string())
        })
        .collect();
    // The row's own price, the day's, the hour's, a term's price and length, the currency's.
    for unit in [
        "cny/price_unit",
        "cny/day",
        "cny/hour",
        "cny/term",
        "hour/term",
    ] {
        assert!(
            columns.iter().any(|(_, u)| u == unit),
            "no price column in {unit}: {columns:?}"
        );
    }
    columns
}

/// The rules with `facts` (YAML items) added to `facts.yaml`, compiled: the rendered error.
fn compiled_with(facts: &str) -> Result<(), String> {
    let rules = common::edited_rules(&[("facts.yaml", "facts:\n", &format!("facts:\n{facts}"))]);
    common::compile_dir(rules.path()).map(|_| ())
}

/// A per-offer fact of `expr`, named `id`.
fn fact(id: &str, expr: &str) -> String {
    format!(
        "  - id: {id}\n    title: {{en: \"{id}\", zh: \"{id}\"}}\n    per_offer: true\n    expr: \"{expr}\"\n"
    )
}

/// What each way of two numbers meeting is written as.
const MEETINGS: [(&str, &str); 4] = [
    ("sum", "{a} + {b}"),
    ("order", "{a} < {b}"),
    ("choice", "{a} if offer.gpus > 4 else {b}"),
    ("least", "[{a}, {b}] | min"),
];

#[test]
fn no_two_price_columns_of_different_units_meet_in_a_rule() {
    let columns = price_columns();
    let mut mixed = Vec::new();
    let mut same = Vec::new();
    for (i, (a, unit_a)) in columns.iter().enumerate() {
        for (j, (b, unit_b)) in columns.iter().enumerate().skip(i + 1) {
            for (name, shape) in MEETINGS {
                let id = format!("meet_{name}_{i}_{j}");
                let text = fact(&id, &shape.replace("{a}", a).replace("{b}", b));
                if unit_a == unit_b {
                    same.push(text);
                } else {
                    mixed.push((id, text, unit_a, unit_b));
                }
            }
        }
    }
    assert!(
        mixed.len() >= 4 * 20,
        "{} meetings of different units",
        mixed.len()
    );
    // Every meeting of different units is an error of its own, at its place, naming both.
    let err = compiled_with(&mixed.iter().map(|m| m.1.as_str()).collect::<String>())
        .expect_err("columns of different units met");
    for (id, _, unit_a, unit_b) in &mixed {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("error: {id}.expr:")))
            .unwrap_or_else(|| panic!("no error for {id}:\n{err}"));
        assert!(
            line.contains(&format!("a number in {unit_a}"))
                && line.contains(&format!("a number in {unit_b}")),
            "{line}"
        );
    }
    // And nothing else is.
    let errors = err.lines().filter(|l| l.starts_with("error: ")).count();
    assert_eq!(errors, mixed.len(), "{err}");
    // Of the same unit, they meet.
    assert!(!same.is_empty());
    compiled_with(&same.concat()).unwrap();
}

#[test]
fn a_price_for_its_unit_is_a_price_per_month_where_a_test_says_the_unit_is_a_month() {
    // The row's own price per the offer's price unit meets a daily price only where a test
    // says the unit is a month, through the vendor's days in a month.
    let converted = "offer.price.discounted_cny / offer.billing.month_days";
    let err = compiled_with(&fact(
        "per_day",
        &format!("{converted} < offer.price.daily_cny"),
    ))
    .unwrap_err();
    assert!(
        err.contains("a number in cny/day") && err.contains("a number in cny*month/day/price_unit"),
        "{err}"
    );
    compiled_with(&fact(
        "per_day",
        &format!(
            "{converted} < offer.price.daily_cny if offer.kind == 'bare_metal' and offer.price.unit == 'month' else false"
        ),
    ))
    .unwrap();
    // A container GPU's hour is an hour (`price_unit_quantities:`).
    compiled_with(&fact(
        "per_hour",
        "offer.price.list_cny < offer.price.least_hourly_cny if offer.price.unit == 'gpu_hour' else false",
    ))
    .unwrap();
    let err = compiled_with(&fact(
        "per_hour",
        "offer.price.list_cny < offer.price.least_hourly_cny if offer.price.unit == 'month' else false",
    ))
    .unwrap_err();
    assert!(err.contains("a number in cny/month"), "{err}");
}

#[test]
fn a_fact_must_give_what_it_declares_it_measures() {
    // The month's bill declared a bill per hour: a fact that reads it as monthly says so.
    let rules = common::edited_rules(&[(
        "facts.yaml",
        "    unit: cny\n    quantity: cny/month\n\n  - id: offer_plan_cny",
        "    unit: cny\n    quantity: cny/hour\n\n  - id: offer_plan_cny",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "fact `bare_metal_monthly_cny` measures cny/month, and its `expr` gives a number in cny/hour"
        ),
        "{err}"
    );
    assert!(err.contains("declare `quantity: cny/hour` if that is what the fact measures"));
    // A display unit of yuan is a claim of yuan: the month's hours are not.
    let rules = common::edited_rules(&[(
        "facts.yaml",
        "hours_per_gpu_month] | max\"\n    type: number\n    unit: hours\n    quantity: hour/month\n",
        "hours_per_gpu_month] | max\"\n    type: number\n    unit: hours\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "fact `committed_hours_per_gpu` measures hour (its `unit:` says so), and its `expr` gives a number in hour/month"
        ),
        "{err}"
    );
}

#[test]
fn a_unit_that_does_not_read_is_refused_at_its_place() {
    let rules = common::edited_rules(&[(
        "facts.yaml",
        "    quantity: hour/month\n",
        "    quantity: hours per month\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("fact `hours_per_month`: `quantity: hours per month` does not read: `hours per month` is not a unit"),
        "{err}"
    );
    assert!(
        err.contains("rules/facts.yaml") || err.contains("facts.yaml:"),
        "{err}"
    );
    assert!(err.contains("`cny/month`, `hour/month`"), "{err}");
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "  price.daily_cny: cny/day\n",
        "  price.daily_cny: cny//day\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("`offer_quantities.price.daily_cny: cny//day` does not read: `cny//day` has a `*` or `/` with no unit beside it"),
        "{err}"
    );
}
