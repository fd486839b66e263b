//! What goes back when a request is not answered with a decision: an error as JSON, in the
//! shape of a batch's error records and with the words the command line uses; a 500 with an id
//! that the log has beside the cause; a 401 without the token; a 404 for any other path.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use decide_engine::ErrorKind;
use decide_tools::batch::ErrorFields;

use crate::site::Site;

/// `{"error": {"kind": ..., "message": ..., "field": ..., "at": {...}, "help": [...]},
/// "errors": [...]}` with `status`: `error` the first fault, `errors` every one (a profile's
/// faults are found in one pass).
pub(crate) fn error(status: StatusCode, e: &decide_engine::Error) -> Response {
    let each: Vec<ErrorFields> = e.each().into_iter().map(ErrorFields::of).collect();
    let body = serde_json::json!({ "error": ErrorFields::of(e), "errors": each });
    (status, axum::Json(body)).into_response()
}

/// A request the server will not take as asked (a parameter, a body too large): `status`,
/// with the error as JSON.
pub(crate) fn refuse(status: StatusCode, message: &str, help: &str) -> Response {
    let mut e = decide_engine::Error::new(ErrorKind::Usage, message);
    if !help.is_empty() {
        e = e.help(help);
    }
    error(status, &e)
}

/// The status an engine error is answered with: 422 for the profile, 400 for what the request
/// asked (a date nothing is quoted at), 500 for a fault of the rules or of the server, which is
/// logged under an id the client is given. A fault of the policy (rules, a run-time fault of
/// its expressions, a broken invariant) is shown: its place in a rule file is what the
/// policy's owner acts on. Any other fault (a file the server could not read or write, say)
/// is the operator's, and only its id is.
pub(crate) fn failure(site: &Site, e: &decide_engine::Error) -> Response {
    match e.kind() {
        ErrorKind::Profile => error(StatusCode::UNPROCESSABLE_ENTITY, e),
        ErrorKind::Usage => error(StatusCode::BAD_REQUEST, e),
        ErrorKind::Rules | ErrorKind::Eval | ErrorKind::Invariant => {
            internal(site, &e.render(), Some(e))
        }
        ErrorKind::Io | ErrorKind::Interrupted => internal(site, &e.render(), None),
    }
}

static FAILURES: AtomicU64 = AtomicU64::new(0);

/// A new id for a failure: the second it happened (hex) and its number since the start.
fn failure_id() -> String {
    format!(
        "{:x}-{}",
        jiff::Timestamp::now().as_second(),
        FAILURES.fetch_add(1, Ordering::Relaxed) + 1
    )
}

/// Logs `detail` under a new failure id, and says the id.
pub(crate) fn log_failure(site: &Site, detail: &str) -> String {
    let id = failure_id();
    (site.settings().log)(&format!("error {id}: {detail}"));
    id
}

/// A 500 whose cause, `detail`, goes to the log under a new id; the client gets the id and,
/// for a fault of the rules, the error (its place in a rule file is what a policy owner needs).
pub(crate) fn internal(
    site: &Site,
    detail: &str,
    shown: Option<&decide_engine::Error>,
) -> Response {
    let id = log_failure(site, detail);
    let mut body = match shown {
        Some(e) => serde_json::json!({ "error": ErrorFields::of(e) }),
        None => serde_json::json!({ "error": {
            "kind": "internal",
            "message": "the server failed while answering this request",
        }}),
    };
    body["error"]["id"] = serde_json::Value::from(id);
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}

/// A panic in a handler: a 500 with an id, the panic's message logged. Handlers decide off the
/// I/O threads ([`crate::api`]), so a panic there is caught where it is joined; this catches
/// the rest.
#[allow(clippy::needless_pass_by_value)] // the signature `CatchPanicLayer::custom` calls
pub(crate) fn panicked(cause: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = panic_message(cause.as_ref());
    let id = failure_id();
    // No site here: the default log (standard error) is the one a panic reaches.
    eprintln!("error {id}: panic: {message}");
    let body = serde_json::json!({ "error": {
        "kind": "internal",
        "message": "the server failed while answering this request",
        "id": id,
    }});
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}

/// Why work on the blocking pool (`what`) did not return: its panic's message, or that it was
/// cancelled.
pub(crate) fn unjoined(joined: tokio::task::JoinError, what: &str) -> String {
    if joined.is_panic() {
        format!("panic: {}", panic_message(joined.into_panic().as_ref()))
    } else {
        format!("{what} did not finish: {joined}")
    }
}

/// A panic's message, where it has one.
pub(crate) fn panic_message(cause: &(dyn std::any::Any + Send)) -> String {
    cause
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| cause.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// Any path the site does not serve: nothing outside the site's own pages and API is ever read.
pub(crate) async fn not_found() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "no such page",
        "the pages are /, /paste, /offers, /graph and /compare; the API /api/decide, /api/offers and /api/schema/profile; and /healthz",
    )
}

/// The cookie a browser keeps the token in, once it has opened a link carrying it.
const TOKEN_COOKIE: &str = "decide_token";

/// Who may use the server, before anything else is read:
/// - a browser's post from another site is a 403 (`Sec-Fetch-Site: cross-site` or `same-site`;
///   the site's own forms post `same-origin`, scripts send none), so no page elsewhere can
///   make this server decide or print;
/// - with [`Settings::local_only`](crate::Settings::local_only), a `Host` that is not a
///   loopback name is a 403;
/// - with a token set, a request must carry it: as `Authorization: Bearer TOKEN` (scripts), or
///   in the `decide_token` cookie (browsers). A browser gets the cookie by opening any page with
///   `?token=TOKEN` once: the answer sets the cookie (`HttpOnly`, `SameSite=Strict`) and sends
///   the browser on to the same page without the token, so it stays out of the address bar
///   and the history. Anything else gets a 401.
pub(crate) async fn authorise(
    State(site): State<Arc<Site>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let unsafe_method = !matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    let fetched_from = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if unsafe_method
        && (matches!(fetched_from, "cross-site" | "same-site") || foreign_origin(headers))
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "a page of another site may not post to this server",
            "open the page of this server and post from it",
        );
    }
    if site.settings().local_only
        && let Some(host) = headers.get(header::HOST)
        && !is_loopback_host(host.to_str().unwrap_or_default())
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "this server answers this machine only",
            "open it as http://127.0.0.1:PORT/ or http://localhost:PORT/; to serve other machines, start it with --addr and --token",
        );
    }
    // The health check says nothing secret: a monitor asks it without the token.
    if request.uri().path() == "/healthz" {
        return next.run(request).await;
    }
    let Some(token) = &site.settings().token else {
        return next.run(request).await;
    };
    let is = |given: &str| same(given.as_bytes(), token.as_bytes());
    // The cookie holds the token percent-encoded, so that any token is a valid cookie value.
    let encoded = form_urlencoded::byte_serialize(token.as_bytes()).collect::<String>();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, given)| given.trim());
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == TOKEN_COOKIE)
        .map(|(_, value)| value);
    let carried =
        bearer.is_some_and(is) || cookie.is_some_and(|c| same(c.as_bytes(), encoded.as_bytes()));
    let query = request.uri().query().unwrap_or_default();
    let (given, rest): (Vec<_>, Vec<_>) = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .partition(|(name, _)| name == "token");
    let linked =
        request.method() == axum::http::Method::GET && given.iter().any(|(_, value)| is(value));
    if linked {
        return token_redirect(request.uri().path(), rest, &encoded);
    }
    if carried {
        return next.run(request).await;
    }
    // A person's browser gets a page that asks for the token; a script, the JSON 401.
    let mut response = if wants_page(&request) {
        token_page(request.uri().path(), &rest, !given.is_empty())
    } else {
        refuse(
            StatusCode::UNAUTHORIZED,
            "this server needs a token",
            "send `Authorization: Bearer TOKEN`, or open the page once as /?token=TOKEN in a browser, with the token `decide serve` was started with",
        )
    };
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Whether a browser asks for a page: a GET or HEAD that accepts HTML (a script's request
/// does not say so, and keeps getting JSON).
fn wants_page(request: &Request) -> bool {
    matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    ) && request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// The 401 page that asks a person for the token: a form that opens `path` again with
/// `?token=` (which sets the cookie), keeping the query's `rest`; `wrong` when a token was given
/// and was not this server's.
fn token_page(path: &str, rest: &[(String, String)], wrong: bool) -> Response {
    use decide_tools::html::escape;
    let lang = rest
        .iter()
        .find(|(name, _)| name == "lang")
        .map_or(decide_engine::Lang::En, |(_, code)| crate::page::lang(code));
    let mut body = crate::page::fill_words("<p>{{w.token_ask}}</p>", lang);
    if wrong {
        body.push_str(&crate::page::error_box(&crate::page::word(
            "token_wrong",
            lang,
        )));
    }
    let mut kept = String::new();
    for (name, value) in rest {
        let _ = write!(
            kept,
            "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
            escape(name),
            escape(value)
        );
    }
    body.push_str(&crate::page::fill(
        &crate::page::fill_words(
            "<form method=\"get\" action=\"{{path}}\">{{kept}}<label>{{w.token_field}} \
             <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required \
             autofocus></label> <button type=\"submit\">{{w.token_send}}</button></form>",
            lang,
        ),
        &[
            (
                "path",
                &escape(&format!("/{}", path.trim_start_matches(['/', '\\']))),
            ),
            ("kept", &kept),
        ],
    ));
    crate::page::render(StatusCode::UNAUTHORIZED, "", lang, "token_title", &body)
}

/// Whether the request names an `Origin` other than the server it was sent to (its `Host`):
/// a browser's post from a page of another site, even one that sends no `Sec-Fetch-Site`. A
/// request without `Origin` is a script's (browsers send it with every post), and allowed;
/// `Origin: null` (a sandboxed or local page) is foreign.
fn foreign_origin(headers: &axum::http::HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let Some(origin) = origin.to_str().ok().map(str::trim) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .trim();
    let (authority, default_port) = if let Some(rest) = origin.strip_prefix("http://") {
        (rest, ":80")
    } else if let Some(rest) = origin.strip_prefix("https://") {
        (rest, ":443")
    } else {
        return true;
    };
    let bare = |a: &str| {
        let a = a.to_ascii_lowercase();
        a.strip_suffix(default_port).map(str::to_owned).unwrap_or(a)
    };
    authority.is_empty() || host.is_empty() || bare(authority) != bare(host)
}

/// Whether `host` (a `Host` header: a name or address, maybe with a port) names this machine
/// by a loopback name.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((name, _)) => name,
            None => return false,
        }
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The answer to a link with the right `?token=`: the cookie, and a 303 to the same page of this
/// server (`path`, never another host: leading slashes are one) with the query's `rest`.
fn token_redirect(path: &str, rest: Vec<(String, String)>, encoded: &str) -> Response {
    let mut location = format!("/{}", path.trim_start_matches(['/', '\\']));
    if !rest.is_empty() {
        location.push('?');
        location.push_str(
            &form_urlencoded::Serializer::new(String::new())
                .extend_pairs(rest)
                .finish(),
        );
    }
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let headers = response.headers_mut();
    headers.insert(
        header::LOCATION,
        HeaderValue::from_str(&location).unwrap_or(HeaderValue::from_static("/")),
    );
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "{TOKEN_COOKIE}={encoded}; Path=/; HttpOnly; SameSite=Strict"
    )) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether two byte strings are equal, in a time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// What a page of the site may load: itself, its own script, and what it posts back to; the
/// memo it frames is a `srcdoc` of the page. Nothing from another host, ever.
pub(crate) const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The content security policy `policy` and no sniffing, on a page the browser renders.
pub(crate) fn secure(response: &mut Response, policy: &'static str) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// `response` marked as a download saved as `file` (a name of the site's own, never the
/// request's).
pub(crate) fn attachment(response: &mut Response, file: &str) {
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, value);
    }
}

/// A response of `text` as `content_type`.
pub(crate) fn text(content_type: &'static str, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn loopback_hosts_are_known_with_or_without_a_port() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:8080",
            "127.3.4.5:1",
        ] {
            assert!(super::is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.1:8080",
            "[2001:db8::1]:80",
            "",
            "[::1",
        ] {
            assert!(!super::is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn an_origin_is_foreign_unless_it_is_the_host_posted_to() {
        let foreign = |origin: Option<&str>, host: &str| {
            let mut headers = axum::http::HeaderMap::new();
            headers.insert("host", host.parse().unwrap());
            if let Some(origin) = origin {
                headers.insert("origin", origin.parse().unwrap());
            }
            super::foreign_origin(&headers)
        };
        assert!(!foreign(None, "127.0.0.1:8080"), "a script sends none");
        assert!(!foreign(Some("http://127.0.0.1:8080"), "127.0.0.1:8080"));
        assert!(!foreign(Some("http://LOCALHOST:8080"), "localhost:8080"));
        assert!(!foreign(Some("http://example.com"), "example.com:80"));
        assert!(!foreign(Some("https://example.com:443"), "example.com"));
        assert!(foreign(Some("http://evil.example"), "127.0.0.1:8080"));
        assert!(foreign(Some("http://127.0.0.1:9999"), "127.0.0.1:8080"));
        assert!(foreign(Some("null"), "127.0.0.1:8080"));
        assert!(foreign(
            Some("http://127.0.0.1:8080.evil"),
            "127.0.0.1:8080"
        ));
        assert!(foreign(Some("file://"), "127.0.0.1:8080"));
    }

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secret2"));
        assert!(!same(b"", b"x"));
    }
}
