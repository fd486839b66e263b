//! Pictures of the decision graph: a Mermaid flowchart or Graphviz DOT, drawn from the graph.
//!
//! One picture node per policy node, shaped by kind (fact rectangle, criterion rhombus, table
//! subroutine box, select parallelogram, warning flag, checklist stadium), in evaluation order;
//! the roots expressions read (`profile`, `offers`, `catalog`, `as_of`) as input cylinders, with
//! `offers` also feeding every `per_offer` fact; and the `outputs` section as one sink. An edge
//! `a --> b` means "b's expressions read a": the edges the graph is ordered by, plus those from
//! the roots and into the sink. Texts (`met:`, `message:`, `text:`) add none, as in the graph.
//!
//! Picture ids carry a role prefix (`n_` node, `in_` input, `out` sink), so no policy id can
//! collide with a Mermaid keyword (a node `end` would break the chart) or with the sink; the
//! labels show the policy ids and titles. The same graph always gives the same bytes.
//!
//! A picture can be limited to one node's lineage ([`Focus`]): the node and everything it
//! reads, directly or not, and optionally everything that reads it.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::graph::Graph;
use decide_engine::kind::NodeKind;
use decide_engine::policy::ROOT_NAMES;

/// The Mermaid flowchart of `graph`.
#[must_use]
pub fn mermaid(graph: &Graph) -> String {
    render_mermaid(&Picture::of(graph), &[])
}

/// The Mermaid flowchart of `graph` with the nodes `highlighted` (policy ids, e.g. the path a
/// decision took) and the edges between them styled as `taken`. Ids the graph does not have
/// are ignored; the order of `highlighted` does not matter.
#[must_use]
pub fn mermaid_path(graph: &Graph, highlighted: &[&str]) -> String {
    render_mermaid(&Picture::of(graph), highlighted)
}

/// The Graphviz DOT digraph of `graph` (`dot -Tsvg` draws it).
#[must_use]
pub fn dot(graph: &Graph) -> String {
    render_dot(&Picture::of(graph))
}

/// Which part of the graph a picture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus<'a> {
    /// Every node.
    All,
    /// The node of this id and its ancestors: the nodes and inputs it reads, directly or not.
    Ancestors(&'a str),
    /// The node, its ancestors, and its descendants: the nodes that read it, directly or not
    /// (with the outputs, if they do).
    Lineage(&'a str),
    /// The node, what it reads directly and what reads it directly: a picture small enough to
    /// read at any policy size.
    Neighbours(&'a str),
}

/// A node of the picture and its edges, for an index of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbourhood {
    pub id: String,
    pub kind: NodeKind,
    pub title: String,
    /// The rule file it is written in (`facts.yaml`).
    pub file: String,
    /// What the node reads directly: node ids and input names (`profile`, `offers`, ...), in
    /// drawing order.
    pub reads: Vec<String>,
    /// What reads the node directly: node ids, and `outputs` where the outputs do.
    pub read_by: Vec<String>,
}

/// Every node of `graph` in evaluation order, with what it reads and what reads it.
#[must_use]
pub fn index(graph: &Graph) -> Vec<Neighbourhood> {
    let picture = Picture::of(graph);
    let name = |end: EdgeEnd<'_>| match end {
        EdgeEnd::Input(root) => root.to_owned(),
        EdgeEnd::Node(id) => id.to_owned(),
        EdgeEnd::Outputs => "outputs".to_owned(),
    };
    picture
        .nodes
        .iter()
        .map(|n| {
            let me = EdgeEnd::Node(n.id);
            Neighbourhood {
                id: n.id.to_owned(),
                kind: n.kind,
                title: n.title.to_owned(),
                file: (graph.policy().sources.get(n.file))
                    .map(|s| decide_engine::source::file_name(&s.name).to_owned())
                    .unwrap_or_default(),
                reads: (picture.edges.iter())
                    .filter(|(_, to)| *to == me)
                    .map(|(from, _)| name(*from))
                    .collect(),
                read_by: (picture.edges.iter())
                    .filter(|(from, _)| *from == me)
                    .map(|(_, to)| name(*to))
                    .collect(),
            }
        })
        .collect()
}

/// The picture of `graph` limited to `scope`, as Mermaid.
///
/// # Errors
/// The scope names a node the policy does not have (the error names the nearest ones).
pub fn mermaid_of(graph: &Graph, scope: Focus<'_>) -> Result<String> {
    Ok(render_mermaid(&Picture::of(graph).within(scope)?, &[]))
}

/// The picture of `graph` limited to `scope`, as Graphviz DOT.
///
/// # Errors
/// The scope names a node the policy does not have (the error names the nearest ones).
pub fn dot_of(graph: &Graph, scope: Focus<'_>) -> Result<String> {
    Ok(render_dot(&Picture::of(graph).within(scope)?))
}

/// The ids among `ids` closest to `word` (a typo, a part of the id), closest first, at most
/// five.
fn near_names<'a>(word: &str, ids: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    // Jaro-Winkler takes time in the product of the lengths: a name longer than any id is no
    // typo of one (a 64 KB `?node=` took a second against every node).
    if word.len() > decide_engine::error::MAX_SUGGESTED_LEN {
        return Vec::new();
    }
    let word_lower = word.to_lowercase();
    let mut scored: Vec<(f64, &str)> = ids
        .map(|id| {
            let score = strsim::jaro_winkler(&word_lower, &id.to_lowercase());
            // A part of the id (`premium` for `rule_premium`) is as near as a close typo.
            let part = !word_lower.is_empty() && id.to_lowercase().contains(&word_lower);
            (if part { score.max(0.9) } else { score }, id)
        })
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(5).map(|(_, id)| id).collect()
}

/// One end of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EdgeEnd<'g> {
    Input(&'static str),
    Node(&'g str),
    Outputs,
}

impl EdgeEnd<'_> {
    /// The picture id: role prefix plus name, valid in Mermaid and (quoted) in DOT.
    fn id(self) -> String {
        match self {
            EdgeEnd::Input(root) => format!("in_{root}"),
            EdgeEnd::Node(id) => format!("n_{id}"),
            EdgeEnd::Outputs => "out".to_owned(),
        }
    }
}

/// A policy node as drawn.
struct DrawnNode<'g> {
    id: &'g str,
    kind: NodeKind,
    title: &'g str,
    /// The index of its rule file among the policy's sources.
    file: usize,
}

/// What both formats draw, in drawing order.
struct Picture<'g> {
    /// Roots read by some expression, in `ROOT_NAMES` order.
    inputs: Vec<&'static str>,
    /// Nodes in evaluation order.
    nodes: Vec<DrawnNode<'g>>,
    /// Per node in evaluation order: the roots it reads, then the nodes it reads; then the
    /// edges into the sink.
    edges: Vec<(EdgeEnd<'g>, EdgeEnd<'g>)>,
    /// Whether the outputs sink is drawn.
    outputs: bool,
}

impl<'g> Picture<'g> {
    fn of(graph: &'g Graph) -> Self {
        let c = graph.compiled();
        let mut inputs_read = BTreeSet::new();
        let mut nodes = Vec::with_capacity(c.order.len());
        let mut edges = Vec::new();
        for &i in &c.order {
            let n = &c.nodes[i];
            nodes.push(DrawnNode {
                id: n.id,
                kind: n.kind,
                title: n.title,
                file: n.file,
            });
            let mut roots: BTreeSet<usize> = n.root_deps.iter().copied().collect();
            if n.is_per_offer() {
                // Evaluated once per catalog offer: it reads `offers` without naming it.
                roots.extend(ROOT_NAMES.iter().position(|r| *r == "offers"));
            }
            for root in roots {
                inputs_read.insert(root);
                edges.push((EdgeEnd::Input(ROOT_NAMES[root]), EdgeEnd::Node(n.id)));
            }
            for &d in &n.deps {
                edges.push((EdgeEnd::Node(c.nodes[d].id), EdgeEnd::Node(n.id)));
            }
        }
        for &root in &c.output_roots {
            inputs_read.insert(root);
            edges.push((EdgeEnd::Input(ROOT_NAMES[root]), EdgeEnd::Outputs));
        }
        for &i in &c.order {
            if c.output_deps.contains(&i) {
                edges.push((EdgeEnd::Node(c.nodes[i].id), EdgeEnd::Outputs));
            }
        }
        Picture {
            inputs: inputs_read.into_iter().map(|r| ROOT_NAMES[r]).collect(),
            nodes,
            edges,
            outputs: true,
        }
    }
}

impl Picture<'_> {
    /// The part of the picture `scope` asks for: its nodes in the same order, the inputs they
    /// read, and the edges between what is kept.
    fn within(self, scope: Focus<'_>) -> Result<Self> {
        let (id, descendants, depth) = match scope {
            Focus::All => return Ok(self),
            Focus::Ancestors(id) => (id, false, usize::MAX),
            Focus::Lineage(id) => (id, true, usize::MAX),
            Focus::Neighbours(id) => (id, true, 1),
        };
        let Some(start) = self.nodes.iter().find(|n| n.id == id).map(|n| n.id) else {
            let near = near_names(id, self.nodes.iter().map(|n| n.id));
            let help = if near.is_empty() {
                "`decide graph` without --focus draws every node, with its id".to_owned()
            } else {
                let names: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
                format!("near names: {}", names.join(", "))
            };
            return Err(Error::new(
                ErrorKind::Usage,
                format!("--focus `{id}`: the policy has no node of that id"),
            )
            .help(help));
        };
        let mut kept: BTreeSet<EdgeEnd<'_>> = BTreeSet::from([EdgeEnd::Node(start)]);
        // Ancestors: walk the edges backwards from the node, `depth` steps at most; then the
        // descendants forwards.
        let mut walk = |backwards: bool| {
            let mut todo = vec![(EdgeEnd::Node(start), 0)];
            while let Some((end, steps)) = todo.pop() {
                if steps == depth {
                    continue;
                }
                for &(from, to) in &self.edges {
                    let (near, far) = if backwards { (to, from) } else { (from, to) };
                    if near == end && kept.insert(far) {
                        todo.push((far, steps + 1));
                    }
                }
            }
        };
        walk(true);
        if descendants {
            walk(false);
        }
        Ok(Picture {
            inputs: self
                .inputs
                .into_iter()
                .filter(|&r| kept.contains(&EdgeEnd::Input(r)))
                .collect(),
            nodes: self
                .nodes
                .into_iter()
                .filter(|n| kept.contains(&EdgeEnd::Node(n.id)))
                .collect(),
            edges: self
                .edges
                .into_iter()
                .filter(|(from, to)| kept.contains(from) && kept.contains(to))
                .collect(),
            outputs: kept.contains(&EdgeEnd::Outputs),
        })
    }
}

fn render_mermaid(p: &Picture<'_>, highlighted: &[&str]) -> String {
    let mut s = String::from("flowchart LR\n");
    for root in &p.inputs {
        let _ = writeln!(
            s,
            "  {}[(\"{}\")]",
            EdgeEnd::Input(root).id(),
            mermaid_text(root)
        );
    }
    for n in &p.nodes {
        let (open, close) = decide_engine::graph::nodes::shape(n.kind).mermaid;
        let _ = writeln!(
            s,
            "  {}{open}\"{}<br/>{}\"{close}",
            EdgeEnd::Node(n.id).id(),
            mermaid_text(n.id),
            mermaid_text(n.title)
        );
    }
    if p.outputs {
        let _ = writeln!(s, "  {}{{{{\"outputs\"}}}}", EdgeEnd::Outputs.id());
    }
    for (from, to) in &p.edges {
        let _ = writeln!(s, "  {} --> {}", from.id(), to.id());
    }
    let taken: Vec<&str> = p
        .nodes
        .iter()
        .map(|n| n.id)
        .filter(|id| highlighted.contains(id))
        .collect();
    if !taken.is_empty() {
        s.push_str("  classDef taken fill:#dfd,stroke:#393,stroke-width:2px\n");
        let ids: Vec<String> = taken.iter().map(|id| EdgeEnd::Node(id).id()).collect();
        let _ = writeln!(s, "  class {} taken", ids.join(","));
        let links: Vec<String> = p
            .edges
            .iter()
            .enumerate()
            .filter(|(_, (from, to))| {
                matches!((from, to), (EdgeEnd::Node(a), EdgeEnd::Node(b)) if taken.contains(a) && taken.contains(b))
            })
            .map(|(i, _)| i.to_string())
            .collect();
        if !links.is_empty() {
            let _ = writeln!(
                s,
                "  linkStyle {} stroke:#393,stroke-width:2px",
                links.join(",")
            );
        }
    }
    s
}

/// Text for a double-quoted Mermaid label: quotes, `#`, `<`, `>` and `&` as Mermaid entity
/// codes, line breaks as spaces.
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn render_dot(p: &Picture<'_>) -> String {
    let mut s = String::from("digraph decide {\n  rankdir=LR;\n");
    for root in &p.inputs {
        let _ = writeln!(
            s,
            "  {} [shape=cylinder, label={}];",
            dot_string(&EdgeEnd::Input(root).id()),
            dot_string(root)
        );
    }
    for n in &p.nodes {
        let shape = decide_engine::graph::nodes::shape(n.kind).dot;
        let _ = writeln!(
            s,
            "  {} [shape={shape}, label=\"{}\\n{}\"];",
            dot_string(&EdgeEnd::Node(n.id).id()),
            dot_escape(n.id),
            dot_escape(n.title)
        );
    }
    if p.outputs {
        let _ = writeln!(
            s,
            "  {} [shape=doubleoctagon, label=\"outputs\"];",
            dot_string(&EdgeEnd::Outputs.id())
        );
    }
    for (from, to) in &p.edges {
        let _ = writeln!(
            s,
            "  {} -> {};",
            dot_string(&from.id()),
            dot_string(&to.id())
        );
    }
    s.push_str("}\n");
    s
}

/// A DOT double-quoted string.
fn dot_string(text: &str) -> String {
    format!("\"{}\"", dot_escape(text))
}

/// The inside of a DOT double-quoted string: backslashes and quotes escaped, line breaks as
/// spaces (a backslash stays literal, never a DOT label escape such as `\l`).
fn dot_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
