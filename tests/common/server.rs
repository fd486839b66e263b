//! A `decide serve` process started on a free loopback port, for the tests that talk to it over
//! HTTP as a user's browser or script would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `decide serve` and the address it said it listens on.
pub struct Server {
    child: Child,
    pub addr: String,
    pub first_line: String,
    /// On every interface (`0.0.0.0`), the line after the address's: the one to share.
    pub shared_line: String,
}

impl Server {
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(args, &[])
    }

    /// [`Server::start`] with `env` set in the server's environment. A test that fails before
    /// `stop` leaves the server to the end of the test process.
    #[allow(clippy::zombie_processes)]
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_decide"))
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            // Away from the repository, as an installed binary runs in any folder: the rules,
            // the templates and the page's assets must all be embedded.
            .current_dir(std::env::temp_dir())
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
                let mut shared_line = String::new();
                if addr.starts_with("0.0.0.0:") {
                    stderr.read_line(&mut shared_line).unwrap();
                }
                // Keep reading standard error so the server never blocks on it.
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return Server {
                    child,
                    addr,
                    first_line,
                    shared_line,
                };
            }
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM, and the exit code if the server exits within `wait` (else it is killed
    /// and the answer is `None`), with how long it took.
    pub fn stop_within(mut self, wait: Duration) -> (Option<i32>, Duration) {
        let start = std::time::Instant::now();
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        while start.elapsed() < wait {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code(), start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (None, start.elapsed())
    }

    /// One HTTP/1.1 request with `Connection: close`; the status and the body.
    pub fn request(&self, head: &str, body: &str) -> (u16, String) {
        self.request_to(&self.addr, head, body)
    }

    /// [`Server::request`] addressed to `host` (its `Host` header), as a browser sends it
    /// when a name of the page's resolves to this server.
    pub fn request_to(&self, host: &str, head: &str, body: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            stream,
            "{head}\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
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
    pub fn stop(mut self) -> Option<i32> {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        self.child.wait().unwrap().code()
    }
}

impl Drop for Server {
    /// A test that failed before `stop` does not leave its server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
