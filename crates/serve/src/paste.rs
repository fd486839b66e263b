//! The paste page: a whole profile pasted into a form and decided, as a plain form post that
//! works with scripts off. The page and the memo it returns load nothing from anywhere (a
//! content security policy says so to the browser).

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use decide::profile::Syntax;
use serde::Deserialize;

use crate::api::Asked;
use crate::reply;
use crate::site::Site;

/// `text` safe inside HTML text and attribute values: the memo's own escaping.
use decide::html::escape;

const PAGE: &str = include_str!("../assets/paste.html");

/// What the form posts.
#[derive(Debug, Deserialize)]
pub(crate) struct Posted {
    profile: String,
    format: Option<String>,
    lang: Option<String>,
    as_of: Option<String>,
}

/// `GET /paste`: the empty form.
pub(crate) async fn form(State(site): State<Arc<Site>>) -> Response {
    page(&site, StatusCode::OK, "", "html", "en", "", None)
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
    let shown = |status, error: &str| {
        page(
            &site,
            status,
            &posted.profile,
            format.unwrap_or("html"),
            lang.unwrap_or("en"),
            as_of.unwrap_or(""),
            Some(error),
        )
    };
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
        Ok(Ok(text)) => {
            let mut response = reply::text(asked.content_type, text);
            reply::secure(&mut response, reply::PAGE_POLICY);
            response
        }
        Ok(Err(e)) if e.kind() == decide::ErrorKind::Profile => {
            shown(StatusCode::UNPROCESSABLE_ENTITY, &e.render())
        }
        Ok(Err(e)) => reply::failure(&site, &e),
        Err(response) => response,
    }
}

/// The page with `profile` in the form, the choices made, and `error` above it if any.
fn page(
    site: &Site,
    status: StatusCode,
    profile: &str,
    format: &str,
    lang: &str,
    as_of: &str,
    error: Option<&str>,
) -> Response {
    let options = |choices: &[(&str, &str)], chosen: &str| {
        let mut out = String::new();
        for (value, label) in choices {
            let selected = if *value == chosen { " selected" } else { "" };
            let _ = write!(out, "<option value=\"{value}\"{selected}>{label}</option>");
        }
        out
    };
    let error = error.map_or_else(String::new, |e| {
        format!("<div class=\"error\" role=\"alert\">{}</div>", escape(e))
    });
    let html = PAGE
        .replace(
            "{{policy}}",
            &escape(site.policy().meta.name.get(decide::Lang::En)),
        )
        .replace("{{error}}", &error)
        .replace(
            "{{formats}}",
            &options(
                &[
                    ("html", "Memo (HTML)"),
                    ("md", "Memo (Markdown)"),
                    ("json", "Record (JSON)"),
                ],
                format,
            ),
        )
        .replace(
            "{{langs}}",
            &options(&[("en", "English"), ("zh", "中文")], lang),
        )
        .replace("{{as_of}}", &escape(as_of))
        .replace("{{profile}}", &escape(profile));
    let mut response = (status, reply::text("text/html; charset=utf-8", html)).into_response();
    reply::secure(&mut response, reply::PAGE_POLICY);
    response
}
