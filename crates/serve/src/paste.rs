//! The paste page: a whole profile pasted into a form and decided, as a plain form post that
//! works with scripts off. The page and the memo it returns load nothing from anywhere (a
//! content security policy says so to the browser).

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::StatusCode;
use axum::response::Response;
use decide_engine::profile::Syntax;
use serde::Deserialize;

use crate::api::Asked;
use crate::page;
use crate::reply;
use crate::site::Site;

/// `text` safe inside HTML text and attribute values: the memo's own escaping.
use decide_tools::html::escape;

const PAGE: &str = include_str!("../assets/paste.html");

/// What the form posts.
#[derive(Debug, Deserialize)]
pub(crate) struct Posted {
    profile: String,
    format: Option<String>,
    lang: Option<String>,
    as_of: Option<String>,
}

/// `GET /paste?lang=..`: the empty form.
pub(crate) async fn form(
    State(site): State<Arc<Site>>,
    query: Result<axum::extract::Query<page::Query>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let lang = page::Query::of(query).lang();
    paste_page(
        &site,
        StatusCode::OK,
        "",
        "html",
        lang.code(),
        "",
        (None, None),
    )
}

/// `POST /paste`: the posted profile decided; the memo (or record) in the format asked, or the form
/// again with the error above the profile as it was posted.
pub(crate) async fn submit(
    State(site): State<Arc<Site>>,
    posted: Result<Form<Posted>, FormRejection>,
) -> Response {
    let posted = match posted {
        Ok(Form(posted)) => posted,
        Err(e) => {
            return crate::api::form_refused(
                &e,
                "post `profile`, and optionally `format`, `lang` and `as_of`",
            );
        }
    };
    let format = posted.format.as_deref().filter(|f| !f.is_empty());
    let lang = posted.lang.as_deref().filter(|l| !l.is_empty());
    let as_of = posted.as_of.as_deref().filter(|d| !d.is_empty());
    let page_with = |status, error: Option<&str>, memo: Option<&str>| {
        paste_page(
            &site,
            status,
            &posted.profile,
            format.unwrap_or("html"),
            lang.unwrap_or("en"),
            as_of.unwrap_or(""),
            (error, memo),
        )
    };
    let shown = |status, error: &str| page_with(status, Some(error), None);
    let Ok(asked) = Asked::read(Some(format.unwrap_or("html")), lang, as_of) else {
        return shown(
            StatusCode::BAD_REQUEST,
            "The output, language or date is not one this page offers.",
        );
    };
    let date = site.as_of(asked.as_of);
    let body = posted.profile.clone().into_bytes();
    let decided = crate::api::off_thread(&site, body, Syntax::Yaml, &asked, date).await;
    match decided {
        // An HTML memo follows the form on the page (the site's links above it, the profile
        // kept to change and decide again); the other formats are the text itself.
        Ok(Ok(text)) if asked.format == decide_tools::Format::Html => {
            let key = site.memos.keep(&text);
            let title = decide_engine::Profile::from_source(&decide_engine::Source::new(
                "the pasted profile",
                posted.profile.as_str(),
            ))
            .map_or_else(|_| page::word("memo", asked.lang), |p| p.name);
            let frame = crate::memos::frame(&key, &title, asked.lang);
            page_with(StatusCode::OK, None, Some(&frame))
        }
        Ok(Ok(text)) => {
            let mut response = reply::text(asked.content_type, text);
            reply::secure(&mut response, reply::PAGE_POLICY);
            response
        }
        Ok(Err(e)) if e.kind() == decide_engine::ErrorKind::Profile => {
            shown(StatusCode::UNPROCESSABLE_ENTITY, &e.render())
        }
        // A date with nothing on offer, say: the request's, said on the page.
        Ok(Err(e)) if e.kind() == decide_engine::ErrorKind::Usage => {
            shown(StatusCode::BAD_REQUEST, &e.render())
        }
        Ok(Err(e)) => reply::failure(&site, &e),
        Err(response) => response,
    }
}

/// The page with `profile` in the form, the choices made, and `error` above it or the framed
/// `memo` below it, if any; filled in one pass, so that no text of the request is searched for
/// placeholders.
fn paste_page(
    site: &Site,
    status: StatusCode,
    profile: &str,
    format: &str,
    lang: &str,
    as_of: &str,
    (error, memo): (Option<&str>, Option<&str>),
) -> Response {
    let lang = page::lang(lang);
    let mut formats = String::new();
    for (value, key) in [
        ("html", "memo_html"),
        ("md", "memo_md"),
        ("json", "record_json"),
    ] {
        let selected = if value == format { " selected" } else { "" };
        let _ = write!(
            formats,
            "<option value=\"{value}\"{selected}>{}</option>",
            escape(&page::word(key, lang))
        );
    }
    let body = page::fill(
        &page::fill_words(PAGE, lang),
        &[
            ("policy", &escape(site.policy().meta.name.get(lang))),
            ("error", &error.map(page::error_box).unwrap_or_default()),
            ("formats", &formats),
            ("settings", &page::lang_and_date(lang, as_of)),
            ("profile", &escape(profile)),
        ],
    );
    let body = match memo {
        Some(frame) => format!("{body}<div class=\"memo\">{frame}</div>"),
        None => body,
    };
    page::render(status, "/paste", lang, "paste", &body)
}
