//! The fast path checked against minijinja: every rule expression evaluated both ways over the
//! values of one evaluation, so that a disagreement is found rather than shipped.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use crate::expr::fast::Bound;
use minijinja::value::{Enumerator, Object, Value};
use rayon::prelude::*;
use serde_saphyr::Location;

use super::invariants::generated_profiles;
use crate::error::Error;
use crate::expr::text::Text;
use crate::graph::Graph;

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
    /// Where the expression is written: rule file index and position.
    pub(crate) file: usize,
    pub(crate) location: Location,
}

impl FastCheck {
    /// Whether the fast path's answer, if it gave one, is minijinja's: the same value, of the
    /// same kind, integer or float alike, rendered alike. A fast answer where minijinja fails
    /// is a disagreement too.
    #[must_use]
    pub fn agrees(&self) -> bool {
        let Some(fast) = &self.fast else { return true };
        match &self.minijinja {
            Ok(slow) => agree(fast, slow),
            Err(_) => false,
        }
    }
}

/// The names of one evaluation with one more bound: a select's item or `offer`.
#[derive(Debug)]
struct WithItem {
    base: Value,
    name: String,
    item: Value,
}

impl Object for WithItem {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if key.as_str() == Some(self.name.as_str()) {
            return Some(self.item.clone());
        }
        self.base.get_item(key).ok().filter(|v| !v.is_undefined())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }
}

/// Every name an expression may read: the roots (profile, offers, catalog, date) and every
/// node's value.
fn named_values<'v>(
    owner: &crate::graph::Owner,
    profile: &crate::Profile,
    as_of: jiff::civil::Date,
    values: impl IntoIterator<Item = (&'v String, &'v Value)>,
) -> Vec<(String, Value)> {
    let mut named: Vec<(String, Value)> = vec![
        (
            "profile".into(),
            Value::from(minijinja::value::Serde(profile)),
        ),
        ("offers".into(), owner.offers.clone()),
        ("catalog".into(), owner.catalog.clone()),
        ("as_of".into(), Value::from(as_of.to_string())),
    ];
    named.extend(values.into_iter().map(|(k, v)| (k.clone(), v.clone())));
    named
}

/// The items a select's `from` gives, evaluated by minijinja over `named` (and the offer, for a
/// per-offer select), and whether they are the catalog's offers (read by position).
fn select_items(
    from: &crate::expr::Expr<'_>,
    named: &[(String, Value)],
    offer: Option<&Value>,
    owner: &crate::graph::Owner,
) -> (Vec<Value>, bool) {
    let mut scope = named.to_vec();
    if let Some(offer) = offer {
        scope.push(("offer".to_owned(), offer.clone()));
    }
    let list = from
        .compiled()
        .and_then(|c| c.eval(Value::from_pairs(scope)));
    let positions = list.as_ref().is_ok_and(|l| owner.is_offers(l));
    let items = list
        .ok()
        .and_then(|l| l.try_iter().ok().map(Iterator::collect))
        .unwrap_or_default();
    (items, positions)
}

/// Whether two values are the same to every reader: equal, of one kind, both integers or both
/// not, and rendered alike.
#[must_use]
pub fn agree(fast: &Value, slow: &Value) -> bool {
    slow == fast
        && slow.kind() == fast.kind()
        && slow.is_integer() == fast.is_integer()
        && slow.to_string() == fast.to_string()
}

/// How many generated profiles `decide validate` compares the two paths on.
pub const PROFILES: usize = 64;

/// What `decide validate` found comparing the fast path with minijinja.
#[derive(Debug, Default)]
pub struct FastPathReport {
    /// Distinct rule expressions (outputs included).
    pub expressions: usize,
    /// Text templates rendered from an evaluation (criteria, warnings, checklist items,
    /// invariant messages).
    pub texts: usize,
    /// The expressions without a fast form, each as `file:line: node.field: text`: evaluated by
    /// minijinja alone, which is slower and never wrong. Notes, not findings.
    pub without_form: Vec<String>,
    /// Of those texts, the ones with a fast form. The others are rendered by minijinja at
    /// about the same cost (a text's time goes to its filters' formatting, not to the VM), so
    /// they are not noted.
    pub texts_with_form: usize,
    /// Generated profiles compared on.
    pub profiles: usize,
    /// Fast-path answers compared with minijinja's.
    pub answers: usize,
    /// Profiles that could not be evaluated (a rules fault the other checks report).
    pub failed: usize,
    /// The first disagreement of each expression that has one: a fault in the engine's fast
    /// path, reported with the expression and the profile.
    pub findings: Vec<Error>,
}

/// Runs every rule expression both ways over [`PROFILES`] generated profiles.
#[must_use]
pub fn search(graph: &Graph, as_of: jiff::civil::Date) -> FastPathReport {
    let profiles = generated_profiles(graph, PROFILES);
    let results: Vec<Option<Vec<FastCheck>>> = profiles
        .par_iter()
        .map(|p| graph.fast_path_checks(p, as_of).ok())
        .collect();
    let mut report = FastPathReport {
        profiles: profiles.len(),
        ..FastPathReport::default()
    };
    let policy = graph.policy();
    let c = graph.compiled();
    let mut expressions: Vec<(&str, &crate::expr::Expr<'_>)> = Vec::new();
    for node in &c.nodes {
        expressions.extend(node.exprs().into_iter().map(|e| (node.id, e)));
    }
    expressions.extend(c.outputs.exprs().into_iter().map(|e| ("outputs", e)));
    report.expressions = expressions.len();
    report.without_form = expressions
        .iter()
        .filter(|(_, e)| e.fast.is_none())
        .map(|(id, e)| {
            format!(
                "{}:{}: {id}: {}",
                policy.sources[e.file].name,
                e.location.line(),
                e.text.trim()
            )
        })
        .collect();
    let texts = graph.owner().texts.values().filter(|t| t.from_evaluation);
    report.texts = texts.clone().count();
    report.texts_with_form = texts.filter(|t| t.has_fast_form()).count();
    let mut seen: BTreeSet<(usize, u64, u64, String)> = BTreeSet::new();
    for (profile, checks) in profiles.iter().zip(&results) {
        let Some(checks) = checks else {
            report.failed += 1;
            continue;
        };
        for c in checks {
            let key = (
                c.file,
                c.location.line(),
                c.location.column(),
                c.expr.clone(),
            );
            report.answers += usize::from(c.fast.is_some());
            if c.agrees() || !seen.insert(key) {
                continue;
            }
            let fast = c
                .fast
                .as_ref()
                .map_or("none".to_owned(), |v| format!("{v:?}"));
            let slow = match &c.minijinja {
                Ok(v) => format!("{v:?}"),
                Err(e) => format!("an error: {e}"),
            };
            report.findings.push(
                policy
                    .error_at(
                        c.file,
                        c.location,
                        format!("the fast path and minijinja disagree on `{}`", c.expr),
                    )
                    .help(format!("fast path: {fast}; minijinja: {slow}"))
                    .help(match &c.bound {
                        Some(item) => format!("profile `{}`, with the item {item:?}", profile.name),
                        None => format!("profile `{}`", profile.name),
                    })
                    .help("minijinja's answer is the meaning; this is a fault in decide's fast path, please report it")
                    .as_warning(),
            );
        }
    }
    report
}

impl Graph {
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
        // Every value, whether or not the decision keeps the invariants: the paths are compared
        // on what the nodes give, not on whether the rules are right.
        let evaluation =
            crate::graph::run::Run::new(self, profile, as_of).all(profile, as_of, false)?;
        let owner = self.owner();
        let named = named_values(owner, profile, as_of, &evaluation.values);
        let slots: Vec<OnceLock<Value>> = (0..owner.names.index.len())
            .map(|_| OnceLock::new())
            .collect();
        for (name, value) in &named {
            let _ = slots[owner.names.index[name.as_str()]].set(value.clone());
        }
        let mut checks = Vec::new();
        let base = Value::from_pairs(named.clone());
        // `bound`: the item's name, value and catalog position (when a catalog offer).
        let mut check =
            |id: &str, e: &crate::expr::Expr<'_>, bound: Option<(&str, Value, Option<usize>)>| {
                let root = match &bound {
                    None => base.clone(),
                    Some((name, item, _)) => Value::from_object(WithItem {
                        base: base.clone(),
                        name: (*name).to_owned(),
                        item: item.clone(),
                    }),
                };
                let minijinja = e
                    .compiled()
                    .and_then(|c| c.eval(root))
                    .map_err(|err| err.to_string());
                let fast = e.fast.as_ref().and_then(|f| {
                    let item = bound.as_ref().map(|(_, value, offer)| Bound {
                        value,
                        offer: *offer,
                    });
                    f.eval(&slots, item)
                });
                checks.push(FastCheck {
                    expr: format!("{id}: {}", e.text.trim()),
                    has_fast_form: e.fast.is_some(),
                    fast,
                    bound: bound.map(|(_, v, _)| v),
                    minijinja,
                    file: e.file,
                    location: e.location,
                });
            };
        let c = self.compiled();
        let offers: Vec<Value> = owner.offers.try_iter().into_iter().flatten().collect();
        for node in &c.nodes {
            match &node.body {
                Body::Fact(f) if f.per_offer => {
                    for (i, offer) in offers.iter().enumerate() {
                        check(node.id, &f.expr, Some(("offer", offer.clone(), Some(i))));
                    }
                }
                Body::Select(s) => {
                    let item = s.item;
                    // `from` first, then `where`, `order_by` and `map`, each per item; a
                    // per-offer select does all that once per offer, `from` with it bound.
                    let exprs = node.exprs();
                    let (from, per_item) = exprs.split_first().expect("a select has `from`");
                    let bindings: Vec<Option<(usize, &Value)>> = if s.per_offer {
                        offers.iter().enumerate().map(Some).collect()
                    } else {
                        vec![None]
                    };
                    for binding in bindings {
                        check(
                            node.id,
                            from,
                            binding.map(|(i, offer)| ("offer", offer.clone(), Some(i))),
                        );
                        let (items, positions) =
                            select_items(from, &named, binding.map(|(_, o)| o), owner);
                        for e in per_item {
                            for (i, candidate) in items.iter().enumerate() {
                                let offer = positions.then_some(i);
                                check(node.id, e, Some((item, candidate.clone(), offer)));
                            }
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
        checks.extend(text_checks(owner, &slots, &base));
        Ok(checks)
    }
}

/// Every text with a fast form rendered both ways over one evaluation's `slots` (`base`: the
/// same values as minijinja's context), before the texts' line breaks are reflowed, which both
/// renders share.
fn text_checks(
    owner: &crate::graph::Owner,
    slots: &[OnceLock<Value>],
    base: &Value,
) -> Vec<FastCheck> {
    let mut texts: Vec<(&String, &Text)> = owner
        .texts
        .iter()
        .filter(|(_, t)| t.has_fast_form())
        .collect();
    texts.sort_by_key(|(name, _)| *name);
    texts
        .into_iter()
        .map(|(name, text)| FastCheck {
            expr: format!("text `{name}`"),
            has_fast_form: true,
            fast: text.render(slots).map(Value::from),
            bound: None,
            minijinja: owner
                .env
                .get_template(name)
                .and_then(|t| t.render(base.clone()))
                .map(Value::from)
                .map_err(|err| err.to_string()),
            file: text.file,
            location: text.location,
        })
        .collect()
}
