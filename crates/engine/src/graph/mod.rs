//! The decision graph: every node's expressions compiled once, edges derived from the names
//! they reference, and an evaluation order.
//!
//! Nobody writes edges by hand: a node depends on the nodes its expressions mention (found with
//! minijinja's `undeclared_variables`). That gives three load-time checks for free: a name that
//! is neither a node nor a root (`profile`, `offers`, `catalog`, `as_of`) is an error with a
//! suggestion, a `profile.` path that the profile does not have is an error, and a cycle is
//! reported with every node on it. Text templates (`met:`, `message:`, `text:`) are rendered after
//! the whole graph is evaluated, so they may mention any node without adding edges. Invariants
//! (`holds:`) are compiled like the outputs: they read nodes and are no node themselves.
//!
//! The graph is compiled in steps, one file each: [`scope`] resolves the names an expression
//! reads, [`nodes`] compiles (and evaluates) each kind of node, [`compile`] drives both over the
//! policy's one node list, [`order`] sorts the nodes for evaluation (or reports the cycle), and
//! [`model`] is the compiled data. [`run`] is one evaluation's state, which the nodes read.

pub(crate) mod compile;
pub mod formula;
pub(crate) mod model;
pub mod nodes;
pub(crate) mod order;
pub mod reach;
pub mod run;
pub(crate) mod scope;

use std::collections::HashMap;
use std::sync::Arc;

use decide_lang::Value;
use minijinja::Environment;

use crate::error::Result;
use crate::kind::NodeKind;
use crate::lang::Lang;
use crate::policy::Policy;
use decide_lang::Slots;
use decide_lang::text::Text;
pub use model::{Body, Compiled, InvariantCheck, Node};

/// What a compiled graph owns: the policy, the expression environment and the catalog values;
/// the compiled nodes borrow from it.
#[derive(Debug)]
pub struct Owner {
    /// minijinja's environment, which loads the policy's text templates by name (`node.part`).
    pub env: Environment<'static>,
    /// Every text template of the policy by name, parsed: the names it mentions, its fast form.
    pub texts: HashMap<String, Text>,
    pub policy: Policy,
    pub names: Arc<Slots>,
    /// The catalog as a list and as a map by id, built once.
    pub offers: Value,
    /// The catalog's offer ids, in order.
    pub offer_ids: Arc<[Value]>,
    pub catalog: Value,
    /// The catalog's hardware no quote prices at the policy's date ([`Policy::not_on_offer`]):
    /// a record each of `id`, `title` and `first_quoted` (the first day a sheet quotes it, or
    /// none), built once.
    pub not_on_offer: Value,
    /// The language the graph's texts are in.
    pub lang: Lang,
}

impl Owner {
    /// The catalog's offers, in order: what a bound offer's position refers to.
    pub(crate) fn offer_list(&self) -> &[Value] {
        self.offers.as_list().unwrap_or(&[])
    }

    /// Whether `list` is the catalog's own offer list (the `offers` root, not a copy or a
    /// part of it), whose items are the offers by catalog position.
    pub fn is_offers(&self, list: &Value) -> bool {
        matches!((list, &self.offers), (Value::List(a), Value::List(b)) if Arc::ptr_eq(a, b))
    }
}

/// The values the sensitivity analysis gives sentence `part` of `sensitivity:`: a field's
/// `says.N` the field's `value` (and for a list, the item `added` or `removed`); `text`, one
/// change; `unchanged`, a number field that alone changes nothing.
#[must_use]
pub fn sensitivity_names(part: &str) -> &'static [&'static str] {
    match part {
        "text" => &[
            "id",
            "field",
            "target",
            "before",
            "after",
            "direction",
            "change",
            "now",
            "cost",
        ],
        "unchanged" => &[
            "id", "field", "target", "before", "name", "now", "given", "line",
        ],
        _ => &["value", "added", "removed"],
    }
}

self_cell::self_cell!(
    struct Cell {
        owner: Owner,
        #[covariant]
        dependent: Compiled,
    }
    impl {Debug}
);

/// A policy compiled into an evaluable graph. Build it once; evaluate it for many profiles.
#[derive(Debug)]
pub struct Graph {
    cell: Cell,
    /// Values of the nodes that read no profile field, for the last `as_of` date evaluated:
    /// they are the same for every profile (a batch computes them once).
    pub(crate) profile_free: std::sync::Mutex<Option<ProfileFree>>,
}

/// Node values that do not depend on the profile, for one `as_of` date.
#[derive(Debug, Clone)]
pub(crate) struct ProfileFree {
    pub as_of: jiff::civil::Date,
    pub values: Arc<[(usize, Value)]>,
}

impl Graph {
    /// Compiles every expression and template of `policy` and orders the nodes.
    pub fn compile(policy: Policy) -> Result<Self> {
        Self::compile_in(policy, Lang::En)
    }

    /// Compiles `policy` with its texts (titles, reasons, messages) in `lang`; a text with no
    /// version in `lang` is taken in English.
    pub fn compile_in(policy: Policy, lang: Lang) -> Result<Self> {
        let owner = compile::build_owner(policy, lang)?;
        Cell::try_new(owner, compile::compile_nodes).map(|cell| Graph {
            cell,
            profile_free: std::sync::Mutex::new(None),
        })
    }

    /// The language the graph's texts are in.
    #[must_use]
    pub fn lang(&self) -> Lang {
        self.owner().lang
    }

    pub fn owner(&self) -> &Owner {
        self.cell.borrow_owner()
    }

    pub fn compiled(&self) -> &Compiled<'_> {
        self.cell.borrow_dependent()
    }

    /// The cost `decide diff` compares and `decide batch` totals, if the policy names one
    /// (`outputs.promises.headline_cost`).
    #[must_use]
    pub fn headline_cost(&self) -> Option<&str> {
        self.policy().outputs.item.promises.headline_cost.as_deref()
    }

    /// The policy this graph was compiled from.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.owner().policy
    }

    /// Sensitivity sentence `part` (`text`, `unchanged`, `says.N`) rendered with `values`, the
    /// names [`sensitivity_names`] gives for it (a name not given is undefined), its lines
    /// reflowed as every rule text's are.
    ///
    /// # Errors
    /// There is no such sentence, a value is not one of its names, or rendering failed (an
    /// undefined value inserted, an expression that fails): a fault of the rules' `sensitivity:`.
    pub fn sensitivity_sentence(
        &self,
        part: &str,
        values: &[(&str, Value)],
    ) -> std::result::Result<String, String> {
        let text = self
            .owner()
            .texts
            .get(&format!("sensitivity.{part}"))
            .ok_or_else(|| format!("no sentence `sensitivity.{part}`"))?;
        let names = sensitivity_names(part);
        let cells: Vec<std::sync::OnceLock<Value>> =
            names.iter().map(|_| std::sync::OnceLock::new()).collect();
        for (name, value) in values {
            let i = names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| format!("`sensitivity.{part}` is given no `{name}`"))?;
            let _ = cells[i].set(value.clone());
        }
        text.render(&cells).map(|s| decide_lang::flow_text(&s))
    }

    /// Node ids in evaluation order with their kind and the ids they read.
    #[must_use]
    pub fn nodes(&self) -> Vec<(&str, NodeKind, Vec<&str>)> {
        let c = self.compiled();
        c.order
            .iter()
            .map(|&i| {
                let n = &c.nodes[i];
                (
                    n.id,
                    n.kind,
                    n.deps.iter().map(|&d| c.nodes[d].id).collect(),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use decide_lang::Value;

    /// Select items are read by catalog position only when the list is the catalog's own.
    #[test]
    fn only_the_catalogs_own_offer_list_is_read_by_position() {
        let graph = super::Graph::compile(crate::Policy::embedded().unwrap()).unwrap();
        let owner = graph.owner();
        assert!(!owner.offer_list().is_empty());
        assert!(owner.is_offers(&owner.offers.clone()));
        assert!(!owner.is_offers(&Value::from(owner.offer_list().to_vec())));
        assert!(!owner.is_offers(&Value::from(7)));
    }
}
