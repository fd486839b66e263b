//! The PDF printer's browser sees only the memo: a memo template in a `--rules` folder that
//! frames a local file, embeds one, runs a script, fetches an address or sends the page
//! elsewhere puts none of it into the PDF, through `--format pdf` and through `decide serve`'s
//! download, and no connection reaches a listener on this machine.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::common;
use super::common::server::Server;
use super::{Tools, decide_printing, fonts_conf, pdf_pages};

/// What a file outside the rules folder holds: never to be seen in a PDF.
const SECRET: &str = "SECRET-OF-THE-MACHINE-4417";
/// What the hostile template's script would write, had it run.
const RAN: &str = "A-SCRIPT-RAN-9902";

/// A listener on a loopback port that counts the connections it gets, until dropped.
struct Listener {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                counted.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        Listener { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// The embedded rules exported to `dir`, with `hostile` written into the memo template's
/// `<head>` and `<body>`.
fn hostile_rules(dir: &Path, head: &str, body: &str) {
    let out = common::run(&["rules", "export", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let template = dir.join("templates/memo.html.j2");
    let text = std::fs::read_to_string(&template).unwrap();
    let text = text
        .replacen("<head>", &format!("<head>{head}"), 1)
        .replacen("<body>", &format!("<body>{body}"), 1);
    std::fs::write(&template, text).unwrap();
}

/// The hostile parts of a template: every way a page has to reach a file, run a script or
/// call out, pointed at `secret` (a file holding [`SECRET`]) and the listener's `port`.
fn hostile(secret: &Path, port: u16) -> (String, String) {
    let file = format!("file://{}", secret.display());
    let net = format!("http://127.0.0.1:{port}");
    let head = format!(
        "<link rel=\"stylesheet\" href=\"{net}/style.css\"><link rel=\"stylesheet\" href=\"{file}\">\
         <style>@import url(\"{net}/import.css\"); body {{ background: url(\"{net}/bg.png\"); }}</style>\
         <base href=\"{net}/\">"
    );
    let body = format!(
        "<iframe src=\"{file}\" width=\"600\" height=\"200\"></iframe>\
         <object data=\"{file}\" width=\"600\" height=\"200\"></object>\
         <embed src=\"{file}\" width=\"600\" height=\"200\">\
         <img src=\"{net}/pixel.png\"><img src=\"{file}\">\
         <script>document.write(\"{RAN}\"); fetch(\"{net}/fetch\");</script>\
         <script src=\"{net}/script.js\"></script>\
         <iframe src=\"{net}/frame\"></iframe>"
    );
    (head, body)
}

/// The text of `pdf`, every page.
fn text_of(tools: &Tools, pdf: &[u8], dir: &Path) -> String {
    pdf_pages(&tools.pdftotext, pdf, dir).join("\n")
}

/// Neither the secret nor the script's words are in `text`, and the memo is.
fn assert_only_the_memo(text: &str, what: &str) {
    assert!(
        !text.contains(SECRET),
        "{what}: the local file is in the PDF:\n{text}"
    );
    assert!(!text.contains(RAN), "{what}: the script ran:\n{text}");
    assert!(
        text.contains("LoRA") || text.contains("Support chat") || text.contains("RTX"),
        "{what}: no memo in the PDF:\n{text}"
    );
}

pub fn a_hostile_template_prints_only_the_memo(tools: &Tools) {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.html");
    std::fs::write(&secret, format!("<h1>{SECRET}</h1>")).unwrap();
    let listener = Listener::start();
    let rules = dir.path().join("rules");
    let (head, body) = hostile(&secret, listener.port);
    hostile_rules(&rules, &head, &body);

    // The command line.
    let pdf = dir.path().join("memo.pdf");
    let out = print(tools, &rules, &pdf);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = text_of(tools, &std::fs::read(&pdf).unwrap(), dir.path());
    assert_only_the_memo(&text, "--format pdf");

    // The server's download, from the same rules.
    let server = Server::start_with(
        &[
            "--addr",
            "127.0.0.1:0",
            "--as-of",
            common::AS_OF,
            "--rules",
            rules.to_str().unwrap(),
        ],
        &[
            ("DECIDE_BROWSER", tools.chromium.to_str().unwrap()),
            ("FONTCONFIG_FILE", fonts_conf().to_str().unwrap()),
        ],
    );
    let pdf = download_pdf(&server);
    assert!(
        pdf.starts_with(b"%PDF-"),
        "{}",
        String::from_utf8_lossy(&pdf)
    );
    let text = text_of(tools, &pdf, dir.path());
    assert_only_the_memo(&text, "decide serve");
    assert_eq!(server.stop(), Some(0));

    // A page that sends the browser to the file instead: no PDF of the file either.
    let refresh = format!(
        "<meta http-equiv=\"refresh\" content=\"0;url=file://{}\">",
        secret.display()
    );
    let rules = dir.path().join("rules-refresh");
    hostile_rules(&rules, &refresh, "");
    let pdf = dir.path().join("refresh.pdf");
    let out = print(tools, &rules, &pdf);
    if out.status.success() {
        let text = text_of(tools, &std::fs::read(&pdf).unwrap(), dir.path());
        assert!(
            !text.contains(SECRET),
            "the refresh printed the file:\n{text}"
        );
    } else {
        // The browser printed nothing (it left the page); nothing was written.
        assert!(!pdf.exists());
    }
    // Give a late fetch the time to arrive before counting.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        listener.connections(),
        0,
        "the printer's browser reached an address on this machine"
    );
}

/// `decide examples/lora-7b-4090.yaml --rules RULES --format pdf -o PDF`.
fn print(tools: &Tools, rules: &Path, pdf: &Path) -> std::process::Output {
    decide_printing(
        &tools.chromium,
        &[
            "examples/lora-7b-4090.yaml",
            "--rules",
            rules.to_str().unwrap(),
            "--format",
            "pdf",
            "-o",
            pdf.to_str().unwrap(),
        ],
        &[("DECIDE_PDF_TIMEOUT_SECS", "30")],
    )
}

/// The questionnaire's answers posted for the PDF, as the page's button does; the body.
fn download_pdf(server: &Server) -> Vec<u8> {
    let answers = "_lang=en&name=Support+chat&workload.task=inference&workload.model_params_b=13B&usage.gpus=2&usage.hours_per_gpu_month=24%2F7&budget.monthly_cny=20000&job=no";
    let mut stream = std::net::TcpStream::connect(&server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "POST /download/memo.pdf HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{answers}",
        server.addr,
        answers.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    answer.split_off(at + 4)
}
