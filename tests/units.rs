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
        "    unit: cny\n    quantity: cny/month\n\n  - id: offer_container_monthly_cny",
        "    unit: cny\n    quantity: cny/hour\n\n  - id: offer_container_monthly_cny",
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

/// The shipped profile's numbers of a declared unit (`profile_quantities:`), each as the
/// expression that reads it, with its unit.
fn profile_numbers() -> Vec<(String, String)> {
    let policy = Policy::embedded().unwrap();
    let numbers: Vec<(String, String)> = policy
        .profile_quantities
        .iter()
        .map(|(path, (unit, ..))| (format!("profile.{path}"), unit.to_string()))
        .collect();
    // The months of use, the busy hours, the budget, the deadline, the GPUs.
    for (path, unit) in [
        ("profile.usage.months", "month"),
        ("profile.usage.hours_per_gpu_month", "hour/month"),
        ("profile.budget.monthly_cny", "cny/month"),
        ("profile.job.deadline_days", "day"),
        ("profile.usage.gpus", "1"),
    ] {
        assert!(
            numbers.iter().any(|(p, u)| p == path && u == unit),
            "{path} is not declared {unit}: {numbers:?}"
        );
    }
    numbers
}

#[test]
fn no_profile_number_meets_a_price_column_of_another_unit() {
    // Every number of the profile of a declared unit, summed with, ordered against, chosen
    // beside and weighed against every price column: refused exactly where the units differ.
    let columns = price_columns();
    let mut mixed = Vec::new();
    for (i, (a, unit_a)) in profile_numbers().iter().enumerate() {
        for (j, (b, unit_b)) in columns.iter().enumerate() {
            assert_ne!(
                unit_a, unit_b,
                "a profile number measures a price column's unit"
            );
            for (name, shape) in MEETINGS {
                let id = format!("meet_{name}_{i}_{j}");
                let text = fact(&id, &shape.replace("{a}", a).replace("{b}", b));
                mixed.push((id, text, unit_a.clone(), unit_b));
            }
        }
    }
    let err = compiled_with(&mixed.iter().map(|m| m.1.as_str()).collect::<String>())
        .expect_err("a profile number met a price column of another unit");
    for (id, _, unit_a, unit_b) in &mixed {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("error: {id}.expr:")))
            .unwrap_or_else(|| panic!("no error for {id}:\n{err}"));
        let named = if unit_a == "1" {
            "a plain number".to_owned()
        } else {
            format!("a number in {unit_a}")
        };
        assert!(line.contains(&named), "{line}");
        assert!(line.contains(&format!("a number in {unit_b}")), "{line}");
    }
    let errors = err.lines().filter(|l| l.starts_with("error: ")).count();
    assert_eq!(errors, mixed.len(), "{err}");
}

#[test]
fn a_bill_of_the_profile_and_a_price_is_typed_end_to_end() {
    // A monthly bill times the months of use is yuan, not yuan a month.
    compiled_with(&format!(
        "{}    quantity: cny\n",
        fact("plan", "offer_monthly_cny[offer.id] * profile.usage.months")
    ))
    .unwrap();
    let err = compiled_with(&format!(
        "{}    quantity: cny/month\n",
        fact("plan", "offer_monthly_cny[offer.id] * profile.usage.months")
    ))
    .unwrap_err();
    assert!(
        err.contains("fact `plan` measures cny/month, and its `expr` gives a number in cny"),
        "{err}"
    );
    // The budget is a month's: it meets the monthly bill, not the hourly one.
    compiled_with(&fact(
        "within",
        "profile.budget.monthly_cny is none or offer_monthly_cny[offer.id] <= profile.budget.monthly_cny",
    ))
    .unwrap();
    let err = compiled_with(&fact(
        "within",
        "profile.budget.monthly_cny is none or offer_hourly_cny[offer.id] <= profile.budget.monthly_cny",
    ))
    .unwrap_err();
    assert!(
        err.contains(
            "this is a number in cny/month and cannot be compared with a number in cny/hour"
        ),
        "{err}"
    );
    // A deadline in days meets a job's hours only through the hours in a day.
    let err = compiled_with(&fact(
        "late",
        "offer_job_hours[offer.id] > profile.job.deadline_days * 24 if offer.id in offer_job_hours and profile.job.deadline_days is not none else false",
    ))
    .unwrap_err();
    assert!(
        err.contains("this is a number in day and cannot be compared with a number in hour"),
        "{err}"
    );
    compiled_with(&fact(
        "late",
        "offer_job_hours[offer.id] > profile.job.deadline_days * hours_per_day if offer.id in offer_job_hours and profile.job.deadline_days is not none else false",
    ))
    .unwrap();
}

#[test]
fn a_profile_unit_names_a_number_field_and_a_price_unit_one_the_sheets_list() {
    let declared = "  usage.months: month\n";
    for (wrong, says) in [
        (
            "  usage.month: month\n",
            "`profile_quantities.usage.month`: the profile has no field `usage.month`",
        ),
        (
            "  workload.task: month\n",
            "`profile_quantities.workload.task`: the profile field `workload.task` is text, not a number",
        ),
    ] {
        let rules = common::edited_rules(&[("facts.yaml", declared, wrong)]);
        let err = common::compile_dir(rules.path()).unwrap_err();
        assert!(err.contains(says), "{err}");
        assert!(err.contains("facts.yaml:"), "{err}");
        let help = if wrong.contains("usage.month:") {
            "did you mean `profile.usage.months`?"
        } else {
            "the profile's number fields are "
        };
        assert!(err.contains(help), "{err}");
    }
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "  gpu_hour: hour\n",
        "  gpu_hour: hour\n  gpu_day: day\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "`price_unit_quantities.gpu_day`: `gpu_day` is not a price unit of the quote sheets"
        ),
        "{err}"
    );
    assert!(
        err.contains("`quote_sheets.price_units` lists month, gpu_hour"),
        "{err}"
    );
}

#[test]
fn an_offer_quoted_in_a_unit_the_rules_do_not_price_for_its_kind_is_refused_at_its_cell() {
    // A box quoted by the GPU-hour: the facts price a box by the month, so its bill would be a
    // guess. The rules do not load, and the error is at the row's `unit` cell.
    let rules = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "rtx5090-x8-anhui1,marketplace,the jygpu.com marketplace,极智算,month,19888,15910,CNY,month,",
        "rtx5090-x8-anhui1,marketplace,the jygpu.com marketplace,极智算,gpu_hour,34.5,27.6,CNY,none,",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains(
            "`rtx5090-x8-anhui1` is bare_metal quoted by the `gpu_hour`, and the rules price bare_metal only by the month"
        ),
        "{err}"
    );
    assert!(err.contains("2026-09-04-marketplace.csv:"), "{err}");
    assert!(err.contains("quote_sheets.price_units_by_kind"), "{err}");
    // A kind listed with a unit the sheets do not have is refused too.
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "{bare_metal: [month], container: [gpu_hour]}",
        "{bare_metal: [month], container: [gpu_minute]}",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("`quote_sheets.price_units_by_kind.container` names `gpu_minute`, which is not one of the `price_units`"),
        "{err}"
    );
}
