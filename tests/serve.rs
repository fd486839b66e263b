//! `decide serve` as a user starts it: the address it prints, the page and the API answering on
//! it, the warning off the loopback address, and a clean exit on SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `decide serve` and the address it said it listens on.
struct Server {
    child: Child,
    addr: String,
    first_line: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_with(args, &[])
    }

    /// [`Server::start`] with `env` set in the server's environment. A test that fails before
    /// `stop` leaves the server to the end of the test process.
    #[allow(clippy::zombie_processes)]
    fn start_with(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut text = String::new();
        let mut first_line = String::new();
        // The warning (if any) comes first, then the line with the address.
        loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "no address: {text}"
            );
            if first_line.is_empty() {
                first_line.clone_from(&line);
            }
            text.push_str(&line);
            if let Some(rest) = line.split("http://").nth(1) {
                let addr = rest.split('/').next().unwrap().to_owned();
                // Keep reading standard error so the server never blocks on it.
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return Server {
                    child,
                    addr,
                    first_line,
                };
            }
        }
    }

    /// One HTTP/1.1 request with `Connection: close`; the status and the body.
    fn request(&self, head: &str, body: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            stream,
            "{head}\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let status = answer[9..12].parse().unwrap();
        let body = answer
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        (status, body)
    }

    /// Sends SIGTERM and waits for the exit code.
    fn stop(mut self) -> Option<i32> {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        self.child.wait().unwrap().code()
    }
}

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
    assert!(page.contains("<form method=\"post\""), "{page}");
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
