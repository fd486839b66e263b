//! The cheapest cover of a length of time by the billing terms an offer is sold on (`cover(hours,
//! terms)`): how many of each term (an hour, a day, a week, a month, a year) to buy so that
//! together they last at least the length, for the least bill; exact, by a search that is
//! proved against every combination (the tests below).
//!
//! A term is a map: `unit` (its name, kept as given), `length` (how long one lasts, in the
//! length's own unit, hours for the shipped rules), `cny` (what one costs) and, optionally, `min`
//! (the fewest that may be bought where any is: a minimum contract of three months). A term
//! priced per unit is only ever multiplied by a count of that unit and summed as money: the
//! one place in the language where a price per term becomes an amount, so that a price per hour
//! is never added to a price per month.
//!
//! The search: a term with a minimum is either not bought or bought at its minimum and then
//! like any other (the two are searched apart). Among terms without a minimum, one that costs
//! more than enough of a shorter one to last as long is never needed; of the rest, buying as
//! many of a shorter term as last a longer one is never cheaper than the longer one, so each
//! shorter term is bought fewer times than it takes to last the next longer one (fewer than 24
//! hours, 7 days, 5 weeks, 13 months) and the longest term covers what is left. Amounts are
//! summed in fen, so ties are ties; among covers of the same bill the one found first wins: the
//! most of the longer terms.

use crate::value::Value;

/// The longest length a cover is asked for, and a term may last: a million million (hours),
/// so that every count is exact in 64 bits and every bill in fen in 128. The search's work
/// does not grow with the length: it is bounded by the terms' lengths.
pub const MAX_LENGTH: f64 = 1e12;

/// One term as the search reads it.
#[derive(Debug, Clone)]
struct BillingTerm {
    unit: Value,
    length: f64,
    fen: i128,
    min: u64,
}

impl BillingTerm {
    /// The length as the whole number it is.
    #[allow(clippy::cast_possible_truncation)] // whole, checked as read
    fn whole(&self) -> i128 {
        self.length as i128
    }
}

/// The cover found: a count of each term (in the order given) and its bill in fen.
#[derive(Debug, Clone, PartialEq)]
struct Bought {
    fen: i128,
    counts: Vec<u64>,
}

/// `cover(length, terms)`: the map `{cny, length, parts}` of the cheapest way to last `length`
/// with `terms` (`parts`: `{unit, count, length, cny}` for each term bought, longest first,
/// `cny` what that many of it cost); none where `terms` is empty.
///
/// # Errors
/// A message naming what is wrong with the length or a term.
pub fn cover(length: &Value, terms: &Value) -> Result<Value, String> {
    let length = length
        .as_number()
        .filter(|l| l.is_finite() && (0.0..=MAX_LENGTH).contains(l))
        .ok_or_else(|| format!("`cover` needs a length from 0 to {MAX_LENGTH}, not {length}"))?;
    let items = terms
        .as_list()
        .ok_or_else(|| format!("`cover` needs a list of terms, not {terms}"))?;
    let terms = items.iter().map(term).collect::<Result<Vec<_>, _>>()?;
    if terms.is_empty() {
        return Ok(Value::None);
    }
    let found = cheapest(length, &terms);
    Ok(said(&terms, &found))
}

/// One term of the list, read and checked.
fn term(item: &Value) -> Result<BillingTerm, String> {
    let field = |name: &str| item.get_attr(name);
    let length = field("length")
        .as_number()
        .filter(|l| l.fract() == 0.0 && (1.0..=MAX_LENGTH).contains(l))
        .ok_or_else(|| {
            format!("a term of `cover` needs a whole `length` from 1 to {MAX_LENGTH}: {item}")
        })?;
    let cny = field("cny")
        .as_number()
        .filter(|c| c.is_finite() && *c >= 0.0 && *c < 1e13)
        .ok_or_else(|| format!("a term of `cover` needs a `cny` of 0 or more: {item}"))?;
    let min = match field("min") {
        Value::Undefined | Value::None => 1,
        m => m
            .as_i64()
            .filter(|n| m.is_integer() && *n >= 1)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| format!("a term's `min` is a whole number of 1 or more: {item}"))?,
    };
    #[allow(clippy::cast_possible_truncation)] // below 1e15 fen
    let fen = (cny * 100.0).round() as i128;
    Ok(BillingTerm {
        unit: field("unit"),
        length,
        fen,
        min,
    })
}

/// How many of a term of `each` it takes to last `length` (0 for nothing left).
fn needed(length: f64, each: f64) -> u64 {
    if length <= 0.0 {
        0
    } else {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // positive, at most MAX_LENGTH over a positive length
        let n = (length / each).ceil() as u64;
        n
    }
}

/// The cheapest cover of `length` by `terms` (which are not empty).
fn cheapest(length: f64, terms: &[BillingTerm]) -> Bought {
    let with_min: Vec<usize> = (0..terms.len()).filter(|&i| terms[i].min > 1).collect();
    let mut best: Option<Bought> = None;
    // Each choice of which terms with a minimum are bought (at least their minimum).
    for choice in 0..(1u32 << with_min.len()) {
        let mut counts = vec![0u64; terms.len()];
        let mut fen = 0i128;
        let mut left = length;
        let mut usable = vec![true; terms.len()];
        for (bit, &i) in with_min.iter().enumerate() {
            if choice & (1 << bit) == 0 {
                usable[i] = false;
            } else {
                counts[i] = terms[i].min;
                fen += i128::from(terms[i].min) * terms[i].fen;
                left -= terms[i].min as f64 * terms[i].length;
            }
        }
        if let Some(found) = free_cover(left, terms, &usable, counts, fen)
            && best.as_ref().is_none_or(|b| found.fen < b.fen)
        {
            best = Some(found);
        }
    }
    best.expect("the choice of no forced term covers with any term")
}

/// The cheapest cover of `left` by the `usable` terms, each bought any number of times, on top
/// of `counts` bought already for `fen`; none where no term is usable but length is left.
fn free_cover(
    left: f64,
    terms: &[BillingTerm],
    usable: &[bool],
    counts: Vec<u64>,
    fen: i128,
) -> Option<Bought> {
    if left <= 0.0 {
        return Some(Bought { fen, counts });
    }
    let usable: Vec<usize> = (0..terms.len()).filter(|&i| usable[i]).collect();
    // Drop a term that costs more than enough of another no longer to last as long: it is
    // never needed.
    let mut kept: Vec<usize> = usable
        .iter()
        .copied()
        .filter(|&j| {
            !usable.iter().any(|&i| {
                i != j
                    && terms[i].length <= terms[j].length
                    && i128::from(needed(terms[j].length, terms[i].length)) * terms[i].fen
                        < terms[j].fen
            })
        })
        .collect();
    // By price per unit of length, the cheapest first (of equal rates, the longer).
    kept.sort_by(|&a, &b| {
        let (ta, tb) = (&terms[a], &terms[b]);
        (ta.fen * tb.whole())
            .cmp(&(tb.fen * ta.whole()))
            .then(tb.length.total_cmp(&ta.length))
    });
    let (&best_rate, dearer) = kept.split_first()?;
    // A term bought as often as lasts exactly as long as some cheaper-rated one (their lengths'
    // least common multiple) can give way to it for no more: fewer is enough.
    let bounds: Vec<u64> = dearer
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            kept[..=k]
                .iter()
                .map(|&j| terms[j].whole() / gcd(terms[i].whole(), terms[j].whole()))
                .min()
                .map_or(0, |q| u64::try_from(q - 1).unwrap_or(u64::MAX))
        })
        .collect();
    let mut search = CoverSearch {
        terms,
        dearer,
        bounds: &bounds,
        best_rate,
        best: None,
    };
    search.go(0, left, counts, fen);
    search.best
}

/// A branch-and-bound search over the counts of the dearer terms, the cheapest-rated term
/// covering what they leave.
struct CoverSearch<'a> {
    terms: &'a [BillingTerm],
    dearer: &'a [usize],
    bounds: &'a [u64],
    best_rate: usize,
    best: Option<Bought>,
}

impl CoverSearch<'_> {
    fn go(&mut self, k: usize, left: f64, counts: Vec<u64>, fen: i128) {
        let cheapest = &self.terms[self.best_rate];
        // No cover from here costs less than the rest at the cheapest rate.
        #[allow(clippy::cast_possible_truncation)] // a bill below 1e15 fen
        let least = fen + (left.max(0.0) * cheapest.fen as f64 / cheapest.length).floor() as i128;
        if self.best.as_ref().is_some_and(|b| least >= b.fen) {
            return;
        }
        if k == self.dearer.len() || left <= 0.0 {
            let n = needed(left, cheapest.length);
            let mut counts = counts;
            counts[self.best_rate] += n;
            let fen = fen + i128::from(n) * cheapest.fen;
            if self.best.as_ref().is_none_or(|b| fen < b.fen) {
                self.best = Some(Bought { fen, counts });
            }
            return;
        }
        let i = self.dearer[k];
        let term = &self.terms[i];
        let top = self.bounds[k].min(needed(left, term.length));
        for n in (0..=top).rev() {
            let mut c = counts.clone();
            c[i] += n;
            self.go(
                k + 1,
                left - n as f64 * term.length,
                c,
                fen + i128::from(n) * term.fen,
            );
        }
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// An amount in fen as yuan: whole yuan stay whole.
fn yuan(fen: i128) -> Value {
    if fen % 100 == 0 {
        i64::try_from(fen / 100).map_or_else(|_| Value::from(fen as f64 / 100.0), Value::from)
    } else {
        Value::from(fen as f64 / 100.0)
    }
}

/// The cover as the rules read it.
fn said(terms: &[BillingTerm], found: &Bought) -> Value {
    let mut bought: Vec<usize> = (0..terms.len()).filter(|&i| found.counts[i] > 0).collect();
    bought.sort_by(|&a, &b| terms[b].length.total_cmp(&terms[a].length));
    let covered: f64 = bought
        .iter()
        .map(|&i| found.counts[i] as f64 * terms[i].length)
        .sum();
    let parts: Vec<Value> = bought
        .iter()
        .map(|&i| {
            let t = &terms[i];
            Value::from_pairs([
                (Value::from("unit"), t.unit.clone()),
                (Value::from("count"), Value::from(found.counts[i])),
                (Value::from("length"), whole_if_whole(t.length)),
                (
                    Value::from("cny"),
                    yuan(i128::from(found.counts[i]) * t.fen),
                ),
            ])
        })
        .collect();
    Value::from_pairs([
        (Value::from("cny"), yuan(found.fen)),
        (Value::from("length"), whole_if_whole(covered)),
        (Value::from("parts"), Value::from(parts)),
    ])
}

/// `x` as a whole number where it is one.
fn whole_if_whole(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)] // whole, below 2^53
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(unit: &str, length: f64, cny: f64, min: u64) -> Value {
        Value::from_pairs([
            (Value::from("unit"), Value::from(unit)),
            (Value::from("length"), Value::from(length)),
            (Value::from("cny"), Value::from(cny)),
            (Value::from("min"), Value::from(min)),
        ])
    }

    fn parts(cover: &Value) -> Vec<(String, i64)> {
        cover
            .get_attr("parts")
            .as_list()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p.get_attr("unit").as_str().unwrap().to_owned(),
                    p.get_attr("count").as_i64().unwrap(),
                )
            })
            .collect()
    }

    /// A 13-day job on a box sold by the day (¥400), the week (¥2,500) and the month (¥7,920):
    /// a week and six days (¥4,900), not two weeks (¥5,000) nor a month; a 27-day job, a month.
    #[test]
    fn covers_a_job_with_the_cheapest_mix_of_terms() {
        let terms = Value::from(vec![
            t("day", 24.0, 400.0, 1),
            t("week", 168.0, 2500.0, 1),
            t("month", 720.0, 7920.0, 1),
        ]);
        let c = cover(&Value::from(13.0 * 24.0), &terms).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(4900));
        assert_eq!(parts(&c), [("week".to_owned(), 1), ("day".to_owned(), 6)]);
        assert_eq!(c.get_attr("length"), Value::from(312));
        let c = cover(&Value::from(27.0 * 24.0), &terms).unwrap();
        assert_eq!(parts(&c), [("month".to_owned(), 1)]);
        // Twenty days: two weeks and six days (¥7,400), below three weeks and the month.
        let c = cover(&Value::from(20.0 * 24.0), &terms).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(7400));
        assert_eq!(parts(&c), [("week".to_owned(), 2), ("day".to_owned(), 6)]);
    }

    /// A three-month minimum is bought whole or not at all.
    #[test]
    fn a_minimum_term_is_bought_whole_or_not_at_all() {
        let terms = Value::from(vec![t("day", 24.0, 400.0, 1), t("month", 720.0, 7000.0, 3)]);
        // Ten days: ¥4,000 by the day, where the month would bill three months (¥21,000).
        let c = cover(&Value::from(240.0), &terms).unwrap();
        assert_eq!(parts(&c), [("day".to_owned(), 10)]);
        // Seventy days: three months (¥21,000) beat seventy days (¥28,000).
        let c = cover(&Value::from(70.0 * 24.0), &terms).unwrap();
        assert_eq!(parts(&c), [("month".to_owned(), 3)]);
        // Five months and a day: five months and a day.
        let c = cover(&Value::from(151.0 * 24.0), &terms).unwrap();
        assert_eq!(parts(&c), [("month".to_owned(), 5), ("day".to_owned(), 1)]);
    }

    #[test]
    fn nothing_to_cover_costs_nothing_and_no_terms_give_none() {
        let terms = Value::from(vec![t("month", 720.0, 7920.0, 3)]);
        let c = cover(&Value::from(0), &terms).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(0));
        assert!(parts(&c).is_empty());
        assert_eq!(
            cover(&Value::from(5), &Value::from(Vec::<Value>::new())),
            Ok(Value::None)
        );
    }

    #[test]
    fn refuses_what_is_not_a_length_or_a_term() {
        let terms = Value::from(vec![t("day", 24.0, 400.0, 1)]);
        for length in [Value::from(-1), Value::from("x"), Value::from(1e13)] {
            assert!(cover(&length, &terms).unwrap_err().contains("length"));
        }
        for bad in [t("day", 0.0, 400.0, 1), t("day", 24.0, -1.0, 1)] {
            assert!(cover(&Value::from(5), &Value::from(vec![bad])).is_err());
        }
        let no_min = Value::from(vec![t("day", 24.0, 400.0, 0)]);
        assert!(
            cover(&Value::from(5), &no_min)
                .unwrap_err()
                .contains("`min`")
        );
    }

    /// Every combination of counts up to what lasts the length alone, each bought at its
    /// minimum or not at all: the reference the search is proved against.
    fn every_cover(length: f64, terms: &[(f64, i128, u64)]) -> i128 {
        let tops: Vec<u64> = terms
            .iter()
            .map(|&(l, _, m)| needed(length, l).max(m))
            .collect();
        let mut best = i128::MAX;
        let mut counts = vec![0u64; terms.len()];
        loop {
            let ok_min = counts
                .iter()
                .zip(terms)
                .all(|(&c, &(_, _, m))| c == 0 || c >= m);
            let lasts: f64 = counts
                .iter()
                .zip(terms)
                .map(|(&c, &(l, _, _))| c as f64 * l)
                .sum();
            if ok_min && lasts >= length {
                let fen: i128 = counts
                    .iter()
                    .zip(terms)
                    .map(|(&c, &(_, f, _))| i128::from(c) * f)
                    .sum();
                best = best.min(fen);
            }
            let mut k = 0;
            loop {
                if k == counts.len() {
                    return best;
                }
                if counts[k] < tops[k] {
                    counts[k] += 1;
                    break;
                }
                counts[k] = 0;
                k += 1;
            }
        }
    }

    proptest! {
        /// The search's bill is the least of every combination, and what it buys lasts the
        /// length and costs what its parts cost.
        #[test]
        fn the_search_finds_the_least_of_every_combination(
            length in 0u32..400,
            terms in prop::collection::vec(
                (prop::sample::select(vec![1.0, 5.0, 7.0, 13.0, 24.0, 30.0, 168.0]), 1i64..5_000, 1u64..4),
                1..4,
            ),
        ) {
            let length = f64::from(length);
            let list: Vec<Value> = terms
                .iter()
                .enumerate()
                .map(|(i, &(l, fen, m))| {
                    #[allow(clippy::cast_precision_loss)]
                    let cny = fen as f64 / 100.0;
                    t(&format!("t{i}"), l, cny, m)
                })
                .collect();
            let c = cover(&Value::from(length), &Value::from(list)).unwrap();
            let reference = every_cover(
                length,
                &terms.iter().map(|&(l, f, m)| (l, i128::from(f), m)).collect::<Vec<_>>(),
            );
            #[allow(clippy::cast_possible_truncation)] // a bill below 1e15 fen
            let fen = (c.get_attr("cny").as_number().unwrap() * 100.0).round() as i128;
            prop_assert_eq!(fen, reference);
            prop_assert!(c.get_attr("length").as_number().unwrap() >= length);
            let summed: f64 = c
                .get_attr("parts")
                .as_list()
                .unwrap()
                .iter()
                .map(|p| p.get_attr("cny").as_number().unwrap())
                .sum();
            prop_assert!((summed - c.get_attr("cny").as_number().unwrap()).abs() < 1e-6);
        }
    }
}
