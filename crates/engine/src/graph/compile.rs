//! Compiling a policy into a graph: every node through its kind, then the outputs, the
//! invariants and the questions, collecting every fault so one run shows them all.
//!
//! Text templates (`met:`, `message:`, `text:`) are rendered after the whole graph is evaluated,
//! so they may mention any node without adding edges. Each is parsed once
//! ([`decide_lang::text`]) for the names it mentions and its fast form; minijinja compiles one
//! only when it must render it. Invariants (`holds:`) are compiled like the
//! outputs: they read nodes and are no node themselves.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use decide_lang::Value;
use serde_saphyr::{Location, Spanned};

use crate::error::{Error, Result};
use crate::graph::model::{Body, Compiled, InvariantCheck, Node, OutputExprs};
use crate::graph::scope::{Reads, Said, Scope, template_error};
use crate::graph::{Owner, nodes, order};
use crate::lang::Lang;
use crate::policy::rules::{Explanation, Phrases, RuleNode, Words};
use crate::policy::{Policy, ROOT_NAMES};
use crate::profile::check_path;
use decide_lang::text::Text;
use decide_lang::{Expr, Slots};

/// One text template of the policy, as [`build_owner`] parses it.
struct TextSource<'p> {
    file: usize,
    /// The node's or invariant's id.
    id: &'p str,
    part: String,
    /// The template in the graph's language (rows made into one template).
    source: Cow<'p, str>,
    location: Location,
    /// The values it is rendered with, when they are its own rather than an evaluation's
    /// slots (a sensitivity sentence's, [`super::sensitivity_names`]).
    names: Option<&'static [&'static str]>,
    /// The sentences, when the text is written as rows: one that does not compile is reported
    /// where it is written rather than in the template the rows make.
    sentences: Vec<(Option<&'p str>, &'p Spanned<Words>)>,
}

impl<'p> TextSource<'p> {
    fn explained(
        (file, id, part): (usize, &'p str, &str),
        e: &'p Spanned<Explanation>,
        phrases: &'p Phrases,
        lang: Lang,
    ) -> Self {
        TextSource {
            file,
            id,
            part: part.to_owned(),
            source: e.value.source(lang, phrases),
            location: e.referenced,
            names: None,
            sentences: e.value.sentences(phrases),
        }
    }
}

/// Every text template of `policy`, in `lang`.
fn text_sources(policy: &Policy, lang: Lang) -> Vec<TextSource<'_>> {
    let mut texts = Vec::new();
    for n in &policy.nodes {
        let id = n.item.id().value.as_str();
        match &n.item {
            RuleNode::Criterion(c) => {
                for (part, e) in [("met", &c.met), ("not_met", &c.not_met)] {
                    texts.push(TextSource::explained(
                        (n.file, id, part),
                        e,
                        &c.phrases,
                        lang,
                    ));
                }
            }
            RuleNode::Warning(w) => {
                let at = (n.file, id, "message");
                texts.push(TextSource::explained(at, &w.message, &w.phrases, lang));
            }
            RuleNode::Checklist(c) => {
                let at = (n.file, id, "text");
                texts.push(TextSource::explained(at, &c.text, &c.phrases, lang));
            }
            _ => {}
        }
    }
    // An invariant's `message:` is shown only when it is broken.
    for n in &policy.invariants {
        let id = n.item.id.value.as_str();
        let at = (n.file, id, "message");
        texts.push(TextSource::explained(
            at,
            &n.item.message,
            &n.item.phrases,
            lang,
        ));
    }
    // The sensitivity sentences are rendered with values of their own (the analysis's).
    if let Some(n) = &policy.sensitivity {
        for (part, e) in sensitivity_sentences(&n.item) {
            let mut t =
                TextSource::explained((n.file, "sensitivity", &part), e, &n.item.phrases, lang);
            t.names = Some(super::sensitivity_names(&part));
            texts.push(t);
        }
    }
    texts
}

/// The environment, every text template of the policy parsed (with its fast form, for the texts
/// rendered from an evaluation), the slots, and the catalog values.
pub(crate) fn build_owner(policy: Policy, lang: Lang) -> Result<Owner> {
    let mut index = HashMap::new();
    for name in ROOT_NAMES {
        index.insert((*name).to_owned(), index.len());
    }
    for id in node_ids(&policy) {
        index.insert(id.to_owned(), index.len());
    }
    let slots = Slots { index };
    let offers: Vec<Value> = policy
        .offers
        .iter()
        .map(|o| offer_value(&o.item, lang))
        .collect();
    let catalog = Value::from_pairs(
        policy
            .offers
            .iter()
            .zip(&offers)
            .map(|(o, v)| (Value::from(o.item.id.as_str()), v.clone())),
    );
    let not_on_offer = Value::from_serialize(
        &policy
            .not_on_offer()
            .into_iter()
            .map(|(h, first)| {
                serde_json::json!({
                    "id": h.item.id,
                    "title": h.item.fields.get("title").map(|t| crate::lang::localize(t, lang)),
                    "first_quoted": first.map(|d| d.to_string()),
                })
            })
            .collect::<Vec<_>>(),
    );
    let mut parsed = HashMap::new();
    let mut sources = HashMap::new();
    for text in text_sources(&policy, lang) {
        let name = format!("{}.{}", text.id, text.part);
        let own = text.names.map(Slots::of);
        let fast = match &own {
            Some(own) => (own, &[][..]),
            None => (&slots, offers.as_slice()),
        };
        let mut t = Text::parse(&name, &text.source, Some(fast))
            .map_err(|e| text_error(&policy, &text, &e))?;
        t.from_evaluation = text.names.is_none();
        if let Some(own) = text.names {
            own_names(&policy, &text, &t, own)?;
        }
        sources.insert(name.clone(), text.source.into_owned());
        parsed.insert(name, t);
    }
    // minijinja compiles a text the first time it renders it (most never: the fast form
    // answers); the environment loads it by name.
    let mut env = decide_lang::environment();
    env.set_loader(move |name| Ok(sources.get(name).cloned()));
    Ok(Owner {
        env,
        texts: parsed,
        names: Arc::new(slots),
        offer_ids: policy
            .offers
            .iter()
            .map(|o| Value::from(o.item.id.as_str()))
            .collect(),
        offers: Value::from(offers),
        catalog,
        not_on_offer,
        policy,
        lang,
    })
}

/// Checks that a text rendered with values of its own (a sensitivity sentence) reads only
/// those, `own`: any other name would be undefined when it is said.
fn own_names(policy: &Policy, source: &TextSource<'_>, text: &Text, own: &[&str]) -> Result<()> {
    let mut read: Vec<&str> = text
        .names
        .iter()
        .map(|n| n.split(['.', '[']).next().unwrap_or(n))
        .filter(|root| !own.contains(root))
        .collect();
    read.sort_unstable();
    read.dedup();
    // A field's sentence is named by its field.
    let what = source
        .part
        .strip_prefix("says.")
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| policy.sensitivity.as_ref()?.item.fields.get(i))
        .map_or_else(
            || format!("`{}`", source.part),
            |probe| format!("the `says` of `{}`", probe.field.value),
        );
    match read.first() {
        None => Ok(()),
        Some(name) => Err(policy
            .error_at(
                source.file,
                source.location,
                format!(
                    "{}: {what} reads `{name}`, which it is not given",
                    source.id
                ),
            )
            .field(format!("{}.{}", source.id, source.part))
            .help(format!(
                "{what} is given {}",
                own.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
    }
}

/// An offer as the rules and the memos read it: its fields in `lang`, each vendor text
/// ([`crate::policy::Offer::texts`]) as Markdown-escaped safe text, which the `md` and `cell`
/// filters leave as it is and every template prints escaped, with a filter or without.
fn offer_value(offer: &crate::policy::Offer, lang: Lang) -> Value {
    let fields = crate::lang::localize(&serde_json::Value::Object(offer.fields.clone()), lang);
    let texts: Vec<Vec<&str>> = offer.texts.iter().map(|p| p.split('.').collect()).collect();
    with_texts(
        &fields,
        &texts.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )
}

/// `value` as a template value, the string at each of `texts` (paths below it) escaped.
fn with_texts(value: &serde_json::Value, texts: &[&[&str]]) -> Value {
    match value {
        serde_json::Value::String(text) if texts.iter().any(|p| p.is_empty()) => {
            Value::safe(decide_lang::md_escape(text))
        }
        serde_json::Value::Object(map) if !texts.is_empty() => {
            Value::from_pairs(map.iter().map(|(key, v)| {
                let below: Vec<&[&str]> = texts
                    .iter()
                    .filter(|p| p.first() == Some(&key.as_str()))
                    .map(|p| &p[1..])
                    .collect();
                (Value::from(key.as_str()), with_texts(v, &below))
            }))
        }
        other => decide_lang::Value::from_serialize(&other),
    }
}

/// Why `text` does not compile: at the sentence at fault when the text is rows, else at the text.
fn text_error(policy: &Policy, text: &TextSource<'_>, e: &minijinja::Error) -> Error {
    let at = text.sentences.iter().find_map(|(phrase, says)| {
        [Some(says.value.en.as_str()), says.value.zh.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|s| Text::parse("sentence", s, None).err())
            .map(|e| (*phrase, says.referenced, e))
    });
    let id = text.id;
    match at {
        Some((phrase, location, e)) => {
            // The field the sentence is written in: the text's own rows, or a phrase's.
            let part = phrase.map_or_else(|| text.part.clone(), |p| format!("phrases.{p}"));
            policy
                .error_at(
                    text.file,
                    location,
                    format!(
                        "{}: a sentence of `{part}` does not compile: {}",
                        crate::graph::scope::subject(policy, id),
                        e.detail().unwrap_or("syntax error")
                    ),
                )
                .field(format!("{id}.{part}"))
        }
        None => template_error(policy, text.file, text.location, id, &text.part, e),
    }
}

fn node_ids(policy: &Policy) -> impl Iterator<Item = &str> {
    policy.nodes.iter().map(|n| n.item.id().value.as_str())
}

/// Compiles every node, collecting every fault (not just the first) so that one run of
/// `decide validate` shows them all. A node that fails still gets a place (with no body and no
/// edges), so that the others' references and the cycle check still work.
pub(crate) fn compile_nodes(owner: &Owner) -> Result<Compiled<'_>> {
    let policy = &owner.policy;
    let lang = owner.lang;
    let mut globals: HashSet<String> = owner.env.globals().map(|(k, _)| k.to_owned()).collect();
    globals.extend(
        decide_lang::vocabulary::FUNCTIONS
            .iter()
            .map(|(name, _, _)| (*name).to_owned()),
    );
    let node_index: HashMap<&str, usize> = node_ids(policy)
        .enumerate()
        .map(|(i, id)| (id, i))
        .collect();
    let node_types = policy
        .nodes
        .iter()
        .map(|n| super::scope::node_type(&n.item))
        .collect();
    let scope = Scope {
        owner,
        globals,
        node_index,
        node_types,
        offers: localized(&policy.offers, lang),
        hardware: localized(&policy.hardware, lang),
        offer_types: std::cell::RefCell::default(),
    };
    let mut errors: Vec<Error> = Vec::new();
    let mut nodes: Vec<Node<'_>> = Vec::with_capacity(policy.nodes.len());
    for n in &policy.nodes {
        let rule = &n.item;
        let (body, reads) = nodes::compile(&scope, n.file, rule).unwrap_or_else(|e| {
            errors.extend(e.into_all());
            (Body::Constant(Value::Undefined), Reads::default())
        });
        let id = rule.id();
        nodes.push(Node {
            id: &id.value,
            kind: rule.kind(),
            title: rule.title().get(lang),
            because: rule.because().map(|b| b.get(lang)),
            file: n.file,
            location: id.referenced,
            body,
            deps: reads.nodes.into_iter().collect(),
            text_deps: reads.texts.into_iter().collect(),
            profile_paths: reads.profile.into_iter().collect(),
            root_deps: reads.roots.into_iter().collect(),
        });
    }

    sensitivity(policy, &nodes, &mut errors);
    sensitivity_texts(&scope, &mut errors);
    let sensitivity_when = sensitivity_when(&scope, &mut errors);
    profile_fields(policy, &mut errors);
    let outputs = match outputs(&scope) {
        Ok(outputs) => Some(outputs),
        Err(e) => {
            errors.extend(e.into_all());
            None
        }
    };
    let mut invariants = Vec::with_capacity(policy.invariants.len());
    for n in &policy.invariants {
        match invariant(&scope, n.file, &n.item) {
            Ok(invariant) => invariants.push(invariant),
            Err(e) => errors.extend(e.into_all()),
        }
    }
    let order = order::order(policy, &nodes).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    if let Some(e) = Error::many(errors) {
        return Err(e);
    }
    let (outputs, output_reads) = outputs.expect("outputs compiled when there is no error");
    let mut profile_free = vec![false; nodes.len()];
    for &i in &order {
        let n = &nodes[i];
        profile_free[i] = n.profile_paths.is_empty() && n.deps.iter().all(|&d| profile_free[d]);
    }
    // The nodes the sensitivity analysis watches are the record's too (its `sensitivity`).
    let watched: Vec<usize> = policy
        .sensitivity
        .iter()
        .flat_map(|s| &s.item.watch)
        .filter_map(|w| nodes.iter().position(|n| n.id == w.node.value))
        .collect();
    let record_order = record_order(&nodes, &order, &output_reads, &invariants, &watched);
    Ok(Compiled {
        slot: nodes.iter().map(|n| owner.names.index[n.id]).collect(),
        ids: nodes.iter().map(|n| Arc::from(n.id)).collect(),
        nodes,
        order,
        record_order,
        outputs,
        output_deps: output_reads.nodes.into_iter().collect(),
        output_roots: output_reads.roots.into_iter().collect(),
        profile_free,
        invariants,
        sensitivity_when,
    })
}

/// The nodes a decision record needs, in evaluation order: every criterion, warning, checklist
/// item and table (their outcomes are the record's), the nodes the outputs and the invariants
/// read (and their messages mention), the nodes the sensitivity analysis watches (`watched`),
/// and every node those read or their texts mention. The rest (the memo's sentences, read by
/// nothing else) are evaluated only where every value is kept: for a memo or the trace.
fn record_order(
    nodes: &[Node<'_>],
    order: &[usize],
    outputs: &Reads,
    invariants: &[InvariantCheck<'_>],
    watched: &[usize],
) -> Vec<usize> {
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            !matches!(
                n.body,
                Body::Fact(_) | Body::Select(_) | Body::Search(_) | Body::Constant(_)
            )
        })
        .map(|(i, _)| i)
        .chain(outputs.nodes.iter().chain(&outputs.texts).copied())
        .chain(
            invariants
                .iter()
                .flat_map(|i| i.deps.iter().chain(&i.text_deps).copied()),
        )
        .chain(watched.iter().copied())
        .collect();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut needed[i], true) {
            stack.extend(nodes[i].deps.iter().chain(&nodes[i].text_deps).copied());
        }
    }
    order.iter().copied().filter(|&i| needed[i]).collect()
}

/// Each sensitivity field's `when`, compiled like an output expression (it reads nodes and
/// `profile`, and adds no edge), by field index.
fn sensitivity_when<'a>(scope: &Scope<'a>, errors: &mut Vec<Error>) -> Vec<Option<Expr<'a>>> {
    let policy = &scope.owner.policy;
    let Some(n) = &policy.sensitivity else {
        return Vec::new();
    };
    n.item
        .fields
        .iter()
        .map(|probe| {
            let when = probe.when.as_ref()?;
            let field = format!("fields[{}].when", probe.field.value);
            scope
                .expr(
                    n.file,
                    when,
                    "sensitivity",
                    &field,
                    &[],
                    &mut Reads::default(),
                )
                .map_err(|e| errors.extend(e.into_all()))
                .ok()
        })
        .collect()
}

/// The sensitivity analysis's sentences by part (`text`, `unchanged`, `says.N` for field N), as
/// the owner names them and [`super::sensitivity_names`] gives their values.
fn sensitivity_sentences(
    s: &crate::policy::rules::Sensitivity,
) -> Vec<(String, &Spanned<Explanation>)> {
    let mut parts = vec![("text".to_owned(), &s.text)];
    parts.extend(s.unchanged.iter().map(|u| ("unchanged".to_owned(), u)));
    parts.extend(
        s.fields
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("says.{i}"), &p.says)),
    );
    parts
}

/// Checks the sensitivity analysis's sentences as every text is checked (rows, phrases, the
/// names read), over the values the analysis gives them ([`super::sensitivity_names`]; each
/// sentence was compiled over its own when the owner was built, so a name another sentence has
/// is refused there).
fn sensitivity_texts(scope: &Scope<'_>, errors: &mut Vec<Error>) {
    let Some(n) = &scope.owner.policy.sensitivity else {
        return;
    };
    let s = &n.item;
    let parts = sensitivity_sentences(s);
    let mut names: Vec<&str> = parts
        .iter()
        .flat_map(|(part, _)| super::sensitivity_names(part).iter().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    let said: Vec<(&str, Said<'_>)> = parts
        .iter()
        .map(|(part, e)| (part.as_str(), Said(e, &s.phrases)))
        .collect();
    scope.texts(
        n.file,
        "sensitivity",
        &said,
        &names,
        &mut Reads::default(),
        errors,
    );
}

/// Checks the sensitivity analysis's fields (each a profile field, each `line_under` one of
/// them) and its watched nodes (each a node of the graph).
fn sensitivity(policy: &Policy, nodes: &[Node<'_>], errors: &mut Vec<Error>) {
    let Some(n) = &policy.sensitivity else {
        return;
    };
    for watched in &n.item.watch {
        let id = &watched.node.value;
        if !nodes.iter().any(|node| node.id == id) {
            let mut err = policy
                .error_at(
                    n.file,
                    watched.node.referenced,
                    format!("sensitivity: `watch` names `{id}`, which is no node of the policy"),
                )
                .field("sensitivity.watch");
            if let Some(near) = crate::error::suggest(id, nodes.iter().map(|node| node.id)) {
                err = err.help(format!("did you mean `{near}`?"));
            }
            errors.push(err);
        }
        for field in &watched.fields {
            if !n.item.fields.iter().any(|f| &f.field.value == field) {
                errors.push(
                    policy
                        .error_at(
                            n.file,
                            watched.node.referenced,
                            format!(
                                "sensitivity: `watch` of `{id}` lists `{field}`, which is not a field the analysis varies"
                            ),
                        )
                        .field("sensitivity.watch")
                        .help("name one of the `field:` entries of `sensitivity.fields`"),
                );
            }
        }
    }
    for probe in &n.item.fields {
        let field = &probe.field.value;
        let fault = |message: String, help: String| {
            policy
                .error_at(n.file, probe.field.referenced, message)
                .field("sensitivity.fields")
                .help(help)
        };
        if let Some(pair) = &probe.line_under
            && !n.item.fields.iter().any(|f| &f.field.value == pair)
        {
            errors.push(fault(
                format!(
                    "sensitivity: `{field}` has `line_under: {pair}`, which is not a field the analysis varies"
                ),
                "name one of the `field:` entries of `sensitivity.fields`".to_owned(),
            ));
        }
        if let Err(hint) = check_path(&format!("profile.{field}")) {
            errors.push(fault(
                format!("sensitivity: `{field}` is not a profile field"),
                hint,
            ));
        } else if probe.unset
            && !matches!(
                crate::profile::field(field).map(|f| &f.kind),
                Some(crate::profile::FieldKind::Enum(_))
            )
        {
            errors.push(fault(
                format!("sensitivity: `{field}` has `unset: true`, but it is not a choice"),
                "`unset` searches the choices of a field the profile may leave out (`workload.precision`); remove it here".to_owned(),
            ));
        }
    }
}

/// Whether `path` (below `profile.`) is a number field of the profile, which a
/// `profile_quantities:` line may give a dimension: else what is wrong, and what would be valid.
fn profile_number(path: &str) -> std::result::Result<(), (String, String)> {
    use crate::profile::fields::{self, FieldKind};
    let numbers = || {
        let mut all: Vec<&str> = fields::fields()
            .iter()
            .filter(|f| f.bounds().is_some())
            .map(|f| f.path.as_str())
            .collect();
        all.sort_unstable();
        format!("the profile's number fields are {}", all.join(", "))
    };
    match fields::field(path) {
        Some(f) if f.bounds().is_some() => Ok(()),
        Some(f) => Err((
            format!(
                "`profile_quantities.{path}`: the profile field `{path}` is {}, not a number",
                match f.kind {
                    FieldKind::Object => "a section",
                    FieldKind::Bool => "true or false",
                    FieldKind::String | FieldKind::Enum(_) => "text",
                    FieldKind::List(_) => "a list",
                    FieldKind::Map(_) => "a map",
                    FieldKind::Number(_) => "a number",
                }
            ),
            numbers(),
        )),
        None => Err((
            format!("`profile_quantities.{path}`: the profile has no field `{path}`"),
            match fields::check_path(&format!("profile.{path}")) {
                Err(hint) if hint.starts_with("did you mean") => hint,
                _ => numbers(),
            },
        )),
    }
}

/// The policy's other words about the profile's fields: its questions, and what its numbers
/// measure.
fn profile_fields(policy: &Policy, errors: &mut Vec<Error>) {
    questions(policy, errors);
    profile_quantities(policy, errors);
}

/// Each `profile_quantities:` line names a number field of the profile: else an error at it.
fn profile_quantities(policy: &Policy, errors: &mut Vec<Error>) {
    for (path, &(_, file, at)) in &policy.profile_quantities {
        if let Err((message, help)) = profile_number(path) {
            errors.push(
                policy
                    .error_at(file, at, message)
                    .field(format!("profile_quantities.{path}"))
                    .help(help),
            );
        }
    }
}

/// An invariant: its `holds:` compiled like an output expression (it reads nodes and adds
/// no edge), its message checked like a warning's.
fn invariant<'a>(
    scope: &Scope<'a>,
    file: usize,
    n: &'a crate::policy::rules::Invariant,
) -> Result<InvariantCheck<'a>> {
    let id = &n.id.value;
    let mut reads = Reads::default();
    let holds = scope.expr(file, &n.holds, id, "holds", &[], &mut reads);
    let said = [("message", super::scope::Said(&n.message, &n.phrases))];
    let text = scope.condition_node(file, id, None, &said, |_, _| ());
    let holds = match (holds, text) {
        (Ok(holds), Ok(((), text))) => {
            reads.texts.extend(text.texts);
            holds
        }
        (Err(a), Err(b)) => return Err(Error::many(vec![a, b]).expect("two errors")),
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    Ok(InvariantCheck {
        id,
        title: n.title.get(scope.owner.lang),
        holds,
        message: format!("{id}.message"),
        file,
        deps: reads.nodes.into_iter().collect(),
        text_deps: reads.texts.into_iter().collect(),
        profile_paths: reads.profile.into_iter().collect(),
    })
}

fn outputs<'a>(scope: &Scope<'a>) -> Result<(OutputExprs<'a>, Reads)> {
    let policy = &scope.owner.policy;
    let out = &policy.outputs;
    let o = &out.item;
    let mut reads = Reads::default();
    let mut expr = |e: &'a Spanned<String>, field: &str| {
        scope.expr(out.file, e, "outputs", field, &[], &mut reads)
    };
    let outputs = OutputExprs {
        deployment: expr(&o.deployment, "deployment")?,
        offer: expr(&o.offer, "offer")?,
        scenario: o
            .scenario
            .as_ref()
            .map(|e| expr(e, "scenario"))
            .transpose()?,
        costs: o
            .costs
            .iter()
            .map(|(k, e)| Ok((k.as_str(), expr(e, &format!("costs.{k}"))?)))
            .collect::<Result<_>>()?,
        sections: o
            .sections
            .iter()
            .map(|(k, e)| Ok((k.as_str(), expr(e, &format!("sections.{k}"))?)))
            .collect::<Result<_>>()?,
        calibration: o
            .calibration
            .as_ref()
            .map(|e| expr(e, "calibration"))
            .transpose()?,
    };
    for (name, e) in &o.sections {
        if crate::decision::RECORD_FIELDS.contains(&name.as_str()) {
            return Err(policy
                .error_at(
                    out.file,
                    e.referenced,
                    format!("`outputs.sections.{name}` would replace the record's own `{name}`"),
                )
                .field(format!("outputs.sections.{name}"))
                .help(format!(
                    "the record already has: {}; choose another name",
                    crate::decision::RECORD_FIELDS.join(", ")
                )));
        }
    }
    let promises = &o.promises;
    for required in promises.costs.iter().chain(&promises.headline_cost) {
        if !o.costs.contains_key(required) {
            let defined: Vec<&str> = o.costs.keys().map(String::as_str).collect();
            let mut err = policy
                .error_at(
                    out.file,
                    o.deployment.referenced,
                    format!("`outputs.promises` names the cost `{required}`, which `outputs.costs` does not define"),
                )
                .field("outputs.promises");
            if let Some(s) = crate::error::suggest(required, defined.iter().copied()) {
                err = err.help(format!("did you mean `{s}`?"));
            }
            return Err(err.help(if defined.is_empty() {
                "`outputs.costs` defines no cost".to_owned()
            } else {
                format!("`outputs.costs` defines: {}", defined.join(", "))
            }));
        }
    }
    Ok((outputs, reads))
}

/// Checks `decide init`'s questions: each fills a profile field, its `among` names one, its
/// `when` compiles and reads only the answers to earlier questions (`profile.…`), a unit or
/// shorthands go with a number; and the questionnaire's words and shorthands.
fn questions(policy: &Policy, errors: &mut Vec<Error>) {
    questionnaire(policy, errors);
    for (index, q) in policy.questions.iter().enumerate() {
        number_words(policy, q, errors);
        let field = &q.item.field.value;
        if let Err(hint) = check_path(&format!("profile.{field}")) {
            errors.push(
                policy
                    .error_at(
                        q.file,
                        q.item.field.referenced,
                        format!("question: `{field}` is not a profile field"),
                    )
                    .field("questions[].field")
                    .help(hint.replace("profile.", "")),
            );
        }
        if let Some(among) = &q.item.among
            && let Err(hint) = check_path(&format!("profile.{}", among.value))
        {
            errors.push(
                policy
                    .error_at(
                        q.file,
                        among.referenced,
                        format!("question: `among: {}` is not a profile field", among.value),
                    )
                    .field("questions[].among")
                    .help(hint.replace("profile.", "")),
            );
        }
        if let Some(when) = &q.item.when
            && let Err(e) = check_question_when(policy, index, when)
        {
            errors.push(e.field("questions[].when"));
        }
    }
}

/// The `questionnaire:` section: present when there are questions; each of its words in
/// English and Chinese with the `{placeholders}` its use fills in and no other; its shorthands
/// well formed.
fn questionnaire(policy: &Policy, errors: &mut Vec<Error>) {
    let Some(q) = &policy.questionnaire else {
        if let Some(first) = policy.questions.first() {
            errors.push(
                policy
                    .error_at(
                        first.file,
                        first.item.field.referenced,
                        "the rules have questions but no `questionnaire:` section",
                    )
                    .help(
                        "add `questionnaire: {words: ...}` with the prompts' fixed words (see \
                         the shipped rules/questions.yaml)",
                    ),
            );
        }
        return;
    };
    let prices = q
        .item
        .words
        .prices
        .iter()
        .map(|(unit, words)| (unit.as_str(), words, &["amount"][..]));
    let committed = (q.item.words.committed.iter())
        .map(|(commits, words)| (commits.as_str(), words, &["list", "committed"][..]));
    let entries = q.item.words.entries();
    let entries = entries
        .iter()
        .map(|(n, w, needs)| (*n, *w, *needs))
        .chain(prices)
        .chain(committed);
    for (name, words, needs) in entries {
        let fail = |message: String| {
            policy
                .error_at(q.file, words.referenced, message)
                .field(format!("questionnaire.words.{name}"))
        };
        if words.value.zh.is_none() {
            errors.push(
                fail(format!("questionnaire word `{name}` has no Chinese"))
                    .help("write it as `{en: ..., zh: ...}`: `decide init --lang zh` shows it"),
            );
        }
        for text in [Some(&words.value.en), words.value.zh.as_ref()]
            .into_iter()
            .flatten()
        {
            let used = placeholders(text);
            for missing in needs.iter().filter(|n| !used.iter().any(|u| u == *n)) {
                errors.push(fail(format!(
                    "questionnaire word `{name}` leaves out `{{{missing}}}`: \"{text}\""
                )));
            }
            for unknown in used.iter().filter(|u| !needs.contains(&u.as_str())) {
                let valid = if needs.is_empty() {
                    "it takes none".to_owned()
                } else {
                    format!(
                        "it takes {}",
                        needs
                            .iter()
                            .map(|n| format!("{{{n}}}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                errors.push(
                    fail(format!(
                        "questionnaire word `{name}` has an unknown placeholder `{{{unknown}}}`"
                    ))
                    .help(valid),
                );
            }
        }
    }
    if let Some(shorthands) = &q.item.shorthands {
        shorthand_errors(
            policy,
            q.file,
            shorthands,
            "questionnaire.shorthands",
            errors,
        );
    }
}

/// The names between braces in `text` (`{bound}` → `bound`).
fn placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push(after[..close].to_owned());
        rest = &after[close + 1..];
    }
    out
}

/// Each shorthand is something other than a number, standing for a positive finite value.
fn shorthand_errors(
    policy: &Policy,
    file: usize,
    shorthands: &Spanned<indexmap::IndexMap<String, f64>>,
    field: &str,
    errors: &mut Vec<Error>,
) {
    for (key, value) in &shorthands.value {
        let a_number = matches!(
            crate::profile::typed::Reading::default().read(key),
            Ok(Some(_))
        );
        if key.trim().is_empty() || a_number {
            errors.push(
                policy
                    .error_at(
                        file,
                        shorthands.referenced,
                        format!("shorthand `{key}` reads as a number or is empty"),
                    )
                    .field(field.to_owned())
                    .help(
                        "a shorthand is what follows a number (`万`, `k`, `B`) or a whole answer \
                         that is not a number (`24/7`)",
                    ),
            );
        }
        if !value.is_finite() || *value <= 0.0 {
            errors.push(
                policy
                    .error_at(
                        file,
                        shorthands.referenced,
                        format!("shorthand `{key}` stands for {value}"),
                    )
                    .field(field.to_owned())
                    .help("a shorthand stands for a positive number (`万: 10000`)"),
            );
        }
    }
}

/// A question's `unit`, `symbols` or `shorthands` only on a number (or hours per offer).
fn number_words(
    policy: &Policy,
    q: &crate::policy::Located<crate::policy::rules::Question>,
    errors: &mut Vec<Error>,
) {
    use crate::profile::FieldKind;
    let item = &q.item;
    if let Some(shorthands) = &item.shorthands {
        shorthand_errors(policy, q.file, shorthands, "questions[].shorthands", errors);
    }
    if item.unit.is_none() && item.symbols.is_empty() && item.shorthands.is_none() {
        return;
    }
    let numeric = crate::profile::field(&item.field.value).is_some_and(|f| match &f.kind {
        FieldKind::Number(_) => true,
        FieldKind::Map(inner) => matches!(**inner, FieldKind::Number(_)),
        _ => false,
    });
    if !numeric {
        errors.push(
            policy
                .error_at(
                    q.file,
                    item.field.referenced,
                    format!(
                        "question `{}`: `unit`, `symbols` and `shorthands` are for number answers",
                        item.field.value
                    ),
                )
                .field("questions[].unit")
                .help("remove them, or put them on a question whose field is a number"),
        );
    }
}

/// A question's `when`: a boolean expression over `profile`, the answers so far.
fn check_question_when(policy: &Policy, index: usize, when: &Spanned<String>) -> Result<()> {
    let q = &policy.questions[index];
    let field = &q.item.field.value;
    let fail = |message: String| policy.error_at(q.file, when.referenced, message);
    if let Err(limit) = decide_lang::limits::expression(&when.value) {
        return Err(fail(format!(
            "question `{field}`: `when` is too large: {limit}"
        )));
    }
    let (tree, _) = decide_lang::code::Code::over(&when.value, &["profile"]).map_err(|e| {
        let mut err = fail(format!(
            "question `{field}`: `when` does not compile: {}",
            e.message
        ))
        .help(format!("the expression is: {}", when.value.trim()));
        if let Some(help) = e.help {
            err = err.help(help);
        }
        err
    })?;
    let mut paths = tree.paths();
    paths.sort();
    paths.dedup();
    for path in paths {
        let Some(rest) = path.strip_prefix("profile.") else {
            let root = path.split('.').next().unwrap_or(&path);
            return Err(fail(format!(
                "question `{field}`: unknown name `{root}` in `when`"
            ))
            .help("a question's `when` reads `profile`: the answers to the questions before it"));
        };
        if let Err(hint) = check_path(&path) {
            return Err(fail(format!(
                "question `{field}`: `{path}` is not a profile field"
            ))
            .help(hint));
        }
        let asked = |other: &str| {
            other == rest
                || other.starts_with(&format!("{rest}."))
                || rest.starts_with(&format!("{other}."))
        };
        // A section a question before this one opened (`job`, with `is defined`) may be read
        // though later questions fill its fields.
        let opened = policy.questions[..index]
            .iter()
            .any(|earlier| earlier.item.field.value == rest);
        if !opened
            && policy.questions[index..]
                .iter()
                .any(|later| asked(&later.item.field.value))
        {
            return Err(fail(format!(
                "question `{field}`: `when` reads `{path}`, which is not answered before it"
            ))
            .help("a question's `when` may read only the answers to the questions before it"));
        }
    }
    Ok(())
}

/// Offers as JSON in the graph's language (two-language texts as text).
fn localized(
    offers: &[crate::policy::Located<crate::policy::Offer>],
    lang: Lang,
) -> Vec<serde_json::Value> {
    offers
        .iter()
        .map(|o| crate::lang::localize(&serde_json::Value::Object(o.item.fields.clone()), lang))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vendors_text_is_escaped_wherever_it_is_and_the_rest_is_as_written() {
        let fields = serde_json::json!({
            "billing": {"invoice": "<img onerror=x>\n# h", "unit": "gpu_hour", "min_months": 3},
            "source": "[link](http://x)",
            "title": "**policy text**",
        });
        let value = with_texts(&fields, &[&["billing", "invoice"], &["source"]]);
        let billing = |name: &str| value.get_attr("billing").get_attr(name);
        let invoice = billing("invoice");
        assert!(invoice.is_safe());
        assert_eq!(invoice.as_str(), Some("&lt;img onerror=x&gt; \\# h"));
        assert_eq!(
            value.get_attr("source").as_str(),
            Some("\\[link\\](http://x)")
        );
        // Fields of the policy's own, and the vocabulary's words, are as written.
        assert_eq!(billing("unit").as_str(), Some("gpu_hour"));
        assert_eq!(billing("min_months"), Value::from(3));
        let title = value.get_attr("title");
        assert!(!title.is_safe());
        assert_eq!(title.as_str(), Some("**policy text**"));
        // A template prints it escaped with `md` or without, and compares it as text.
        let env = decide_lang::environment();
        let out = env
            .render_str(
                "{{ o.billing.invoice }}|{{ o.billing.invoice | md }}|{{ o.billing.unit == 'gpu_hour' }}",
                minijinja::context! { o => decide_lang::jinja::to_jinja(&value) },
            )
            .unwrap();
        assert_eq!(
            out,
            "&lt;img onerror=x&gt; \\# h|&lt;img onerror=x&gt; \\# h|True"
        );
    }
}
