//! The fast path checked against minijinja: every rule expression evaluated both ways over the
//! values of one evaluation, so that a disagreement is found rather than shipped.

use std::sync::OnceLock;

use minijinja::value::Value;

/// One rule expression evaluated both ways, for the differential tests (`tests/interp.rs`).
#[doc(hidden)]
#[derive(Debug)]
pub struct FastCheck {
    /// `node.field: text`.
    pub expr: String,
    /// The bound item (`offer`, a select's item) it was evaluated with, if any.
    pub bound: Option<Value>,
    /// Whether the expression has a fast form at all.
    pub has_fast_form: bool,
    /// The fast path's answer (`None`: it left this one to minijinja).
    pub fast: Option<Value>,
    /// minijinja's answer.
    pub minijinja: Result<Value, String>,
}

impl crate::Graph {
    /// Evaluates `profile`, then every rule expression again both with the fast path and with
    /// minijinja over the values of that evaluation (per offer, per select item), for tests that
    /// check that the two agree. Not part of the stable API.
    #[doc(hidden)]
    pub fn fast_path_checks(
        &self,
        profile: &crate::Profile,
        as_of: jiff::civil::Date,
    ) -> crate::Result<Vec<FastCheck>> {
        use crate::graph::Body;
        let evaluation = self.evaluate(profile, as_of)?;
        let owner = self.owner();
        let mut named: Vec<(String, Value)> = vec![
            (
                "profile".into(),
                Value::from(minijinja::value::Serde(profile)),
            ),
            ("offers".into(), owner.offers.clone()),
            ("catalog".into(), owner.catalog.clone()),
            ("as_of".into(), Value::from(as_of.to_string())),
        ];
        named.extend(
            evaluation
                .values
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        let slots: Vec<OnceLock<Value>> = (0..owner.names.index.len())
            .map(|_| OnceLock::new())
            .collect();
        for (name, value) in &named {
            let _ = slots[owner.names.index[name.as_str()]].set(value.clone());
        }
        let mut checks = Vec::new();
        let mut check = |id: &str, e: &crate::expr::Expr<'_>, bound: Option<(&str, Value)>| {
            let mut root = named.clone();
            root.extend(bound.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
            let minijinja = e
                .compiled
                .eval(Value::from_pairs(root))
                .map_err(|err| err.to_string());
            let item = bound.map(|(_, v)| v);
            checks.push(FastCheck {
                expr: format!("{id}: {}", e.text.trim()),
                has_fast_form: e.fast.is_some(),
                fast: e.fast.as_ref().and_then(|f| f.eval(&slots, item.as_ref())),
                bound: item,
                minijinja,
            });
        };
        let c = self.compiled();
        let offers: Vec<Value> = owner.offers.try_iter().into_iter().flatten().collect();
        for node in &c.nodes {
            match &node.body {
                Body::Fact(f) if f.per_offer => {
                    for offer in &offers {
                        check(node.id, &f.expr, Some(("offer", offer.clone())));
                    }
                }
                Body::Select(s) => {
                    let item = s.item;
                    // `from` first, then `where`, `order_by` and `map`, each per item.
                    let exprs = node.exprs();
                    let (from, per_item) = exprs.split_first().expect("a select has `from`");
                    check(node.id, from, None);
                    let list = from.compiled.eval(Value::from_pairs(named.clone()));
                    let items: Vec<Value> = list
                        .ok()
                        .and_then(|l| l.try_iter().ok().map(Iterator::collect))
                        .unwrap_or_default();
                    for e in per_item {
                        for candidate in &items {
                            check(node.id, e, Some((item, candidate.clone())));
                        }
                    }
                }
                _ => {
                    for e in node.exprs() {
                        check(node.id, e, None);
                    }
                }
            }
        }
        for e in c.outputs.exprs() {
            check("outputs", e, None);
        }
        Ok(checks)
    }
}
