//! PDFs printed on the server: a small pool of browsers ([`Settings::max_prints`] at a time),
//! which a download waits for at most [`Settings::print_wait`] before it is told to come back
//! (a 503 with `Retry-After`), never one browser a request. A print stops its browser as soon
//! as the server is stopping or its request has gone away; what a browser said when it failed
//! goes to the log, and the client gets what it can act on and the failure's id.
//!
//! [`Settings::max_prints`]: crate::Settings::max_prints
//! [`Settings::print_wait`]: crate::Settings::print_wait

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use decide_engine::Lang;
use tokio::sync::OwnedSemaphorePermit;

use crate::limits::busy;
use crate::page::word;
use crate::reply;
use crate::site::{Printer, Site};

/// A turn at a printer, held until its print ends.
pub(crate) struct Turn {
    permit: OwnedSemaphorePermit,
    printer: Printer,
}

/// A turn at one of the site's printers, once one is free within [`Settings::print_wait`];
/// else the 503 that says to try again (or a 404 where the site has no printer).
///
/// [`Settings::print_wait`]: crate::Settings::print_wait
pub(crate) async fn turn(site: &Site, lang: Lang) -> Result<Turn, Response> {
    let Some(printer) = site.settings().pdf.clone() else {
        return Err(reply::not_found().await);
    };
    if site.stopping() {
        return Err(stopping(lang));
    }
    match tokio::time::timeout(site.settings().print_wait, site.print_permit()).await {
        Ok(Some(permit)) => Ok(Turn { permit, printer }),
        _ => Err(busy(&word("printers_busy", lang), "")),
    }
}

/// The 503 of a server that is stopping.
fn stopping(lang: Lang) -> Response {
    busy(&word("stopping", lang), "")
}

/// `html` printed to PDF on `turn`'s printer, off the I/O threads. The browser is stopped as
/// soon as the server is stopping or this future is dropped.
pub(crate) async fn pdf(
    site: &Arc<Site>,
    turn: Turn,
    html: String,
    lang: Lang,
) -> Result<Vec<u8>, Response> {
    // Held by this future alone: gone once the request's time ran out or its client left
    // (as crate::api::blocking tells work that nobody waits for).
    let wanted = Arc::new(());
    let asker = Arc::downgrade(&wanted);
    let worker = site.clone();
    let printed = tokio::task::spawn_blocking(move || {
        let Turn { permit, printer } = turn;
        let _permit = permit;
        let stop = || worker.stopping() || asker.strong_count() == 0;
        if stop() {
            return Err("not started: the server is stopping".to_owned());
        }
        printer(&html, &stop)
    })
    .await;
    drop(wanted);
    match printed {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) if site.stopping() => Err(stopping(lang)),
        Ok(Err(why)) => Err(failed(site, &why, lang)),
        Err(joined) => Err(failed(site, &reply::unjoined(joined, "the print"), lang)),
    }
}

/// A print that failed: `why` to the log under a new id; the client gets the id and what to
/// do instead, and nothing of the server's paths or its browser's words.
fn failed(site: &Site, why: &str, lang: Lang) -> Response {
    let id = reply::log_failure(site, &format!("printing a PDF: {why}"));
    let body = serde_json::json!({ "error": {
        "kind": "internal",
        "message": word("print_failed", lang),
        "id": id,
    }});
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}
