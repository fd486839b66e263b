//! The compare page: two profiles (pasted or uploaded) decided under the same policy, side by
//! side: their answers in the memo's words (deployment, the offer by its title, the money,
//! the warnings by title), the profile fields that differ, and the two memos; the record's
//! other figures that differ and where in the decision graph the answers part (the nodes whose
//! values differ while none of their inputs do, as `decide diff` finds them between two
//! policies) are folded away for whoever asks.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use decide_engine::profile::Syntax;
use decide_engine::{Lang, Source};
use decide_tools::Format;
use decide_tools::diff::Comparison;
use decide_tools::html::escape;
use serde::Deserialize;
use serde_json::Value;

use crate::page::{self, word};
use crate::reply;
use crate::site::Site;

/// What the compare form posts.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Posted {
    #[serde(default)]
    first: String,
    #[serde(default)]
    second: String,
    lang: Option<String>,
    as_of: Option<String>,
    /// Why a file chosen for a profile was not read (not text, say): said on the page.
    #[serde(skip)]
    refused: Option<String>,
}

/// `GET /compare`: the empty form.
pub(crate) async fn form(
    query: Result<axum::extract::Query<page::Query>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let query = page::Query::of(query);
    let lang = query.lang();
    let as_of = query.as_of.unwrap_or_default();
    let body = form_html(&Posted::default(), lang, &as_of);
    page::render(StatusCode::OK, "/compare", lang, "compare", &body)
}

/// What a compare post that does not read is told to send.
const POST_HELP: &str = "post `first` and `second` (two profiles), and optionally `lang` and \
                         `as_of`; as `multipart/form-data`, `first_file` and `second_file` may \
                         carry the profiles as files";

/// `POST /compare`: both profiles decided and compared, below the form as posted; a profile
/// that does not read is a 422 naming which one and why. The page posts a multipart form (a
/// file chosen for a profile replaces its text); a script may post the form urlencoded.
pub(crate) async fn submit(State(site): State<Arc<Site>>, request: Request) -> Response {
    let multipart = (request.headers().get(header::CONTENT_TYPE))
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.starts_with("multipart/form-data"));
    let posted = if multipart {
        let read = match Multipart::from_request(request, &()).await {
            Ok(form) => posted_files(form).await,
            Err(_) => Err(StatusCode::BAD_REQUEST),
        };
        match read {
            Ok(posted) => posted,
            Err(StatusCode::PAYLOAD_TOO_LARGE) => {
                return crate::api::too_large("compare two profiles of a page of YAML each");
            }
            Err(status) => return reply::refuse(status, "the form could not be read", POST_HELP),
        }
    } else {
        match Form::<Posted>::from_request(request, &()).await {
            Ok(Form(posted)) => posted,
            Err(e) => return crate::api::form_refused(&e, POST_HELP),
        }
    };
    let lang = page::lang(posted.lang.as_deref().unwrap_or_default());
    let as_of_text = posted.as_of.clone().unwrap_or_default();
    let shown = |status, extra: &str| {
        let body = form_html(&posted, lang, &as_of_text) + extra;
        page::render(status, "/compare", lang, "compare", &body)
    };
    if let Some(why) = &posted.refused {
        return shown(StatusCode::UNPROCESSABLE_ENTITY, &page::error_box(why));
    }
    let asked = match page::date(posted.as_of.as_deref()) {
        Ok(asked) => asked,
        Err(why) => return shown(StatusCode::BAD_REQUEST, &page::error_box(&why)),
    };
    if posted.first.trim().is_empty() || posted.second.trim().is_empty() {
        return shown(
            StatusCode::UNPROCESSABLE_ENTITY,
            &page::error_box(&word("two_profiles", lang)),
        );
    }
    let as_of = site.as_of(asked);
    let worker = site.clone();
    let (first, second) = (posted.first.clone(), posted.second.clone());
    let names = [word("first", lang), word("second", lang)];
    let compared = crate::api::blocking(&site, move || {
        let graph = worker.graph(as_of, lang)?;
        let a = Source::from_profile_bytes(&names[0], first.clone().into_bytes())?;
        let b = Source::from_profile_bytes(&names[1], second.clone().into_bytes())?;
        let comparison = decide_tools::diff::profiles(&graph, &a, &b, as_of)?;
        let titles = [&comparison.diff.old, &comparison.diff.new]
            .map(|d| offer_title(&graph, &d.offer, lang));
        let memo = |text: String| {
            worker.decide(text.into_bytes(), Syntax::Yaml, Format::Html, lang, as_of)
        };
        Ok::<_, decide_engine::Error>((comparison, titles, [memo(first)?, memo(second)?]))
    })
    .await;
    match compared {
        Ok(Ok((comparison, titles, memos))) => {
            let keys = memos.map(|memo| site.memos.keep(&memo));
            shown(
                StatusCode::OK,
                &result_html(&comparison, &titles, &keys, lang),
            )
        }
        Ok(Err(e)) if e.kind() == decide_engine::ErrorKind::Usage => {
            shown(StatusCode::BAD_REQUEST, &page::error_box(&e.render()))
        }
        Ok(Err(e)) if e.kind() == decide_engine::ErrorKind::Profile => shown(
            StatusCode::UNPROCESSABLE_ENTITY,
            &page::error_box(&e.render()),
        ),
        Ok(Err(e)) => reply::failure(&site, &e),
        Err(response) => response,
    }
}

/// The fields of a multipart compare post: a non-empty file replaces the text beside it; the
/// status to answer with where the form does not read (413 over the body's limit).
async fn posted_files(mut form: Multipart) -> Result<Posted, StatusCode> {
    let mut posted = Posted::default();
    let mut files: [Option<String>; 2] = [None, None];
    while let Some(field) = form.next_field().await.map_err(|e| e.status())? {
        let name = field.name().unwrap_or_default().to_owned();
        let file = field.file_name().unwrap_or(&name).to_owned();
        let bytes = field.bytes().await.map_err(|e| e.status())?;
        let slot = match name.as_str() {
            "first_file" => 0,
            "second_file" => 1,
            _ => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                match name.as_str() {
                    "first" => posted.first = text,
                    "second" => posted.second = text,
                    "lang" => posted.lang = Some(text),
                    "as_of" => posted.as_of = Some(text),
                    _ => {}
                }
                continue;
            }
        };
        // A file is read as a profile file is: one that is not text is refused by name.
        if !bytes.is_empty() {
            match Source::from_profile_bytes(&file, bytes.to_vec()) {
                Ok(source) => files[slot] = Some(source.text.to_string()),
                Err(e) => posted.refused = Some(e.render()),
            }
        }
    }
    let [first, second] = files;
    if let Some(first) = first {
        posted.first = first;
    }
    if let Some(second) = second {
        posted.second = second;
    }
    Ok(posted)
}

/// The form: the two profiles side by side (typed or pasted, or a file chosen), the language
/// and the date.
fn form_html(posted: &Posted, lang: Lang, as_of: &str) -> String {
    page::fill(
        &page::fill_words(
            "<p>{{w.compare_intro}}</p>\
             <form method=\"post\" action=\"/compare\" enctype=\"multipart/form-data\">\
             <div class=\"pair\">\
             <div><label>{{w.first}}<textarea name=\"first\" spellcheck=\"false\">{{first}}</textarea></label>\
             <label class=\"note\">{{w.or_file}} <input type=\"file\" name=\"first_file\" accept=\".yaml,.yml,.json,application/json,text/yaml\"></label></div>\
             <div><label>{{w.second}}<textarea name=\"second\" spellcheck=\"false\">{{second}}</textarea></label>\
             <label class=\"note\">{{w.or_file}} <input type=\"file\" name=\"second_file\" accept=\".yaml,.yml,.json,application/json,text/yaml\"></label></div>\
             </div>\
             <fieldset class=\"settings\">{{settings}}\
             <button type=\"submit\">{{w.compare_button}}</button></fieldset></form>",
            lang,
        ),
        &[
            ("first", &escape(&posted.first)),
            ("second", &escape(&posted.second)),
            ("settings", &page::lang_and_date(lang, as_of)),
        ],
    )
}

/// A value on one line for a table cell: a number with its thousands grouped, a long list or
/// map cut short (the record has it whole).
fn brief(v: Option<&Value>) -> String {
    const LONGEST: usize = 120;
    match v {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 => decide_lang::group_thousands(x, 0),
            Some(x) if x.abs() >= 1.0 => decide_lang::group_thousands(x, 2),
            _ => n.to_string(),
        },
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > LONGEST {
                text.chars().take(LONGEST).collect::<String>() + "…"
            } else {
                text
            }
        }
    }
}

/// The head of a table with a column for each profile.
fn head(out: &mut String, a: &str, b: &str) {
    let _ = write!(
        out,
        "<div class=\"wide\"><table><thead><tr><th></th><th scope=\"col\">{}</th>\
         <th scope=\"col\">{}</th></tr></thead><tbody>",
        escape(a),
        escape(b)
    );
}

/// A row of the side-by-side table; the cells marked where the two differ.
fn row(out: &mut String, label: &str, a: &str, b: &str) {
    let class = if a == b { "" } else { " class=\"differs\"" };
    let _ = write!(
        out,
        "<tr><th scope=\"row\">{}</th><td{class}>{}</td><td{class}>{}</td></tr>",
        escape(label),
        escape(a),
        escape(b)
    );
}

fn money(v: Option<f64>) -> String {
    v.map_or_else(
        || "—".to_owned(),
        |v| format!("¥{}", decide_lang::group_thousands(v, 0)),
    )
}

/// A figure of the record as the memo writes it: an amount of yuan (`_cny`) as money, else
/// [`brief`].
fn figure(name: &str, v: Option<&Value>) -> String {
    match v.and_then(Value::as_f64) {
        Some(amount) if name.ends_with("_cny") => {
            let decimals = if amount.fract() == 0.0 || amount.abs() >= 100.0 {
                0
            } else {
                2
            };
            format!("¥{}", decide_lang::group_thousands(amount, decimals))
        }
        _ => brief(v),
    }
}

/// The offer `id` by its title in `lang`, as the memo names it (the id where the catalog has
/// no such offer).
fn offer_title(graph: &decide_engine::Graph, id: &str, lang: Lang) -> String {
    (graph.policy().offers.iter())
        .find(|o| o.item.id == id)
        .map_or_else(|| id.to_owned(), |o| o.item.title(lang))
}

/// What the comparison found, then the two memos (kept under `keys`): the answers in the
/// memo's words (`titles`: the two offers by title) and the fields that differ; the record's
/// other figures and the graph's nodes where the answers part are folded away.
fn result_html(c: &Comparison, titles: &[String; 2], keys: &[String; 2], lang: Lang) -> String {
    let (a, b) = (&c.diff.old, &c.diff.new);
    let w = |key: &str| escape(&word(key, lang));
    let mut out = format!("<h2>{}</h2>", w("answers"));
    head(&mut out, &a.profile, &b.profile);
    let deployment = |d: &str| {
        page::maybe_word(&format!("deployment_{d}"), lang).unwrap_or_else(|| d.to_owned())
    };
    row(
        &mut out,
        &word("deployment", lang),
        &deployment(&a.deployment),
        &deployment(&b.deployment),
    );
    row(&mut out, &word("offer", lang), &titles[0], &titles[1]);
    row(
        &mut out,
        &word("monthly_cost", lang),
        &money(c.diff.headline.old),
        &money(c.diff.headline.new),
    );
    let total = |d: &decide_engine::Decision| {
        figure(
            "contract_total_cny",
            d.costs
                .get("contract_total_cny")
                .map(decide_engine::decision::to_json)
                .as_ref(),
        )
    };
    row(
        &mut out,
        &word("contract_total", lang),
        &total(a),
        &total(b),
    );
    let warnings = |d: &decide_engine::Decision| {
        let titles: Vec<&str> = d.warnings.iter().map(|w| w.title.as_str()).collect();
        if titles.is_empty() {
            "—".to_owned()
        } else {
            titles.join("; ")
        }
    };
    row(
        &mut out,
        &word("warnings", lang),
        &warnings(a),
        &warnings(b),
    );
    out.push_str("</tbody></table></div>");

    let _ = write!(out, "<h2>{}</h2>", w("fields_differ"));
    if c.fields.is_empty() {
        let _ = write!(out, "<p>{}</p>", w("same_fields"));
    } else {
        head(&mut out, &a.profile, &b.profile);
        for (path, x, y) in &c.fields {
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><code>{}</code></th>",
                escape(path)
            );
            let _ = write!(
                out,
                "<td class=\"differs\">{}</td><td class=\"differs\">{}</td></tr>",
                escape(&brief(x.as_ref())),
                escape(&brief(y.as_ref()))
            );
        }
        out.push_str("</tbody></table></div>");
    }

    engineers_part(&mut out, c, lang);

    let _ = write!(out, "<h2>{}</h2><div class=\"pair\">", w("memos"));
    for (key, profile) in keys.iter().zip([&a.profile, &b.profile]) {
        out.push_str(&crate::memos::frame(key, profile, lang));
    }
    out.push_str("</div>");
    out
}

/// For the engineer, folded until opened: every other figure of the two records that differs,
/// by its name in the record, and where in the graph the answers part.
fn engineers_part(out: &mut String, c: &Comparison, lang: Lang) {
    let (a, b) = (&c.diff.old, &c.diff.new);
    let w = |key: &str| escape(&word(key, lang));
    let figures = c.diff.figure_changes();
    if !figures.is_empty() {
        let _ = write!(out, "<details><summary>{}</summary>", w("figures_differ"));
        head(out, &a.profile, &b.profile);
        for (name, x, y) in figures {
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><code>{}</code></th><td class=\"differs\">{}</td>\
                 <td class=\"differs\">{}</td></tr>",
                escape(&name),
                escape(&figure(&name, x.as_ref())),
                escape(&figure(&name, y.as_ref()))
            );
        }
        out.push_str("</tbody></table></div></details>");
    }
    let starts = c.diff.change_starts();
    if starts.is_empty() {
        let _ = write!(out, "<p>{}</p>", w("same_decision"));
    } else {
        let _ = write!(
            out,
            "<details><summary>{}</summary><p class=\"note\">{}</p>",
            w("where_parts"),
            w("where_parts_note")
        );
        head(out, &a.profile, &b.profile);
        for start in starts {
            let at = &start.at;
            let node = at.split('[').next().unwrap_or(at);
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><a href=\"/graph?node={}&amp;lang={}\"><code>{}</code></a></th>\
                 <td>{}</td><td>{}</td></tr>",
                form_urlencoded::byte_serialize(node.as_bytes()).collect::<String>(),
                lang.code(),
                escape(at),
                escape(&brief(start.old.as_ref())),
                escape(&brief(start.new.as_ref()))
            );
        }
        out.push_str("</tbody></table></div></details>");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{brief, figure};

    #[test]
    fn cells_group_thousands_and_cut_long_values() {
        assert_eq!(brief(Some(&json!(230_774.4))), "230,774.40");
        assert_eq!(brief(Some(&json!(2_035_200))), "2,035,200");
        assert_eq!(brief(Some(&json!(7.0))), "7");
        assert_eq!(brief(Some(&json!(0.0025))), "0.0025");
        assert_eq!(brief(Some(&json!("bare_metal"))), "bare_metal");
        assert_eq!(brief(Some(&json!(null))), "—");
        assert_eq!(brief(None), "—");
        let long = json!(["一".repeat(200)]);
        let cut = brief(Some(&long));
        assert_eq!(cut.chars().count(), 121);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn amounts_of_yuan_read_as_money() {
        assert_eq!(
            figure("bare_metal_monthly_cny", Some(&json!(86_880))),
            "¥86,880"
        );
        assert_eq!(figure("container_monthly_cny", Some(&json!(196.4))), "¥196");
        assert_eq!(figure("rule_premium_cny", Some(&json!(1.57))), "¥1.57");
        assert_eq!(figure("container_gpus", Some(&json!(24))), "24");
        assert_eq!(figure("x_cny", None), "—");
    }
}
