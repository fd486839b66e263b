//! The generated profiles of `decide validate`: the profile format's fields as input
//! dimensions, each with the values worth trying.
//!
//! Every enumerated value, both booleans, none where a field is optional, each number the
//! rules mention together with its neighbours (within the field's range), and for an optional
//! text each text the rules mention that it can hold, and one they do not. The decision-table
//! analysis ([`super::tables`]) combines them over the fields a table reads; the invariant
//! search ([`super::invariants`]) over the fields the invariants read, and samples beyond them.

use std::collections::{BTreeSet, HashSet};

use decide_lang::numbers::{OrderedF64, numeric_constants};
use serde_json::{Map, Value as J};

use decide_engine::profile::fields::{self, FieldKind};
use decide_engine::profile::{OFFER_FIELD, OFFER_HOURS_FIELD, OFFER_TOKENS_FIELD};

/// The input dimensions of `paths` (profile paths as rule expressions read them, `profile.…`),
/// with the numbers in `texts` and their neighbours as the values tried for numbers, in the
/// order the profile format lists its fields (so examples read like a profile). With `offers`
/// (catalog ids), the fields that name offers are dimensions too: the proposal is each offer or
/// none, the job hours and the measured serving rates none or one offer at each number tried.
pub(crate) fn input_space<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    texts: &[&str],
    offers: &[&str],
) -> Vec<Dimension> {
    let constants = numeric_constants(texts);
    let words = text_constants(texts);
    let paths: Vec<&str> = paths.into_iter().collect();
    let mut dimensions = Vec::new();
    let mut seen = HashSet::new();
    for path in &paths {
        // The field read, and every field of it when it is a section (`profile` is them all).
        let within = path.split_once('.').map_or("", |(_, rest)| rest);
        for field in fields::under(within) {
            let ty = &field.kind;
            // The offer a profile names is tried at each catalog id, below, not at the texts
            // the rules mention (a second dimension of the same field once gave `fits`).
            if *ty == FieldKind::Object
                || (field.path == OFFER_FIELD && !offers.is_empty())
                || !seen.insert(field.path.as_str())
            {
                continue;
            }
            let mut values = candidates(ty, &constants);
            // An optional text the rules read (a model's name) is tried at each text they
            // mention that the field can hold, and at one they do not.
            if *ty == FieldKind::String && field.nullable {
                values.extend(words.iter().map(|w| J::from(w.as_str())));
                values.push(J::from(OTHER_TEXT));
            }
            if values.is_empty() {
                continue;
            }
            if field.nullable {
                values.push(J::Null);
            }
            dimensions.push(Dimension {
                path: split(&field.path),
                values,
            });
        }
    }
    let read = |field: &str| {
        let full = format!("profile.{field}");
        paths.iter().any(|p| {
            full == *p || full.starts_with(&format!("{p}.")) || p.starts_with(&format!("{full}."))
        })
    };
    if !offers.is_empty() && read(OFFER_FIELD) {
        let mut values: Vec<J> = offers.iter().map(|&id| J::from(id)).collect();
        values.push(J::Null);
        dimensions.push(Dimension {
            path: split(OFFER_FIELD),
            values,
        });
    }
    for field in [OFFER_HOURS_FIELD, OFFER_TOKENS_FIELD] {
        if !offers.is_empty()
            && read(field)
            && let Some(FieldKind::Map(item)) = fields::field(field).map(|f| &f.kind)
        {
            let numbers = candidates(item, &constants);
            let mut values = vec![J::Object(Map::new())];
            for &id in offers {
                for n in &numbers {
                    values.push(J::Object(Map::from_iter([(id.to_owned(), n.clone())])));
                }
            }
            dimensions.push(Dimension {
                path: split(field),
                values,
            });
        }
    }
    dimensions.sort_by_key(|d| {
        let path = d.path.join(".");
        fields::fields().iter().position(|f| f.path == path)
    });
    dimensions
}

/// The text an optional text field is tried at besides those the rules mention.
const OTHER_TEXT: &str = "some-other-text";

/// The string literals of `texts` that a normalised profile text can be (lower-case, no
/// spaces or underscores: `workload.model`'s form), each once, in order.
fn text_constants(texts: &[&str]) -> BTreeSet<String> {
    use decide_lang::lexer::{Token, tokens};
    let mut out = BTreeSet::new();
    for text in texts {
        for token in tokens(text).flatten() {
            if let Token::Str(s) = token.0
                && !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
            {
                out.insert(s.into_string());
            }
        }
    }
    out
}

fn split(path: &str) -> Vec<String> {
    path.split('.').map(str::to_owned).collect()
}

/// One input dimension: a profile leaf path (without `profile.`) and the values tried.
pub(crate) struct Dimension {
    pub path: Vec<String>,
    pub values: Vec<J>,
}

/// The `k`-th of `samples` combinations spread over `combinations`: k × stride modulo the space,
/// with the stride (about combinations / samples) made coprime to the space. An even spacing
/// whose stride shares a factor with the space would never vary the dimensions that factor
/// covers (with a stride divisible by 8, the last three yes/no fields were always `false`, so a
/// row needing one of them looked dead); a coprime stride visits distinct combinations that
/// vary every dimension. Never exceeds the space, however large.
pub(crate) fn sample_index(k: usize, combinations: u128, samples: usize) -> u128 {
    if combinations <= samples as u128 {
        return k as u128;
    }
    let mut stride = (combinations / samples.max(1) as u128).max(1);
    while gcd(stride, combinations) != 1 {
        stride += 1;
    }
    ((k as u128) % combinations).wrapping_mul(stride) % combinations
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The values tried for a field of type `ty`: every choice, both flags, a list of choices
/// empty and with each alone, and for a number its lowest value (at least 1) and each of
/// `constants` with its neighbours, within the field's bounds.
pub(crate) fn candidates(ty: &FieldKind, constants: &BTreeSet<OrderedF64>) -> Vec<J> {
    let range = match ty {
        FieldKind::Enum(choices) => return choices.iter().map(|c| J::from(&*c.value)).collect(),
        FieldKind::Bool => return vec![J::from(false), J::from(true)],
        FieldKind::List(item) => {
            let FieldKind::Enum(choices) = &**item else {
                return Vec::new();
            };
            let mut out = vec![J::Array(Vec::new())];
            out.extend(choices.iter().map(|c| J::Array(vec![J::from(&*c.value)])));
            return out;
        }
        FieldKind::Number(range) => range,
        _ => return Vec::new(),
    };
    let lowest = range.lowest().unwrap_or(0.0).max(1.0);
    let mut values: BTreeSet<OrderedF64> = BTreeSet::from([OrderedF64(lowest)]);
    for &OrderedF64(c) in constants {
        for v in [c - 1.0, c, c + 1.0] {
            values.insert(OrderedF64(v));
        }
    }
    values
        .into_iter()
        .map(|OrderedF64(v)| v)
        .filter(|&v| range.admits(v))
        .map(|v| {
            #[allow(clippy::cast_possible_truncation)] // checked whole and small above
            if v.fract() == 0.0 && v.abs() < 1e15 {
                J::from(v as i64)
            } else {
                J::from(v)
            }
        })
        .collect()
}

/// The smallest valid profile: every required field with its first or lowest value.
pub(crate) fn base_value() -> J {
    fn section(path: &str) -> J {
        let mut map = Map::new();
        for field in fields::children(path).filter(|f| f.required) {
            let value = match &field.kind {
                FieldKind::Object => section(&field.path),
                FieldKind::String => J::from("generated profile"),
                ty => candidates(ty, &BTreeSet::new())
                    .into_iter()
                    .next()
                    .unwrap_or(J::Null),
            };
            map.insert(field.name().to_owned(), value);
        }
        J::Object(map)
    }
    section("")
}

/// The `index`-th combination of the dimensions' values (mixed radix).
pub(crate) fn decode(mut index: u128, dimensions: &[Dimension]) -> Vec<&J> {
    let mut out = Vec::with_capacity(dimensions.len());
    for d in dimensions.iter().rev() {
        let n = d.values.len() as u128;
        out.push(&d.values[usize::try_from(index % n).unwrap_or(0)]);
        index /= n;
    }
    out.reverse();
    out
}

pub(crate) use decide_engine::profile::set_field as set_path;

/// The varied fields of one generated profile, nested as in a profile file.
pub(crate) fn example(dimensions: &[Dimension], assignment: &[&J]) -> J {
    let mut value = J::Object(Map::new());
    for (d, v) in dimensions.iter().zip(assignment) {
        set_path(&mut value, &d.path, (*v).clone());
    }
    value
}
