//! The compiled graph's data: nodes with their bodies and edges, the outputs and invariants.

use decide_lang::Value;
use serde_saphyr::Location;

use crate::graph::formula::Formula;
use crate::graph::nodes::checklist::ChecklistBody;
use crate::graph::nodes::criterion::CriterionBody;
use crate::graph::nodes::fact::FactBody;
use crate::graph::nodes::search::SearchBody;
use crate::graph::nodes::select::SelectBody;
use crate::graph::nodes::table::TableBody;
use crate::graph::nodes::warning::WarningBody;
use crate::kind::NodeKind;
use decide_lang::Expr;

/// What a node computes, by kind (each kind's body is defined in its file of [`crate::graph::nodes`]).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // a handful of nodes per policy; boxing buys nothing
pub enum Body<'a> {
    /// A fact given by `value:`; also the place of a node that failed to compile.
    Constant(Value),
    Fact(FactBody<'a>),
    Criterion(CriterionBody<'a>),
    Table(TableBody<'a>),
    Select(SelectBody<'a>),
    Search(SearchBody<'a>),
    Warning(WarningBody<'a>),
    Checklist(ChecklistBody<'a>),
}

/// One node of the graph: what it is, where it was written, what it computes and reads.
#[derive(Debug)]
pub struct Node<'a> {
    pub id: &'a str,
    pub kind: NodeKind,
    pub title: &'a str,
    pub because: Option<&'a str>,
    pub file: usize,
    pub location: Location,
    pub body: Body<'a>,
    /// Indices (into `nodes`) of the nodes this one reads.
    pub deps: Vec<usize>,
    /// Indices of the nodes this one's text templates mention.
    pub text_deps: Vec<usize>,
    /// The `profile.` paths this node's expressions read, as written.
    pub profile_paths: Vec<String>,
    /// Indices into [`crate::policy::ROOT_NAMES`] of the roots this node's expressions read.
    pub root_deps: Vec<usize>,
}

impl<'a> Node<'a> {
    /// Whether the node is evaluated once per catalog offer (a map by offer id).
    pub fn is_per_offer(&self) -> bool {
        matches!(&self.body, Body::Fact(f) if f.per_offer)
            || matches!(&self.body, Body::Select(s) if s.per_offer)
            || matches!(&self.body, Body::Search(s) if s.per_offer)
    }

    /// Every expression of this node (not its text templates).
    pub fn exprs(&self) -> Vec<&Expr<'a>> {
        let mut out = Vec::new();
        match &self.body {
            Body::Constant(_) => {}
            Body::Fact(f) => out.extend(f.expr.exprs()),
            Body::Criterion(c) => out.push(&c.when),
            Body::Warning(w) => out.push(&w.when),
            Body::Checklist(c) => out.extend(c.when.iter()),
            Body::Table(t) => out.extend(t.exprs()),
            Body::Search(s) => out.extend(s.exprs()),
            Body::Select(s) => {
                out.push(&s.from);
                out.extend([&s.filter, &s.order_by].into_iter().flatten());
                out.extend(s.map.iter().flat_map(Formula::exprs));
            }
        }
        out
    }

    /// The text of every expression of this node, and of a table's unary-test cells (the
    /// numbers they mention are bounds the analyses try, as a `when:`'s are).
    pub fn expr_texts(&self) -> Vec<&'a str> {
        let mut out: Vec<&'a str> = self.exprs().into_iter().map(|e| e.text).collect();
        if let Body::Table(t) = &self.body {
            out.extend(t.unary_texts());
        }
        out
    }
}

impl<'a> OutputExprs<'a> {
    /// Every expression of the outputs.
    pub fn exprs(&self) -> Vec<&Expr<'a>> {
        let mut out = vec![&self.deployment, &self.offer];
        out.extend(self.scenario.iter());
        out.extend(self.costs.iter().map(|(_, e)| e));
        out.extend(self.sections.iter().map(|(_, e)| e));
        out.extend(self.calibration.iter());
        out
    }
}

#[derive(Debug)]
pub struct OutputExprs<'a> {
    pub deployment: Expr<'a>,
    pub offer: Expr<'a>,
    pub scenario: Option<Expr<'a>>,
    pub costs: Vec<(&'a str, Expr<'a>)>,
    pub sections: Vec<(&'a str, Expr<'a>)>,
    /// What the models predict for a measurement (`outputs.calibration`).
    pub calibration: Option<Expr<'a>>,
}

/// A compiled invariant: like an output expression, it reads nodes and adds none.
#[derive(Debug)]
pub struct InvariantCheck<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub holds: Expr<'a>,
    /// The name of its `message:` template.
    pub message: String,
    pub file: usize,
    /// Indices of the nodes `holds` reads.
    pub deps: Vec<usize>,
    /// Indices of the nodes the message mentions.
    pub text_deps: Vec<usize>,
    /// The `profile.` paths `holds` reads, as written.
    pub profile_paths: Vec<String>,
}

#[derive(Debug)]
pub struct Compiled<'a> {
    pub nodes: Vec<Node<'a>>,
    /// Node indices in evaluation order.
    pub order: Vec<usize>,
    /// The nodes a decision record needs, in evaluation order (`order` less the nodes only a
    /// memo or the trace reads: see [`crate::Graph::evaluate_record`]).
    pub record_order: Vec<usize>,
    /// Per node: its slot in an evaluation ([`decide_lang::Slots`]).
    pub slot: Vec<usize>,
    /// Per node: its id, shared by every evaluation's values (no allocation a node a profile).
    pub ids: Vec<std::sync::Arc<str>>,
    pub outputs: OutputExprs<'a>,
    /// Indices of the nodes the outputs read.
    pub output_deps: Vec<usize>,
    /// Indices into [`crate::policy::ROOT_NAMES`] of the roots the outputs read.
    pub output_roots: Vec<usize>,
    /// Per node: whether its value is the same for every profile (it reads no profile field,
    /// directly or through the nodes it reads).
    pub profile_free: Vec<bool>,
    /// The policy's invariants, checked after every full evaluation.
    pub invariants: Vec<InvariantCheck<'a>>,
    /// Per sensitivity field (by index), its `when`: search the field only where it is true.
    pub sensitivity_when: Vec<Option<Expr<'a>>>,
}

impl<'a> Compiled<'a> {
    /// Every rule expression of the nodes, the outputs and the invariants, in that order.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr<'a>> {
        self.nodes
            .iter()
            .flat_map(Node::exprs)
            .chain(self.outputs.exprs())
            .chain(self.invariants.iter().map(|i| &i.holds))
    }
}
