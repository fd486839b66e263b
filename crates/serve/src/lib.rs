//! `decide serve`: the decision engine over HTTP, for the people who do not run a terminal and
//! for the scripts of those who do.
//!
//! One [`Site`] (the policy, the memo's templates and the graphs compiled so far) answers every
//! request. [`router`] lays out the paths and the limits every request is held to; [`run`]
//! serves it on an address until SIGINT or SIGTERM, letting the requests in flight finish. The
//! API (`api`) and the page (`page`) turn HTTP into calls of the engine and back, and `reply`
//! writes what goes back when something fails; nothing here knows how a decision is made.

mod api;
mod compare;
mod form;
mod graph;
mod limits;
mod memos;
mod offers;
mod page;
mod paste;
mod print;
mod reply;
mod site;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;

pub use site::{Printer, Settings, Site};

/// The largest request body: a profile's size limit (1 MiB), as `decide` reads a file.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Every path the site serves, behind the limits of [`Settings`]: a bearer token where one is
/// set, a body read whole within its time and size limits by a bounded number of requests at
/// once, a time limit on each request, and a 500 with an error id for a panic. Nothing here
/// waits for the decisions' queue but the work itself: `/healthz`, the script and the offers
/// are answered whatever the queue holds.
pub fn router(site: Arc<Site>) -> Router {
    let settings = site.settings().clone();
    Router::new()
        .route("/", get(form::show).post(form::answer))
        .route("/download/{file}", post(form::download))
        .route("/upload", post(form::upload))
        .route("/assets/form.js", get(form::script))
        .route("/paste", get(paste::form).post(paste::submit))
        .route("/offers", get(offers::show))
        .route("/graph", get(graph::show))
        .route("/graph/{file}", get(graph::download))
        .route("/compare", get(compare::form).post(compare::submit))
        .route("/memo/{key}", get(memos::show))
        .route("/healthz", get(api::health))
        .route("/api/decide", post(api::decide))
        .route("/api/offers", get(api::offers))
        .route("/api/schema/profile", get(api::profile_schema))
        .fallback(reply::not_found)
        .layer(middleware::from_fn_with_state(
            site.clone(),
            limits::read_body,
        ))
        .layer(middleware::from_fn_with_state(
            site.clone(),
            reply::authorise,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            reply::panicked,
        ))
        // A 503, not a 408: a browser sends a request again, unasked, after a 408 on a kept-alive
        // connection, and the time was the server's, not the client's.
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            settings.request_timeout,
        ))
        // Outermost: the line says the status the client got, timeouts and panics included.
        .layer(middleware::from_fn_with_state(site.clone(), log_request))
        .with_state(site)
}

/// One line a request in the log ([`Settings::log`]): method, path, status and time taken
/// (`GET /offers 200 1.2 ms`). Never the query (a link may carry the token), a header or the
/// body.
async fn log_request(
    axum::extract::State(site): axum::extract::State<Arc<Site>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let mut path = request.uri().path().to_owned();
    if path.len() > 200 {
        let mut end = 200;
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        path.truncate(end);
        path.push('…');
    }
    let response = next.run(request).await;
    (site.settings().log)(&format!(
        "{method} {path} {} {:.1} ms",
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    ));
    response
}

/// Serves `site` on `addr` until SIGINT or SIGTERM, then lets the requests in flight finish
/// (a second signal stops at once). `listening` is told the address bound (the port, where
/// `addr` asked for port 0) before the first request is read.
///
/// # Errors
/// The address cannot be bound, or the runtime or a signal handler cannot start.
pub fn run(
    addr: SocketAddr,
    site: Arc<Site>,
    listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let settings = site.settings();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // The blocking pool runs the work, which holds its permits, and the prints: never
        // hundreds of threads, each with memory of its own, after a burst.
        .max_blocking_threads(settings.max_in_flight.max(1) + settings.max_prints.max(1) + 2)
        .build()?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let (stop, hurry) = stop_signals()?;
        listening(listener.local_addr()?);
        serve_until(listener, site, stop, hurry).await;
        Ok(())
    });
    // Work still running (a decision past its request's time) is not waited for: the process
    // is ending. Prints have stopped their browsers already.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    served
}

/// Serves `site` on `listener` until `shutdown` completes, then lets the requests in flight
/// finish. Each connection is HTTP/1.1 with keep-alive, cut off when its headers take longer
/// than [`Settings::header_timeout`]; a client over [`Settings::max_connections_per_client`]
/// (or any over [`Settings::max_connections`]) is answered with a 503 and closed. A failed
/// accept is logged (through [`Settings::log`]) and serving goes on.
pub async fn serve(
    listener: tokio::net::TcpListener,
    site: Arc<Site>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    serve_until(listener, site, shutdown, std::future::pending()).await;
}

/// [`serve`], and once stopping, `hurry` ends the wait for the requests in flight.
async fn serve_until(
    listener: tokio::net::TcpListener,
    site: Arc<Site>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    hurry: impl Future<Output = ()> + Send + 'static,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    // Without a timer hyper's header-read timeout never fires (axum::serve sets none).
    http.timer(TokioTimer::new())
        .header_read_timeout(site.settings().header_timeout);
    let router = router(site.clone());
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A connection reset before it was accepted is the client's; anything else
                // (out of file descriptors) passes too, after a pause rather than a spin, as
                // axum::serve does.
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    (site.settings().log)(&format!("decide serve: accepting a connection: {e}"));
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(admitted) = limits::Clients::connection(&site, peer.ip()) else {
            tokio::spawn(turn_away(stream));
            continue;
        };
        let service = TowerToHyperService::new(tower::Layer::layer(
            &axum::Extension(limits::Peer(peer.ip())),
            router.clone(),
        ));
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _admitted = admitted;
            // A client that went away or sent garbage is its own business.
            let _ = connection.await;
        });
    }
    drop(listener);
    // Prints stop their browsers, and work not yet started is not started.
    site.stop();
    // Requests in flight finish, within their time limit and as long again to be written; a
    // client that never reads its answer does not keep the server from stopping, nor does a
    // second signal wait for any of them.
    let grace = site.settings().request_timeout * 2;
    tokio::select! {
        _ = tokio::time::timeout(grace, graceful.shutdown()) => {}
        () = hurry => {}
    }
}

/// A connection over the bounds: a 503 written (if it can be within a second), then what the
/// client still sends read and dropped for at most a second more before the connection is
/// closed, so that the client reads the answer rather than a reset. Nothing of its request is
/// parsed.
async fn turn_away(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWrite as _;
    let answer = limits::too_many_connections();
    let second = std::time::Duration::from_secs(1);
    let written = tokio::time::timeout(second, async {
        let mut written = 0;
        while written < answer.len() {
            if stream.writable().await.is_err() {
                return false;
            }
            match stream.try_write(&answer[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return false,
            }
        }
        true
    })
    .await;
    if written != Ok(true) {
        return;
    }
    let _ = std::future::poll_fn(|cx| std::pin::Pin::new(&mut stream).poll_shutdown(cx)).await;
    let _ = tokio::time::timeout(second, async {
        let mut sink = [0u8; 4096];
        loop {
            if stream.readable().await.is_err() {
                return;
            }
            match stream.try_read(&mut sink) {
                // The client has closed its side.
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    })
    .await;
}

/// An accept error of one connection, not of the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Two futures: the first completes at the first SIGINT (Ctrl-C) or SIGTERM, the second at the
/// second. The handlers are in place when this returns, before the address is announced: a
/// signal sent as soon as a script reads the address stops the server gracefully instead of
/// killing it.
///
/// # Errors
/// A signal handler cannot be installed.
fn stop_signals() -> std::io::Result<(
    impl Future<Output = ()> + Send + 'static,
    impl Future<Output = ()> + Send + 'static,
)> {
    let (count, counted) = tokio::sync::watch::channel(0u32);
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
                count.send_modify(|n| *n += 1);
            }
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        // Without a handler the default action ends the process.
        while tokio::signal::ctrl_c().await.is_ok() {
            count.send_modify(|n| *n += 1);
        }
    });
    let nth = |n: u32| {
        let mut counted = counted.clone();
        async move {
            if counted.wait_for(|seen| *seen >= n).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    Ok((nth(1), nth(2)))
}

/// Why `token` cannot be the server's token, if it cannot: a token is sent as a header
/// (`Authorization: Bearer TOKEN`), so it must be printable ASCII without blanks, and not
/// empty.
///
/// # Errors
/// The token is empty, or has a character a header cannot carry as it was given.
pub fn check_token(token: &str) -> Result<(), String> {
    if token.is_empty() {
        return Err("the token is empty".into());
    }
    match token.char_indices().find(|(_, c)| !c.is_ascii_graphic()) {
        None => Ok(()),
        Some((at, c)) => Err(format!(
            "the token has {} at character {}: a token is sent as `Authorization: Bearer TOKEN`, \
             so it may hold printable ASCII only (letters, digits and -._~+/ are safest), no \
             blank and nothing outside ASCII",
            match c {
                ' ' => "a space".to_owned(),
                '\t' => "a tab".to_owned(),
                c if c.is_control() => format!("the control character U+{:04X}", u32::from(c)),
                c => format!("`{c}`"),
            },
            token[..at].chars().count() + 1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::check_token;

    #[test]
    fn a_token_is_printable_ascii_without_blanks() {
        assert!(check_token("s3cret-Token_~+/=").is_ok());
        for (token, said) in [
            ("", "empty"),
            (" s3cret", "a space at character 1"),
            ("s3cret ", "a space at character 7"),
            ("s3 cret", "a space at character 3"),
            ("s3\tcret", "a tab"),
            ("pässword", "`ä` at character 2"),
            ("s3cret\u{7f}", "U+007F"),
        ] {
            let why = check_token(token).unwrap_err();
            assert!(why.contains(said), "{token:?}: {why}");
        }
    }
}
