//! The evaluation order of the nodes, and the cycle that prevents one.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::error::Result;
use crate::graph::model::Node;
use crate::policy::Policy;

/// The evaluation order: Kahn's algorithm, always taking the ready node declared first, so the
/// trace reads in the order the policy is written wherever dependencies allow. Nodes left over
/// when nothing is ready are on or behind a cycle: the error names every node of one cycle in
/// reference order, with where each is written.
pub(crate) fn order(policy: &Policy, nodes: &[Node<'_>]) -> Result<Vec<usize>> {
    let mut waiting: Vec<usize> = nodes.iter().map(|n| n.deps.len()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for &d in &n.deps {
            dependents[d].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..nodes.len())
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.push(Reverse(j));
            }
        }
    }
    if order.len() == nodes.len() {
        return Ok(order);
    }
    let cycle = find_cycle(nodes);
    let first = &nodes[cycle[0]];
    let path: Vec<&str> = cycle
        .iter()
        .chain(cycle.first())
        .map(|&i| nodes[i].id)
        .collect();
    let mut err = policy
        .error_at(
            first.file,
            first.location,
            format!("the rules have a cycle: {}", path.join(" → ")),
        )
        .field(first.id.to_owned());
    for &i in &cycle {
        let n = &nodes[i];
        err = err.help(format!(
            "`{}` ({}) is at {}:{}",
            n.id,
            n.kind,
            policy.sources[n.file].name,
            n.location.line()
        ));
    }
    Err(err.help(
        "a node cannot depend on itself, directly or through others; break one of these references",
    ))
}

/// Every node of one cycle, in reference order, starting from its smallest id.
fn find_cycle(nodes: &[Node<'_>]) -> Vec<usize> {
    let mut g: DiGraph<usize, ()> = DiGraph::with_capacity(nodes.len(), nodes.len() * 2);
    let idx: Vec<NodeIndex> = (0..nodes.len()).map(|i| g.add_node(i)).collect();
    for (i, n) in nodes.iter().enumerate() {
        for &d in &n.deps {
            g.add_edge(idx[d], idx[i], ());
        }
    }
    let mut sccs: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .map(|c| c.into_iter().map(|n| g[n]).collect::<Vec<_>>())
        .filter(|c: &Vec<usize>| c.len() > 1 || nodes[c[0]].deps.contains(&c[0]))
        .collect();
    sccs.sort_by_key(|c| c.iter().map(|&i| nodes[i].id).min());
    let scc = sccs.into_iter().next().unwrap_or_default();
    let members: HashSet<usize> = scc.iter().copied().collect();
    let Some(&start) = scc.iter().min_by_key(|&&i| nodes[i].id) else {
        return Vec::new();
    };
    // Walk dependents inside the component until we come back to the start.
    let mut path = vec![start];
    let mut seen = HashSet::from([start]);
    let mut current = start;
    loop {
        let next = nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| members.contains(i) && n.deps.contains(&current))
            .map(|(i, _)| i)
            .min_by_key(|&i| (i != start, nodes[i].id));
        match next {
            Some(n) if n == start => break,
            Some(n) if seen.insert(n) => {
                path.push(n);
                current = n;
            }
            _ => break,
        }
    }
    path
}
