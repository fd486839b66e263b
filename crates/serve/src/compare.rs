//! The compare page: two profiles decided under the same policy, side by side: their answers
//! (deployment, offer, monthly cost, warnings), the profile fields that differ, where in the
//! decision graph the answers part (the nodes whose values differ while none of their inputs
//! do, as `decide diff` finds them between two policies), and the two memos.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::StatusCode;
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

/// `POST /compare`: both profiles decided and compared, below the form as posted; a profile
/// that does not read is a 422 naming which one and why.
pub(crate) async fn submit(
    State(site): State<Arc<Site>>,
    posted: Result<Form<Posted>, FormRejection>,
) -> Response {
    let posted = match posted {
        Ok(Form(posted)) => posted,
        Err(e) => {
            return crate::api::form_refused(
                &e,
                "post `first` and `second` (two profiles), and optionally `lang` and `as_of`",
            );
        }
    };
    let lang = page::lang(posted.lang.as_deref().unwrap_or_default());
    let as_of_text = posted.as_of.clone().unwrap_or_default();
    let shown = |status, extra: &str| {
        let body = form_html(&posted, lang, &as_of_text) + extra;
        page::render(status, "/compare", lang, "compare", &body)
    };
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
        let memo = |text: String| {
            worker.decide(text.into_bytes(), Syntax::Yaml, Format::Html, lang, as_of)
        };
        Ok::<_, decide_engine::Error>((comparison, [memo(first)?, memo(second)?]))
    })
    .await;
    match compared {
        Ok(Ok((comparison, memos))) => {
            let keys = memos.map(|memo| site.memos.keep(&memo));
            shown(StatusCode::OK, &result_html(&comparison, &keys, lang))
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

/// The form: the two profiles side by side, the language and the date.
fn form_html(posted: &Posted, lang: Lang, as_of: &str) -> String {
    page::fill(
        &page::fill_words(
            "<p>{{w.compare_intro}}</p>\
             <form method=\"post\" action=\"/compare\">\
             <div class=\"pair\">\
             <label>{{w.first}}<textarea name=\"first\" spellcheck=\"false\">{{first}}</textarea></label>\
             <label>{{w.second}}<textarea name=\"second\" spellcheck=\"false\">{{second}}</textarea></label>\
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

/// What the comparison found, then the two memos (kept under `keys`).
fn result_html(c: &Comparison, keys: &[String; 2], lang: Lang) -> String {
    let (a, b) = (&c.diff.old, &c.diff.new);
    let w = |key: &str| escape(&word(key, lang));
    let mut out = format!("<h2>{}</h2>", w("answers"));
    head(&mut out, &a.profile, &b.profile);
    row(
        &mut out,
        &word("deployment", lang),
        &a.deployment,
        &b.deployment,
    );
    row(&mut out, &word("offer", lang), &a.offer, &b.offer);
    row(
        &mut out,
        &word("monthly_cost", lang),
        &money(c.diff.headline.old),
        &money(c.diff.headline.new),
    );
    let warnings = |d: &decide_engine::Decision| {
        let ids: Vec<&str> = d.warnings.iter().map(|w| w.id.as_str()).collect();
        if ids.is_empty() {
            "—".to_owned()
        } else {
            ids.join(", ")
        }
    };
    row(
        &mut out,
        &word("warnings", lang),
        &warnings(a),
        &warnings(b),
    );
    for (name, x, y) in c.diff.figure_changes() {
        row(&mut out, &name, &brief(x.as_ref()), &brief(y.as_ref()));
    }
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

    let _ = write!(out, "<h2>{}</h2>", w("where_parts"));
    let starts = c.diff.change_starts();
    if starts.is_empty() {
        let _ = write!(out, "<p>{}</p>", w("same_decision"));
    } else {
        let _ = write!(out, "<p class=\"note\">{}</p>", w("where_parts_note"));
        head(&mut out, &a.profile, &b.profile);
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
        out.push_str("</tbody></table></div>");
    }

    let _ = write!(out, "<h2>{}</h2><div class=\"pair\">", w("memos"));
    for (key, profile) in keys.iter().zip([&a.profile, &b.profile]) {
        out.push_str(&crate::memos::frame(key, profile, lang));
    }
    out.push_str("</div>");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::brief;

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
}
