//! A proposal of any kind (a box or a container) gets a verdict line at the head of the memo, in
//! Markdown and HTML, in English and Chinese: whether it agrees with the recommendation, and if
//! not, why not and at what difference in the monthly bill.

use crate::common;

/// The 7B low-rank fine-tune example (recommended: the RTX 4090 box) with `offer` as its proposal.
fn proposing(dir: &tempfile::TempDir, offer: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string("examples/mistake-7b-on-h100.yaml").unwrap();
    let text = text.replace("offer: h100-x8-ningxia1", &format!("offer: {offer}"));
    let file = dir.path().join(format!("{offer}.yaml"));
    std::fs::write(&file, text).unwrap();
    file
}

fn memo(file: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![file.to_str().unwrap(), "--as-of", common::AS_OF];
    args.extend_from_slice(extra);
    let out = common::run(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The memo's verdict line (the one naming the proposal at its head).
fn verdict<'m>(memo: &'m str, opening: &str) -> &'m str {
    memo.lines()
        .find(|l| l.contains(opening))
        .unwrap_or_else(|| panic!("no verdict line {opening:?} in:\n{memo}"))
}

#[test]
fn a_container_proposal_where_the_criteria_call_for_bare_metal_is_told_why_and_what_it_costs() {
    let dir = tempfile::tempdir().unwrap();
    let file = proposing(&dir, "rtx4090-container");
    let en = memo(&file, &[]);
    let line = verdict(&en, "**The proposal**");
    assert!(line.contains("is not the recommendation"), "{line}");
    assert!(
        line.contains("a container, where the criteria call for bare metal"),
        "{line}"
    );
    assert!(line.contains("a month against ¥"), "{line}");
    assert!(line.ends_with("more."), "{line}");
    let zh = memo(&file, &["--lang", "zh"]);
    let line = verdict(&zh, "**意向方案**");
    assert!(
        line.contains("不是推荐方案：它是容器，而判据要求裸金属"),
        "{line}"
    );
    assert!(line.contains("推荐方案每月 ¥"), "{line}");
}

#[test]
fn a_proposal_that_is_the_recommendation_agrees_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = proposing(&dir, "rtx4090-x8-sichuan2");
    let line = memo(&file, &[]);
    let line = verdict(&line, "**The proposal**");
    assert!(line.contains("agrees with the recommendation"), "{line}");
    let zh = memo(&file, &["--lang", "zh"]);
    assert!(
        verdict(&zh, "**意向方案**").contains("与推荐方案一致"),
        "{zh}"
    );
}

#[test]
fn a_costlier_box_is_told_the_recommendation_does_the_same_for_less_and_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let file = proposing(&dir, "h100-x8-ningxia1");
    let en = memo(&file, &[]);
    let line = verdict(&en, "**The proposal**");
    assert!(line.contains("does the same work for less"), "{line}");
    // The difference is the proposal's bill less the recommendation's, both in the line.
    let amounts: Vec<f64> = line
        .split('¥')
        .skip(1)
        .map(|s| {
            let n: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
                .collect();
            n.trim_end_matches(['.', ','])
                .replace(',', "")
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(amounts.len(), 3, "{line}");
    assert!(
        (amounts[0] - amounts[1] - amounts[2]).abs() < 0.01,
        "{line}"
    );
    // The HTML memo carries the same verdict.
    let html = memo(&file, &["-f", "html"]);
    assert!(
        html.contains("class=\"proposal\""),
        "no verdict in the HTML memo"
    );
}

#[test]
fn no_proposal_no_verdict() {
    let memo = memo(std::path::Path::new("examples/lora-7b-4090.yaml"), &[]);
    assert!(!memo.contains("**The proposal**"), "{memo}");
}
