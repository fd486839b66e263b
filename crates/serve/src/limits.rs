//! The bounds a client is held to before any work is done for it: connections open at once
//! (all clients, and one client address), and request bodies being read (at once, and in how
//! long), so that clients that open connections or start posts and send nothing cannot keep
//! the server from answering anyone else.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::reply;
use crate::site::Site;

/// The address of the client a request came from, put on each request by [`crate::serve`]
/// (a request handed to the router otherwise, as the tests do, has none and is counted with
/// all clients only).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub IpAddr);

/// What each client address holds now.
#[derive(Debug, Default)]
struct Held {
    connections: usize,
    bodies: usize,
}

/// The connections and the bodies being read, by client address, and in all.
#[derive(Debug, Default)]
pub(crate) struct Clients {
    held: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    by_client: HashMap<IpAddr, Held>,
    connections: usize,
    bodies: usize,
}

/// What is being counted.
#[derive(Debug, Clone, Copy)]
enum What {
    Connection,
    Body,
}

/// A connection or a body counted against its client until this is dropped.
pub(crate) struct Admitted {
    site: Arc<Site>,
    client: Option<IpAddr>,
    what: What,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut counts = self.site.clients.lock();
        match self.what {
            What::Connection => counts.connections -= 1,
            What::Body => counts.bodies -= 1,
        }
        if let Some(client) = self.client
            && let Some(held) = counts.by_client.get_mut(&client)
        {
            match self.what {
                What::Connection => held.connections -= 1,
                What::Body => held.bodies -= 1,
            }
            if held.connections == 0 && held.bodies == 0 {
                counts.by_client.remove(&client);
            }
        }
    }
}

impl Clients {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more of `what` for `client`, unless that is over the site's bounds for all
    /// clients or for one.
    fn admit(site: &Arc<Site>, client: Option<IpAddr>, what: What) -> Option<Admitted> {
        let settings = site.settings();
        let (all, one) = match what {
            What::Connection => (
                settings.max_connections,
                settings.max_connections_per_client,
            ),
            What::Body => (settings.max_bodies, settings.max_bodies_per_client),
        };
        let mut counts = site.clients.lock();
        let total = match what {
            What::Connection => counts.connections,
            What::Body => counts.bodies,
        };
        if total >= all.max(1) {
            return None;
        }
        if let Some(client) = client {
            let held = counts.by_client.entry(client).or_default();
            let mine = match what {
                What::Connection => &mut held.connections,
                What::Body => &mut held.bodies,
            };
            if *mine >= one.max(1) {
                return None;
            }
            *mine += 1;
        }
        match what {
            What::Connection => counts.connections += 1,
            What::Body => counts.bodies += 1,
        }
        Some(Admitted {
            site: site.clone(),
            client,
            what,
        })
    }

    /// A new connection from `client`, counted until the returned guard is dropped; none when
    /// the server or that client has as many open as it may.
    pub(crate) fn connection(site: &Arc<Site>, client: IpAddr) -> Option<Admitted> {
        Clients::admit(site, Some(client), What::Connection)
    }
}

/// How long a client that was turned away is asked to wait before it tries again, in seconds.
pub(crate) const RETRY_AFTER_SECS: u64 = 5;

/// The answer written to a connection over the bounds, before closing it: a 503 with
/// `Retry-After`, the error as JSON, and nothing of its request read.
pub(crate) fn too_many_connections() -> Vec<u8> {
    let body = serde_json::json!({ "error": {
        "kind": "usage",
        "message": "too many connections are open to this server from your address",
        "help": ["close some, or try again in a few seconds"],
    }})
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: {RETRY_AFTER_SECS}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A request's body read whole before the request goes on, within [`Settings::body_timeout`]
/// (a 408, the connection closed) and the size limit (a 413), while fewer than
/// [`Settings::max_bodies`] requests (and [`Settings::max_bodies_per_client`] from its
/// client) are reading theirs (a 503 with `Retry-After`, before anything is read). A request
/// without a body (GET, HEAD) goes straight on.
///
/// [`Settings::body_timeout`]: crate::Settings::body_timeout
/// [`Settings::max_bodies`]: crate::Settings::max_bodies
/// [`Settings::max_bodies_per_client`]: crate::Settings::max_bodies_per_client
pub(crate) async fn read_body(
    State(site): State<Arc<Site>>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    ) {
        return next.run(request).await;
    }
    let client = request.extensions().get::<Peer>().map(|p| p.0);
    let Some(admitted) = Clients::admit(&site, client, What::Body) else {
        // Its body is left unread, so the connection cannot carry another request.
        let mut response = busy(
            "too many requests are sending their bodies to this server",
            "try again in a few seconds",
        );
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    };
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        site.settings().body_timeout,
        http_body_util::BodyExt::collect(http_body_util::Limited::new(body, crate::MAX_BODY_BYTES)),
    )
    .await;
    drop(admitted);
    let bytes = match read {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return crate::api::too_large(
                "a profile is a page of YAML; send one profile a request",
            );
        }
        // A body that broke off: the client's connection went away, or its framing was wrong.
        Ok(Err(e)) => {
            return reply::refuse(
                StatusCode::BAD_REQUEST,
                &format!("the request's body could not be read: {e}"),
                "",
            );
        }
        Err(_) => {
            let mut response = reply::refuse(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request's body did not arrive within {} seconds",
                    site.settings().body_timeout.as_secs_f64()
                ),
                "send the whole request at once; a profile is a page of YAML",
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A 503 with `Retry-After`: the server is busy, and the request was not worked on.
pub(crate) fn busy(message: &str, help: &str) -> Response {
    let mut response = reply::refuse(StatusCode::SERVICE_UNAVAILABLE, message, help);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}
