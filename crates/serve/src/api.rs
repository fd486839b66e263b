//! The API for scripts: a profile decided (`POST /api/decide`), the offers at a date, the
//! profile's JSON Schema, and a health check. Parameters are checked before any work; the
//! decision runs off the I/O threads.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use decide_engine::Lang;
use decide_engine::profile::Syntax;
use decide_tools::Format;
use jiff::civil::Date;
use serde::Deserialize;

use crate::reply;
use crate::site::Site;

/// `/api/decide`'s parameters, each optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideParams {
    format: Option<String>,
    lang: Option<String>,
    as_of: Option<String>,
}

/// `/api/offers`'s parameter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OffersParams {
    as_of: Option<String>,
}

/// The formats the API writes, by the name a request gives.
const FORMATS: [(&str, Format, &str); 3] = [
    ("json", Format::Json, "application/json"),
    ("md", Format::Markdown, "text/markdown; charset=utf-8"),
    ("html", Format::Html, "text/html; charset=utf-8"),
];

/// A parameter that does not read: what it was, and what would be valid.
pub(crate) struct Refused {
    pub(crate) message: String,
    help: &'static str,
}

impl Refused {
    /// The 400 that says so.
    pub(crate) fn response(&self) -> Response {
        reply::refuse(StatusCode::BAD_REQUEST, &self.message, self.help)
    }
}

/// A request's format, language and date.
pub(crate) struct Asked {
    pub format: Format,
    pub content_type: &'static str,
    pub lang: Lang,
    pub as_of: Option<Date>,
}

impl Asked {
    pub(crate) fn read(
        format: Option<&str>,
        lang: Option<&str>,
        as_of: Option<&str>,
    ) -> Result<Asked, Refused> {
        let (_, format, content_type) = match format {
            None => FORMATS[0],
            Some(name) => *FORMATS
                .iter()
                .find(|(n, ..)| *n == name)
                .ok_or_else(|| Refused {
                    message: format!("`format` is `{name}`"),
                    help: "give `format=json`, `md`, `html` or (where the server prints) `pdf`",
                })?,
        };
        let lang = match lang {
            None => Lang::En,
            Some(code) => Lang::ALL
                .into_iter()
                .find(|l| l.code() == code)
                .ok_or_else(|| Refused {
                    message: format!("`lang` is `{code}`"),
                    help: "give `lang=en` or `zh`",
                })?,
        };
        Ok(Asked {
            format,
            content_type,
            lang,
            as_of: as_of.map(date).transpose()?,
        })
    }
}

/// A date parameter, or what says how to write one.
pub(crate) fn date(text: &str) -> Result<Date, Refused> {
    text.parse::<Date>().map_err(|e| Refused {
        message: format!("`as_of` is `{text}`, not a date: {e}"),
        help: "give a date as YYYY-MM-DD, e.g. `as_of=2026-09-04`",
    })
}

/// A query string that does not read: an unknown parameter, or one given twice.
fn bad_query(e: &QueryRejection, known: &str) -> Response {
    reply::refuse(
        StatusCode::BAD_REQUEST,
        &format!("the query string does not read: {}", e.body_text()),
        &format!("the parameters are {known}"),
    )
}

/// `POST /api/decide`: the body is a profile (YAML, or JSON with `Content-Type:
/// application/json`); the answer is the record or the memo, as `decide` writes it.
pub(crate) async fn decide(
    State(site): State<Arc<Site>>,
    params: Result<Query<DecideParams>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let params = match params {
        Ok(Query(p)) => p,
        Err(e) => return bad_query(&e, "`format`, `lang` and `as_of`"),
    };
    // A PDF is the HTML memo printed by the site's browser, as the page's download is.
    let pdf = params.format.as_deref() == Some("pdf");
    if pdf && site.settings().pdf.is_none() {
        return reply::refuse(
            StatusCode::BAD_REQUEST,
            "this server prints no PDFs: it found no browser when it started",
            "ask for `format=html` and print it, or start `decide serve` where Chromium is installed",
        );
    }
    let format = if pdf {
        Some("html")
    } else {
        params.format.as_deref()
    };
    let asked = match Asked::read(format, params.lang.as_deref(), params.as_of.as_deref()) {
        Ok(asked) => asked,
        Err(refused) => return refused.response(),
    };
    let body = match body {
        Ok(body) => body,
        Err(e) => return body_refused(&e),
    };
    // A printer is waited for before anything is decided: a PDF nobody can print now costs no
    // decision.
    let turn = if pdf {
        match crate::print::turn(&site, asked.lang).await {
            Ok(turn) => Some(turn),
            Err(response) => return response,
        }
    } else {
        None
    };
    let syntax = if is_json(&headers) {
        Syntax::Json
    } else {
        Syntax::Yaml
    };
    let as_of = site.as_of(asked.as_of);
    let decided = off_thread(&site, body.to_vec(), syntax, &asked, as_of).await;
    match (decided, turn) {
        (Ok(Ok(html)), Some(turn)) => {
            match crate::print::pdf(&site, turn, html, asked.lang).await {
                Ok(bytes) => {
                    let mut response = bytes.into_response();
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        axum::http::HeaderValue::from_static("application/pdf"),
                    );
                    response
                }
                Err(response) => response,
            }
        }
        (Ok(Ok(text)), None) => {
            let mut response = reply::text(asked.content_type, text);
            // An HTML memo opened from the API runs nothing and loads nothing either.
            if asked.format == Format::Html {
                reply::secure(&mut response, reply::PAGE_POLICY);
            }
            response
        }
        (Ok(Err(e)), _) => reply::failure(&site, &e),
        (Err(response), _) => response,
    }
}

/// [`Site::decide`] on the blocking pool ([`blocking`]).
pub(crate) async fn off_thread(
    site: &Arc<Site>,
    body: Vec<u8>,
    syntax: Syntax,
    asked: &Asked,
    as_of: Date,
) -> Result<decide_engine::Result<String>, Response> {
    let worker = site.clone();
    let (format, lang) = (asked.format, asked.lang);
    blocking(site, move || {
        worker.decide(body, syntax, format, lang, as_of)
    })
    .await
}

/// `work` on the blocking pool, off the threads that read and write connections, once one of
/// the site's work permits is free, within [`Settings::queue_wait`](crate::Settings::queue_wait)
/// (a 503 with `Retry-After` after it, the work never started). The work holds its permit to its
/// end, even past its request's time limit, so abandoned work cannot pile up; work whose request
/// went away (its time ran out, or the client left) before a thread took it up is not started.
/// A panic or a cancelled task is a 500 with an id.
pub(crate) async fn blocking<T: Send + 'static>(
    site: &Arc<Site>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    let queued = tokio::time::timeout(site.settings().queue_wait, site.work_permit()).await;
    let Ok(Some(permit)) = queued else {
        return Err(crate::limits::busy(
            "the server is busy deciding other requests",
            "try again in a few seconds",
        ));
    };
    let wanted = Arc::new(());
    let asker = Arc::downgrade(&wanted);
    let worker = site.clone();
    let work = move || {
        let _permit = permit;
        // Nobody waits for it any more, or the server is stopping: not started.
        if asker.strong_count() == 0 || worker.stopping() {
            return None;
        }
        Some(work())
    };
    let joined = tokio::task::spawn_blocking(work).await;
    drop(wanted);
    match joined {
        Ok(Some(done)) => Ok(done),
        Ok(None) => Err(crate::limits::busy("the server is stopping", "")),
        Err(joined) => Err(reply::internal(
            site,
            &reply::unjoined(joined, "the decision"),
            None,
        )),
    }
}

/// A form that could not be read: a body over the size limit (413) or cut off, else a 400
/// saying what does not read and `help`.
pub(crate) fn form_refused(
    rejection: &axum::extract::rejection::FormRejection,
    help: &str,
) -> Response {
    if let axum::extract::rejection::FormRejection::BytesRejection(e) = rejection {
        return body_refused(e);
    }
    reply::refuse(
        StatusCode::BAD_REQUEST,
        &format!("the form does not read: {}", rejection.body_text()),
        help,
    )
}

/// A 413: the profile is over the size limit; `help` says what to send instead.
pub(crate) fn too_large(help: &str) -> Response {
    reply::refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!(
            "the profile is over the size limit of {} MiB",
            crate::MAX_BODY_BYTES / (1024 * 1024)
        ),
        help,
    )
}

/// A body that could not be read: over the size limit (413), or cut off.
pub(crate) fn body_refused(e: &BytesRejection) -> Response {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large("a profile is a page of YAML; send one profile a request")
    } else {
        reply::refuse(
            e.status(),
            &format!("the request's body could not be read: {}", e.body_text()),
            "",
        )
    }
}

/// Whether the request says its body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// `GET /api/offers?as_of=D`: what is on offer at the date, as `decide offers --format json`.
pub(crate) async fn offers(
    State(site): State<Arc<Site>>,
    params: Result<Query<OffersParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(p)) => p,
        Err(e) => return bad_query(&e, "`as_of`"),
    };
    let asked = match params.as_of.as_deref().map(date).transpose() {
        Ok(asked) => asked,
        Err(refused) => return refused.response(),
    };
    let as_of = site.as_of(asked);
    let listing = decide_tools::catalog::listing(&site.policy().at(as_of), as_of);
    axum::Json(listing).into_response()
}

/// `GET /api/schema/profile`: the JSON Schema of a workload profile, as `decide schema profile`.
pub(crate) async fn profile_schema() -> Response {
    axum::Json(decide_tools::schema::profile(
        decide_tools::schema::Draft::default(),
    ))
    .into_response()
}

/// `GET /healthz`: 200 while the server answers.
pub(crate) async fn health() -> Response {
    axum::Json(serde_json::json!({ "status": "ok" })).into_response()
}
