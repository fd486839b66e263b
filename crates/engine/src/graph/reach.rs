//! What a node reads, directly or through others: the part of the graph a question depends on.

use std::collections::HashSet;

use crate::graph::Graph;

/// Every node `target` reads, directly or through others.
pub fn ancestors(graph: &Graph, target: usize) -> HashSet<usize> {
    reached_from(graph, &graph.compiled().nodes[target].deps)
}

/// The nodes `deps`, and every node they read, directly or through others.
pub fn reached_from(graph: &Graph, deps: &[usize]) -> HashSet<usize> {
    let c = graph.compiled();
    let mut seen = HashSet::new();
    let mut stack = deps.to_vec();
    while let Some(i) = stack.pop() {
        if seen.insert(i) {
            stack.extend(&c.nodes[i].deps);
        }
    }
    seen
}
