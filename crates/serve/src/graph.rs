//! The graph page: the decision graph `decide graph` draws, as an index of every node (what it
//! reads, what reads it) and, for one node, a picture of its neighbourhood laid out on the
//! server as SVG. The whole graph is too large to read as one picture; it is offered as the
//! Mermaid and DOT texts `decide graph` prints.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use decide_engine::{Graph, Lang};
use decide_tools::diagram::{self, Focus, Neighbourhood};
use decide_tools::html::escape;
use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::style::StyleAttr;
use layout::std_shapes::render::get_shape_size;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;

use crate::page::{self, word};
use crate::reply;
use crate::site::Site;

/// `GET /graph?lang=..&node=ID&q=WORDS`: the index of nodes grouped by rule file (those whose
/// id, title or file holds `q`, where given), or one node's neighbourhood.
pub(crate) async fn show(
    State(site): State<Arc<Site>>,
    query: Result<Query<page::Query>, QueryRejection>,
) -> Response {
    let query = page::Query::of(query);
    let lang = query.lang();
    let node = query.rest.get("node").map(|n| n.trim().to_owned());
    let search = query
        .rest
        .get("q")
        .map(|q| q.trim().to_owned())
        .unwrap_or_default();
    let worker = site.clone();
    let drawn = crate::api::blocking(&site, move || {
        let graph = worker.graph(worker.as_of(None), lang)?;
        Ok::<_, decide_engine::Error>(match node.filter(|n| !n.is_empty()) {
            None => (StatusCode::OK, index_body(&graph, lang, &search)),
            Some(id) => node_body(&graph, &id, lang),
        })
    })
    .await;
    match drawn {
        Ok(Ok((status, body))) => page::render(status, "/graph", lang, "graph", &body),
        Ok(Err(e)) => reply::failure(&site, &e),
        Err(response) => response,
    }
}

/// `GET /graph/{decide.mmd|decide.dot}?lang=..`: the whole graph as `decide graph` prints it,
/// its titles in the language asked.
pub(crate) async fn download(
    State(site): State<Arc<Site>>,
    Path(file): Path<String>,
    query: Result<Query<page::Query>, QueryRejection>,
) -> Response {
    let lang = page::Query::of(query).lang();
    let mermaid = match file.as_str() {
        "decide.mmd" => true,
        "decide.dot" => false,
        _ => return reply::not_found().await,
    };
    let worker = site.clone();
    let drawn = crate::api::blocking(&site, move || {
        let graph = worker.graph(worker.as_of(None), lang)?;
        Ok::<_, decide_engine::Error>(if mermaid {
            diagram::mermaid(&graph)
        } else {
            diagram::dot(&graph)
        })
    })
    .await;
    let text = match drawn {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => return reply::failure(&site, &e),
        Err(response) => return response,
    };
    let mut response = reply::text("text/plain; charset=utf-8", text);
    reply::attachment(&mut response, &file);
    response
}

/// A link to a node's page, or the name as it is for an input or the outputs.
fn link(name: &str, nodes: &[Neighbourhood], lang: Lang) -> String {
    if nodes.iter().any(|n| n.id == name) {
        format!(
            "<a href=\"/graph?node={}&amp;lang={}\"><code>{}</code></a>",
            form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>(),
            lang.code(),
            escape(name)
        )
    } else {
        format!("<code>{}</code>", escape(name))
    }
}

fn links(names: &[String], nodes: &[Neighbourhood], lang: Lang) -> String {
    let all: Vec<String> = names.iter().map(|n| link(n, nodes, lang)).collect();
    all.join(", ")
}

/// Every node whose id, title or rule file holds `search` (every node where it is empty),
/// grouped by the rule file it is written in (files in the order their first node is
/// evaluated), each with its place in evaluation order, what it reads and what reads it; a
/// search box above.
fn index_body(graph: &Graph, lang: Lang, search: &str) -> String {
    let nodes = diagram::index(graph);
    let wanted = search.to_lowercase();
    let matches = |n: &Neighbourhood| {
        wanted.is_empty()
            || [&n.id, &n.title, &n.file]
                .iter()
                .any(|t| t.to_lowercase().contains(&wanted))
    };
    let found: Vec<(usize, &Neighbourhood)> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches(n))
        .collect();
    let mut files: Vec<&str> = Vec::new();
    for (_, n) in &found {
        if !files.contains(&n.file.as_str()) {
            files.push(&n.file);
        }
    }
    let mut out = format!(
        "<p>{}</p><p>{}: <a href=\"/graph/decide.mmd?lang={code}\" download>Mermaid</a> · \
         <a href=\"/graph/decide.dot?lang={code}\" download>DOT</a></p>\
         <form method=\"get\" action=\"/graph\" class=\"settings\" role=\"search\">\
         <input type=\"hidden\" name=\"lang\" value=\"{code}\">\
         <label>{}<input type=\"search\" name=\"q\" value=\"{}\"></label>\
         <button type=\"submit\">{}</button></form>",
        escape(&word("graph_intro", lang)),
        escape(&word("graph_whole", lang)),
        escape(&word("search_nodes", lang)),
        escape(search),
        escape(&word("search_button", lang)),
        code = lang.code(),
    );
    let _ = write!(
        out,
        "<p class=\"note\">{}</p>",
        escape(
            &word("nodes_found", lang)
                .replace("{found}", &found.len().to_string())
                .replace("{all}", &nodes.len().to_string())
        )
    );
    // The files, each a link to its part of the page.
    let contents: Vec<String> = files
        .iter()
        .map(|f| {
            let count = found.iter().filter(|(_, n)| n.file == *f).count();
            format!("<a href=\"#{}\">{}</a> ({count})", anchor(f), escape(f))
        })
        .collect();
    let _ = write!(out, "<p>{}</p>", contents.join(" · "));
    for file in files {
        let _ = write!(
            out,
            "<h2 id=\"{}\"><code>{}</code></h2><div class=\"wide\"><table><thead><tr>\
             <th scope=\"col\">#</th><th scope=\"col\">{}</th><th scope=\"col\">{}</th>\
             <th scope=\"col\">{}</th><th scope=\"col\">{}</th><th scope=\"col\">{}</th>\
             </tr></thead><tbody>",
            anchor(file),
            escape(file),
            escape(&word("node", lang)),
            escape(&word("kind", lang)),
            escape(&word("node_title", lang)),
            escape(&word("reads", lang)),
            escape(&word("read_by", lang)),
        );
        for (i, n) in found.iter().filter(|(_, n)| n.file == file) {
            let _ = write!(
                out,
                "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                link(&n.id, &nodes, lang),
                n.kind,
                escape(&n.title),
                links(&n.reads, &nodes, lang),
                links(&n.read_by, &nodes, lang),
            );
        }
        out.push_str("</tbody></table></div>");
    }
    out
}

/// The id of a rule file's heading on the index (`file-facts-yaml`).
fn anchor(file: &str) -> String {
    let mut id = String::from("file-");
    id.extend(file.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '-'
        }
    }));
    id
}

/// One node: its picture, what it reads and what reads it; a 404 for an id the graph lacks.
fn node_body(graph: &Graph, id: &str, lang: Lang) -> (StatusCode, String) {
    let nodes = diagram::index(graph);
    let Some(node) = nodes.iter().find(|n| n.id == id) else {
        let why = diagram::mermaid_of(graph, Focus::Neighbours(id))
            .err()
            .map_or_else(String::new, |e| e.render());
        let back = format!(
            "<p><a href=\"/graph?lang={}\">{}</a></p>",
            lang.code(),
            escape(&word("all_nodes", lang))
        );
        return (StatusCode::NOT_FOUND, page::error_box(&why) + &back);
    };
    let mermaid = diagram::mermaid_of(graph, Focus::Neighbours(id)).unwrap_or_default();
    let body = format!(
        "<p><a href=\"/graph?lang={}\">{}</a></p>\
         <h2><code>{}</code> ({}): {}</h2>\
         <figure class=\"graph wide\">{}</figure>\
         <p><strong>{}</strong>: {}</p><p><strong>{}</strong>: {}</p>\
         <details><summary>Mermaid</summary><pre>{}</pre></details>",
        lang.code(),
        escape(&word("all_nodes", lang)),
        escape(&node.id),
        node.kind,
        escape(&node.title),
        // A layout the library cannot finish is no reason to lose the page: the lists below
        // say the same.
        std::panic::catch_unwind(|| picture(node, &nodes)).unwrap_or_default(),
        escape(&word("reads", lang)),
        links(&node.reads, &nodes, lang),
        escape(&word("read_by", lang)),
        links(&node.read_by, &nodes, lang),
        escape(&mermaid),
    );
    (StatusCode::OK, body)
}

/// At most this many characters on a line of a box's label.
const LABEL_WIDTH: usize = 28;

/// `text` broken into lines of at most [`LABEL_WIDTH`] characters, at spaces where it has
/// them (a Chinese title has none, and breaks anywhere).
fn wrapped(text: &str) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        let fits = last.chars().count() + 1 + word.chars().count() <= LABEL_WIDTH;
        if last.is_empty() || fits {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        } else {
            lines.push(word.to_owned());
        }
    }
    let mut out = Vec::new();
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        for chunk in chars.chunks(LABEL_WIDTH) {
            out.push(chunk.iter().collect::<String>());
        }
    }
    out.join("\n")
}

/// The node, what it reads (left) and what reads it (right), laid out as SVG; the node
/// itself filled. Inputs and the outputs are drawn as the names they are.
fn picture(node: &Neighbourhood, nodes: &[Neighbourhood]) -> String {
    let dir = Orientation::LeftToRight;
    let mut vg = VisualGraph::new(dir);
    let label = |id: &str| match nodes.iter().find(|n| n.id == id) {
        Some(n) => format!("{}\n{}", n.id, wrapped(&n.title)),
        None => id.to_owned(),
    };
    let mut add = |id: &str, fill: &str| {
        let shape = ShapeKind::new_box(&label(id));
        let look = StyleAttr::new(Color::fast("black"), 1, Some(Color::fast(fill)), 4, 13);
        let size = get_shape_size(dir, &shape, look.font_size, false);
        vg.add_node(Element::create(shape, look, dir, size))
    };
    let me = add(&node.id, "lightyellow");
    let reads: Vec<_> = node.reads.iter().map(|r| add(r, "white")).collect();
    let read_by: Vec<_> = node.read_by.iter().map(|r| add(r, "white")).collect();
    for from in reads {
        vg.add_edge(Arrow::simple(""), from, me);
    }
    for to in read_by {
        vg.add_edge(Arrow::simple(""), me, to);
    }
    let mut svg = SVGWriter::new();
    vg.do_it(false, false, false, &mut svg);
    in_order(&svg.finalize())
}

/// `svg` with the lines of its `<style>` block sorted: the writer keeps its font classes in a
/// hash map, so their order changes from run to run, and the same page must be the same bytes.
fn in_order(svg: &str) -> String {
    let (Some(start), Some(end)) = (svg.find("<style>\n"), svg.find("</style>")) else {
        return svg.to_owned();
    };
    let start = start + "<style>\n".len();
    if end < start {
        return svg.to_owned();
    }
    let mut lines: Vec<&str> = svg[start..end].lines().collect();
    lines.sort_unstable();
    let mut out = String::with_capacity(svg.len());
    out.push_str(&svg[..start]);
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&svg[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::{LABEL_WIDTH, in_order, wrapped};

    #[test]
    fn the_style_block_is_sorted_and_nothing_else_moves() {
        let a = "<svg><style>\n.a15 { x }\n.a13 { y }\n</style><g>b\na</g></svg>";
        let b = "<svg><style>\n.a13 { y }\n.a15 { x }\n</style><g>b\na</g></svg>";
        assert_eq!(in_order(a), b);
        assert_eq!(in_order(b), b);
        assert_eq!(in_order("<svg/>"), "<svg/>");
    }

    #[test]
    fn labels_break_at_spaces_and_long_words_anywhere() {
        assert_eq!(wrapped("short"), "short");
        let title = "Offers that meet every requirement of the profile";
        let text = wrapped(title);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= LABEL_WIDTH));
        assert_eq!(lines.join(" "), title);
        let chinese = "按声称的作业时长各方案可处理的token数十亿按声称的作业时长各方案";
        let text = wrapped(chinese);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines.concat(), chinese);
    }
}
