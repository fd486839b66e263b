//! `decide graph`: the decision graph as Mermaid and DOT, snapshotted for the embedded rules,
//! with every node and edge present, the same bytes on every run, and `--rules` honoured.

use crate::common;

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
    assert_snapshot!("mermaid", text);
}

#[test]
fn dot_snapshot() {
    assert_snapshot!("dot", graph_output(&["--format", "dot"]));
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
    assert_eq!(
        decide_tools::diagram::mermaid(&a),
        decide_tools::diagram::mermaid(&b)
    );
    assert_eq!(
        decide_tools::diagram::dot(&a),
        decide_tools::diagram::dot(&b)
    );
    assert_eq!(decide_tools::diagram::mermaid(&a), graph_output(&[]));
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
    let plain = decide_tools::diagram::mermaid(&graph);
    assert_eq!(decide_tools::diagram::mermaid_path(&graph, &[]), plain);
    assert_eq!(
        decide_tools::diagram::mermaid_path(&graph, &["no_such_node"]),
        plain
    );
    // A node and one of its dependencies, given out of order.
    let (id, _, deps) = graph
        .nodes()
        .into_iter()
        .find(|(_, _, deps)| !deps.is_empty())
        .unwrap();
    let dep = deps[0];
    let path = decide_tools::diagram::mermaid_path(&graph, &[id, "no_such_node", dep]);
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

/// The node ids a Mermaid picture draws (its node lines, not its edges).
fn drawn_nodes(mermaid: &str) -> std::collections::BTreeSet<String> {
    mermaid
        .lines()
        .filter(|l| l.starts_with("  n_") && !l.contains(" --> "))
        .map(|l| {
            let id = &l[4..];
            id[..id
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap()]
                .to_owned()
        })
        .collect()
}

/// `start` and every node reachable from it through `next`.
fn closure<'a>(
    start: &'a str,
    next: &dyn Fn(&'a str) -> Vec<&'a str>,
) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::from([start.to_owned()]);
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        for n in next(id) {
            if seen.insert(n.to_owned()) {
                todo.push(n);
            }
        }
    }
    seen
}

#[test]
fn focus_draws_a_node_with_its_ancestors_and_optionally_its_descendants() {
    let graph = common::graph();
    let nodes = graph.nodes();
    let deps_of =
        |id: &str| -> Vec<&str> { nodes.iter().find(|(n, _, _)| *n == id).unwrap().2.clone() };
    let readers_of = |id: &str| -> Vec<&str> {
        nodes
            .iter()
            .filter(|(_, _, deps)| deps.contains(&id))
            .map(|(n, _, _)| *n)
            .collect()
    };
    // A node in the middle: it reads nodes and nodes read it.
    let (id, _, _) = nodes
        .iter()
        .find(|(n, _, deps)| !deps.is_empty() && !readers_of(n).is_empty())
        .unwrap();
    let ancestors = closure(id, &|n| deps_of(n));
    let descendants = closure(id, &|n| readers_of(n));
    assert!(ancestors.len() > 1 && descendants.len() > 1);
    assert!(ancestors.len() < nodes.len());

    let focused = graph_output(&["--focus", id]);
    assert!(focused.starts_with("flowchart LR\n"), "{focused}");
    assert_eq!(drawn_nodes(&focused), ancestors, "{focused}");
    // Every edge drawn joins two drawn nodes, and every dependency among them is drawn.
    for a in &ancestors {
        for d in deps_of(a) {
            assert!(
                focused.contains(&format!("  n_{d} --> n_{a}\n")),
                "{d} -> {a}"
            );
        }
    }
    assert!(!focused.contains("out{{"), "the outputs are no ancestor");

    let both = graph_output(&["--focus", id, "--descendants"]);
    let expected: std::collections::BTreeSet<String> =
        ancestors.union(&descendants).cloned().collect();
    assert_eq!(drawn_nodes(&both), expected, "{both}");
    for line in both.lines().filter(|l| l.contains(" --> n_")) {
        let (from, to) = line.trim().split_once(" --> n_").unwrap();
        assert!(expected.contains(to), "{line}");
        if let Some(from) = from.strip_prefix("n_") {
            assert!(expected.contains(from), "{line}");
        }
    }
    // DOT draws the same nodes.
    let dot = graph_output(&["--focus", id, "--descendants", "--format", "dot"]);
    let dot_nodes = dot
        .lines()
        .filter(|l| l.starts_with("  \"n_") && l.contains(" [shape="))
        .count();
    assert_eq!(dot_nodes, expected.len(), "{dot}");
}

#[test]
fn the_index_and_a_neighbourhood_picture_hold_every_direct_edge_and_no_other_node() {
    use decide_tools::diagram::{Focus, index, mermaid_of};
    let graph = common::graph();
    let nodes = graph.nodes();
    let index = index(&graph);
    let ids: Vec<&str> = nodes.iter().map(|(n, _, _)| *n).collect();
    let indexed: Vec<&str> = index.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(indexed, ids, "the index is in evaluation order");
    let node_ids = |names: &[String]| -> std::collections::BTreeSet<String> {
        names
            .iter()
            .filter(|n| ids.contains(&n.as_str()))
            .cloned()
            .collect()
    };
    let mut with_outputs = 0;
    for (n, (id, _, deps)) in index.iter().zip(&nodes) {
        let deps: std::collections::BTreeSet<String> =
            deps.iter().map(|d| (*d).to_owned()).collect();
        assert_eq!(node_ids(&n.reads), deps, "{id} reads");
        let readers: std::collections::BTreeSet<String> = nodes
            .iter()
            .filter(|(_, _, d)| d.contains(id))
            .map(|(r, _, _)| (*r).to_owned())
            .collect();
        assert_eq!(node_ids(&n.read_by), readers, "{id} is read by");
        with_outputs += usize::from(n.read_by.iter().any(|r| r == "outputs"));

        let picture = mermaid_of(&graph, Focus::Neighbours(id)).unwrap();
        let mut expected = deps.clone();
        expected.extend(readers);
        expected.insert((*id).to_owned());
        assert_eq!(drawn_nodes(&picture), expected, "{picture}");
        assert_eq!(
            picture.contains("out{{"),
            n.read_by.iter().any(|r| r == "outputs"),
            "{picture}"
        );
    }
    assert!(with_outputs > 0, "some node feeds the outputs");
}

#[test]
fn an_unknown_focus_node_is_an_error_naming_near_ones() {
    let graph = common::graph();
    let (id, _, _) = graph
        .nodes()
        .into_iter()
        .find(|(n, _, _)| n.len() > 8)
        .unwrap();
    let typo = format!("{}x{}", &id[..4], &id[5..]);
    let out = decide(&["graph", "--focus", &typo]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("`{typo}`")), "{err}");
    assert!(
        err.contains("near names:") && err.contains(&format!("`{id}`")),
        "{err}"
    );
    // --descendants needs --focus.
    let out = decide(&["graph", "--descendants"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A record alone evaluates the nodes the record needs and no memo sentence, and is the same
/// record, byte for byte, as the whole evaluation gives, for every example and for generated
/// profiles (`decide batch` of JSON lines relies on it).
#[test]
fn a_record_alone_is_the_whole_evaluations_record_without_the_memos_sentences() {
    let graph = common::graph();
    let as_of = common::as_of();
    let mut sources: Vec<(String, String, decide_engine::Syntax)> = common::examples()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), text, decide_engine::Syntax::Yaml)
        })
        .collect();
    let sample = common::run_ok(&["rules", "sample", "--count", "300", "--as-of", "2026-09-04"]);
    sources.extend(sample.lines().enumerate().map(|(i, line)| {
        (
            format!("sample {i}"),
            line.to_owned(),
            decide_engine::Syntax::Json,
        )
    }));
    let mut decided = 0;
    for (name, text, syntax) in &sources {
        let source = decide_engine::Source::new(name.as_str(), text.as_str());
        let Ok(profile) = decide_engine::Profile::read(&source, *syntax) else {
            continue;
        };
        let whole = graph.evaluate_without_trace(&profile, as_of);
        let record = graph.evaluate_record(&profile, as_of);
        match (whole, record) {
            (Ok(whole), Ok(record)) => {
                assert_eq!(
                    serde_json::to_string(&whole.decision).unwrap(),
                    serde_json::to_string(&record.decision).unwrap(),
                    "{name}"
                );
                assert!(whole.values.contains_key("answer_said"), "{name}");
                assert!(!record.values.contains_key("answer_said"), "{name}");
                assert!(record.values.contains_key("recommended_offer"), "{name}");
                decided += 1;
            }
            (Err(a), Err(b)) => assert_eq!(a.render(), b.render(), "{name}"),
            (a, b) => panic!("{name}: {:?} against {:?}", a.err(), b.err()),
        }
    }
    assert!(decided > 200, "only {decided} profiles decided");
}
