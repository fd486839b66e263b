//! The offers page: the catalog at a date, as `decide offers` lists it (every quote in force,
//! its price, VAT, term, age and trend), in a table.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use crate::page;
use crate::site::Site;

/// `GET /offers?lang=..&as_of=..`: the listing at the date asked (the server's date where none
/// is); a date that is not one is said so above the listing at the server's date, with a 400.
pub(crate) async fn show(
    State(site): State<Arc<Site>>,
    query: Result<Query<page::Query>, QueryRejection>,
) -> Response {
    let query = page::Query::of(query);
    let lang = query.lang();
    let (status, asked, error) = match query.as_of() {
        Ok(asked) => (StatusCode::OK, asked, String::new()),
        Err(why) => (StatusCode::BAD_REQUEST, None, page::error_box(&why)),
    };
    let as_of = site.as_of(asked);
    let listing = decide_tools::catalog::listing(&site.policy().at(as_of), as_of);
    let body = format!(
        "{}{error}<div class=\"wide\">{}</div>",
        page::settings("/offers", lang, &as_of.to_string()),
        decide_tools::catalog::html(&listing)
    );
    page::render(status, "/offers", lang, "offers", &body)
}
