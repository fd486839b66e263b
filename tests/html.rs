//! The HTML memo (`--format html`): snapshots of two examples in both languages, every example
//! self-contained (no script, no fetched resource) and well-formed, user text escaped, and the
//! same bytes for the same input.

use crate::common;

use std::path::Path;

use decide_engine::{Graph, Lang, Source};
use decide_tools::{Format, Memo};

fn graph_in(lang: Lang) -> Graph {
    Graph::compile_in(common::policy(), lang).expect("embedded rules compile")
}

fn html(graph: &Graph, memo: &Memo, source: &Source) -> String {
    let (profile, evaluation) = decide_tools::decide(graph, source, common::as_of())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    memo.render(graph, &profile, &evaluation, Format::Html)
        .unwrap_or_else(|e| panic!("{}", e.render()))
}

fn example(name: &str) -> Source {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    Source::read(&path, decide_engine::ErrorKind::Profile).unwrap()
}

#[test]
fn two_examples_in_both_languages() {
    let memo = Memo::embedded().unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let graph = graph_in(lang);
        for name in ["lora-7b-4090", "pretrain-70b-job"] {
            let page = html(&graph, &memo, &example(&format!("{name}.yaml")));
            assert_snapshot!(format!("{name}_{}", lang.code()), page);
        }
    }
}

/// Every `<tag` and `</tag>` of `names` opens and closes in order (a stack, not a count).
fn assert_balanced(page: &str, names: &[&str]) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let closing = rest.starts_with('/');
        let tag = rest.trim_start_matches('/');
        let end = tag
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tag.len());
        let name = &tag[..end];
        if !names.contains(&name) {
            continue;
        }
        if closing {
            assert_eq!(stack.pop(), Some(name), "</{name}> closes the wrong tag");
        } else {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "left open: {stack:?}");
}

const CHECKED_TAGS: &[&str] = &[
    "html",
    "head",
    "title",
    "style",
    "body",
    "main",
    "section",
    "h1",
    "h2",
    "h3",
    "p",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "figcaption",
    "svg",
    "text",
    "code",
    "strong",
];

/// The markup of `page`: every tag (from `<` to `>`) and the style sheet, without the text
/// between tags (where an escaped `src=` of user text is harmless).
fn markup(page: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in page.chars() {
        match c {
            '<' => inside = true,
            '>' => {
                inside = false;
                out.push_str(">\n");
            }
            _ => {}
        }
        if inside {
            out.push(c);
        }
    }
    let style = &page[page.find("<style>").unwrap()..page.find("</style>").unwrap()];
    out + style
}

/// No script and nothing fetched: no `<script`, no event handler attribute, no `src=`, and no
/// `http(s)://` in an `href=` or `url(`, in the page's markup.
fn assert_self_contained(page: &str) {
    let lower = markup(page).to_lowercase();
    assert!(!lower.contains("<script"), "a script");
    assert!(!lower.contains("src="), "a fetched source");
    assert!(!lower.contains("<link"), "a linked resource");
    assert!(!lower.contains("@import"), "an imported style sheet");
    assert!(
        !lower.contains(" onerror=") && !lower.contains(" onload="),
        "an event handler"
    );
    for attr in [
        "href=\"http",
        "href='http",
        "url(http",
        "url(\"http",
        "url('http",
        "href=\"//",
        "url(//",
    ] {
        assert!(!lower.contains(attr), "a resource URL: {attr}");
    }
}

#[test]
fn every_example_is_self_contained_well_formed_and_deterministic() {
    let memo = Memo::embedded().unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let graph = graph_in(lang);
        for path in common::examples() {
            let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
            let page = html(&graph, &memo, &source);
            let name = path.display();
            assert!(page.starts_with("<!DOCTYPE html>\n"), "{name}");
            assert!(page.ends_with("</html>\n"), "{name}");
            assert_self_contained(&page);
            assert_balanced(&page, CHECKED_TAGS);
            assert!(page.contains("@page {\n  size: A4;"), "{name}");
            // The running title and the page numbers, in the printed page's margins.
            assert!(page.contains("@top-left { content: \"GPU "), "{name}");
            assert!(page.contains("counter(page)"), "{name}");
            assert!(page.contains("counter(pages)"), "{name}");
            assert!(
                page.contains("thead { display: table-header-group; }"),
                "{name}"
            );
            assert!(page.contains("\"Noto Sans CJK SC\""), "{name}: a CJK font");
            // The answer and the warnings come before the first major section, on page 1.
            let first_page = &page[..page.find("class=\"major\"").expect("a major section")];
            assert!(first_page.contains("class=\"headline\""), "{name}");
            let (_, evaluation) = decide_tools::decide(&graph, &source, common::as_of()).unwrap();
            for w in &evaluation.decision.warnings {
                let title = decide_tools::html::escape(&w.title);
                assert!(
                    first_page.contains(&title),
                    "{name}: warning {title} on page 1"
                );
            }
            // Markdown marks left over would show as asterisks and backticks.
            let text_only = strip_tags(&page);
            assert!(!text_only.contains("**"), "{name}: a Markdown mark left");
            assert_eq!(page, html(&graph, &memo, &source), "{name}: same bytes");
            let lang_attr = if lang == Lang::Zh {
                "lang=\"zh-CN\""
            } else {
                "lang=\"en\""
            };
            assert!(page.contains(lang_attr), "{name}");
        }
    }
}

/// The text between tags, outside `<style>`.
fn strip_tags(page: &str) -> String {
    let body = &page[page.find("</style>").unwrap()..];
    let mut out = String::new();
    let mut inside = false;
    for c in body.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// The page's break-even chart: the chart that marks this profile with a point (the serving
/// and job charts number their points instead).
fn break_even_chart(page: &str) -> Option<&str> {
    charts(page).find(|svg| svg.contains("<circle class=\"point\""))
}

/// `html` with the character references an escaped text may hold (`&#x2f;`, `&#x27;`,
/// `&quot;`) read back as the characters a browser shows.
fn as_read(html: &str) -> String {
    html.replace("&#x2f;", "/")
        .replace("&#x27;", "'")
        .replace("&quot;", "\"")
}

/// Every chart of a page, each from `<svg class="chart"` to its `</svg>`.
fn charts(page: &str) -> impl Iterator<Item = &str> {
    page.match_indices("<svg class=\"chart\"")
        .map(|(start, _)| {
            let end = start + page[start..].find("</svg>").unwrap();
            &page[start..end]
        })
}

#[test]
fn the_serving_chart_draws_each_offer_that_meets_the_targets_against_its_bill_and_the_peak() {
    let memo = Memo::embedded().unwrap();
    let source = example("serving-70b-h100-or-910b.yaml");
    let page = html(&graph_in(Lang::En), &memo, &source);
    let svg = charts(&page)
        .find(|svg| svg.contains("Serving: tokens a second against the monthly bill"))
        .expect("a serving chart");
    let decision = decide_tools::decide(&graph_in(Lang::En), &source, common::as_of())
        .unwrap()
        .1
        .decision;
    let serving: serde_json::Value = serde_json::to_value(&decision.sections["serving"]).unwrap();
    let met = serving
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["meets"] == true)
        .count();
    assert_eq!(svg.matches("<circle class=").count(), 2 * met, "{svg}");
    // The recommendation is the one chosen point; the peak is a horizontal line.
    assert_eq!(svg.matches("<circle class=\"chosen\"").count(), 2, "{svg}");
    assert!(svg.contains(">peak: 5,000 tokens/s</text>"), "{svg}");
    let limit = &svg[svg.find("<line class=\"limit\"").unwrap()..];
    let y = |attr: &str| {
        let at = limit.find(&format!("{attr}=\"")).unwrap() + attr.len() + 2;
        limit[at..at + limit[at..].find('"').unwrap()].to_owned()
    };
    assert_eq!(y("y1"), y("y2"), "horizontal: {limit}");
}

#[test]
fn the_chart_is_an_svg_with_axes_labels_and_the_profile_marked() {
    let memo = Memo::embedded().unwrap();
    let page = html(&graph_in(Lang::En), &memo, &example("lora-7b-4090.yaml"));
    let svg = break_even_chart(&page).unwrap();
    assert!(svg.contains(">busy hours per GPU a month</text>"));
    assert!(svg.contains(">CNY a month</text>"));
    assert_eq!(
        svg.matches("<polyline").count(),
        3,
        "containers by the hour, the box, containers on the monthly-payment terms"
    );
    assert!(
        svg.contains("<circle class=\"point\""),
        "the profile's point"
    );
    // Bare metal is recommended; the containers' figure marked is the one the memo compares
    // with, a committed month (¥9,043), not the ¥9,408 paid by the hour.
    assert!(svg.contains(">This profile: 600 h, ¥9,043 on a committed month</text>"));
    assert!(!svg.contains("¥9,408"), "{svg}");
    let zh = html(&graph_in(Lang::Zh), &memo, &example("lora-7b-4090.yaml"));
    assert!(zh.contains(">每卡每月忙碌小时数</text>"));
    // The Markdown memo keeps its Mermaid chart; the HTML memo has none.
    assert!(!page.contains("mermaid"));
    // No job in the profile, no days-against-bill chart.
    assert_eq!(page.matches("<svg").count(), 1);
}

/// The `(x, y)` of each vertex of `polyline` (its `points`).
fn vertices(polyline: &str) -> Vec<(f64, f64)> {
    let points = &polyline[polyline.find("points=\"").unwrap() + 8..];
    points[..points.find('"').unwrap()]
        .split(' ')
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// The y of the polyline through `vertices` at `x`.
fn y_at(vertices: &[(f64, f64)], x: f64) -> f64 {
    let i = vertices
        .windows(2)
        .position(|w| w[0].0 <= x && x <= w[1].0)
        .expect("x within the line");
    let ((x0, y0), (x1, y1)) = (vertices[i], vertices[i + 1]);
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// The break-even chart marks the containers' bill on the terms the memo prices them at
/// (`container_terms`): on every example with the chart, in both languages, the point is on
/// the line of those terms, the other terms' line is drawn but does not carry it (unless the two
/// bills are equal), and the point's label says "recommended" exactly where containers are the
/// answer.
#[test]
fn the_break_even_chart_marks_the_containers_bill_on_the_terms_the_memo_chose() {
    let memo = Memo::embedded().unwrap();
    let mut charts = 0;
    for (lang, recommended) in [(Lang::En, ">Recommended: "), (Lang::Zh, ">推荐：")] {
        let graph = graph_in(lang);
        for path in common::examples() {
            let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
            let page = html(&graph, &memo, &source);
            let Some(svg) = break_even_chart(&page) else {
                continue;
            };
            let Some(point) = svg.find("<circle class=\"point\"") else {
                continue;
            };
            if !svg.contains("<polyline") {
                continue;
            }
            charts += 1;
            let name = format!("{} ({lang})", path.display());
            let record = decide_tools::decide(&graph, &source, common::as_of())
                .unwrap()
                .1
                .decision;
            let lines: Vec<Vec<(f64, f64)>> =
                svg.split("<polyline").skip(1).map(vertices).collect();
            assert_eq!(lines.len(), 3, "{name}");
            let attr = |key: &str| -> f64 {
                let v = &svg[point..][svg[point..].find(key).unwrap() + key.len()..];
                v[..v.find('"').unwrap()].parse().unwrap()
            };
            let (cx, cy) = (attr(" cx=\""), attr(" cy=\""));
            // The lines in the order memo.html.j2 draws them: by the hour, the box, the
            // monthly-payment terms.
            let terms = record.costs["container_terms"].as_str().unwrap();
            let (chosen, other) = if terms == "hourly" { (0, 2) } else { (2, 0) };
            assert!(
                (y_at(&lines[chosen], cx) - cy).abs() < 0.2,
                "{name}: {terms}: {svg}"
            );
            let hourly = record.costs["container_monthly_cny"].as_number().unwrap();
            let committed = record.costs["container_monthly_discounted_cny"]
                .as_number()
                .unwrap();
            if (hourly - committed).abs() > 1.0 {
                assert!((y_at(&lines[other], cx) - cy).abs() > 0.2, "{name}: {svg}");
            }
            assert_eq!(
                svg.contains(recommended),
                record.deployment == "container",
                "{name}: {svg}"
            );
        }
    }
    assert!(charts > 4, "examples with the chart: {charts}");
}

/// Containers recommended on the committed monthly-payment terms: the chart marks that bill
/// (¥2,261, the memo's answer), not the ¥2,822 the same GPUs would cost paid by the hour, which
/// stays as a line and in the caption.
#[test]
fn committed_containers_are_marked_as_the_answer_and_hourly_stays_as_a_line() {
    let memo = Memo::embedded().unwrap();
    let page = html(
        &graph_in(Lang::En),
        &memo,
        &example("partial-node-2gpus.yaml"),
    );
    // A label is text as the browser reads it: `/` may be written `&#x2f;`.
    let svg = as_read(break_even_chart(&page).unwrap());
    assert!(
        svg.contains(">Recommended: 720 h, ¥2,261 on a committed month</text>"),
        "{svg}"
    );
    assert!(
        svg.contains(">Containers by the hour at ¥1.96/GPU-hour</text>"),
        "{svg}"
    );
    assert!(
        svg.contains(
            ">Containers at the monthly-payment rate of ¥1.57/GPU-hour, a committed month</text>"
        ),
        "{svg}"
    );
    assert!(
        !svg.contains("¥2,822"),
        "the hourly bill is not a label: {svg}"
    );
    let caption = &page[page.find("<figcaption>").unwrap()..];
    assert!(
        caption.contains("where containers on a committed month cost ¥2,261, the recommendation; paid by the hour they would cost ¥2,822."),
        "{caption}"
    );
    let zh = html(
        &graph_in(Lang::Zh),
        &memo,
        &example("partial-node-2gpus.yaml"),
    );
    assert!(
        zh.contains(">推荐：每卡 720 h，承诺整月 ¥2,261</text>"),
        "{zh}"
    );
}

#[test]
fn the_job_chart_has_a_point_per_offer_the_recommendation_marked_and_the_deadline() {
    let memo = Memo::embedded().unwrap();
    let graph = graph_in(Lang::En);
    let page = html(&graph, &memo, &example("qlora-70b-4090.yaml"));
    let svg = &page[page.rfind("<svg").unwrap()..page.rfind("</svg>").unwrap()];
    assert!(
        svg.contains(">The job: days against the bill</text>"),
        "{svg}"
    );
    // Two configurations run the job within the ¥10,000 budget (the budget is a constraint where
    // it can be met); one of them is the recommendation.
    assert_eq!(svg.matches("class=\"point-number\"").count(), 2, "{svg}");
    assert_eq!(
        svg.matches("<circle class=\"chosen\"").count(),
        2,
        "point and key"
    );
    assert!(
        svg.contains(">1. RTX 4090 24G ×8 (Sichuan zone 2): 1.8 days, ¥7,920 (recommended)</text>")
    );
    assert!(
        !svg.contains("class=\"limit\""),
        "no deadline in this profile"
    );
    let page = html(&graph, &memo, &example("pretrain-70b-job.yaml"));
    let svg = &page[page.rfind("<svg").unwrap()..page.rfind("</svg>").unwrap()];
    // A long legend row is wrapped into lines (`<tspan>`s) inside the chart; read as one.
    let svg = svg
        .replace("<tspan x=\"120\" dy=\"15\">", " ")
        .replace("</tspan>", "");
    assert!(svg.contains(">deadline: 10 days</text>"), "{svg}");
    assert!(
        svg.contains(">1. 6 × Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core): 3.6 days after 5 days of porting, ¥127,200 (recommended)</text>"),
        "{svg}"
    );
    // The count the profile asks for (one box) is a point of its own, said to miss the time.
    assert!(
        svg.contains(">5. H100 80G ×8 (Ningxia zone 1): 14.2 days, ¥86,880 (the count asked for: misses the time)</text>"),
        "{svg}"
    );
}

const BASE: &str = "name: t\nworkload: {task: inference, model_params_b: 7}\nusage: {gpus: 1, hours_per_gpu_month: 100}\n";

#[test]
fn user_text_cannot_inject_markup_into_the_html_memo() {
    let graph = common::graph();
    let memo = Memo::embedded().unwrap();
    for name in [
        "\"<img src=x onerror=alert(1)> [click](http://evil) | x\"",
        "\"x\\n# Approved | ok |\\n<script>alert(1)</script>\"",
        "\"</title><style>body{display:none}</style> **bold** `code` &amp; it's \\\"quoted\\\"\"",
    ] {
        let yaml = BASE.replace("name: t", &format!("name: {name}"));
        let page = html(&graph, &memo, &Source::new("p.yaml", yaml));
        assert_self_contained(&page);
        assert_balanced(&page, CHECKED_TAGS);
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<script"), "{page}");
        assert_eq!(page.matches("<style>").count(), 1, "one style sheet");
        // The name is in the style sheet too, as the running title of the printed pages: one
        // CSS string whose every quote, brace, semicolon and `<` is escaped.
        let style = &page[page.find("<style>").unwrap()..page.find("</style>").unwrap()];
        let title = style
            .split("@top-left { content: ")
            .nth(1)
            .and_then(|rest| rest.split("; font-family").next())
            .expect("a running title");
        let inside = title
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or_else(|| panic!("one CSS string: {title}"));
        assert!(
            !inside.contains(['"', '<', '{', '}', ';', '\n']),
            "the name escaped in the running title: {title}"
        );
        assert!(
            !page.contains("<strong>bold</strong>"),
            "a user's ** is not a mark"
        );
        assert!(
            !page.contains("<code>code</code>"),
            "a user's ` is not a mark"
        );
        let h1 = &page[page.find("<h1>").unwrap()..page.find("</h1>").unwrap()];
        assert!(h1.contains("&lt;"), "the name's < is text: {h1}");
        assert!(!h1.contains('\n'), "the name stays on one line: {h1}");
    }
}
