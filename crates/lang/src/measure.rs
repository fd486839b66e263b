//! Measures: what a number measures, as a product of named units with whole powers
//! (`cny/hour`, `cny/month`, `hour/term`, `cny`), so that the typechecker can refuse a price per
//! hour added to, compared with or chosen beside a price per month.
//!
//! The units are names, not a fixed list: the policy declares them where it declares a fact's
//! or a catalog field's `quantity:` (`cny`, `hour`, `day`, `month`, ...), and two different
//! names are two different units. Nothing converts one into another by itself: a month is 720
//! hours only through a fact that says so (`quantity: hour/month`), which is the point. A
//! dimension of no unit (`1`) is a plain number (a share, a count).

use std::fmt;
use std::sync::Arc;

/// A product of units, each to a whole power other than 0, sorted by name (so that equal
/// dimensions are equal values).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Measure(Arc<[(Box<str>, i8)]>);

/// Why a dimension's text does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadMeasure {
    pub message: String,
}

impl Measure {
    /// A plain number (`1`).
    #[must_use]
    pub fn one() -> Measure {
        Measure::default()
    }

    /// The dimension of one unit.
    #[must_use]
    pub fn unit(name: &str) -> Measure {
        Measure(Arc::from(vec![(Box::from(name), 1)]))
    }

    /// Whether this is a plain number.
    #[must_use]
    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// Each unit with its power, sorted by name.
    #[must_use]
    pub fn units(&self) -> &[(Box<str>, i8)] {
        &self.0
    }

    /// `text` read: units (lower-case letters, digits and `_`, starting with a letter), each with
    /// an optional power (`hour^2`), joined by `*` (times) and `/` (divided by, left to right:
    /// `cny/gpu/hour` is yuan per GPU per hour); `1` alone, or before a `/`, for no unit.
    ///
    /// # Errors
    /// What is wrong with it, in words.
    pub fn parse(text: &str) -> Result<Measure, BadMeasure> {
        let bad = |message: String| BadMeasure { message };
        let text = text.trim();
        if text.is_empty() {
            return Err(bad("it is empty".to_owned()));
        }
        let mut powers: Vec<(Box<str>, i8)> = Vec::new();
        let mut sign = 1i8;
        let mut rest = text;
        let mut first = true;
        loop {
            let end = rest.find(['*', '/']).unwrap_or(rest.len());
            let factor = rest[..end].trim();
            let (name, power) = match factor.split_once('^') {
                Some((name, power)) => {
                    let power: i8 =
                        power
                            .trim()
                            .parse()
                            .ok()
                            .filter(|p| *p != 0)
                            .ok_or_else(|| {
                                bad(format!(
                                    "`{factor}` has no whole power: write e.g. `{}^2`",
                                    name.trim()
                                ))
                            })?;
                    (name.trim(), power)
                }
                None => (factor, 1),
            };
            if name == "1" && first {
                // No unit: `1` or `1/hour`.
            } else if name.is_empty() {
                return Err(bad(format!(
                    "`{text}` has a `*` or `/` with no unit beside it"
                )));
            } else if !name.starts_with(|c: char| c.is_ascii_lowercase())
                || !name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(bad(format!(
                    "`{name}` is not a unit: a unit is a name in lower-case letters, digits and `_` (e.g. `cny`, `hour`, `gpu_hour`)"
                )));
            } else {
                add(&mut powers, name, sign.saturating_mul(power));
            }
            first = false;
            let Some(op) = rest[end..].chars().next() else {
                break;
            };
            sign = if op == '/' { -1 } else { 1 };
            rest = &rest[end + 1..];
        }
        Ok(Measure::of(powers))
    }

    /// The dimension of a product: each unit's powers added.
    #[must_use]
    pub fn times(&self, other: &Measure) -> Measure {
        let mut powers: Vec<(Box<str>, i8)> = self.0.to_vec();
        for (name, power) in other.0.iter() {
            add(&mut powers, name, *power);
        }
        Measure::of(powers)
    }

    /// The dimension of a quotient.
    #[must_use]
    pub fn per(&self, other: &Measure) -> Measure {
        self.times(&other.powered(-1))
    }

    /// The dimension raised to a whole power.
    #[must_use]
    pub fn powered(&self, n: i8) -> Measure {
        Measure::of(
            self.0
                .iter()
                .map(|(name, p)| (name.clone(), p.saturating_mul(n)))
                .collect(),
        )
    }

    /// The dimension with unit `from` replaced by dimension `to` (a unit known in a branch
    /// where a test says what it is): `cny/price_unit` with `month` for `price_unit` is
    /// `cny/month`.
    #[must_use]
    pub fn replaced(&self, from: &str, to: &Measure) -> Measure {
        let mut powers: Vec<(Box<str>, i8)> = Vec::new();
        for (name, power) in self.0.iter() {
            if &**name == from {
                for (n, p) in to.0.iter() {
                    add(&mut powers, n, p.saturating_mul(*power));
                }
            } else {
                add(&mut powers, name, *power);
            }
        }
        Measure::of(powers)
    }

    fn of(mut powers: Vec<(Box<str>, i8)>) -> Measure {
        powers.retain(|(_, p)| *p != 0);
        powers.sort_by(|a, b| a.0.cmp(&b.0));
        Measure(Arc::from(powers))
    }
}

fn add(powers: &mut Vec<(Box<str>, i8)>, name: &str, power: i8) {
    match powers.iter_mut().find(|(n, _)| &**n == name) {
        Some((_, p)) => *p = p.saturating_add(power),
        None => powers.push((name.into(), power)),
    }
}

/// As it is written in a policy: `cny/hour`, `hour^2`, `1/hour`, `1`.
impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let factor = |f: &mut fmt::Formatter<'_>, name: &str, power: i8| {
            if power == 1 {
                write!(f, "{name}")
            } else {
                write!(f, "{name}^{power}")
            }
        };
        let mut above = self.0.iter().filter(|(_, p)| *p > 0).peekable();
        if above.peek().is_none() {
            write!(f, "1")?;
        }
        for (i, (name, power)) in above.enumerate() {
            if i > 0 {
                write!(f, "*")?;
            }
            factor(f, name, *power)?;
        }
        for (name, power) in self.0.iter().filter(|(_, p)| *p < 0) {
            write!(f, "/")?;
            factor(f, name, -power)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dimension_reads_and_writes_itself_back() {
        for (text, written) in [
            ("cny/hour", "cny/hour"),
            ("cny / gpu / hour", "cny/gpu/hour"),
            ("hour*cny/hour", "cny"),
            ("1", "1"),
            ("1/hour", "1/hour"),
            ("hour^2/hour", "hour"),
            ("cny/term", "cny/term"),
        ] {
            assert_eq!(Measure::parse(text).unwrap().to_string(), written, "{text}");
        }
        assert!(Measure::parse("1").unwrap().is_one());
        assert!(Measure::parse("hour/hour").unwrap().is_one());
    }

    #[test]
    fn products_and_quotients_add_and_take_away_powers() {
        let cny = Measure::unit("cny");
        let hour = Measure::unit("hour");
        let rate = cny.per(&hour);
        assert_eq!(rate, Measure::parse("cny/hour").unwrap());
        assert_eq!(rate.times(&hour), cny);
        assert!(rate.per(&rate).is_one());
        assert_eq!(hour.powered(-2).to_string(), "1/hour^2");
        assert_ne!(rate, Measure::parse("cny/month").unwrap());
    }

    #[test]
    fn a_bad_dimension_says_what_is_wrong() {
        for (text, says) in [
            ("", "is empty"),
            ("cny//hour", "no unit beside it"),
            ("Cny", "is not a unit"),
            ("cny/hour^x", "no whole power"),
            ("cny/hour^0", "no whole power"),
            ("yuan per hour", "is not a unit"),
        ] {
            let e = Measure::parse(text).unwrap_err();
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
    }
}
