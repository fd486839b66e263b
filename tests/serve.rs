//! `decide serve` as a user starts it: the address it prints, the page and the API answering on
//! it, the warning off the loopback address, tokens it will not take, a clean exit on SIGTERM
//! (within seconds even while a browser prints), and its memory after a burst of large uploads.

use crate::common;

use std::io::{Read as _, Write as _};
use std::process::Command;
use std::time::Duration;

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
    // 0.0.0.0 is no address to send: the line to share names the machine.
    let port = server.addr.rsplit(':').next().unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    assert_eq!(
        server.shared_line,
        format!(
            "decide serve: colleagues open http://{}:{port}/\n",
            host.trim()
        )
    );
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
    let (status, _) = server.request("GET /api/offers HTTP/1.1", "");
    assert_eq!(status, 401);
    let (status, _) = server.request(
        "GET /api/offers HTTP/1.1\r\nAuthorization: Bearer s3cret",
        "",
    );
    assert_eq!(status, 200);
    // The health check needs no token.
    let (status, _) = server.request("GET /healthz HTTP/1.1", "");
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

#[test]
fn a_token_that_a_header_cannot_carry_is_refused_at_start_and_one_in_a_file_is_unseen() {
    for (token, said) in [
        (" s3cret", "a space at character 1"),
        ("s3cret ", "a space at character 7"),
        ("s3 cret", "a space at character 3"),
        ("pässword", "`ä` at character 2"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_decide"))
            .args(["serve", "--addr", "127.0.0.1:0"])
            .env("DECIDE_TOKEN", token)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{token:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(said) && err.contains("DECIDE_TOKEN"),
            "{token:?}: {err}"
        );
    }
    // On the command line it works, with a warning that everyone can see it.
    let server = Server::start(&["--addr", "127.0.0.1:0", "--token", "s3cret"]);
    assert!(
        server
            .first_line
            .contains("seen by every user of this machine"),
        "{}",
        server.first_line
    );
    assert_eq!(server.stop(), Some(0));
    // From a file (its line break is not the token's), without the warning.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "s3cret\n").unwrap();
    let server = Server::start(&[
        "--addr",
        "127.0.0.1:0",
        "--token-file",
        file.to_str().unwrap(),
    ]);
    assert!(
        server.first_line.starts_with("decide serve: "),
        "{}",
        server.first_line
    );
    let (status, _) = server.request(
        "GET /api/offers HTTP/1.1\r\nAuthorization: Bearer s3cret",
        "",
    );
    assert_eq!(status, 200);
    let (status, _) = server.request("GET /api/offers HTTP/1.1", "");
    assert_eq!(status, 401);
    assert_eq!(server.stop(), Some(0));
    std::fs::write(&file, "s3cret \n").unwrap();
    let out = common::run(&["serve", "--token-file", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the token file"));
}

/// The answers of a whole questionnaire, as the page posts them.
const ANSWERS: &str = "_lang=en&name=Support+chat&workload.task=inference&workload.model_params_b=13B&usage.gpus=2&usage.hours_per_gpu_month=24%2F7&budget.monthly_cny=20000&job=no";

#[cfg(unix)]
#[test]
fn sigterm_while_a_browser_prints_stops_it_and_the_server_within_seconds() {
    use std::os::unix::fs::PermissionsExt;
    // A "browser" that takes its time: the server's printer waits up to 120 s for one.
    let dir = tempfile::tempdir().unwrap();
    let browser = dir.path().join("slow-browser");
    let started = dir.path().join("started");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\ntouch '{}'\nexec sleep 100\n", started.display()),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_fonts, path) = common::fonts_for_chinese("WenQuanYi Micro Hei\n");
    let server = Server::start_with(
        &["--addr", "127.0.0.1:0", "--as-of", common::AS_OF],
        &[
            ("DECIDE_BROWSER", browser.to_str().unwrap()),
            ("PATH", path.as_str()),
        ],
    );
    let addr = server.addr.clone();
    let download = std::thread::spawn(move || {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "POST /download/memo.pdf HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{ANSWERS}",
            ANSWERS.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    });
    let wait = std::time::Instant::now();
    while !started.exists() {
        assert!(
            wait.elapsed() < Duration::from_secs(30),
            "the browser never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, took) = server.stop_within(Duration::from_secs(20));
    assert_eq!(code, Some(0), "the server did not exit within 20 s");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let answer = download.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("stopping"), "{answer}");
}

/// The resident size of process `pid`, in bytes (Linux).
#[cfg(target_os = "linux")]
fn resident(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// A profile file of about `size` bytes: an example, a long name, and comments.
fn large_profile(size: usize) -> String {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml"),
    )
    .unwrap();
    let mut text = example.replacen("name: ", &format!("name: {} ", "&<".repeat(40)), 1);
    while text.len() < size {
        text.push_str("# a note the buyer kept with the profile, of no weight to the decision\n");
    }
    text
}

/// `profile` uploaded to the page as a browser sends the upload form: the status and the page.
fn upload(server: &Server, profile: &str) -> (u16, String) {
    let boundary = "decide-serve-test";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"_lang\"\r\n\r\nen\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"p.yaml\"\r\n\
         Content-Type: application/yaml\r\n\r\n{profile}\r\n--{boundary}--\r\n"
    );
    server.request(
        &format!("POST /upload HTTP/1.1\r\nContent-Type: multipart/form-data; boundary={boundary}"),
        &body,
    )
}

#[cfg(target_os = "linux")]
#[test]
fn answers_are_the_size_of_what_they_show_and_memory_comes_back_after_64_large_uploads() {
    // 64 at once from one address: as a proxy in front of the server would send them.
    let server = Server::start(&[
        "--addr",
        "127.0.0.1:0",
        "--as-of",
        common::AS_OF,
        "--connections-per-client",
        "256",
    ]);
    let profile = large_profile(900 * 1024);
    // Warmed up: the graph compiled, the pools started.
    for _ in 0..4 {
        let (status, page) = upload(&server, &profile);
        assert_eq!(status, 200, "{page}");
    }
    let rest = resident(server.pid());
    let server = std::sync::Arc::new(server);
    let mut most = 0usize;
    let uploads: Vec<_> = (0..64)
        .map(|_| {
            let (server, profile) = (server.clone(), profile.clone());
            // Told to come back (more bodies than the server reads at once), it comes back.
            std::thread::spawn(move || {
                for _ in 0..600 {
                    let (status, page) = upload(&server, &profile);
                    if status != 503 {
                        return (status, page);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                (503, "still turned away after a minute".to_owned())
            })
        })
        .collect();
    let mut peak = rest;
    for u in uploads {
        peak = peak.max(resident(server.pid()));
        let (status, page) = u.join().unwrap();
        assert_eq!(status, 200, "{}", &page[..page.len().min(2000)]);
        most = most.max(page.len());
    }
    // The page links its memo: an answer is far smaller than the upload, not 40 times it.
    assert!(
        most < profile.len(),
        "a {} byte page for a {} byte upload",
        most,
        profile.len()
    );
    std::thread::sleep(Duration::from_secs(1));
    let after = resident(server.pid());
    eprintln!(
        "resident: {} MiB at rest, {} MiB at the peak seen, {} MiB after 64 uploads of {} KiB",
        rest >> 20,
        peak >> 20,
        after >> 20,
        profile.len() >> 10
    );
    // Back near rest: what 64 uploads leave behind is the memos kept for the frames (32 MiB at
    // most; one here), not the uploads (glibc's malloc kept 45-70 MiB of them before the server
    // fixed its mmap threshold; 0.6-0.9 GB before the page linked its memo).
    assert!(
        after < rest + (24 << 20),
        "{} MiB after, {} MiB at rest",
        after >> 20,
        rest >> 20
    );
    let server = std::sync::Arc::into_inner(server).unwrap();
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn a_client_over_its_connections_is_told_so_and_the_others_are_served() {
    let server = Server::start(&["--addr", "127.0.0.1:0", "--connections-per-client", "4"]);
    let open: Vec<_> = (0..4)
        .map(|_| std::net::TcpStream::connect(&server.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = server.request("GET /healthz HTTP/1.1", "");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("too many connections"), "{body}");
    drop(open);
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = server.request("GET /healthz HTTP/1.1", "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.stop(), Some(0));
}
