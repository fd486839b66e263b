//! Name resolution: what an expression or text may mention, and which nodes and profile fields
//! it reads (the graph's edges).
//!
//! Nobody writes edges by hand: a node depends on the nodes its expressions mention (found with
//! minijinja's `undeclared_variables`). A name that is neither a node nor a root (`profile`,
//! `offers`, `catalog`, `as_of`) is an error with a suggestion, and so is a `profile.` path the
//! profile does not have.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_saphyr::{Location, Spanned};

use crate::error::suggest as suggest_name;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::graph::Owner;
use crate::graph::model::Body;
use crate::policy::rules::Template;
use crate::policy::{Policy, ROOT_NAMES};

/// Everything the compiler needs to resolve names.
pub(crate) struct Scope<'a> {
    pub owner: &'a Owner,
    pub profile_paths: ProfilePaths,
    pub globals: HashSet<String>,
    pub node_index: HashMap<&'a str, usize>,
}

impl<'a> Scope<'a> {
    /// Compiles `text` and returns it with the node indices it reads. `bound` are names the
    /// node binds itself (`offer` in a per-offer fact, a select's item).
    pub(crate) fn expr(
        &self,
        file: usize,
        text: &'a Spanned<String>,
        node: &str,
        field: &str,
        bound: &[&str],
        reads: &mut Reads,
    ) -> Result<Expr<'a>> {
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
        let compiled = self
            .owner
            .env
            .compile_expression_owned(text.value.clone())
            .map_err(|e| {
                let detail = e.detail().unwrap_or("syntax error").to_owned();
                policy
                    .error_at(
                        file,
                        text.referenced,
                        format!(
                            "{}: `{field}` does not compile: {detail}",
                            subject(policy, node)
                        ),
                    )
                    .field(format!("{node}.{field}"))
                    .help(format!("the expression is: {}", text.value.trim()))
            })?;
        self.resolve(
            file,
            text.referenced,
            node,
            field,
            bound,
            &compiled.undeclared_variables(true),
            reads,
        )?;
        Ok(Expr {
            compiled,
            fast: crate::expr::fast::Fast::compile(&text.value, &self.owner.names, bound),
            text: &text.value,
            file,
            location: text.referenced,
        })
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
                if let Err(hint) = self.profile_paths.check(path) {
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
        text: &Template,
        node: &str,
        part: &str,
        reads: &mut Reads,
    ) -> Result<()> {
        let template = self
            .owner
            .env
            .get_template(&format!("{node}.{part}"))
            .map_err(|e| template_error(&self.owner.policy, file, text, node, part, &e))?;
        let mut mentioned = Reads::default();
        self.resolve(
            file,
            text.referenced,
            node,
            part,
            &[],
            &template.undeclared_variables(true),
            &mut mentioned,
        )?;
        reads.texts.extend(mentioned.nodes);
        Ok(())
    }
}

/// How errors name what `id` is: "node `x`", or "invariant `x`" (invariants are not nodes).
pub(crate) fn subject(policy: &Policy, id: &str) -> String {
    if policy.invariants.iter().any(|n| n.item.id.value == id) {
        format!("invariant `{id}`")
    } else {
        format!("node `{id}`")
    }
}

pub(crate) fn template_error(
    policy: &Policy,
    file: usize,
    text: &Template,
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
            text.referenced,
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
    /// A criterion, warning or checklist item: an optional condition and texts rendered last.
    pub(crate) fn condition_node(
        &self,
        file: usize,
        id: &str,
        when: Option<&'a Spanned<String>>,
        texts: &[(&str, &Template)],
        body: impl FnOnce(Option<Expr<'a>>, &[String]) -> Body<'a>,
    ) -> NodeResult<'a> {
        let mut reads = Reads::default();
        let when = when
            .map(|e| self.expr(file, e, id, "when", &[], &mut reads))
            .transpose();
        let mut errors = Vec::new();
        let mut names = Vec::with_capacity(texts.len());
        for (part, text) in texts {
            if let Err(e) = self.text(file, text, id, part, &mut reads) {
                errors.push(e);
            }
            names.push(format!("{id}.{part}"));
        }
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
}

/// The dotted paths a profile has, read off its JSON Schema, so rule expressions that name a
/// field the profile does not have are caught at load time.
pub(crate) struct ProfilePaths {
    known: HashSet<String>,
    /// Paths whose children are free (maps such as `profile.job.hours`).
    open: HashSet<String>,
}

impl ProfilePaths {
    pub(crate) fn from_schema() -> Self {
        let schema = crate::profile::schema();
        let mut paths = ProfilePaths {
            known: HashSet::from(["profile".to_owned()]),
            open: HashSet::new(),
        };
        paths.walk(schema, schema, "profile");
        paths
    }

    fn walk(&mut self, root: &serde_json::Value, schema: &serde_json::Value, prefix: &str) {
        let schema = resolve_ref(root, schema);
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            for (key, sub) in props {
                let path = format!("{prefix}.{key}");
                self.known.insert(path.clone());
                self.walk(root, sub, &path);
            }
        }
        if schema
            .get("additionalProperties")
            .is_some_and(serde_json::Value::is_object)
        {
            self.open.insert(prefix.to_owned());
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = schema.get(key).and_then(|l| l.as_array()) {
                for sub in list {
                    self.walk(root, sub, prefix);
                }
            }
        }
    }

    pub(crate) fn check(&self, path: &str) -> Result<(), String> {
        if self.known.contains(path) {
            return Ok(());
        }
        let mut prefix = path;
        while let Some((head, _)) = prefix.rsplit_once('.') {
            if self.open.contains(head) {
                return Ok(());
            }
            if self.known.contains(head) {
                let siblings = self
                    .known
                    .iter()
                    .filter(|k| k.rsplit_once('.').is_some_and(|(h, _)| h == head))
                    .map(String::as_str);
                let wrong = &path[head.len() + 1..];
                let wrong = wrong.split('.').next().unwrap_or(wrong);
                let candidates: Vec<&str> = siblings.collect();
                let names: Vec<&str> = candidates
                    .iter()
                    .filter_map(|c| c.rsplit('.').next())
                    .collect();
                if let Some(s) = suggest_name(wrong, names.iter().copied()) {
                    return Err(format!("did you mean `{head}.{s}`?"));
                }
                let mut names = names;
                names.sort_unstable();
                return Err(format!("`{head}` has: {}", names.join(", ")));
            }
            prefix = head;
        }
        Err("see the profile format in the README".to_owned())
    }
}

/// Follows a local `$ref` (`#/definitions/...` or `#/$defs/...`) of a JSON Schema.
pub(crate) fn resolve_ref<'a>(
    root: &'a serde_json::Value,
    schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    match schema.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => r
            .strip_prefix("#/")
            .and_then(|p| p.split('/').try_fold(root, |v, k| v.get(k)))
            .unwrap_or(schema),
        None => schema,
    }
}
