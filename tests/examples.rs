//! Every example profile decides and renders; its memo and JSON record are snapshotted.
//!
//! One `glob!` in this file only (insta counts glob failures process-wide).

mod common;

use decide::{Format, Memo, Profile, Source};

#[test]
fn every_example_decides_and_renders() {
    let graph = common::graph();
    let memo = Memo::embedded().unwrap();
    insta::glob!("../examples", "*.yaml", |path| {
        let source = Source::read(path, decide::ErrorKind::Profile).unwrap();
        let (profile, evaluation): (Profile, _) = decide::decide(&graph, &source, common::as_of())
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let md = memo
            .render(&graph, &profile, &evaluation, Format::Markdown)
            .unwrap();
        let json = memo
            .render(&graph, &profile, &evaluation, Format::Json)
            .unwrap();
        // Same input, same bytes.
        let again = decide::decide(&graph, &source, common::as_of()).unwrap().1;
        assert_eq!(
            json,
            memo.render(&graph, &profile, &again, Format::Json).unwrap()
        );
        insta::assert_snapshot!("memo", md);
        insta::assert_snapshot!("json", json);
    });
}
