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
mod offers;
mod page;
mod paste;
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
/// set, the body size limit, a time limit on each request, a bound on the requests in flight,
/// and a 500 with an error id for a panic.
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
        .route("/healthz", get(api::health))
        .route("/api/decide", post(api::decide))
        .route("/api/offers", get(api::offers))
        .route("/api/schema/profile", get(api::profile_schema))
        .fallback(reply::not_found)
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
        .layer(tower::limit::GlobalConcurrencyLimitLayer::new(
            settings.max_in_flight,
        ))
        .with_state(site)
}

/// Serves `site` on `addr` until SIGINT or SIGTERM, then lets the requests in flight finish.
/// `listening` is told the address bound (the port, where `addr` asked for port 0) before the
/// first request is read.
///
/// # Errors
/// The address cannot be bound, or the runtime or a signal handler cannot start.
pub fn run(
    addr: SocketAddr,
    site: Arc<Site>,
    listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let stop = stop_signal()?;
        listening(listener.local_addr()?);
        serve(listener, site, stop).await;
        Ok(())
    })
}

/// Serves `site` on `listener` until `shutdown` completes, then lets the requests in flight
/// finish. Each connection is HTTP/1.1 with keep-alive, cut off when its headers take longer
/// than [`Settings::header_timeout`]. A failed accept is logged (through [`Settings::log`])
/// and serving goes on.
pub async fn serve(
    listener: tokio::net::TcpListener,
    site: Arc<Site>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    // Without a timer hyper's header-read timeout never fires (axum::serve sets none).
    http.timer(TokioTimer::new())
        .header_read_timeout(site.settings().header_timeout);
    let service = TowerToHyperService::new(router(site.clone()));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
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
        let connection = http.serve_connection(TokioIo::new(stream), service.clone());
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A client that went away or sent garbage is its own business.
            let _ = connection.await;
        });
    }
    drop(listener);
    // Requests in flight finish, within their time limit and as long again to be written; a
    // client that never reads its answer does not keep the server from stopping.
    let grace = site.settings().request_timeout * 2;
    let _ = tokio::time::timeout(grace, graceful.shutdown()).await;
}

/// An accept error of one connection, not of the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Completes at the first SIGINT (Ctrl-C) or SIGTERM. The handlers are in place when this
/// returns, before the address is announced: a signal sent as soon as a script reads the
/// address stops the server gracefully instead of killing it.
///
/// # Errors
/// A signal handler cannot be installed.
fn stop_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        // Without a handler the default action ends the process, which waiting forever
        // here leaves it to.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
