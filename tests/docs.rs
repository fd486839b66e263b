//! The documentation: `README.md` stays an entry point of at most 250 lines (the rest is the
//! manual in `docs/`), every relative link of the README and the manual leads to a file that
//! exists (and to a heading of it, for a `#fragment` into a Markdown file), and the README's
//! test command is the one `.ci/run` runs.

use crate::common::{repo_text, root};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The README is where a newcomer starts: what `decide` is, how to install and run it, the
/// profile at a glance and links. Everything else belongs in the manual (`docs/`).
const README_MAX_LINES: usize = 250;

/// The README and every Markdown file of `docs/`, in path order.
fn documentation_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

/// Every link and image of a Markdown text: (line, target). Links in code are not links.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                let line = text[..range.start].matches('\n').count() + 1;
                Some((line, dest_url.into_string()))
            }
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings, as GitHub makes them: the heading's text in
/// lower case, spaces as `-`, punctuation other than `-` and `_` left out, `-1`, `-2`, ... after
/// a repeated one.
fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let title = heading.take().unwrap_or_default();
                let slug: String = title
                    .to_lowercase()
                    .chars()
                    .filter_map(|c| match c {
                        ' ' => Some('-'),
                        c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                        _ => None,
                    })
                    .collect();
                let mut anchor = slug.clone();
                let mut n = 0;
                while anchors.contains(&anchor) {
                    n += 1;
                    anchor = format!("{slug}-{n}");
                }
                anchors.insert(anchor);
            }
            _ => {}
        }
    }
    anchors
}

/// The relative links of `text` (the Markdown file at `file`) that lead nowhere: to no file, or
/// to a `#fragment` no heading of the Markdown file it names has. Web links are not followed.
fn broken_links(file: &Path, text: &str) -> Vec<String> {
    let shown = file.strip_prefix(root()).unwrap_or(file).display();
    let mut broken = Vec::new();
    for (line, target) in link_targets(text) {
        let scheme = target.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        if scheme {
            continue;
        }
        let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
        let anchors = if path.is_empty() {
            heading_anchors(text)
        } else {
            let resolved = file.parent().expect("a file's folder").join(path);
            if !resolved.exists() {
                broken.push(format!("{shown}:{line}: `{target}`: no such file"));
                continue;
            }
            if fragment.is_empty() || resolved.extension().is_none_or(|e| e != "md") {
                continue;
            }
            heading_anchors(&std::fs::read_to_string(&resolved).expect("a link's file"))
        };
        if !anchors.contains(fragment) {
            broken.push(format!(
                "{shown}:{line}: `{target}`: no heading `#{fragment}` (it has: {})",
                anchors.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    broken
}

#[test]
fn the_readme_is_short() {
    let lines = repo_text("README.md").lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the detail into the \
         manual (docs/) and link it"
    );
}

#[test]
fn every_relative_link_of_the_documentation_leads_somewhere() {
    let files = documentation_files();
    assert!(
        files.len() > 2,
        "the README and the manual's files: {files:?}"
    );
    let broken: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).expect("a documentation file");
            broken_links(file, &text)
        })
        .collect();
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_link_check_finds_a_broken_link_in_a_small_input() {
    let file = root().join("docs/example.md");
    let text = "# A page\n\n## The part's `name`\n\n[ok](source.md), [ok](../README.md), \
                [ok](#the-parts-name), ![ok](memo.en.png), [web](https://example.com/x.md)\n\
                \n`[code](missing-in-code.md)`\n\n```\n[block](missing-in-block.md)\n```\n\n\
                | a | b |\n|---|---|\n| [gone](missing.md) | [bad](source.md#no-such-part) |\n";
    let broken = broken_links(&file, text);
    assert_eq!(broken.len(), 2, "{broken:#?}");
    assert!(
        broken[0].starts_with("docs/example.md:15: `missing.md`: no such file"),
        "{broken:#?}"
    );
    assert!(
        broken[1].starts_with("docs/example.md:15: `source.md#no-such-part`: no heading"),
        "{broken:#?}"
    );
    assert_eq!(
        heading_anchors("# A\n## Why\n## Why\n## The policy owner's `decide test`\n"),
        BTreeSet::from(["a", "why", "why-1", "the-policy-owners-decide-test"].map(str::to_owned))
    );
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let readme = repo_text("README.md");
    let section = readme
        .split_once("\n## Two commands on a fresh machine\n")
        .map(|(_, rest)| rest)
        .expect("README.md has a section \"Two commands on a fresh machine\"");
    let block = section
        .split("```")
        .nth(1)
        .expect("the section opens with a code block");
    let commands: Vec<&str> = block
        .lines()
        .skip(1)
        .map(|line| {
            line.split_once(" #")
                .map_or(line, |(command, _)| command)
                .trim()
        })
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(commands.len(), 2, "two commands: {commands:?}");
    let example = commands[0];
    assert!(example.starts_with("cargo run --release -- "), "{example}");
    let profile = example.rsplit(' ').next().expect("a profile");
    assert!(
        root().join(profile).is_file(),
        "the README's example {profile} exists"
    );
    let test = commands[1];
    assert!(test.starts_with("cargo test"), "{test}");
    let ci = repo_text(".ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == test),
        "`.ci/run` runs the README's test command `{test}` on a line of its own:\n{ci}"
    );
}
