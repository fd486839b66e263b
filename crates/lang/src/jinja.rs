//! The one adapter between the language's values and minijinja's, at the template boundary:
//! what a memo or a prose template reads is [`to_jinja`] of a value (lists and maps converted
//! as they are read, not copied), and what a template filter is given comes back with
//! [`from_jinja`]. The memo's environment ([`environment`]) registers the language's helpers as
//! minijinja's filters and functions here, so no other module names minijinja's values.

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value as Jinja, ValueKind};
use minijinja::{Environment, UndefinedBehavior};

use crate::functions::{
    brief, cell_filter, cny, days_between, each, hours, md_filter, month, num, pct, plural, range,
    sci,
};

use crate::value::Value;

/// The most steps (minijinja's instructions) one template render or one expression may take: a
/// loop that never ends (`{% for i in range(100000) %}` nested twice) stops with an error. The
/// heaviest memo of the examples (Chinese HTML with the trace) takes about 25,000; this is
/// forty times that.
pub const FUEL: u64 = 1_000_000;

/// A fresh environment with strict undefined handling, the [`FUEL`] budget and the helpers of
/// this module.
#[must_use]
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_syntax(syntax());
    env.set_debug(false);
    env.set_fuel(Some(FUEL));
    env.add_function("days_between", days_between);
    env.add_function("ceil", |x: f64| Jinja::from(x.ceil() as i64));
    env.add_function("cover", |length: &Jinja, terms: &Jinja| {
        crate::cover::cover(&from_jinja(length), &from_jinja(terms))
            .map(|v| to_jinja(&v))
            .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e))
    });
    env.add_function("floor", |x: f64| Jinja::from(x.floor() as i64));
    // `range(n)` as templates know it, and `range(a, b)` as the rule language has it.
    env.add_function("range", |from: i64, to: Option<i64>| {
        match to {
            Some(to) => range(from, to),
            None => range(0, from),
        }
        .map(Jinja::from)
    });
    // The filters are the rule language's, over its values.
    env.add_filter("cny", |v: &Jinja, d: Option<usize>| cny(&from_jinja(v), d));
    env.add_filter("num", |v: &Jinja, d: Option<usize>| num(&from_jinja(v), d));
    env.add_filter("hours", |v: &Jinja| hours(&from_jinja(v)));
    env.add_filter("pct", |v: &Jinja| pct(&from_jinja(v)));
    env.add_filter("sci", |v: &Jinja| sci(&from_jinja(v)));
    env.add_filter("month", |v: &Jinja| month(&from_jinja(v)));
    env.add_filter("md", |v: &Jinja| {
        md_filter(&from_jinja(v)).map(|v| to_jinja(&v))
    });
    env.add_filter("cell", |v: &Jinja| {
        cell_filter(&from_jinja(v)).map(|v| to_jinja(&v))
    });
    env.add_filter("plural", |v: &Jinja, noun: &str| {
        plural(&from_jinja(v), noun)
    });
    env.add_filter("brief", |v: &Jinja| brief(&from_jinja(v)));
    env.add_filter("each", |list: &Jinja, map: &Jinja| {
        each(&from_jinja(list), &from_jinja(map)).map(|v| to_jinja(&v))
    });
    env
}

/// The template syntax rules and memos are written in: default delimiters, a block tag's line
/// break dropped and its indentation stripped, a final line break kept.
pub(crate) fn syntax() -> minijinja::syntax::SyntaxConfig {
    minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .expect("the default delimiters are valid")
}

/// `v` as minijinja's value: scalars converted, lists and maps wrapped (read on demand).
pub fn to_jinja(v: &Value) -> Jinja {
    match v {
        Value::Undefined => Jinja::UNDEFINED,
        Value::None => Jinja::from(()),
        Value::Bool(b) => Jinja::from(*b),
        Value::Int(i) => match i64::try_from(*i) {
            Ok(small) => Jinja::from(small),
            Err(_) => Jinja::from(*i),
        },
        Value::Float(f) => Jinja::from(*f),
        Value::Text(s) => Jinja::from(s.clone()),
        Value::Safe(s) => Jinja::from_safe_string(s.to_string()),
        Value::List(_) => Jinja::from_object(ListView(v.clone())),
        Value::Map(_) | Value::Record(_) | Value::PerOffer(_) => {
            Jinja::from_object(MapView(v.clone()))
        }
    }
}

/// minijinja's value `v` as the language's (a value of ours wrapped by [`to_jinja`] unwrapped).
pub fn from_jinja(v: &Jinja) -> Value {
    match v.kind() {
        ValueKind::Undefined => Value::Undefined,
        ValueKind::None => Value::None,
        ValueKind::Bool => Value::Bool(v.is_true()),
        ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).map_or_else(
            |_| Value::Float(f64::try_from(v.clone()).unwrap_or(f64::NAN)),
            Value::Int,
        ),
        ValueKind::Number => Value::Float(f64::try_from(v.clone()).unwrap_or(f64::NAN)),
        ValueKind::String if v.is_safe() => Value::safe(v.as_str().unwrap_or_default()),
        ValueKind::String => Value::from(v.as_str().unwrap_or_default()),
        ValueKind::Map => {
            if let Some(ours) = v.downcast_object_ref::<MapView>() {
                return ours.0.clone();
            }
            Value::from_pairs(v.try_iter().into_iter().flatten().map(|k| {
                let item = v.get_item(&k).unwrap_or_default();
                (from_jinja(&k), from_jinja(&item))
            }))
        }
        ValueKind::Seq | ValueKind::Iterable => {
            if let Some(ours) = v.downcast_object_ref::<ListView>() {
                return ours.0.clone();
            }
            v.try_iter()
                .into_iter()
                .flatten()
                .map(|i| from_jinja(&i))
                .collect()
        }
        _ => Value::from(v.to_string()),
    }
}

/// A list of ours as minijinja reads a sequence.
#[derive(Debug)]
struct ListView(Value);

impl Object for ListView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Jinja) -> Option<Jinja> {
        let items = self.0.as_list()?;
        let i = usize::try_from(key.as_i64()?).ok()?;
        items.get(i).map(to_jinja)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.0.len().unwrap_or(0))
    }
}

/// A map, record or per-offer fact of ours as minijinja reads a map.
#[derive(Debug)]
struct MapView(Value);

impl Object for MapView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Jinja) -> Option<Jinja> {
        self.0.get(&from_jinja(key)).map(to_jinja)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Jinja> {
        let v = self.0.get_attr(key);
        (!v.is_undefined()).then(|| to_jinja(&v))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(
            self.0
                .pairs()
                .into_iter()
                .flatten()
                .map(|(k, _)| to_jinja(k))
                .collect(),
        )
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cross_the_boundary_and_back() {
        let v = Value::from(vec![
            Value::from(1),
            Value::from(2.5),
            Value::safe("a\\_b"),
            Value::from_pairs([(Value::from("k"), Value::from(i128::MAX))]),
            Value::None,
        ]);
        let j = to_jinja(&v);
        assert_eq!(j.to_string(), v.to_string());
        assert_eq!(from_jinja(&j), v);
        let plain = Jinja::from(minijinja::value::Serde(
            serde_json::json!({"a": [1, 2.5, "x"], "b": null}),
        ));
        let ours = from_jinja(&plain);
        assert_eq!(ours.to_string(), plain.to_string());
        assert_eq!(
            serde_json::to_string(&ours).unwrap(),
            serde_json::to_string(&plain).unwrap()
        );
        assert!(from_jinja(&to_jinja(&Value::safe("x"))).is_safe());
    }

    use proptest::prelude::*;

    /// A value of minijinja's, of the kinds rules hold.
    fn jinja() -> impl Strategy<Value = Jinja> {
        let leaf = prop_oneof![
            Just(Jinja::from(())),
            any::<bool>().prop_map(Jinja::from),
            (-3i64..4).prop_map(Jinja::from),
            any::<i64>().prop_map(Jinja::from),
            prop_oneof![
                Just(0.5),
                Just(-2.0),
                Just(1e300),
                Just(3.0),
                Just(f64::NAN)
            ]
            .prop_map(Jinja::from),
            (-1e6f64..1e6).prop_map(Jinja::from),
            "[a-c']{0,3}".prop_map(Jinja::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Jinja::from),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..4).prop_map(|pairs| {
                    Jinja::from_pairs(
                        pairs
                            .into_iter()
                            .map(|(k, v)| (Jinja::from(k), v))
                            .collect::<Vec<_>>(),
                    )
                }),
            ]
        })
    }

    /// A JSON document of the kinds profiles hold.
    fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            (-1e9f64..1e9).prop_map(serde_json::Value::from),
            "[a-z ]{0,4}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::vec(("[a-d]{1,2}", inner), 0..4)
                    .prop_map(|pairs| { serde_json::Value::Object(pairs.into_iter().collect()) }),
            ]
        })
    }

    proptest! {
        /// A serde value is built as minijinja builds it: the same entries in the same order,
        /// whole numbers whole.
        #[test]
        fn serde_values_are_built_as_minijinja_builds_them(doc in json()) {
            let ours = Value::from_serialize(&doc);
            let theirs = Jinja::from(minijinja::value::Serde(&doc));
            prop_assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
            prop_assert_eq!(serde_json::to_value(&ours).ok(), Some(doc));
        }

        /// Equality, order, truth, length, `Display` and serialisation are minijinja's.
        #[test]
        fn the_value_model_agrees_with_minijinja(a in jinja(), b in jinja()) {
            let (x, y) = (from_jinja(&a), from_jinja(&b));
            prop_assert_eq!(x.to_string(), a.to_string());
            prop_assert_eq!(format!("{x:?}"), format!("{a:?}"));
            prop_assert_eq!(x == y, a == b, "{} == {}", a, b);
            prop_assert_eq!(x.cmp(&y), a.cmp(&b), "{} cmp {}", a, b);
            prop_assert_eq!(x.is_true(), a.is_true());
            prop_assert_eq!(x.len(), a.len());
            prop_assert_eq!(
                serde_json::to_string(&x).ok(),
                serde_json::to_string(&a).ok()
            );
            prop_assert_eq!(x.get_item(&y), from_jinja(&a.get_item(&b).unwrap_or_default()));
            let back = to_jinja(&x);
            prop_assert_eq!(back.to_string(), a.to_string());
            prop_assert!(back == a || a.to_string().contains("NaN"));
        }
    }
}

/// The language's helpers as the memo's templates call them, through this environment.
#[cfg(test)]
mod filter_tests {
    use super::environment;
    use crate::functions::group_thousands;

    #[test]
    fn formats_numbers_for_people() {
        assert_eq!(group_thousands(12_345.0, 0), "12,345");
        assert_eq!(group_thousands(1_234_567.891, 2), "1,234,567.89");
        assert_eq!(group_thousands(-4_321.4, 0), "-4,321");
        assert_eq!(group_thousands(-0.2, 0), "0");
        assert_eq!(group_thousands(999.0, 0), "999");
        let env = environment();
        let render = |src: &str| env.render_str(src, ()).unwrap();
        assert_eq!(render("{{ 12345 | cny }}"), "¥12,345");
        assert_eq!(render("{{ 2.45 | cny }}"), "¥2.45");
        assert_eq!(render("{{ 20272.0 | cny }}"), "¥20,272");
        assert_eq!(render("{{ 505.1 | hours }}"), "505.1 h");
        assert_eq!(render("{{ 630.0 | hours }}"), "630 h");
        assert_eq!(render("{{ 0.3 | pct }}"), "30%");
        assert_eq!(render("{{ 1932000000000000000000.0 | sci }}"), "1.93e21");
        assert_eq!(render("{{ 58800000000000000000.0 | sci }}"), "5.88e19");
        assert_eq!(render("{{ 0.7014 | pct }}"), "70.1%");
        assert_eq!(render("{{ 7.0 | num }}"), "7");
        assert_eq!(render("{{ 1 | plural('GPU') }}"), "1 GPU");
        assert_eq!(render("{{ 16 | plural('GPU') }}"), "16 GPUs");
        assert_eq!(render("{{ 16.8 | num }}"), "16.8");
        assert_eq!(render("{{ 1344.0 | num }}"), "1,344");
    }

    #[test]
    fn briefs_values_for_the_trace() {
        let env = environment();
        let render = |src: &str| env.render_str(src, ()).unwrap();
        assert_eq!(
            render("{{ {'a': 1.5, 'b': [100.0, 2.25, 0.004, none, true], 'c': 'x'} | brief }}"),
            "{a: 1.5, b: [100, 2.25, 0, none, true], c: x}"
        );
        assert_eq!(
            render("{{ -7 | brief }} {{ [] | brief }} {{ {} | brief }}"),
            "-7 [] {}"
        );
    }

    #[test]
    fn counts_days_between_dates() {
        let env = environment();
        let e = env
            .compile_expression("days_between('2026-09-04', '2026-10-04')")
            .unwrap();
        assert_eq!(e.eval(()).unwrap().as_i64(), Some(30));
        let bad = env
            .compile_expression("days_between('2026-13-04', '2026-10-04')")
            .unwrap();
        assert!(bad.eval(()).unwrap_err().to_string().contains("not a date"));
    }
}
