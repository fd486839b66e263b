//! Reading a number as people type it, in English or Chinese: full-width digits, thousands
//! separators, a unit's sign (`¥`, `元`) and the question's shorthands (`2万`, `13B`, `8k`,
//! `24/7`), and writing the value back with its thousands grouped.
//!
//! Which shorthands a question accepts and what they mean come from the rules
//! (`questionnaire.shorthands`, a question's `shorthands:`); this module only applies them.
//! It is part of the profile's model, below the engine's line, because loading the rules uses
//! it too: a shorthand that itself reads as a number is a rules error.

use indexmap::IndexMap;

/// Why a typed number was not understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// No number in it.
    NotANumber,
    /// Thousands separators in the wrong places (`1,5`, `12,34`).
    Thousands,
    /// A suffix that is not one of the question's shorthands; with those that are.
    Unknown { suffix: String, accepted: String },
}

/// What a number answer may be written with.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Shorthand → its value in the question's unit (a multiplier after a number, or the whole
    /// answer).
    pub shorthands: IndexMap<String, f64>,
    /// Signs of the unit read past before or after the number (`¥`, `元`).
    pub symbols: Vec<String>,
}

/// Full-width forms (`８１９２`, `，`, `．`, the ideographic space) as their ASCII letters.
#[must_use]
pub fn normalize(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            '、' => ',',
            _ => c,
        })
        .collect()
}

impl Reading {
    /// The number `text` stands for, in the question's unit; `Ok(None)` when it is empty.
    ///
    /// # Errors
    /// What was not understood.
    pub fn read(&self, text: &str) -> Result<Option<f64>, Problem> {
        let text = normalize(text);
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        if let Some(v) = self.shorthand(text) {
            return Ok(Some(v));
        }
        let text = self.strip_symbols(text);
        let (number, suffix) = split_number(&text);
        let n = parse_grouped(number)?;
        let suffix = suffix.trim();
        if suffix.is_empty() {
            return Ok(Some(n));
        }
        let Some(m) = self.shorthand(suffix) else {
            if number.is_empty() {
                return Err(Problem::NotANumber);
            }
            return Err(Problem::Unknown {
                suffix: suffix.to_owned(),
                accepted: self
                    .shorthands
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            });
        };
        Ok(Some(tidy(n * m)))
    }

    /// A shorthand's value: exactly as written, else ignoring ASCII case.
    fn shorthand(&self, key: &str) -> Option<f64> {
        self.shorthands.get(key).copied().or_else(|| {
            self.shorthands
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| *v)
        })
    }

    /// `text` without the unit's signs at either end.
    fn strip_symbols(&self, text: &str) -> String {
        let mut text = text.trim().to_owned();
        // The longest first: `hours a month` is read past whole, not its last `h`.
        let mut symbols: Vec<String> = self.symbols.iter().map(|s| normalize(s)).collect();
        symbols.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
        loop {
            let before = text.len();
            for symbol in &symbols {
                if symbol.is_empty() {
                    continue;
                }
                if let Some(rest) = text.strip_prefix(symbol.as_str()) {
                    text = String::from(rest.trim());
                }
                if let Some(rest) = text.strip_suffix(symbol.as_str()) {
                    text = String::from(rest.trim());
                }
            }
            if text.len() == before {
                return text;
            }
        }
    }
}

/// The leading number (sign, digits, separators, a point, an exponent) and what follows it.
fn split_number(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    while end < bytes.len() {
        match bytes[end] {
            b'0'..=b'9' | b'.' | b'_' => end += 1,
            // A separator only between digits.
            b',' | b' ' | b'\''
                if end > 0
                    && bytes[end - 1].is_ascii_digit()
                    && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) =>
            {
                end += 1;
            }
            b'e' | b'E' if end > 0 && bytes[end - 1].is_ascii_digit() => {
                let mut k = end + 1;
                if matches!(bytes.get(k), Some(b'+' | b'-')) {
                    k += 1;
                }
                if bytes.get(k).is_some_and(u8::is_ascii_digit) {
                    end = k;
                } else {
                    break;
                }
            }
            _ => break,
        }
    }
    text.split_at(end)
}

/// A number whose thousands may be separated by `,`, a space, `'` or `_` (each group after the
/// first three digits long).
fn parse_grouped(number: &str) -> Result<f64, Problem> {
    if !number.bytes().any(|b| b.is_ascii_digit()) {
        return Err(Problem::NotANumber);
    }
    let (mantissa, exponent) = match number.find(['e', 'E']) {
        Some(i) => number.split_at(i),
        None => (number, ""),
    };
    let (whole, fraction) = match mantissa.find('.') {
        Some(i) => mantissa.split_at(i),
        None => (mantissa, ""),
    };
    if fraction.contains([',', ' ', '\'']) {
        return Err(Problem::Thousands);
    }
    let groups: Vec<&str> = whole.split([',', ' ', '\'']).collect();
    if groups.len() > 1 {
        let digits = |g: &str| g.trim_start_matches(['+', '-']).len();
        let first = digits(groups[0]);
        if !(1..=3).contains(&first) || groups[1..].iter().any(|g| g.len() != 3) {
            return Err(Problem::Thousands);
        }
    }
    let plain: String = format!("{}{fraction}{exponent}", groups.concat()).replace('_', "");
    plain.parse::<f64>().map_err(|_| Problem::NotANumber)
}

/// `v` rounded to 12 significant digits, so that `1.1 × 10000` is 11000, not 11000.000000000002.
#[must_use]
pub fn tidy(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// `v` as people read it: thousands grouped with `,` (`20,000`, `1,234.5`, `0.25`).
#[must_use]
pub fn grouped(v: f64) -> String {
    let v = tidy(v);
    let text = v.to_string();
    if text.contains('e') {
        return text;
    }
    let decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
    decide_lang::group_thousands(v, decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(shorthands: &[(&str, f64)], symbols: &[&str]) -> Reading {
        Reading {
            shorthands: shorthands
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect(),
            symbols: symbols.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn chinese() -> Reading {
        reading(&[("万", 10_000.0), ("亿", 1e8), ("k", 1000.0)], &[])
    }

    #[test]
    fn full_width_digits_are_read_as_digits() {
        assert_eq!(chinese().read("８１９２"), Ok(Some(8192.0)));
        assert_eq!(chinese().read("１．５"), Ok(Some(1.5)));
        assert_eq!(chinese().read("　２万　"), Ok(Some(20_000.0)));
    }

    #[test]
    fn thousands_separators_are_read_only_between_groups_of_three() {
        let r = chinese();
        assert_eq!(r.read("8,192"), Ok(Some(8192.0)));
        assert_eq!(r.read("8 192"), Ok(Some(8192.0)));
        assert_eq!(r.read("1,234,567.5"), Ok(Some(1_234_567.5)));
        assert_eq!(r.read("８，１９２"), Ok(Some(8192.0)));
        assert_eq!(r.read("1_000"), Ok(Some(1000.0)));
        assert_eq!(r.read("1,5"), Err(Problem::Thousands));
        assert_eq!(r.read("12,34"), Err(Problem::Thousands));
        assert_eq!(r.read("1234,567"), Err(Problem::Thousands));
    }

    #[test]
    fn a_shorthand_multiplies_the_number_before_it() {
        let r = chinese();
        assert_eq!(r.read("2万"), Ok(Some(20_000.0)));
        assert_eq!(r.read("1.1万"), Ok(Some(11_000.0)));
        assert_eq!(r.read("3亿"), Ok(Some(300_000_000.0)));
        assert_eq!(r.read("8k"), Ok(Some(8000.0)));
        assert_eq!(r.read("8K"), Ok(Some(8000.0)), "ASCII case is ignored");
        assert_eq!(r.read("2 万"), Ok(Some(20_000.0)));
    }

    #[test]
    fn the_question_says_what_a_shorthand_is_worth() {
        let params = reading(&[("B", 1.0), ("M", 0.001), ("亿", 0.1)], &[]);
        assert_eq!(params.read("13B"), Ok(Some(13.0)));
        assert_eq!(params.read("70亿"), Ok(Some(7.0)));
        assert_eq!(params.read("350M"), Ok(Some(0.35)));
        let context = reading(&[("k", 1024.0)], &[]);
        assert_eq!(context.read("8k"), Ok(Some(8192.0)));
    }

    #[test]
    fn a_shorthand_may_be_the_whole_answer() {
        let hours = reading(&[("24/7", 720.0), ("7×24", 720.0)], &[]);
        assert_eq!(hours.read("24/7"), Ok(Some(720.0)));
        assert_eq!(hours.read(" 7×24 "), Ok(Some(720.0)));
        assert_eq!(
            hours.read("24/6"),
            Err(Problem::Unknown {
                suffix: "/6".into(),
                accepted: "24/7 7×24".into()
            })
        );
    }

    #[test]
    fn the_units_signs_are_read_past() {
        let yuan = reading(&[("k", 1000.0), ("万", 10_000.0)], &["¥", "￥", "元"]);
        assert_eq!(yuan.read("¥100k"), Ok(Some(100_000.0)));
        assert_eq!(yuan.read("￥100k"), Ok(Some(100_000.0)));
        assert_eq!(yuan.read("10万元"), Ok(Some(100_000.0)));
        assert_eq!(yuan.read("¥ 8,000"), Ok(Some(8000.0)));
    }

    #[test]
    fn what_is_not_understood_says_so() {
        let r = chinese();
        assert_eq!(r.read("seven"), Err(Problem::NotANumber));
        assert_eq!(r.read("-"), Err(Problem::NotANumber));
        // A shorthand alone is the whole-answer form: one of it (echoed as the value).
        assert_eq!(r.read("万"), Ok(Some(10_000.0)));
        assert_eq!(
            r.read("7x"),
            Err(Problem::Unknown {
                suffix: "x".into(),
                accepted: "万 亿 k".into()
            })
        );
        assert_eq!(r.read("  "), Ok(None));
        assert_eq!(
            Reading::default().read("8k").unwrap_err(),
            Problem::Unknown {
                suffix: "k".into(),
                accepted: String::new()
            }
        );
    }

    #[test]
    fn plain_numbers_read_as_before() {
        let r = Reading::default();
        assert_eq!(r.read("600"), Ok(Some(600.0)));
        assert_eq!(r.read("-3"), Ok(Some(-3.0)));
        assert_eq!(r.read("0.25"), Ok(Some(0.25)));
        assert_eq!(r.read("1e3"), Ok(Some(1000.0)));
    }

    #[test]
    fn values_are_written_back_with_thousands_grouped() {
        assert_eq!(grouped(20_000.0), "20,000");
        assert_eq!(grouped(8192.0), "8,192");
        assert_eq!(grouped(1_234_567.5), "1,234,567.5");
        assert_eq!(grouped(720.0), "720");
        assert_eq!(grouped(0.35), "0.35");
        assert_eq!(grouped(-1500.0), "-1,500");
        assert_eq!(grouped(11_000.000_000_000_002), "11,000");
    }
}
