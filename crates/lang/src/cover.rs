//! The cheapest cover of a length of time by the billing terms an offer is sold on (`cover(hours,
//! terms)`): how many of each term (an hour, a day, a week, a month, a year) to buy so that
//! together they last at least the length, for the least bill; exact, by a search that is
//! proved against every combination (the tests below).
//!
//! A term is a map: `unit` (its name, kept as given), `length` (how long one lasts, in the
//! length's own unit, hours for the shipped rules), `cny` (what one costs) and, optionally, `min`
//! (the fewest that may be bought where any is: a minimum contract of three months), `refund`
//! (the share of its unused time the vendor pays back when it is ended early, 0 to 1) and
//! `notice` (how long before it ends it must be ended, in the length's unit). A term priced per
//! unit is only ever multiplied by a count of that unit and summed as money: the one place in
//! the language where a price per term becomes an amount, so that a price per hour is never
//! added to a price per month.
//!
//! The search: a term with a minimum is either not bought or bought at its minimum and then
//! like any other (the two are searched apart). Among terms without a minimum, one that costs
//! more than enough of a shorter one to last as long is never needed; of the rest, buying as
//! many of a shorter term as last a longer one is never cheaper than the longer one, so each
//! shorter term is bought fewer times than it takes to last the next longer one (fewer than 24
//! hours, 7 days, 5 weeks, 13 months) and the longest term covers what is left. Amounts are
//! summed in fen, so ties are ties; among covers of the same bill the one found first wins: the
//! most of the dearer-rated terms, tried from the most down (twelve months before a year of
//! the same bill: the shorter commitment).
//!
//! **Ended early.** Where a term is refunded, the cover may also end the term bought last
//! early: it is ended when the length is reached and its notice has run (the notice counted
//! from then: the end of a job is known when it comes), and the vendor pays back `refund` of the
//! rest of that term at its own rate, to the fen. So a 13-day job may rent a month and get back
//! 80% of the 17 days it did not use where that costs less than a week and six days. For each
//! refunded term `k` bought last, what is bought before it must end in the window where `k` is
//! still running when the notice ends (from the length plus the notice less `k`'s length, to the
//! length plus the notice), and the bill is that purchase less `refund` × `k`'s rate × the
//! length it lasts: a cover of a window at each term's price less its length at that rate,
//! searched exactly the same way (every term but the best-rated bought fewer times than lasts
//! as long as a better-rated one; the best-rated fills the window, as few as reach it where its
//! price so reckoned is positive, as many as fit where it is negative). A term with a minimum
//! is refunded only beyond its minimum, which is billed whole.

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
    /// The share of its unused time paid back when it is ended early (0: none).
    refund: f64,
    /// How long before it ends it must be ended.
    notice: f64,
}

impl BillingTerm {
    /// The length as the whole number it is.
    #[allow(clippy::cast_possible_truncation)] // whole, checked as read
    fn whole(&self) -> i128 {
        self.length as i128
    }
}

/// The cover found: a count of each term (in the order given), its bill in fen (what is
/// paid less what is paid back) and the term ended early, if one is.
#[derive(Debug, Clone, PartialEq)]
struct Bought {
    fen: i128,
    counts: Vec<u64>,
    early: Option<Early>,
}

/// The term bought last and ended early: which, how much of it goes unused and is paid back
/// for, and what is paid back, in fen.
#[derive(Debug, Clone, PartialEq)]
struct Early {
    term: usize,
    unused: f64,
    fen: i128,
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
    let mut found = cheapest(length, &terms);
    for k in 0..terms.len() {
        if let Some(early) = ended_early(length, &terms, k, found.fen) {
            found = early;
        }
    }
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
    let refund = match field("refund") {
        Value::Undefined | Value::None => 0.0,
        r => r
            .as_number()
            .filter(|r| (0.0..=1.0).contains(r))
            .ok_or_else(|| format!("a term's `refund` is a share from 0 to 1: {item}"))?,
    };
    let notice = match field("notice") {
        Value::Undefined | Value::None => 0.0,
        n => n
            .as_number()
            .filter(|n| (0.0..=MAX_LENGTH).contains(n))
            .ok_or_else(|| {
                format!("a term's `notice` is a length from 0 to {MAX_LENGTH}: {item}")
            })?,
    };
    #[allow(clippy::cast_possible_truncation)] // below 1e15 fen
    let fen = (cny * 100.0).round() as i128;
    Ok(BillingTerm {
        unit: field("unit"),
        length,
        fen,
        min,
        refund,
        notice,
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
        return Some(Bought {
            fen,
            counts,
            early: None,
        });
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
    // No cover costs more than the cheapest of the kept terms bought alone: a ceiling that
    // prunes from the start (the search still finds, and keeps, its own first cover of the
    // least bill).
    let ceiling = kept
        .iter()
        .map(|&i| fen + i128::from(needed(left, terms[i].length)) * terms[i].fen)
        .min()
        .unwrap_or(i128::MAX);
    let mut search = CoverSearch {
        terms,
        dearer,
        bounds: &bounds,
        best_rate,
        ceiling,
        best: None,
    };
    let mut counts = counts;
    search.go(0, left, &mut counts, fen);
    search.best
}

/// A branch-and-bound search over the counts of the dearer terms, the cheapest-rated term
/// covering what they leave.
struct CoverSearch<'a> {
    terms: &'a [BillingTerm],
    dearer: &'a [usize],
    bounds: &'a [u64],
    best_rate: usize,
    /// What some cover is known to cost: a branch that costs more is not searched.
    ceiling: i128,
    best: Option<Bought>,
}

impl CoverSearch<'_> {
    /// The counts of `dearer[k..]` from here, on top of `counts` (restored on return).
    fn go(&mut self, k: usize, left: f64, counts: &mut Vec<u64>, fen: i128) {
        let cheapest = &self.terms[self.best_rate];
        // No cover from here costs less than the rest at the cheapest rate.
        #[allow(clippy::cast_possible_truncation)] // a bill below 1e15 fen
        let least = fen + (left.max(0.0) * cheapest.fen as f64 / cheapest.length).floor() as i128;
        if least > self.ceiling || self.best.as_ref().is_some_and(|b| least >= b.fen) {
            return;
        }
        if k == self.dearer.len() || left <= 0.0 {
            let n = needed(left, cheapest.length);
            let fen = fen + i128::from(n) * cheapest.fen;
            if self.best.as_ref().is_none_or(|b| fen < b.fen) {
                let mut counts = counts.clone();
                counts[self.best_rate] += n;
                self.best = Some(Bought {
                    fen,
                    counts,
                    early: None,
                });
            }
            return;
        }
        let i = self.dearer[k];
        let term = &self.terms[i];
        let top = self.bounds[k].min(needed(left, term.length));
        let (length, price) = (term.length, term.fen);
        for n in (0..=top).rev() {
            counts[i] += n;
            self.go(
                k + 1,
                left - n as f64 * length,
                counts,
                fen + i128::from(n) * price,
            );
            counts[i] -= n;
        }
    }
}

/// The cheapest cover of `length` whose last term, `k`, is ended early and paid back for, where
/// it costs less than `beat` (in fen); none where `k` is not refunded, or nothing bought before
/// it ends in its window for less.
fn ended_early(length: f64, terms: &[BillingTerm], k: usize, beat: i128) -> Option<Bought> {
    let last = &terms[k];
    if last.refund <= 0.0 || last.fen == 0 {
        return None;
    }
    // The term bought last ends when the length is reached and the notice has run: what is
    // bought before it ends between that less its length (all of it used) and that (none).
    let end = length + last.notice;
    let window = (end - last.length, end);
    // What is paid back for each unit of length left unused, in fen.
    #[allow(clippy::cast_precision_loss)] // a bill below 1e15 fen
    let rate = last.refund * last.fen as f64 / last.length;
    #[allow(clippy::cast_precision_loss)]
    let weights: Vec<f64> = terms
        .iter()
        .map(|t| t.fen as f64 - rate * t.length)
        .collect();
    let with_min: Vec<usize> = (0..terms.len())
        .filter(|&i| i != k && terms[i].min > 1)
        .collect();
    let mut search = WindowSearch {
        terms,
        weights: &weights,
        k,
        window,
        #[allow(clippy::cast_precision_loss)]
        fixed: last.fen as f64 + rate * window.0,
        beat,
        order: Vec::new(),
        bounds: Vec::new(),
        best: None,
    };
    for choice in 0..(1u32 << with_min.len()) {
        let mut counts = vec![0u64; terms.len()];
        let mut usable = vec![true; terms.len()];
        // A minimum is billed whole: only a term bought beyond it is ended early.
        if last.min > 1 {
            counts[k] = last.min;
        }
        for (bit, &i) in with_min.iter().enumerate() {
            if choice & (1 << bit) == 0 {
                usable[i] = false;
            } else {
                counts[i] = terms[i].min;
            }
        }
        search.order_by_weight(&usable);
        #[allow(clippy::cast_precision_loss)] // counts below 2^53
        let (bought, weight) = counts
            .iter()
            .zip(terms.iter().zip(&weights))
            .fold((0.0, 0.0), |(l, w), (&c, (t, &tw))| {
                (l + c as f64 * t.length, w + c as f64 * tw)
            });
        search.go(0, &mut counts, bought, weight);
    }
    search.best
}

/// The search for what is bought before a refunded term ended early: counts whose lengths
/// end in `window`, for the least of the counts times `weights` (each term's price less its
/// length at the rate paid back), `fixed` added; each leaf billed exactly, in fen.
struct WindowSearch<'a> {
    terms: &'a [BillingTerm],
    weights: &'a [f64],
    k: usize,
    window: (f64, f64),
    fixed: f64,
    /// The bill to beat (the cover without a term ended early): no leaf that costs as much is
    /// kept, no branch that must is searched.
    beat: i128,
    /// The usable terms, the best weight for its length first (of equal, the longer).
    order: Vec<usize>,
    /// How many of each of `order[1..]` at most: fewer than last as long as a better one.
    bounds: Vec<u64>,
    best: Option<Bought>,
}

impl WindowSearch<'_> {
    fn ratio(&self, i: usize) -> f64 {
        self.weights[i] / self.terms[i].length
    }

    fn order_by_weight(&mut self, usable: &[bool]) {
        let mut order: Vec<usize> = (0..self.terms.len()).filter(|&i| usable[i]).collect();
        order.sort_by(|&a, &b| {
            self.ratio(a)
                .total_cmp(&self.ratio(b))
                .then(self.terms[b].length.total_cmp(&self.terms[a].length))
        });
        self.bounds = (1..order.len())
            .map(|j| {
                let i = order[j];
                order[..j]
                    .iter()
                    .map(|&m| {
                        let (a, b) = (self.terms[i].whole(), self.terms[m].whole());
                        b / gcd(a, b)
                    })
                    .min()
                    .map_or(0, |q| u64::try_from(q - 1).unwrap_or(u64::MAX))
            })
            .collect();
        self.order = order;
    }

    /// The counts of `order[j + 1..]` from here, `bought` the length and `weight` the weight of
    /// `counts` so far (restored on return).
    fn go(&mut self, j: usize, counts: &mut Vec<u64>, bought: f64, weight: f64) {
        let (lo, hi) = self.window;
        if bought > hi {
            return;
        }
        // No purchase from here weighs less than the rest at the best ratio.
        let least = match self.order.first() {
            Some(&b) if self.ratio(b) >= 0.0 => self.ratio(b) * (lo - bought).max(0.0),
            Some(&b) => self.ratio(b) * (hi - bought),
            None => 0.0,
        };
        let to_beat = self
            .best
            .as_ref()
            .map_or(self.beat, |b| b.fen.min(self.beat));
        #[allow(clippy::cast_precision_loss)] // a bill below 1e15 fen
        if weight + least + self.fixed >= to_beat as f64 + 1.0 {
            return;
        }
        if j + 1 >= self.order.len() {
            self.leaf(counts, bought);
            return;
        }
        let i = self.order[j + 1];
        let each = self.terms[i].length;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // positive, bounded
        let fit = ((hi - bought) / each).floor() as u64;
        for n in (0..=self.bounds[j].min(fit)).rev() {
            counts[i] += n;
            #[allow(clippy::cast_precision_loss)] // counts below 2^53
            let many = n as f64;
            self.go(
                j + 1,
                counts,
                bought + many * each,
                weight + many * self.weights[i],
            );
            counts[i] -= n;
        }
    }

    /// The best-rated term fills the window, and the refunded term is bought last.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )] // counts and bills within the bounds of `MAX_LENGTH`
    fn leaf(&mut self, counts: &[u64], bought: f64) {
        let (lo, hi) = self.window;
        let mut before = bought;
        // How many of the best-rated term fill the window.
        let mut fill = None;
        if let Some(&b) = self.order.first() {
            let each = self.terms[b].length;
            let n = if self.weights[b] < 0.0 {
                ((hi - bought) / each).floor()
            } else {
                ((lo - bought) / each).ceil().max(0.0)
            };
            if n < 0.0 {
                return;
            }
            fill = Some((b, n as u64));
            before += n * each;
        }
        if before < lo || before > hi {
            return;
        }
        let last = &self.terms[self.k];
        let unused = before - lo;
        let back = (last.refund * last.fen as f64 * unused / last.length).round() as i128;
        let paid: i128 = counts
            .iter()
            .zip(self.terms)
            .map(|(&c, t)| i128::from(c) * t.fen)
            .sum::<i128>()
            + fill.map_or(0, |(b, n)| i128::from(n) * self.terms[b].fen)
            + last.fen;
        let fen = paid - back;
        if fen < self.beat && self.best.as_ref().is_none_or(|b| fen < b.fen) {
            let mut counts = counts.to_vec();
            if let Some((b, n)) = fill {
                counts[b] += n;
            }
            counts[self.k] += 1;
            self.best = Some(Bought {
                fen,
                counts,
                early: Some(Early {
                    term: self.k,
                    unused,
                    fen: back,
                }),
            });
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

/// The cover as the rules read it: its bill (`cny`, what is paid less what is paid back), what
/// is paid (`paid`), how long it lasts, its parts, and the term ended early (`refund`: its
/// `unit`, the `length` of it paid back for, the `share` and the `cny` paid back) or none.
fn said(terms: &[BillingTerm], found: &Bought) -> Value {
    let mut bought: Vec<usize> = (0..terms.len()).filter(|&i| found.counts[i] > 0).collect();
    bought.sort_by(|&a, &b| terms[b].length.total_cmp(&terms[a].length));
    let covered: f64 = bought
        .iter()
        .map(|&i| found.counts[i] as f64 * terms[i].length)
        .sum();
    let paid: i128 = bought
        .iter()
        .map(|&i| i128::from(found.counts[i]) * terms[i].fen)
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
    let refund = found.early.as_ref().map_or(Value::None, |early| {
        let t = &terms[early.term];
        Value::from_pairs([
            (Value::from("unit"), t.unit.clone()),
            (Value::from("length"), whole_if_whole(early.unused)),
            (Value::from("share"), Value::from(t.refund)),
            (Value::from("cny"), yuan(early.fen)),
        ])
    });
    Value::from_pairs([
        (Value::from("cny"), yuan(found.fen)),
        (Value::from("paid"), yuan(paid)),
        (Value::from("length"), whole_if_whole(covered)),
        (Value::from("parts"), Value::from(parts)),
        (Value::from("refund"), refund),
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

    fn refunded(unit: &str, length: f64, cny: f64, share: f64, notice: f64) -> Value {
        refunded_min(unit, length, cny, 1, share, notice)
    }

    fn refunded_min(unit: &str, length: f64, cny: f64, min: u64, share: f64, notice: f64) -> Value {
        Value::from_pairs([
            (Value::from("unit"), Value::from(unit)),
            (Value::from("length"), Value::from(length)),
            (Value::from("cny"), Value::from(cny)),
            (Value::from("min"), Value::from(min)),
            (Value::from("refund"), Value::from(share)),
            (Value::from("notice"), Value::from(notice)),
        ])
    }

    /// A 13-day job on a box sold by the day, the week and the month, the month refunded at
    /// 80% of its unused days: without notice the month less 17 days' refund (¥7,920 less
    /// ¥3,590.40, ¥4,329.60) beats a week and six days (¥4,900); with seven days' notice only
    /// ten days come back (¥2,112: ¥5,808) and the week and six days win.
    #[test]
    fn a_refunded_term_is_ended_early_where_that_costs_less() {
        let terms = |notice: f64| {
            Value::from(vec![
                t("day", 24.0, 400.0, 1),
                t("week", 168.0, 2500.0, 1),
                refunded("month", 720.0, 7920.0, 0.8, notice),
            ])
        };
        let c = cover(&Value::from(13.0 * 24.0), &terms(0.0)).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(4329.6));
        assert_eq!(c.get_attr("paid"), Value::from(7920));
        assert_eq!(parts(&c), [("month".to_owned(), 1)]);
        let refund = c.get_attr("refund");
        assert_eq!(refund.get_attr("unit"), Value::from("month"));
        assert_eq!(refund.get_attr("length"), Value::from(17 * 24));
        assert_eq!(refund.get_attr("cny"), Value::from(3590.4));
        let c = cover(&Value::from(13.0 * 24.0), &terms(7.0 * 24.0)).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(4900));
        assert_eq!(c.get_attr("refund"), Value::None);
        // Forty days: a month and then a second ended after ten days (¥7,920 + ¥7,920 less 80%
        // of 20 days, ¥4,224: ¥11,616), below a month, a week and three days (¥11,620).
        let c = cover(&Value::from(40.0 * 24.0), &terms(0.0)).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(11616));
        assert_eq!(parts(&c), [("month".to_owned(), 2)]);
    }

    /// A minimum is billed whole: a three-month contract ended after ten days pays back
    /// nothing of its minimum; a fourth month bought beyond it is paid back for.
    #[test]
    fn a_minimum_is_billed_whole_however_early_it_ends() {
        let terms = Value::from(vec![refunded_min("month", 720.0, 7000.0, 3, 1.0, 0.0)]);
        let c = cover(&Value::from(240.0), &terms).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(21000));
        assert_eq!(c.get_attr("refund"), Value::None);
        // A hundred days: four months, the fourth ended after ten days (¥28,000 less ¥4,666.67).
        let c = cover(&Value::from(2400.0), &terms).unwrap();
        assert_eq!(parts(&c), [("month".to_owned(), 4)]);
        assert_eq!(c.get_attr("refund").get_attr("cny"), Value::from(4666.67));
        assert_eq!(c.get_attr("cny"), Value::from(23333.33));
    }

    /// Of two covers of the same bill, the one found first is kept: the most of the dearer-rated
    /// terms, tried from the most down. Twelve months of use (8,640 h) cost ¥84,000 as twelve
    /// months or as a year (the better rate, ¥9.59 an hour against ¥9.72, but 120 hours more):
    /// the twelve months are kept, the shorter commitment, also where the search starts under
    /// the bill of a term bought alone (¥84,000 both) and where a refund pays nothing back.
    #[test]
    fn of_equal_bills_the_first_found_is_kept() {
        let terms = Value::from(vec![
            t("month", 720.0, 7000.0, 1),
            t("year", 8760.0, 84000.0, 1),
        ]);
        let c = cover(&Value::from(8640), &terms).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(84000));
        assert_eq!(parts(&c), [("month".to_owned(), 12)]);
        let refunding = Value::from(vec![
            refunded("month", 720.0, 7000.0, 0.5, 0.0),
            refunded("year", 8760.0, 84000.0, 0.5, 240.0),
        ]);
        let c = cover(&Value::from(8640), &refunding).unwrap();
        assert_eq!(c.get_attr("cny"), Value::from(84000));
        assert_eq!(parts(&c), [("month".to_owned(), 12)]);
        assert_eq!(c.get_attr("refund"), Value::None);
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

    /// The next combination of `counts`, each up to its top, as an odometer turns; false once
    /// every one has been.
    fn step(counts: &mut [u64], tops: &[u64]) -> bool {
        for (c, &top) in counts.iter_mut().zip(tops) {
            if *c < top {
                *c += 1;
                return true;
            }
            *c = 0;
        }
        false
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
            if !step(&mut counts, &tops) {
                return best;
            }
        }
    }

    /// Every combination, as [`every_cover`], and each of its terms bought last and ended
    /// early where refunded: the reference the search with refunds is proved against. A term
    /// is `(length, fen, min, refund, notice)`.
    fn every_cover_ended_early(length: f64, terms: &[(f64, i128, u64, f64, f64)]) -> i128 {
        let longest = terms.iter().map(|t| t.0 + t.4).fold(0.0, f64::max);
        let tops: Vec<u64> = terms
            .iter()
            .map(|&(l, _, m, _, _)| needed(length + longest, l).max(m) + 1)
            .collect();
        let mut best = i128::MAX;
        let mut counts = vec![0u64; terms.len()];
        loop {
            let ok_min = counts.iter().zip(terms).all(|(&c, t)| c == 0 || c >= t.2);
            let lasts: f64 = counts.iter().zip(terms).map(|(&c, t)| c as f64 * t.0).sum();
            let paid: i128 = counts
                .iter()
                .zip(terms)
                .map(|(&c, t)| i128::from(c) * t.1)
                .sum();
            if ok_min && lasts >= length {
                best = best.min(paid);
                for (k, &(l, fen, m, share, notice)) in terms.iter().enumerate() {
                    let beyond_min = if m > 1 { counts[k] > m } else { counts[k] >= 1 };
                    let used = length + notice - (lasts - l);
                    if beyond_min && share > 0.0 && (0.0..=l).contains(&used) {
                        #[allow(clippy::cast_possible_truncation)]
                        let back = (share * fen as f64 * (l - used) / l).round() as i128;
                        best = best.min(paid - back);
                    }
                }
            }
            if !step(&mut counts, &tops) {
                return best;
            }
        }
    }

    proptest! {
        /// With refunds and notice, the search's bill is the least of every combination and
        /// every term of it ended early, and what it pays back is its paid less its bill.
        #[test]
        fn the_search_with_refunds_finds_the_least_of_every_combination(
            length in 0u32..120,
            terms in prop::collection::vec(
                (
                    prop::sample::select(vec![1.0, 5.0, 7.0, 24.0, 30.0]),
                    1i64..5_000,
                    1u64..3,
                    prop::sample::select(vec![0.0, 0.3, 0.8, 1.0]),
                    prop::sample::select(vec![0.0, 2.0, 7.0]),
                ),
                1..4,
            ),
        ) {
            let length = f64::from(length);
            let list: Vec<Value> = terms
                .iter()
                .enumerate()
                .map(|(i, &(l, fen, m, share, notice))| {
                    #[allow(clippy::cast_precision_loss)]
                    let cny = fen as f64 / 100.0;
                    refunded_min(&format!("t{i}"), l, cny, m, share, notice)
                })
                .collect();
            let c = cover(&Value::from(length), &Value::from(list)).unwrap();
            let reference = every_cover_ended_early(
                length,
                &terms
                    .iter()
                    .map(|&(l, f, m, s, n)| (l, i128::from(f), m, s, n))
                    .collect::<Vec<_>>(),
            );
            let fen = |v: &Value| -> i128 {
                #[allow(clippy::cast_possible_truncation)]
                let f = (v.as_number().unwrap() * 100.0).round() as i128;
                f
            };
            prop_assert_eq!(fen(&c.get_attr("cny")), reference);
            prop_assert!(c.get_attr("length").as_number().unwrap() >= length);
            let back = match c.get_attr("refund") {
                Value::None => 0,
                r => fen(&r.get_attr("cny")),
            };
            prop_assert_eq!(fen(&c.get_attr("paid")) - back, reference);
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
