//! Name resolution: what an expression or text may mention, and which nodes and profile fields
//! it reads (the graph's edges).
//!
//! Nobody writes edges by hand: a node depends on the nodes its expressions mention (found with
//! minijinja's `undeclared_variables`). A name that is neither a node nor a root (`profile`,
//! `offers`, `catalog`, `as_of`) is an error with a suggestion, and so is a `profile.` path the
//! profile does not have.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde_saphyr::{Location, Spanned};

use crate::error::suggest as suggest_name;
use crate::error::{Error, Result};
use crate::graph::Owner;
use crate::graph::model::Body;
use crate::lang::Words;
use crate::policy::explanation::{self, EachItem, Explanation, Phrase, Phrases, SentenceRow};
use crate::policy::formula::FormulaText;
use crate::policy::rules::{FieldType, HitPolicy, NoMatch, Pick, Row, RuleNode, Select, Table};
use crate::policy::{Policy, ROOT_NAMES};
use crate::profile::fields::FieldKind;
use decide_lang::Expr;
use decide_lang::measure::Measure;
use decide_lang::types::{Names, Type, TypeKind, Unknown};

/// Everything the compiler needs to resolve names.
pub(crate) struct Scope<'a> {
    pub owner: &'a Owner,
    pub globals: HashSet<String>,
    pub node_index: HashMap<&'a str, usize>,
    /// Each node's type, by index, as it declares it ([`node_type`]).
    pub node_types: Vec<Type>,
    /// The catalog's offers (at the policy's date) and its hardware (at every date), each as
    /// JSON in the graph's language: the fields and types of a bound offer's paths.
    pub offers: Vec<serde_json::Value>,
    pub hardware: Vec<serde_json::Value>,
    /// [`Scope::offer_field`]'s answers by path, remembered: the same few paths are typed in
    /// hundreds of expressions, and each answer walks every offer.
    pub offer_types: std::cell::RefCell<HashMap<String, Option<Type>>>,
}

/// The names an expression reads, typed for [`decide_lang::types::infer`]: the scope's, with
/// the names the node binds, which are catalog offers where `offers` says so.
struct Typing<'s, 'a> {
    scope: &'s Scope<'a>,
    bound: &'s [&'s str],
    offers: bool,
}

impl Names for Typing<'_, '_> {
    fn path(&self, path: &str) -> std::result::Result<Option<Type>, Unknown> {
        let mut fields = path.split('.');
        let root = fields.next().unwrap_or(path);
        if self.bound.first() == Some(&root) && self.offers {
            return self.scope.offer_field(root, &fields.collect::<Vec<_>>());
        }
        // A select's chosen catalog offer (or none), read below.
        if !self.bound.contains(&root)
            && path != root
            && let Some(&i) = self.scope.node_index.get(root)
            && is_offer(&self.scope.node_types[i])
        {
            return self.scope.offer_field(root, &fields.collect::<Vec<_>>());
        }
        Ok(self.scope.type_of(path, self.bound))
    }

    fn price_unit(&self, unit: &str) -> Measure {
        self.scope
            .owner
            .policy
            .price_unit_quantities
            .get(unit)
            .cloned()
            .unwrap_or_else(|| Measure::unit(unit))
    }
}

/// An offer field's type with the dimensions `offer_quantities:` declares: the path's own
/// where it is a number, its fields' where it is a record (a declared field no offer gives at
/// the date too: a term's `notice` where no quote refunds), its items' where it is a list.
fn measured(t: Type, path: &str, quantities: &indexmap::IndexMap<String, Measure>) -> Type {
    match t {
        t if t.shape() == Some(TypeKind::Number) => match quantities.get(path) {
            Some(d) => Type::Quantity(d.clone()),
            None => t,
        },
        Type::Record(r) => {
            let mut fields: Vec<(Box<str>, Type)> = r
                .fields
                .iter()
                .map(|(f, t)| {
                    (
                        f.clone(),
                        measured(t.clone(), &format!("{path}.{f}"), quantities),
                    )
                })
                .collect();
            for (declared, d) in quantities {
                if let Some(field) = declared
                    .strip_prefix(path)
                    .and_then(|rest| rest.strip_prefix('.'))
                    .filter(|f| !f.contains('.'))
                    && !fields.iter().any(|(f, _)| &**f == field)
                {
                    fields.push((field.into(), Type::Quantity(d.clone())));
                }
            }
            Type::record(fields, r.closed)
        }
        Type::List(item) => Type::list_of(measured((*item).clone(), path, quantities)),
        t => t,
    }
}

/// Whether a node's value is a catalog offer (or none).
fn is_offer(t: &Type) -> bool {
    match t {
        Type::Offer => true,
        Type::Nullable(t) => **t == Type::Offer,
        _ => false,
    }
}

/// What a node's value is, as far as the rules declare it: a fact's `type:` (a constant's
/// value), a per-offer fact's map by offer id (of values of its `type:`), a criterion's true or
/// false, a table's row or rows, a select's list or item, a search's record; the others
/// undeclared.
pub(crate) fn node_type(node: &RuleNode) -> Type {
    let per_offer = |t: Type| Type::PerOffer(Arc::new(t));
    match node {
        // Its map leaves out the offers it gives none for: every value is of its type.
        RuleNode::Fact(f) => {
            let measured = |t: Type| match f.measure() {
                Some(Ok(d)) if t.shape() == Some(TypeKind::Number) || t == Type::Any => {
                    Type::Quantity(d)
                }
                _ => t,
            };
            match &f.value {
                _ if f.per_offer => per_offer(measured(declared(f.kind))),
                Some(v) => measured(Type::of_json(&v.value)),
                // A number of a declared unit or none; anything else that may be none,
                // undeclared.
                None if f.nullable => match f.measure() {
                    Some(Ok(d)) if declared(f.kind).shape() == Some(TypeKind::Number) => {
                        Type::Nullable(Arc::new(Type::Quantity(d)))
                    }
                    _ => Type::Any,
                },
                None => measured(declared(f.kind)),
            }
        }
        RuleNode::Criterion(_) => Type::Bool,
        RuleNode::Table(t) => table_type(t),
        RuleNode::Select(s) => select_type(s),
        // A record; per offer, a map by offer id of records (every offer has one).
        RuleNode::Search(s) => {
            let record = Type::record(
                [
                    ("best", Type::map_or_none()),
                    ("first", Type::map_or_none()),
                    ("nearest", Type::map_or_none()),
                    ("searched", Type::Number),
                    ("feasible", Type::Number),
                    ("ruled_out", Type::Map),
                    ("cheaper", Type::list()),
                ]
                .into_iter()
                .map(|(f, t)| (f.into(), t))
                .collect(),
                true,
            );
            if s.per_offer {
                per_offer(record)
            } else {
                record
            }
        }
        _ => Type::Any,
    }
}

/// A table's value: a list of rows (`collect`), or a row, a record (or none, where no row may
/// match and nothing says otherwise); a row's fields typed where every row (the default
/// included) gives them, with what their values have in common.
fn table_type(t: &Table) -> Type {
    let rows: Vec<&Row> = t.rows.iter().chain(&t.default).collect();
    let mut fields: Vec<(Box<str>, Type)> = Vec::new();
    if let Some(first) = rows.first() {
        fields.push(("id".into(), Type::Text));
        fields.push(("title".into(), Type::Text));
        if rows.iter().all(|r| r.because.is_some()) {
            fields.push(("because".into(), Type::Text));
        }
        for key in first.then.keys() {
            if let Some(values) = rows
                .iter()
                .map(|r| r.then.get(key).map(|v| Type::of_json(v).opened()))
                .collect::<Option<Vec<_>>>()
            {
                fields.push((
                    key.as_str().into(),
                    decide_lang::types::common(values.into_iter()),
                ));
            }
        }
    }
    // Another row may give fields the first does not: the record is open.
    let row = Type::record(fields, false);
    match t.hit {
        HitPolicy::Collect => Type::list_of(row),
        _ if t.default.is_some() || t.no_match == Some(NoMatch::Error) => row,
        _ => Type::Nullable(Arc::new(row)),
    }
}

/// A select's value: a list (`pick: all`), or the first item or none (`pick: first`); per
/// offer, a map by offer id of those (an offer it gives none for left out). An item is a
/// catalog offer (from `offers`, mapped to nothing), a record of a map literal's keys or of a
/// record's fields, or undeclared.
fn select_type(s: &Select) -> Type {
    let offers = s.from.value.trim() == "offers";
    let item = match &s.map {
        None if offers => Type::Offer,
        Some(FormulaText::Expr(map)) => {
            match decide_lang::parser::parse(&map.value).map(|t| t.kind) {
                Ok(decide_lang::ast::TermKind::Map(pairs)) => record_of_keys(&pairs),
                _ => Type::Any,
            }
        }
        Some(FormulaText::Record(fields)) => Type::record(
            fields
                .keys()
                .map(|k| (k.as_str().into(), Type::Any))
                .collect(),
            true,
        ),
        // Cases (and no map) give what each row gives: undeclared until selects are typed
        // in the order they read each other.
        None | Some(FormulaText::Cases(_)) => Type::Any,
    };
    let map_like = item.shape() == Some(TypeKind::Map);
    match (s.pick, s.per_offer) {
        (Pick::All, false) => Type::list_of(item),
        (Pick::All, true) => Type::PerOffer(Arc::new(Type::list_of(item))),
        (Pick::First, false) if map_like => Type::Nullable(Arc::new(item)),
        (Pick::First, false) => Type::Any,
        (Pick::First, true) if map_like => Type::PerOffer(Arc::new(item)),
        (Pick::First, true) => Type::PerOffer(Arc::new(Type::Any)),
    }
}

/// A map literal's type before its values are typed: a closed record of its keys where they are
/// distinct constant texts (each value undeclared), else a map.
fn record_of_keys(pairs: &[(decide_lang::ast::Term, decide_lang::ast::Term)]) -> Type {
    match decide_lang::ast::record_keys(pairs) {
        Some(keys) => Type::record(
            keys.into_iter().map(|k| (k.into(), Type::Any)).collect(),
            true,
        ),
        None => Type::Map,
    }
}

/// The type of a profile field of kind `kind`: a section's or a map's is a map, a list's a list
/// of its items'.
fn field_type(kind: &FieldKind) -> Type {
    match kind {
        FieldKind::Object | FieldKind::Map(_) => Type::Map,
        FieldKind::Bool => Type::Bool,
        FieldKind::Number(_) => Type::Number,
        FieldKind::String | FieldKind::Enum(_) => Type::Text,
        FieldKind::List(item) => Type::list_of(field_type(item)),
    }
}

/// The type a fact's `type:` declares.
pub(crate) fn declared(kind: FieldType) -> Type {
    match kind {
        FieldType::Number | FieldType::Integer => Type::Number,
        FieldType::Bool => Type::Bool,
        FieldType::String | FieldType::Date => Type::Text,
        FieldType::List => Type::list(),
        FieldType::Map => Type::Map,
        FieldType::Any => Type::Any,
    }
}

/// A condition (`when`, `where`, `holds`) gives true or false.
fn condition(
    field: &str,
    ty: Type,
    tree: &decide_lang::ast::Term,
) -> Result<Type, decide_lang::lexer::SyntaxError> {
    let last = field.rsplit('.').next().unwrap_or(field);
    let is_condition = matches!(last, "when" | "where" | "holds");
    if is_condition && ty != Type::Any && ty != Type::Bool {
        return Err(decide_lang::lexer::SyntaxError {
            message: format!(
                "a condition gives true or false, and this gives {}",
                ty.name()
            ),
            span: tree.span.clone(),
            help: Some("compare it: `x > 0`, `x != ''`, `x is not none`".to_owned()),
        });
    }
    Ok(ty)
}

impl<'a> Scope<'a> {
    /// Compiles `text` and returns it with the node indices it reads. `bound` are names the
    /// node binds itself (a select's item), of no declared type.
    pub(crate) fn expr(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        bound: &[&str],
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
        self.expr_in(file, text, node, field, (bound, false), reads)
    }

    /// [`Scope::expr`] where the name the node binds is a catalog offer (`offer` in a per-offer
    /// fact, the item of a select from `offers`): its paths are typed as the catalog's offers
    /// have them, and a path no offer has is an error.
    pub(crate) fn expr_over_offers(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        bound: &[&str],
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
        self.expr_in(file, text, node, field, (bound, true), reads)
    }

    fn expr_in(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        (bound, offers): (&[&str], bool),
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
        self.expr_with_locals(file, text, node, field, (bound, offers), &[], reads)
    }

    /// [`Scope::expr`] (or, with `offers`, [`Scope::expr_over_offers`]) where the node also
    /// names values of its own, `locals`, in order (a search's variables and `let` values):
    /// they shadow every other name, are of no declared type, and are read from the values the
    /// evaluation gives ([`crate::graph::run::Run::eval_with_locals`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn expr_with_locals(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        (bound, offers): (&[&str], bool),
        locals: &[&str],
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
        // The names the expression may read besides nodes and roots: the bound item first.
        let own: Vec<&str> = bound.iter().chain(locals).copied().collect();
        let policy = &self.owner.policy;
        if text.value.trim().is_empty() {
            return Err(policy
                .error_at(
                    file,
                    text.referenced,
                    format!("{}: `{field}` is empty", subject(policy, node)),
                )
                .field(format!("{node}.{field}")));
        }
        // Parsed once: the names it reads, its type and its code come from this tree.
        // Bounded before the parser (and everything after it) recurses over the tree.
        if let Err(limit) = decide_lang::limits::expression(&text.value) {
            return Err(policy
                .error_at(
                    file,
                    text.referenced,
                    format!("{}: `{field}` is too large: {limit}", subject(policy, node)),
                )
                .field(format!("{node}.{field}"))
                .help(TOO_LARGE_HELP));
        }
        let tree = decide_lang::parser::parse(&text.value)
            .and_then(|tree| decide_lang::vocabulary::check(&tree).map(|()| tree))
            .map_err(|e| self.located(file, text, node, field, "does not compile", e))?;
        let paths = tree.paths();
        self.resolve(
            file,
            text.referenced,
            node,
            field,
            &own,
            &paths.iter().cloned().collect(),
            reads,
        )?;
        let mut names: Vec<String> = paths
            .iter()
            .map(|p| p.split('.').next().unwrap_or(p).to_owned())
            .collect();
        names.sort();
        names.dedup();
        let typing = Typing {
            scope: self,
            bound: &own,
            offers,
        };
        let ty = decide_lang::types::infer(&tree, &typing)
            .and_then(|ty| condition(field, ty, &tree))
            .map_err(|e| self.located(file, text, node, field, "is wrong for every profile", e))?;
        let code = decide_lang::code::Code::with_locals(
            &tree,
            &self.owner.names,
            bound,
            locals,
            self.owner.offer_list(),
        )
        .map_err(|e| self.located(file, text, node, field, "does not compile", e))?;
        Ok(Expr {
            code,
            ty,
            names: names.into(),
            text: &text.value,
            file,
            location: text.referenced,
        })
    }

    /// The type of a name an expression reads, or of a field path (`profile.usage.gpus`):
    /// the item the node binds is undeclared, a node's is what it declares, a profile field's is
    /// the profile's (undeclared where it may be left out, but for a number of a declared
    /// dimension: that number or none), the other roots' are fixed.
    fn type_of(&self, path: &str, bound: &[&str]) -> Option<Type> {
        let root = path.split('.').next().unwrap_or(path);
        if bound.contains(&root) {
            return None;
        }
        if let Some((node, field)) = path.split_once('.')
            && let Some(&i) = self.node_index.get(node)
        {
            // A field of a field is typed by the expression's own reading (`x.a.b`).
            if field.contains('.') {
                return None;
            }
            // A chosen row or item (or none) has the fields of the row or item.
            return self.node_types[i]
                .field(field)
                .ok()
                .filter(|t| *t != Type::Any);
        }
        if let Some(inner) = path.strip_prefix("profile.") {
            let field = crate::profile::fields::field(inner)?;
            // A number the policy gives a dimension (`profile_quantities:`) has it, and may be
            // none where the profile may leave it out.
            if let Some((d, ..)) = self.owner.policy.profile_quantities.get(inner) {
                let t = Type::Quantity(d.clone());
                return Some(if field.nullable {
                    Type::Nullable(Arc::new(t))
                } else {
                    t
                });
            }
            if field.nullable {
                return None;
            }
            return Some(field_type(&field.kind));
        }
        if path != root {
            return None;
        }
        if let Some(&i) = self.node_index.get(root) {
            return Some(self.node_types[i].clone());
        }
        match root {
            "profile" | "catalog" => Some(Type::Map),
            "offers" => Some(Type::list_of(Type::Offer)),
            "as_of" => Some(Type::Text),
            "not_on_offer" => Some(Type::list_of(Type::Map)),
            _ => None,
        }
    }

    /// The type of path `fields` below `item`, a bound catalog offer (`gpu.memory_gb` of
    /// `offer.gpu.memory_gb`): the JSON type every offer gives it, `None` where they do not all
    /// have it or disagree (or the catalog is empty); an error where no offer could have it:
    /// neither an offer at the policy's date, nor the catalog's hardware, nor `offer_fields`,
    /// nor a quote has it.
    fn offer_field(
        &self,
        item: &str,
        fields: &[&str],
    ) -> std::result::Result<Option<Type>, Unknown> {
        if self.offers.is_empty() && self.hardware.is_empty() {
            return Ok(None);
        }
        if fields.is_empty() {
            return Ok(Some(Type::Map));
        }
        let key = fields.join(".");
        if let Some(known) = self.offer_types.borrow().get(&key) {
            return Ok(known.clone());
        }
        let found = self.offer_field_uncached(item, fields)?;
        self.offer_types.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    /// [`Scope::offer_field`] for a path not typed before (`fields` not empty).
    fn offer_field_uncached(
        &self,
        item: &str,
        fields: &[&str],
    ) -> std::result::Result<Option<Type>, Unknown> {
        let declared: Vec<Vec<&str>> = self
            .owner
            .policy
            .offer_fields
            .keys()
            .map(String::as_str)
            .chain(crate::policy::quotes::QUOTED_PATHS.iter().copied())
            .map(|p| p.split('.').collect())
            .collect();
        for (level, name) in fields.iter().enumerate() {
            let above = &fields[..level];
            let mut known: BTreeSet<&str> = BTreeSet::new();
            for value in self.offers.iter().chain(&self.hardware) {
                if let Some(serde_json::Value::Object(map)) = at_path(value, above) {
                    known.extend(map.keys().map(String::as_str));
                }
            }
            known.extend(
                declared
                    .iter()
                    .filter(|p| p.len() > level && p[..level] == *above)
                    .map(|p| p[level]),
            );
            if known.is_empty() {
                // Not a map in any offer: reading a field of it is the typechecker's to refuse.
                return Ok(None);
            }
            if !known.contains(name) {
                let place = std::iter::once(item)
                    .chain(above.iter().copied())
                    .collect::<Vec<_>>()
                    .join(".");
                let listed = known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let help = match suggest_name(name, known.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? `{place}` has the fields {listed}"),
                    None => format!("`{place}` has the fields {listed}"),
                };
                return Err(Unknown {
                    message: format!(
                        "no offer of the catalog has a field `{name}` under `{place}`"
                    ),
                    help: Some(help),
                });
            }
        }
        // The type every offer gives the path, where every offer has it. A number whose unit
        // the policy declares has it at every date, given by every offer or not; so do the
        // numbers in a list or record some offers give (`price.terms` of the boxes, not of the
        // containers), as those offers give it.
        let given: Vec<Type> = self
            .offers
            .iter()
            .filter_map(|o| at_path(o, fields).map(Type::of_json))
            .collect();
        let every = given.len() == self.offers.len();
        let quantities = &self.owner.policy.offer_quantities;
        let path = fields.join(".");
        let t = measured(
            decide_lang::types::common(given.into_iter()).opened(),
            &path,
            quantities,
        );
        Ok(if every && t != Type::Any {
            Some(t)
        } else if let Some(d) = quantities.get(&path) {
            Some(Type::Quantity(d.clone()))
        } else {
            Some(t).filter(Type::measures)
        })
    }

    /// An error in expression `text` of `node`'s `field` ("`field` {what}: ..."), pointing at the
    /// token in the rule file where the scalar can be read back, else at the scalar.
    fn located(
        &self,
        file: usize,
        text: &Spanned<String>,
        node: &str,
        field: &str,
        what: &str,
        e: decide_lang::lexer::SyntaxError,
    ) -> Error {
        let policy = &self.owner.policy;
        let source = &policy.sources[file];
        let exact = crate::policy::located::locate_in_scalar(
            &source.text,
            text.referenced,
            &text.value,
            e.span.start,
        );
        let place = exact.or_else(|| crate::policy::position(text.referenced));
        let mut err = Error::new(
            crate::error::ErrorKind::Rules,
            format!("{}: `{field}` {what}: {}", subject(policy, node), e.message),
        )
        .at(&source.name, &source.text, place)
        .field(format!("{node}.{field}"));
        if let Some(help) = e.help {
            err = err.help(help);
        }
        if exact.is_none() {
            err = err.help(format!("the expression is: {}", text.value.trim()));
        }
        err
    }

    /// Checks that every referenced name exists and records node dependencies.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resolve(
        &self,
        file: usize,
        at: Location,
        node: &str,
        field: &str,
        bound: &[&str],
        nested: &HashSet<String>,
        reads: &mut Reads,
    ) -> Result<()> {
        let policy = &self.owner.policy;
        let mut names: Vec<&String> = nested.iter().collect();
        names.sort();
        for path in names {
            let root = path.split('.').next().unwrap_or(path);
            if bound.contains(&root) || self.globals.contains(root) {
                continue;
            }
            if root == "profile" {
                if let Err(hint) = crate::profile::check_path(path) {
                    return Err(policy
                        .error_at(
                            file,
                            at,
                            format!("{}: `{path}` is not a profile field", subject(policy, node)),
                        )
                        .field(format!("{node}.{field}"))
                        .help(hint));
                }
                reads.profile.insert(path.clone());
                reads
                    .roots
                    .extend(ROOT_NAMES.iter().position(|r| *r == "profile"));
                continue;
            }
            if let Some(&i) = self.node_index.get(root) {
                reads.nodes.insert(i);
                continue;
            }
            if let Some(i) = ROOT_NAMES.iter().position(|r| *r == root) {
                reads.roots.insert(i);
                continue;
            }
            let candidates = self
                .node_index
                .keys()
                .copied()
                .chain(ROOT_NAMES.iter().copied())
                .chain(bound.iter().copied());
            let mut err = policy
                .error_at(
                    file,
                    at,
                    format!(
                        "{}: unknown name `{root}` in `{field}`",
                        subject(policy, node)
                    ),
                )
                .field(format!("{node}.{field}"));
            err = match suggest_name(root, candidates) {
                Some(s) => err.help(format!("did you mean `{s}`?")),
                None => err.help("names are node ids, `profile`, `offers`, `catalog` and `as_of`"),
            };
            return Err(err);
        }
        Ok(())
    }

    /// Checks the names a text template mentions (no edges: texts render last).
    pub(crate) fn text(
        &self,
        file: usize,
        location: Location,
        node: &str,
        part: &str,
        bound: &[&str],
        reads: &mut Reads,
    ) -> Result<()> {
        let name = format!("{node}.{part}");
        // Every text was parsed when the owner was built ([`super::compile::build_owner`]).
        let Some(template) = self.owner.texts.get(&name) else {
            return Err(self.owner.policy.error_at(
                file,
                location,
                format!("no text template `{name}`"),
            ));
        };
        let mut mentioned = Reads::default();
        self.resolve(
            file,
            location,
            node,
            part,
            bound,
            &template.names,
            &mut mentioned,
        )?;
        // Every name is known: a text still without the engine's form cannot be rendered.
        if let Some(fault) = &template.fault {
            let policy = &self.owner.policy;
            return Err(policy
                .error_at(
                    file,
                    location,
                    format!(
                        "{}: `{part}` cannot be rendered: {fault}",
                        subject(policy, node)
                    ),
                )
                .field(format!("{node}.{part}"))
                .help("docs/policy.md, \"Explanations as rows\""));
        }
        reads.texts.extend(mentioned.nodes);
        Ok(())
    }
}

/// The value at `path` below `value`, if every field on the way is there.
fn at_path<'v>(value: &'v serde_json::Value, path: &[&str]) -> Option<&'v serde_json::Value> {
    path.iter().try_fold(value, |v, name| v.get(name))
}

/// How errors name what `id` is: "node `x`", or "invariant `x`" (invariants are not nodes).
pub(crate) fn subject(policy: &Policy, id: &str) -> String {
    if id == "sensitivity" && !policy.nodes.iter().any(|n| n.item.id().value == id) {
        // A sensitivity field's `when`.
        return "sensitivity".to_owned();
    }
    if policy.invariants.iter().any(|n| n.item.id.value == id) {
        format!("invariant `{id}`")
    } else {
        format!("node `{id}`")
    }
}

/// What to do with an expression or text over a bound of [`decide_lang::limits`].
pub(crate) const TOO_LARGE_HELP: &str =
    "split it into facts, each one step of the calculation, and name them";

pub(crate) fn template_error(
    policy: &Policy,
    file: usize,
    location: Location,
    node: &str,
    part: &str,
    e: &minijinja::Error,
) -> Error {
    let detail = e.detail().unwrap_or("syntax error");
    let line = e
        .line()
        .map_or(String::new(), |l| format!(" (line {l} of the text)"));
    policy
        .error_at(
            file,
            location,
            format!(
                "{}: `{part}` template does not compile: {detail}{line}",
                subject(policy, node)
            ),
        )
        .field(format!("{node}.{part}"))
}

/// What one node's expressions read: other nodes (edges) and profile fields.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    pub nodes: BTreeSet<usize>,
    pub profile: BTreeSet<String>,
    /// Nodes mentioned only by text templates (no edge: texts render last).
    pub texts: BTreeSet<usize>,
    /// Indices into [`ROOT_NAMES`] of the roots the expressions read.
    pub roots: BTreeSet<usize>,
}

/// One node compiled: its body and what it reads, or the error that stopped it.
pub(crate) type NodeResult<'a> = Result<(Body<'a>, Reads)>;

impl<'a> Scope<'a> {
    /// A criterion, warning or checklist item (or an invariant's message, with no condition): an
    /// optional condition and texts rendered last
    /// (each a template, or rows of condition and sentence inserting the node's phrases).
    pub(crate) fn condition_node<T>(
        &self,
        file: usize,
        id: &str,
        when: Option<&'a Spanned<String>>,
        texts: &[(&str, Said<'a>)],
        body: impl FnOnce(Option<Expr<'a>>, &[String]) -> T,
    ) -> Result<(T, Reads)> {
        let mut reads = Reads::default();
        let when = when
            .map(|e| self.expr(file, e, id, "when", &[], &mut reads))
            .transpose();
        let mut errors = Vec::new();
        let names = self.texts(file, id, texts, &[], &mut reads, &mut errors);
        let when = match when {
            Ok(when) => when,
            Err(e) => {
                errors.insert(0, e);
                None
            }
        };
        match Error::many(errors) {
            Some(e) => Err(e),
            None => Ok((body(when, &names), reads)),
        }
    }

    /// Checks texts said last (each a template, or rows of condition and sentence inserting
    /// the phrases beside it), which may read `bound` names besides the nodes; what they read
    /// goes to `reads.texts` (no edge). Gives each text's name (`id.part`).
    pub(crate) fn texts(
        &self,
        file: usize,
        id: &str,
        texts: &[(&str, Said<'a>)],
        bound: &[&str],
        reads: &mut Reads,
        errors: &mut Vec<Error>,
    ) -> Vec<String> {
        let mut names = Vec::with_capacity(texts.len());
        let mut phrases = None;
        // What the rows' conditions read: like the texts' names, no edge (texts render last).
        let mut said = Reads::default();
        let mut inserted = HashSet::new();
        for (part, text) in texts {
            let Said(e, node_phrases) = text;
            if let Some(rows) = e.value.rows() {
                let rows = RowList {
                    file,
                    id,
                    field: (*part).to_owned(),
                    rows,
                    bound,
                };
                self.rows(&rows, node_phrases, None, &mut said, errors, &mut inserted);
                phrases = Some((e.referenced, *node_phrases));
            }
            if let Err(e) = self.text(file, e.referenced, id, part, bound, reads) {
                errors.push(e);
            }
            names.push(format!("{id}.{part}"));
        }
        if let Some((at, phrases)) = phrases {
            self.phrases(
                file,
                id,
                at,
                phrases,
                bound,
                &mut said,
                errors,
                &mut inserted,
            );
        }
        reads.texts.extend(said.nodes.into_iter().chain(said.texts));
        names
    }

    /// Checks a node's phrases (`at`: where they are written): each phrase's rows as a text's
    /// are, a phrase said for each item as [`Scope::each`] checks it, and every phrase inserted
    /// somewhere (`inserted`: the phrases the node's own sentences insert). A phrase may read
    /// `bound` and the items of the phrases said for each item that insert it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn phrases(
        &self,
        file: usize,
        id: &str,
        at: Location,
        phrases: &'a Phrases,
        bound: &[&str],
        said: &mut Reads,
        errors: &mut Vec<Error>,
        inserted: &mut HashSet<&'a str>,
    ) {
        let outer = items_around(phrases);
        for (name, phrase) in phrases {
            let field = format!("phrases.{name}");
            let mut inner: Vec<&str> = bound.to_vec();
            inner.extend(outer.get(name.as_str()).cloned().unwrap_or_default());
            if let Phrase::Each(each) = phrase {
                self.each(file, id, &field, each, &inner, said, errors);
                inner.push(each.name.as_str());
            }
            let list = RowList {
                file,
                id,
                field,
                rows: phrase.rows(),
                bound: &inner,
            };
            self.rows(&list, phrases, Some(name), said, errors, inserted);
            if !inserted.contains(name.as_str()) {
                errors.push(
                    self.owner
                        .policy
                        .error_at(
                            file,
                            at,
                            format!(
                                "{}: the phrase `{name}` is never inserted",
                                subject(&self.owner.policy, id)
                            ),
                        )
                        .field(format!("{id}.phrases.{name}"))
                        .help("insert it in a sentence with `{{ phrases.NAME }}`, or remove it"),
                );
            }
        }
    }

    /// Checks a phrase said for each item of a list: `each:` an expression that gives a list
    /// (it may read `bound`: the node's item and those of the phrases around it), `as:` a name,
    /// `where:` a condition on the item.
    #[allow(clippy::too_many_arguments)]
    fn each(
        &self,
        file: usize,
        id: &str,
        field: &str,
        each: &'a EachItem,
        bound: &[&str],
        reads: &mut Reads,
        errors: &mut Vec<Error>,
    ) {
        let policy = &self.owner.policy;
        let name = each.name.as_str();
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_name || self.owner.names.index.contains_key(name) {
            errors.push(
                policy
                    .error_at(
                        file,
                        each.each.referenced,
                        format!(
                            "{}: `{field}` binds each item to `{name}`, which {}",
                            subject(policy, id),
                            if is_name { "is already a node or root name" } else { "is not a name" }
                        ),
                    )
                    .field(format!("{id}.{field}.as"))
                    .help("name the item with letters, digits and `_`, a name no node has (`as: claim`)"),
            );
        }
        match self.expr(file, &each.each, id, &format!("{field}.each"), bound, reads) {
            Ok(list) if !matches!(list.ty, Type::List(_) | Type::Any) => errors.push(
                policy
                    .error_at(
                        file,
                        each.each.referenced,
                        format!(
                            "{}: `{field}.each` gives {}, not a list of items to say",
                            subject(policy, id),
                            list.ty.name()
                        ),
                    )
                    .field(format!("{id}.{field}.each")),
            ),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
        let mut with_item = bound.to_vec();
        with_item.push(name);
        if let Some(filter) = &each.filter
            && let Err(e) = self.expr(
                file,
                filter,
                id,
                &format!("{field}.where"),
                &with_item,
                reads,
            )
        {
            errors.push(e);
        }
    }

    /// Records the phrases sentence `says` (at field `path` of node `id`) inserts, once
    /// whichever language inserts them, refusing a name that is no phrase of the node and one
    /// that closes `in_cycle` (the cycle of phrases the sentence's own phrase is in, if any).
    fn inserts(
        &self,
        (file, id, path): (usize, &str, &str),
        says: &Spanned<Words>,
        phrases: &'a Phrases,
        in_cycle: Option<&[&str]>,
        errors: &mut Vec<Error>,
        inserted: &mut HashSet<&'a str>,
    ) {
        let policy = &self.owner.policy;
        let fault = |at: Location, path: String, message: String| {
            policy
                .error_at(file, at, format!("{}: {message}", subject(policy, id)))
                .field(format!("{id}.{path}"))
        };
        let words = &says.value;
        let sentences = || std::iter::once(words.en.as_str()).chain(words.zh.as_deref());
        let mut names: Vec<&str> = sentences().flat_map(explanation::phrase_names).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let Some((key, _)) = phrases.get_key_value(name) else {
                let mut err = fault(
                    says.referenced,
                    path.to_owned(),
                    format!("`phrases.{name}` is not a phrase of this node"),
                );
                if let Some(s) = suggest_name(name, phrases.keys().map(String::as_str)) {
                    err = err.help(format!("did you mean `phrases.{s}`?"));
                }
                let known: Vec<&str> = phrases.keys().map(String::as_str).collect();
                errors.push(err.help(format!(
                    "the node's phrases: {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
                continue;
            };
            inserted.insert(key.as_str());
            if let Some(cycle) = in_cycle
                && cycle.get(1) == Some(&name)
            {
                errors.push(
                    fault(
                        says.referenced,
                        path.to_owned(),
                        format!(
                            "phrases insert each other in a cycle: {}",
                            cycle.join(" → ")
                        ),
                    )
                    .help("a phrase may insert other phrases, but none may come back to itself"),
                );
            }
        }
    }

    /// Checks the phrases of a fact or select (`phrases`, written at `at`) against the sentences
    /// of its rows (`sentences`, each with its field): every name a sentence inserts is a phrase
    /// of the node, every phrase is inserted, and each phrase is checked as a text's are
    /// ([`Scope::phrases`]). What the phrases read is read by the sentences that insert them.
    pub(crate) fn formula_phrases(
        &self,
        (file, id, at): (usize, &str, Location),
        sentences: &[(String, &Spanned<Words>)],
        phrases: &'a Phrases,
        bound: &[&str],
    ) -> Result<()> {
        let mut errors = Vec::new();
        let mut inserted = HashSet::new();
        for (path, says) in sentences {
            self.inserts(
                (file, id, path),
                says,
                phrases,
                None,
                &mut errors,
                &mut inserted,
            );
        }
        let mut said = Reads::default();
        self.phrases(
            file,
            id,
            at,
            phrases,
            bound,
            &mut said,
            &mut errors,
            &mut inserted,
        );
        Error::many(errors).map_or(Ok(()), Err)
    }

    /// Checks one list of sentence rows (a text's, or phrase `phrase`'s): each `when:` a
    /// condition of the rule language (typed, located at its row), only the last row without
    /// one, no `{% %}` tag in a sentence, and every `{{ phrases.NAME }}` a phrase of the node
    /// in no cycle of phrases, recording the phrases inserted.
    fn rows(
        &self,
        list: &RowList<'a, '_>,
        phrases: &'a Phrases,
        phrase: Option<&str>,
        reads: &mut Reads,
        errors: &mut Vec<Error>,
        inserted: &mut HashSet<&'a str>,
    ) {
        let policy = &self.owner.policy;
        let RowList {
            file,
            id,
            ref field,
            rows,
            bound,
        } = *list;
        let fault = |at: Location, path: String, message: String| {
            policy
                .error_at(file, at, format!("{}: {message}", subject(policy, id)))
                .field(format!("{id}.{path}"))
        };
        // The cycle this phrase is in, if any (found once for all its rows).
        let in_cycle = phrase.and_then(|p| cycle(phrases, p));
        for (i, row) in rows.iter().enumerate() {
            let is_last = i + 1 == rows.len();
            let at = format!("{field}[{i}]");
            match &row.when {
                Some(when) => {
                    if let Err(e) = self.expr(file, when, id, &format!("{at}.when"), bound, reads) {
                        errors.push(e);
                    }
                    if is_last {
                        errors.push(
                            fault(when.referenced, format!("{at}.when"), format!(
                                "the last row of `{field}` has a `when:`, so a profile may match no row"
                            ))
                            .help(ROWS_HELP),
                        );
                    }
                }
                None if !is_last => errors.push(
                    fault(row.says.referenced, at.clone(), format!(
                        "row {} of `{field}` has no `when:`, so the rows after it are never said",
                        i + 1
                    ))
                    .help(ROWS_HELP),
                ),
                None => {}
            }
            let words = &row.says.value;
            let sentences = || std::iter::once(words.en.as_str()).chain(words.zh.as_deref());
            for (message, help) in sentence_faults(sentences(), field) {
                errors.push(fault(row.says.referenced, format!("{at}.says"), message).help(help));
            }
            self.inserts(
                (file, id, &format!("{at}.says")),
                &row.says,
                phrases,
                in_cycle.as_deref(),
                errors,
                inserted,
            );
        }
    }
}

/// What the sentences of one row (in each language) of `field` may not do, with the help for
/// each: hold a `{% %}` tag, or choose a value inside a `{{ }}` (a case written in one language
/// only): a sentence only inserts values.
pub(crate) fn sentence_faults<'s>(
    sentences: impl Iterator<Item = &'s str> + Clone,
    field: &str,
) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    if sentences.clone().any(|s| s.contains("{%")) {
        out.push((
            format!("a sentence of `{field}` has a `{{% %}}` tag: a sentence only inserts values"),
            "put the condition in a row's `when:` (a row per case), or in a phrase the sentence inserts with `{{ phrases.NAME }}`",
        ));
    }
    let chooses = sentences
        .flat_map(explanation::insertions)
        .any(|e| decide_lang::parser::parse(e).is_ok_and(|t| t.chooses()));
    if chooses {
        out.push((
            format!("a sentence of `{field}` chooses a value with `if ... else`: a sentence only inserts values"),
            "make each case a row (or a phrase's row) with its `when:`, so every language says it",
        ));
    }
    out
}

/// The phrases `at` inserts (in either language).
fn inserts<'p>(phrases: &'p Phrases, at: &str) -> impl Iterator<Item = &'p str> {
    phrases
        .get(at)
        .into_iter()
        .flat_map(Phrase::rows)
        .flat_map(|r| std::iter::once(r.says.value.en.as_str()).chain(r.says.value.zh.as_deref()))
        .flat_map(explanation::phrase_names)
        .filter_map(|name| phrases.get_key_value(name).map(|(k, _)| k.as_str()))
}

/// For each phrase, the item names it may read: those of the phrases said for each item of a
/// list that insert it, directly or through other phrases.
fn items_around(phrases: &Phrases) -> HashMap<&str, Vec<&str>> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, phrase) in phrases {
        let Phrase::Each(each) = phrase else {
            continue;
        };
        let mut stack = vec![name.as_str()];
        let mut seen = HashSet::new();
        while let Some(at) = stack.pop() {
            for inserted in inserts(phrases, at) {
                if seen.insert(inserted) {
                    out.entry(inserted).or_default().push(each.name.as_str());
                    stack.push(inserted);
                }
            }
        }
    }
    out
}

/// The phrases inserted from `start` back to `start` (`a → b → a`), if `start` is in a cycle.
fn cycle<'p>(phrases: &'p Phrases, start: &'p str) -> Option<Vec<&'p str>> {
    fn walk<'p>(phrases: &'p Phrases, start: &str, path: &mut Vec<&'p str>) -> bool {
        let Some(&at) = path.last() else {
            return false;
        };
        for key in inserts(phrases, at) {
            if key == start {
                path.push(key);
                return true;
            }
            if !path.contains(&key) {
                path.push(key);
                if walk(phrases, start, path) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let (key, _) = phrases.get_key_value(start)?;
    let mut path = vec![key.as_str()];
    walk(phrases, start, &mut path).then_some(path)
}

/// A text of a criterion, warning, checklist item or invariant, as [`Scope::condition_node`]
/// checks it: an explanation (rows or a template) and the node's phrases.
pub(crate) struct Said<'a>(pub &'a Spanned<Explanation>, pub &'a Phrases);

/// One list of sentence rows and where it is: file, node, field (`met`, `phrases.tail`).
struct RowList<'a, 's> {
    file: usize,
    id: &'s str,
    field: String,
    rows: &'a [SentenceRow],
    /// The names the rows may read besides the nodes (a phrase's item, for each item).
    bound: &'s [&'s str],
}

/// How sentence rows are written.
const ROWS_HELP: &str = "rows are tried in order and the first whose `when:` is true gives the sentence; the last row has no `when:` and says what holds otherwise";
