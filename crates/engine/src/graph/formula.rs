//! Formulas compiled: a fact's `expr:` or a select's `map:` as written in YAML (one expression,
//! a record of fields, or first-hit cases; see [`crate::policy::formula`]), each part an
//! expression of its own, so an error names its field or row and line.

use std::sync::Arc;

use decide_lang::Expr;
use decide_lang::text::Text;
use decide_lang::types::Type;
use decide_lang::value::{Record, Value};

use crate::error::Result;
use crate::graph::model::Node;
use crate::graph::run::{BoundItem, Run};
use crate::graph::scope::{self, Reads, Scope};
use crate::lang::{Lang, Words};
use crate::policy::explanation::{self, Phrases};
use crate::policy::formula::FormulaText;
use serde_saphyr::Spanned;

/// A formula, compiled.
#[derive(Debug)]
pub enum Formula<'a> {
    Expr(Expr<'a>),
    /// A record: its keys (text values, as a map literal's) and each field's formula.
    Record(Arc<[Value]>, Vec<Formula<'a>>),
    /// First-hit rows: a condition (none on the last row) and the value it gives.
    Cases(Vec<(Option<Expr<'a>>, Formula<'a>)>),
    /// A sentence in the graph's language, rendered with the node's item bound (as one
    /// paragraph, as every rule text is), where it is written, and its source in that language
    /// (with the node's phrases inserted).
    Says(Text, serde_saphyr::Location, Box<str>),
}

/// Where a formula's expressions are compiled: the node, its file, the names it binds and
/// whether they are catalog offers ([`Scope::expr_over_offers`]).
pub(crate) struct Place<'s> {
    pub file: usize,
    pub node: &'s str,
    pub bound: &'s [&'s str],
    pub offers: bool,
    /// Where the node's id is written: the place of an error about a formula with no part.
    pub id_at: serde_saphyr::Location,
    /// The node's phrases, which its sentences insert.
    pub phrases: &'s Phrases,
}

impl<'s> Place<'s> {
    /// Checks the node's phrases against the sentences of `text` (written at `field`): see
    /// [`Scope::formula_phrases`].
    pub(crate) fn check_phrases<'a>(
        &self,
        scope: &Scope<'a>,
        text: Option<&'a FormulaText>,
        field: &str,
    ) -> Result<()>
    where
        's: 'a,
    {
        let mut sentences = Vec::new();
        if let Some(text) = text {
            said_in(text, field, &mut sentences);
        }
        if sentences.is_empty() && self.phrases.is_empty() {
            return Ok(());
        }
        scope.formula_phrases(
            (self.file, self.node, self.id_at),
            &sentences,
            self.phrases,
            self.bound,
        )
    }
}

/// Every sentence of `text` (written at `field`) with its field, in the order written.
fn said_in<'a>(text: &'a FormulaText, field: &str, out: &mut Vec<(String, &'a Spanned<Words>)>) {
    match text {
        FormulaText::Expr(_) => {}
        FormulaText::Record(fields) => {
            for (k, f) in fields {
                said_in(f, &format!("{field}.{k}"), out);
            }
        }
        FormulaText::Cases(rows) => {
            for (i, row) in rows.iter().enumerate() {
                if let Some(then) = &row.then {
                    said_in(then, &format!("{field}.{i}.then"), out);
                }
                if let Some(says) = &row.says {
                    out.push((format!("{field}.{i}.says"), says));
                }
            }
        }
    }
}

const LAST_ROW: &str = "the last row of cases has no `when:` (it is what holds otherwise)";
const NO_WHEN: &str = "every row of cases but the last needs a `when:`";
const BOTH: &str = "a row of cases gives a value (`then:`) or a sentence (`says:`), not both";
const NEITHER: &str = "a row of cases needs a value (`then:`) or a sentence (`says:`)";

/// A row's sentence, compiled in every language it is written in (each only inserts values,
/// names only what the node may read, and has the engine's text form); the graph's language is
/// kept, English where it has none.
fn says_text<'a>(
    scope: &Scope<'a>,
    place: &Place<'_>,
    says: &'a Spanned<Words>,
    at: &str,
    reads: &mut Reads,
) -> Result<Formula<'a>> {
    let owner = scope.owner;
    let policy = &owner.policy;
    let fault = |message: String| {
        policy
            .error_at(
                place.file,
                says.referenced,
                format!("node `{}`: {message}", place.node),
            )
            .field(format!("{}.{at}", place.node))
    };
    let words = &says.value;
    let sentences = std::iter::once(words.en.as_str()).chain(words.zh.as_deref());
    if let Some((message, help)) = scope::sentence_faults(sentences, at).into_iter().next() {
        return Err(fault(message).help(help));
    }
    let slots = Some((&*owner.names, owner.offer_list()));
    let compile = |lang: Lang, sentence: &str, reads: &mut Reads| -> Result<(Text, Box<str>)> {
        let name = format!("{}.{at}.{}", place.node, lang.code());
        let source = explanation::with_phrases(sentence, lang, place.phrases);
        let text = Text::parse_bound(&name, &source, slots, place.bound)
            .map_err(|e| fault(format!("`{at}` does not compile: {e}")))?;
        let names = &text.names;
        scope.resolve(
            place.file,
            says.referenced,
            place.node,
            at,
            place.bound,
            names,
            reads,
        )?;
        match &text.fault {
            Some(why) => Err(fault(format!("`{at}` cannot be rendered: {why}"))),
            None => Ok((text, source.into_boxed_str())),
        }
    };
    let mut kept = compile(Lang::En, &words.en, reads)?;
    if let Some(zh) = &words.zh {
        let said = compile(Lang::Zh, zh, reads)?;
        if owner.lang == Lang::Zh {
            kept = said;
        }
    }
    Ok(Formula::Says(kept.0, says.referenced, kept.1))
}

/// A sentence as one paragraph, as every rule text is ([`decide_lang::flow_text`]), keeping one
/// space at an edge where it was written with one: a part inserted into another sentence
/// (`" after 2 days of porting"`) joins the words around it.
fn paragraph(said: &str) -> String {
    let flowed = decide_lang::flow_text(said);
    if flowed.is_empty() {
        return flowed;
    }
    let lead = if said.starts_with(char::is_whitespace) {
        " "
    } else {
        ""
    };
    let trail = if said.ends_with(char::is_whitespace) {
        " "
    } else {
        ""
    };
    format!("{lead}{flowed}{trail}")
}

/// An error about how a formula is written, at `location` of field `at`.
fn shape_error(
    scope: &Scope<'_>,
    place: &Place<'_>,
    location: serde_saphyr::Location,
    at: &str,
    what: &str,
) -> crate::error::Error {
    let policy = &scope.owner.policy;
    policy
        .error_at(
            place.file,
            location,
            format!("node `{}`: {what}", place.node),
        )
        .field(format!("{}.{at}", place.node))
        .help("cases are rows `- when: CONDITION` / `then: VALUE`, the last with `then:` only")
}

impl<'a> Formula<'a> {
    /// Compiles `text`, written at `field` of the node (`expr`, `map`).
    pub(crate) fn compile(
        scope: &Scope<'a>,
        place: &Place<'_>,
        text: &'a FormulaText,
        field: &str,
        reads: &mut Reads,
    ) -> Result<Formula<'a>> {
        let expr = |text, field: &str, reads: &mut Reads| {
            let (file, node, bound) = (place.file, place.node, place.bound);
            if place.offers {
                scope.expr_over_offers(file, text, node, field, bound, reads)
            } else {
                scope.expr(file, text, node, field, bound, reads)
            }
        };
        Ok(match text {
            FormulaText::Expr(e) => Formula::Expr(expr(e, field, reads)?),
            FormulaText::Record(fields) if fields.is_empty() => {
                return Err(shape_error(
                    scope,
                    place,
                    place.id_at,
                    field,
                    "a record has no fields",
                ));
            }
            FormulaText::Cases(rows) if rows.is_empty() => {
                return Err(shape_error(
                    scope,
                    place,
                    place.id_at,
                    field,
                    "cases have no rows",
                ));
            }
            FormulaText::Record(fields) => {
                let keys = fields.keys().map(|k| Value::from(k.as_str())).collect();
                let values = fields
                    .iter()
                    .map(|(k, f)| Formula::compile(scope, place, f, &format!("{field}.{k}"), reads))
                    .collect::<Result<Vec<_>>>()?;
                Formula::Record(keys, values)
            }
            FormulaText::Cases(rows) => {
                let mut compiled = Vec::with_capacity(rows.len());
                for (i, row) in rows.iter().enumerate() {
                    let last = i + 1 == rows.len();
                    let at = format!("{field}.{i}");
                    let when = match (&row.when, last) {
                        (Some(when), false) => Some(expr(when, &format!("{at}.when"), reads)?),
                        (None, true) => None,
                        (Some(when), true) => {
                            return Err(shape_error(scope, place, when.referenced, &at, LAST_ROW));
                        }
                        (None, false) => {
                            let then = row.then.as_ref().and_then(FormulaText::location);
                            let location = then.unwrap_or(place.id_at);
                            return Err(shape_error(scope, place, location, &at, NO_WHEN));
                        }
                    };
                    let value = match (&row.then, &row.says) {
                        (Some(then), None) => {
                            Formula::compile(scope, place, then, &format!("{at}.then"), reads)?
                        }
                        (None, Some(says)) => {
                            says_text(scope, place, says, &format!("{at}.says"), reads)?
                        }
                        (then, _) => {
                            let location = row.when.as_ref().map_or(place.id_at, |w| w.referenced);
                            let what = if then.is_some() { BOTH } else { NEITHER };
                            return Err(shape_error(scope, place, location, &at, what));
                        }
                    };
                    compiled.push((when, value));
                }
                Formula::Cases(compiled)
            }
        })
    }

    /// What it gives: the expression's type; a closed record of its fields'; the types the
    /// rows give, joined.
    pub fn ty(&self) -> Type {
        match self {
            Formula::Expr(e) => e.ty.clone(),
            Formula::Record(keys, values) => Type::record(
                keys.iter()
                    .zip(values)
                    .map(|(k, v)| (k.as_str().unwrap_or_default().into(), v.ty()))
                    .collect(),
                true,
            ),
            Formula::Cases(rows) => decide_lang::types::common(rows.iter().map(|(_, f)| f.ty())),
            Formula::Says(..) => Type::Text,
        }
    }

    /// Every expression of it, in the order written.
    pub fn exprs(&self) -> Vec<&Expr<'a>> {
        match self {
            Formula::Expr(e) => vec![e],
            Formula::Record(_, values) => values.iter().flat_map(Formula::exprs).collect(),
            Formula::Cases(rows) => rows
                .iter()
                .flat_map(|(when, then)| when.iter().chain(then.exprs()))
                .collect(),
            Formula::Says(..) => Vec::new(),
        }
    }

    /// The expression errors about the whole value point at: the first written (a sentence
    /// has none).
    pub fn first(&self) -> Option<&Expr<'a>> {
        match self {
            Formula::Expr(e) => Some(e),
            Formula::Record(_, values) => values.iter().find_map(Formula::first),
            Formula::Cases(rows) => rows
                .iter()
                .find_map(|(when, then)| when.as_ref().or_else(|| then.first())),
            Formula::Says(..) => None,
        }
    }

    /// Every sentence of it (in the graph's language), each with its source, in the order
    /// written.
    pub fn sentences(&self) -> Vec<(&Text, &str)> {
        match self {
            Formula::Expr(_) => Vec::new(),
            Formula::Record(_, values) => values.iter().flat_map(Formula::sentences).collect(),
            Formula::Cases(rows) => rows.iter().flat_map(|(_, then)| then.sentences()).collect(),
            Formula::Says(text, _, source) => vec![(text, &**source)],
        }
    }

    /// Its value for one evaluation (with the item or offer `bound`): a row's condition must
    /// give true or false.
    pub(crate) fn evaluate(
        &self,
        run: &Run<'_>,
        node: &Node<'_>,
        bound: Option<BoundItem<'_>>,
    ) -> Result<Value> {
        match self {
            Formula::Expr(e) => run.eval(e, node.id, bound),
            Formula::Record(keys, values) => {
                let values = values
                    .iter()
                    .map(|f| f.evaluate(run, node, bound))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Record::value(keys.clone(), values))
            }
            Formula::Cases(rows) => {
                // Compiling checked that there are rows and only the last has no condition.
                for (when, then) in rows {
                    let applies = match when {
                        Some(when) => run.condition(when, node, bound)?.is_true(),
                        None => true,
                    };
                    if applies {
                        return then.evaluate(run, node, bound);
                    }
                }
                Ok(Value::from(()))
            }
            Formula::Says(text, location, _) => match text.render_bound(&run.slots, bound) {
                Ok(said) => Ok(Value::from(paragraph(&said))),
                Err(why) => Err(run.fail_at(
                    node.file,
                    *location,
                    &format!("a sentence of node `{}` failed: {why}", node.id),
                )),
            },
        }
    }
}
