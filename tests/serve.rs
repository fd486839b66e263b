//! `decide serve` as a user starts it: the address it prints, the page and the API answering on
//! it, the warning off the loopback address, and a clean exit on SIGTERM.

mod common;

use common::server::Server;

#[test]
fn serves_the_page_and_the_api_then_stops_cleanly_on_sigterm() {
    let server = Server::start(&["--addr", "127.0.0.1:0", "--as-of", common::AS_OF]);
    assert!(
        server
            .first_line
            .starts_with("decide serve: http://127.0.0.1:"),
        "{}",
        server.first_line
    );
    let (status, body) = server.request("GET /healthz HTTP/1.1", "");
    assert_eq!(status, 200, "{body}");
    let (status, page) = server.request("GET / HTTP/1.1", "");
    assert_eq!(status, 200);
    assert!(
        page.contains("<form id=\"questions\" method=\"post\""),
        "{page}"
    );
    let profile = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lora-7b-4090.yaml"),
    )
    .unwrap();
    let (status, memo) = server.request("POST /api/decide?format=md HTTP/1.1", &profile);
    assert_eq!(status, 200, "{memo}");
    assert_eq!(
        memo,
        common::run_ok(&["examples/lora-7b-4090.yaml", "--as-of", common::AS_OF])
    );
    let (status, error) = server.request("POST /api/decide HTTP/1.1", "name: [");
    assert_eq!(status, 422, "{error}");
    // Without a token on the loopback address, a name rebound to it gets nothing.
    let (status, error) = server.request_to("evil.example", "GET /api/offers HTTP/1.1", "");
    assert_eq!(status, 403, "{error}");
    let port = server.addr.rsplit(':').next().unwrap();
    let (status, _) = server.request_to(&format!("localhost:{port}"), "GET /healthz HTTP/1.1", "");
    assert_eq!(status, 200);
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn off_the_loopback_address_it_warns_and_a_token_is_asked_for() {
    let server = Server::start(&["--addr", "0.0.0.0:0", "--as-of", common::AS_OF]);
    assert!(
        server
            .first_line
            .starts_with("warning: 0.0.0.0:0 is reachable from other machines"),
        "{}",
        server.first_line
    );
    assert!(
        server.first_line.contains("--token"),
        "{}",
        server.first_line
    );
    assert_eq!(server.stop(), Some(0));

    let server = Server::start_with(&["--addr", "127.0.0.1:0"], &[("DECIDE_TOKEN", "s3cret")]);
    // The address line says how a browser gets in, without printing the token itself.
    assert!(
        server.first_line.contains("/?token=TOKEN") && !server.first_line.contains("s3cret"),
        "{}",
        server.first_line
    );
    let (status, _) = server.request("GET /healthz HTTP/1.1", "");
    assert_eq!(status, 401);
    let (status, _) = server.request("GET /healthz HTTP/1.1\r\nAuthorization: Bearer s3cret", "");
    assert_eq!(status, 200);
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn an_address_in_use_is_an_error_that_says_so() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = common::run(&["serve", "--addr", &addr]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot serve on {addr}")), "{err}");
    assert!(err.contains("--addr"), "{err}");
}
