//! The rule language held to a reference: every rule expression evaluated by the engine and by
//! minijinja (Jinja's expression semantics, which the language keeps) over the values of one
//! evaluation, and every text's fast form against minijinja's rendering, for the differential
//! tests (`tests/interp.rs`). Not part of `decide validate`: the engine's evaluator is the
//! meaning, and this is how its tests find where it would differ from Jinja's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::Expression;
use minijinja::value::{Enumerator, Object, Value as Jinja};

use decide_lang::Value;
use decide_lang::jinja::{from_jinja, to_jinja};

use decide_engine::graph::Graph;
use decide_lang::code::Bound;
use decide_lang::text::Text;

/// One rule expression (or text) evaluated both ways.
#[doc(hidden)]
#[derive(Debug)]
pub struct ReferenceCheck {
    /// The node and the expression's text, or the text template's name.
    pub expr: String,
    /// The bound item (`offer`, a select's item) it was evaluated with, if any.
    pub bound: Option<Value>,
    /// The engine's answer, or its error.
    pub ours: Result<Value, String>,
    /// minijinja's answer.
    pub minijinja: Result<Value, String>,
    /// The type the typechecker gave the expression when the rules loaded (`None` for a text).
    pub ty: Option<decide_lang::types::Type>,
}

impl ReferenceCheck {
    /// Whether the engine's answer is a value of the type the typechecker gave the expression
    /// (an error is no counterexample).
    #[must_use]
    pub fn well_typed(&self) -> bool {
        match (&self.ty, &self.ours) {
            (Some(ty), Ok(v)) => ty.admits(v),
            _ => true,
        }
    }

    /// Whether the engine agrees with minijinja: the same value (of the same kind, integer or
    /// float alike, rendered alike) where minijinja answers, an error where it fails.
    #[must_use]
    pub fn agrees(&self) -> bool {
        match (&self.ours, &self.minijinja) {
            (Err(_), Err(_)) => true,
            (Ok(ours), Ok(theirs)) => agree(ours, theirs),
            _ => false,
        }
    }
}

/// The names of one evaluation with one more bound: a select's item or `offer`.
#[derive(Debug)]
struct WithItem {
    base: Jinja,
    name: String,
    item: Jinja,
}

impl Object for WithItem {
    fn get_value(self: &Arc<Self>, key: &Jinja) -> Option<Jinja> {
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
    owner: &decide_engine::graph::Owner,
    profile: &decide_engine::Profile,
    as_of: jiff::civil::Date,
    values: impl IntoIterator<Item = (&'v std::sync::Arc<str>, &'v Value)>,
) -> Vec<(String, Value)> {
    let mut named: Vec<(String, Value)> = vec![
        ("profile".into(), Value::from_serialize(profile)),
        ("offers".into(), owner.offers.clone()),
        ("catalog".into(), owner.catalog.clone()),
        ("as_of".into(), Value::from(as_of.to_string())),
    ];
    named.extend(values.into_iter().map(|(k, v)| (k.to_string(), v.clone())));
    named
}

/// `named` as minijinja's context.
fn context(named: &[(String, Value)]) -> Jinja {
    Jinja::from_pairs(
        named
            .iter()
            .map(|(k, v)| (k.as_str(), to_jinja(v)))
            .collect::<Vec<_>>(),
    )
}

/// minijinja's answer as the language's value.
fn answer(r: Result<Jinja, minijinja::Error>) -> Result<Value, String> {
    r.map(|v| from_jinja(&v)).map_err(|err| err.to_string())
}

/// The items a select's `from` gives, evaluated by minijinja over `named` (and the offer, for a
/// per-offer select), and whether they are the catalog's offers (read by position).
fn select_items(
    from: &decide_lang::Expr<'_>,
    named: &[(String, Value)],
    offer: Option<&Value>,
    owner: &decide_engine::graph::Owner,
) -> (Vec<Value>, bool) {
    let mut scope = named.to_vec();
    if let Some(offer) = offer {
        scope.push(("offer".to_owned(), offer.clone()));
    }
    let list = answer(reference(from).and_then(|c| c.eval(context(&scope))));
    // minijinja gives back the catalog's own list when `from` reads it.
    let positions = list.as_ref().is_ok_and(|l| owner.is_offers(l));
    let items = list
        .ok()
        .and_then(|l| l.try_iter().map(Iterator::collect))
        .unwrap_or_default();
    (items, positions)
}

/// A search's expressions both ways, over a few of its candidates: each variable's lists with
/// the variables before it bound (the first and the last value of the first variable's list,
/// the first of the others'), then each `let` value, constraint and the objective with the
/// engine's values of those before it bound, as the engine searches.
fn search_checks(
    id: &str,
    s: &decide_engine::graph::nodes::search::SearchBody<'_>,
    offer: Option<(usize, &Value)>,
    named: &[(String, Value)],
    slots: &[OnceLock<Value>],
) -> Vec<ReferenceCheck> {
    let own = s.local_names();
    let mut checks = Vec::new();
    let bound = offer.map(|(i, value)| Bound {
        value,
        offer: Some(i),
    });
    let mut check = |e: &decide_lang::Expr<'_>, locals: &[Value]| -> Option<Value> {
        let mut scope = named.to_vec();
        if let Some((_, o)) = offer {
            scope.push(("offer".to_owned(), o.clone()));
        }
        scope.extend(
            own.iter()
                .zip(locals)
                .map(|(n, v)| (n.to_string(), v.clone())),
        );
        let minijinja = answer(reference(e).and_then(|c| c.eval(context(&scope))));
        let ours = e
            .code
            .eval_with_locals(slots, bound, locals)
            .map_err(|err| err.message);
        let value = ours.as_ref().ok().cloned();
        checks.push(ReferenceCheck {
            expr: format!("{id}: {}", e.text.trim()),
            ours,
            bound: offer.map(|(_, o)| o.clone()),
            minijinja,
            ty: Some(e.ty.clone()),
        });
        value
    };
    // The candidates: each a list of the variables' values.
    let mut candidates: Vec<Vec<Value>> = vec![Vec::new()];
    for (depth, variable) in s.variables.iter().enumerate() {
        let mut next = Vec::new();
        for locals in &candidates {
            if let Some(r) = &variable.reference {
                check(r, locals);
            }
            let list: Vec<Value> = check(&variable.over, locals)
                .and_then(|l| l.try_iter().map(Iterator::collect))
                .unwrap_or_default();
            let picks = if depth == 0 {
                [list.first(), list.last()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
            } else {
                list.first().into_iter().collect()
            };
            let mut seen = Vec::new();
            for v in picks {
                if !seen.contains(&v) {
                    seen.push(v);
                    let mut with = locals.clone();
                    with.push(v.clone());
                    next.push(with);
                }
            }
        }
        candidates = next;
    }
    if let Some(bound) = &s.bound {
        for locals in &candidates {
            check(bound, locals);
        }
    }
    for mut locals in candidates {
        for d in &s.derived {
            let v = check(d, &locals).unwrap_or_default();
            locals.push(v);
        }
        for c in &s.constraints {
            check(c, &locals);
        }
        check(&s.minimize, &locals);
        if let Some(n) = &s.nearest {
            check(n, &locals);
        }
    }
    checks
}

/// Whether two values are the same to every reader: equal, of one kind, both integers or both
/// not, and rendered alike.
#[must_use]
pub fn agree(ours: &Value, theirs: &Value) -> bool {
    theirs == ours
        && theirs.kind() == ours.kind()
        && theirs.is_integer() == ours.is_integer()
        && theirs.to_string() == ours.to_string()
}

/// An expression compiled by minijinja, in the environment the memo's templates use, once per
/// process and text.
fn reference(
    e: &decide_lang::Expr<'_>,
) -> Result<Arc<Expression<'static, 'static>>, minijinja::Error> {
    static COMPILED: OnceLock<Mutex<HashMap<String, Arc<Expression<'static, 'static>>>>> =
        OnceLock::new();
    let cache = COMPILED.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().ok().and_then(|c| c.get(e.text).cloned()) {
        return Ok(found);
    }
    let compiled =
        Arc::new(decide_lang::shared_environment().compile_expression_owned(e.text.to_owned())?);
    if let Ok(mut c) = cache.lock() {
        c.insert(e.text.to_owned(), compiled.clone());
    }
    Ok(compiled)
}

/// Evaluates `profile`, then every rule expression again both with the engine and with
/// minijinja over the values of that evaluation (per offer, per select item), for tests that
/// check that the two agree. Not part of the stable API.
#[doc(hidden)]
pub fn reference_checks(
    graph: &Graph,
    profile: &decide_engine::Profile,
    as_of: jiff::civil::Date,
) -> decide_engine::Result<Vec<ReferenceCheck>> {
    use decide_engine::graph::Body;
    // Every value, whether or not the decision keeps the invariants: the two are compared
    // on what the nodes give, not on whether the rules are right.
    let evaluation =
        decide_engine::graph::run::Run::new(graph, profile, as_of).all(profile, as_of, false)?;
    let owner = graph.owner();
    let named = named_values(owner, profile, as_of, &evaluation.values);
    let slots: Vec<OnceLock<Value>> = (0..owner.names.index.len())
        .map(|_| OnceLock::new())
        .collect();
    for (name, value) in &named {
        let _ = slots[owner.names.index[name.as_str()]].set(value.clone());
    }
    let mut checks = Vec::new();
    let base = context(&named);
    // `bound`: the item's name, value and catalog position (when a catalog offer).
    let mut check =
        |id: &str, e: &decide_lang::Expr<'_>, bound: Option<(&str, Value, Option<usize>)>| {
            let root = match &bound {
                None => base.clone(),
                Some((name, item, _)) => Jinja::from_object(WithItem {
                    base: base.clone(),
                    name: (*name).to_owned(),
                    item: to_jinja(item),
                }),
            };
            let minijinja = answer(reference(e).and_then(|c| c.eval(root)));
            let item = bound.as_ref().map(|(_, value, offer)| Bound {
                value,
                offer: *offer,
            });
            let ours = e.code.eval(&slots, item).map_err(|err| err.message);
            checks.push(ReferenceCheck {
                expr: format!("{id}: {}", e.text.trim()),
                ours,
                bound: bound.map(|(_, v, _)| v),
                minijinja,
                ty: Some(e.ty.clone()),
            });
        };
    let said = sentence_checks(graph, &named, &slots, &base);
    let c = graph.compiled();
    let offers: Vec<Value> = owner.offers.try_iter().into_iter().flatten().collect();
    let mut searched = Vec::new();
    for node in &c.nodes {
        match &node.body {
            Body::Fact(f) if f.per_offer => {
                for (i, offer) in offers.iter().enumerate() {
                    for e in f.expr.exprs() {
                        check(node.id, e, Some(("offer", offer.clone(), Some(i))));
                    }
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
            Body::Search(s) => {
                let bindings: Vec<Option<(usize, &Value)>> = if s.per_offer {
                    offers.iter().enumerate().map(Some).collect()
                } else {
                    vec![None]
                };
                for binding in bindings {
                    searched.extend(search_checks(node.id, s, binding, &named, &slots));
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
    checks.extend(searched);
    checks.extend(said);
    checks.extend(text_checks(owner, &slots, &base));
    Ok(checks)
}

/// Every sentence of a formula (a row's `says:`), said for each offer (a per-offer fact) or item
/// (a select): the engine's text form against minijinja's render of its source, before either
/// is reflowed.
fn sentence_checks(
    graph: &Graph,
    named: &[(String, Value)],
    slots: &[OnceLock<Value>],
    base: &Jinja,
) -> Vec<ReferenceCheck> {
    use decide_engine::graph::Body;
    let owner = graph.owner();
    let mut said = Vec::new();
    let mut check_sentence =
        |id: &str,
         (text, source): (&Text, &str),
         (name, item, offer): (&str, Value, Option<usize>)| {
            let root = Jinja::from_object(WithItem {
                base: base.clone(),
                name: name.to_owned(),
                item: to_jinja(&item),
            });
            let bound = Bound {
                value: &item,
                offer,
            };
            said.push(ReferenceCheck {
                expr: format!("{id}: sentence `{}`", source.trim()),
                ours: text.render_bound(slots, Some(bound)).map(Value::from),
                bound: Some(item.clone()),
                ty: None,
                minijinja: owner
                    .env
                    .render_str(source, root)
                    .map(Value::from)
                    .map_err(|err| err.to_string()),
            });
        };
    let offers: Vec<Value> = owner.offers.try_iter().into_iter().flatten().collect();
    for node in &graph.compiled().nodes {
        match &node.body {
            Body::Fact(f) if f.per_offer => {
                let sentences = f.expr.sentences();
                for (i, offer) in offers.iter().enumerate() {
                    for &sentence in &sentences {
                        check_sentence(node.id, sentence, ("offer", offer.clone(), Some(i)));
                    }
                }
            }
            Body::Select(s) if !s.per_offer => {
                let sentences = s.map.as_ref().map(|m| m.sentences()).unwrap_or_default();
                if sentences.is_empty() {
                    continue;
                }
                let (items, positions) = select_items(&s.from, named, None, owner);
                for (i, candidate) in items.iter().enumerate() {
                    for &sentence in &sentences {
                        let offer = positions.then_some(i);
                        check_sentence(node.id, sentence, (s.item, candidate.clone(), offer));
                    }
                }
            }
            _ => {}
        }
    }
    said
}

/// Every text with a fast form rendered both ways over one evaluation's `slots` (`base`: the
/// same values as minijinja's context), before the texts' line breaks are reflowed, which both
/// renders share.
fn text_checks(
    owner: &decide_engine::graph::Owner,
    slots: &[OnceLock<Value>],
    base: &Jinja,
) -> Vec<ReferenceCheck> {
    let mut texts: Vec<(&String, &Text)> = owner
        .texts
        .iter()
        .filter(|(_, t)| t.has_fast_form() && t.from_evaluation)
        .collect();
    texts.sort_by_key(|(name, _)| *name);
    texts
        .into_iter()
        .map(|(name, text)| ReferenceCheck {
            expr: format!("text `{name}`"),
            ours: text.render(slots).map(Value::from),
            bound: None,
            ty: None,
            minijinja: owner
                .env
                .get_template(name)
                .and_then(|t| t.render(base.clone()))
                .map(Value::from)
                .map_err(|err| err.to_string()),
        })
        .collect()
}
