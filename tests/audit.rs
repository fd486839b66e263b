//! The audit trail: every record and memo names the `decide` version, the policy revision and
//! the profile revision; the revision follows what the rules mean, not how they are written.

use crate::common;

use decide_engine::{Graph, Policy};

fn revision(dir: &std::path::Path) -> String {
    Policy::from_dir(dir).unwrap().revision
}

#[test]
fn the_policy_revision_changes_with_any_price_and_not_with_comments_or_layout() {
    let base = revision(common::edited_rules(&[]).path());
    assert!(
        base.starts_with("sha256:") && base.len() == "sha256:".len() + 16,
        "{base}"
    );
    // The embedded rules carry the same revision, stamped at build time.
    assert_eq!(Policy::embedded().unwrap().revision, base);

    let price = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,9900,7921,CNY",
    )]);
    assert_ne!(revision(price.path()), base, "a price changed");

    let threshold = common::edited_rules(&[("facts.yaml", "value: 720", "value: 730")]);
    assert_ne!(revision(threshold.path()), base, "a constant changed");

    let comment = common::edited_rules(&[(
        "catalog.yaml",
        "offers:",
        "# Prices checked again on 2026-09-05.\noffers:",
    )]);
    assert_eq!(revision(comment.path()), base, "a comment is not a change");

    // Flow style to block style, and a file renamed (so read in another order): same meaning.
    let layout = common::edited_rules(&[(
        "catalog.yaml",
        "delivery: {scheduled: false, western: true}",
        "delivery:\n      western: true\n      scheduled: false",
    )]);
    std::fs::rename(
        layout.path().join("catalog.yaml"),
        layout.path().join("zz-catalog.yaml"),
    )
    .unwrap();
    assert_eq!(
        revision(layout.path()),
        base,
        "layout and file order are not changes"
    );
}

#[test]
fn records_and_memos_carry_the_audit_fields() {
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "-f",
        "json",
        "--as-of",
        common::AS_OF,
    ]);
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let revision = Policy::embedded().unwrap().revision;
    assert_eq!(record["policy"]["revision"], revision.as_str());
    assert_eq!(record["audit"]["decide_version"], env!("CARGO_PKG_VERSION"));
    let profile = record["audit"]["profile_revision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(profile.starts_with("sha256:"), "{profile}");

    // The profile revision ignores comments, layout and defaults spelt out, and follows values.
    let text = std::fs::read_to_string("examples/lora-7b-4090.yaml").unwrap();
    let revision_of = |text: &str| {
        let graph = common::graph();
        let source = decide_engine::Source::new("p.yaml", text.to_owned());
        let (_, e) = decide_tools::decide(&graph, &source, common::as_of()).unwrap();
        e.decision.audit.profile_revision.unwrap()
    };
    assert_eq!(revision_of(&text), profile);
    assert_eq!(revision_of(&format!("# a note\n{text}")), profile);
    let defaults_spelt_out = format!("{text}requirements: {{custom_kernel: false}}\n");
    assert_eq!(revision_of(&defaults_spelt_out), profile);
    assert_ne!(revision_of(&text.replace("600", "601")), profile);

    let memo = common::run(&["examples/lora-7b-4090.yaml", "--as-of", common::AS_OF]);
    let memo = String::from_utf8(memo.stdout).unwrap();
    assert!(
        memo.contains(&format!("policy revision `{revision}`")),
        "{memo}"
    );
    assert!(
        memo.contains(&format!("profile revision `{profile}`")),
        "{memo}"
    );
    let graph: Graph = common::graph();
    assert_eq!(graph.policy().revision, revision);
}
