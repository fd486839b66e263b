//! `decide graph`: the decision graph as Mermaid and DOT, snapshotted for the embedded rules,
//! with every node and edge present, the same bytes on every run, and `--rules` honoured.

mod common;

use std::path::Path;
use std::process::Output;

fn decide(args: &[&str]) -> Output {
    common::run(args)
}

/// Standard output of a `decide graph ...` run that must succeed.
fn graph_output(args: &[&str]) -> String {
    let mut all = vec!["graph"];
    all.extend_from_slice(args);
    common::run_ok(&all)
}

#[test]
fn mermaid_snapshot() {
    let text = graph_output(&[]);
    assert_eq!(text, graph_output(&["--format", "mermaid"]));
    insta::assert_snapshot!("mermaid", text);
}

#[test]
fn dot_snapshot() {
    insta::assert_snapshot!("dot", graph_output(&["--format", "dot"]));
}

#[test]
fn every_node_and_edge_is_drawn() {
    let graph = common::graph();
    let mermaid = graph_output(&[]);
    let dot = graph_output(&["--format", "dot"]);
    assert!(mermaid.starts_with("flowchart LR\n"), "{mermaid}");
    assert!(
        dot.starts_with("digraph decide {\n  rankdir=LR;\n"),
        "{dot}"
    );
    assert!(dot.ends_with("}\n"));
    let nodes = graph.nodes();
    assert!(nodes.len() > 10);
    for (id, kind, deps) in &nodes {
        // Label starts with the policy id, whatever the shape.
        assert!(
            mermaid.contains(&format!("  n_{id}")) && mermaid.contains(&format!("\"{id}<br/>")),
            "{kind} `{id}` is not drawn in Mermaid"
        );
        assert!(
            dot.contains(&format!("  \"n_{id}\" [shape="))
                && dot.contains(&format!("label=\"{id}\\n")),
            "{kind} `{id}` is not drawn in DOT"
        );
        for dep in deps {
            assert!(
                mermaid.contains(&format!("  n_{dep} --> n_{id}\n")),
                "edge {dep} -> {id} missing in Mermaid"
            );
            assert!(
                dot.contains(&format!("  \"n_{dep}\" -> \"n_{id}\";\n")),
                "edge {dep} -> {id} missing in DOT"
            );
        }
    }
    // Exactly the graph's edges between nodes: none invented.
    let node_edges: usize = nodes.iter().map(|(_, _, deps)| deps.len()).sum();
    let drawn = mermaid
        .lines()
        .filter(|l| l.trim_start().starts_with("n_") && l.contains(" --> n_"))
        .count();
    assert_eq!(drawn, node_edges);
    // The inputs and the outputs sink.
    assert!(mermaid.contains("  in_profile[(\"profile\")]\n"));
    assert!(mermaid.contains("  out{{\"outputs\"}}\n"));
    assert!(mermaid.contains(" --> out\n"));
    assert!(dot.contains("  \"in_profile\" [shape=cylinder, label=\"profile\"];\n"));
}

#[test]
fn same_rules_give_the_same_bytes() {
    assert_eq!(graph_output(&[]), graph_output(&[]));
    assert_eq!(
        graph_output(&["--format", "dot"]),
        graph_output(&["--format", "dot"])
    );
    let (a, b) = (common::graph(), common::graph());
    assert_eq!(decide::diagram::mermaid(&a), decide::diagram::mermaid(&b));
    assert_eq!(decide::diagram::dot(&a), decide::diagram::dot(&b));
    assert_eq!(decide::diagram::mermaid(&a), graph_output(&[]));
}

#[test]
fn a_renamed_node_shows_under_its_new_name() {
    // Rename a fact and every reference to it, in a copy of the rules.
    let dir = tempfile::tempdir().unwrap();
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for entry in std::fs::read_dir(&rules).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // rules/tests: policy test cases, not rules
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace("stale_after_days", "price_shelf_life_days");
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    let dir_arg = dir.path().to_str().unwrap();
    for format in ["mermaid", "dot"] {
        let text = graph_output(&["--rules", dir_arg, "--format", format]);
        assert!(text.contains("n_price_shelf_life_days"), "{format}");
        assert!(!text.contains("stale_after_days"), "{format}");
    }
    let mermaid = graph_output(&["--rules", dir_arg]);
    assert!(mermaid.contains("  n_price_shelf_life_days --> n_stale_offers\n"));
}

#[test]
fn bad_rules_folder_exits_1() {
    let out = decide(&["graph", "--rules", "no-such-rules-folder"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let out = decide(&["graph", "--format", "svg"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn mermaid_path_styles_the_taken_nodes_and_the_edges_between_them() {
    let graph = common::graph();
    let plain = decide::diagram::mermaid(&graph);
    assert_eq!(decide::diagram::mermaid_path(&graph, &[]), plain);
    assert_eq!(
        decide::diagram::mermaid_path(&graph, &["no_such_node"]),
        plain
    );
    // A node and one of its dependencies, given out of order.
    let (id, _, deps) = graph
        .nodes()
        .into_iter()
        .find(|(_, _, deps)| !deps.is_empty())
        .unwrap();
    let dep = deps[0];
    let path = decide::diagram::mermaid_path(&graph, &[id, "no_such_node", dep]);
    assert!(path.starts_with(&plain), "the picture itself is unchanged");
    let extra = &path[plain.len()..];
    assert!(extra.contains("  classDef taken "), "{extra}");
    assert!(
        extra.contains(&format!("  class n_{dep},n_{id} taken\n")),
        "{extra}"
    );
    // The edge dep --> id is styled by its index among the drawn links.
    let index = plain
        .lines()
        .filter(|l| l.contains(" --> "))
        .position(|l| l == format!("  n_{dep} --> n_{id}"))
        .unwrap();
    assert!(extra.contains(&format!("  linkStyle {index} ")), "{extra}");
}
