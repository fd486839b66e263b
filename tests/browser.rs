//! The HTML memo in a real browser: every example in both languages is opened in headless
//! Chromium, screenshotted and printed to PDF, and the PDF's text is read back with `pdftotext`.
//!
//! What is checked, per memo: the page logs nothing to the console and throws nothing; no
//! request leaves the page (the document itself is the only request); nothing is wider than an
//! 800-pixel window, nor a 360-pixel one (a wide table scrolls inside its own box), and printed
//! no table sits in a box that would cut it off; the printed PDF holds the answer line and every
//! warning title on its first page, starts each major section on a page of its own, has a sane number of pages and no
//! Markdown mark left over; a Chinese memo's PDF text is Chinese (so a CJK font was found).
//!
//! The fonts are pinned: every Chromium these tests start (and every `decide` they run, whose
//! browser inherits its environment) reads `tests/browser/fonts.conf` (`FONTCONFIG_FILE`), which
//! shows it the fonts of Debian's fonts-dejavu-core and fonts-wqy-microhei and no other, so a
//! page measures and prints the same on every machine; a test checks that the page is drawn in
//! those fonts only.
//!
//! The browser is driven over the Chrome `DevTools` protocol on a local web socket. Chromium,
//! poppler-utils and the pinned fonts come from Debian's packages, which
//! `scripts/install-browser.sh` (called by `.ci/run`) installs when they are missing. This
//! file runs its own harness (`libtest-mimic`, `harness = false`): on a machine without them
//! each browser test is reported as *ignored*, with what to install, in the test summary; under
//! CI (`CI` set) it fails instead, where an ignored browser test would hide a broken page.
//! `DECIDE_WRITE_SCREENSHOTS=1` rewrites the README's two pictures under `docs/`.
//!
//! `mod containment` prints a memo whose template in a `--rules` folder tries every way out
//! (a local file framed or embedded, a script, addresses on this machine, a refresh to a file),
//! through `--format pdf` and `decide serve`: the PDF holds the memo alone and no connection is
//! made.
//!
//! `mod fake_browser` needs no browser: a shell script stands in for one that misbehaves (leaves
//! children behind, hangs, is interrupted, floods its standard error), and `decide` must stop
//! it and everything it started, remove its scratch folder and come back within seconds.

mod common;
#[path = "browser/containment.rs"]
mod containment;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use data_encoding::BASE64;
use decide_engine::{Graph, Lang, Source};
use decide_tools::{Format, Memo};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::{Value, json};
use tungstenite::WebSocket;
use tungstenite::stream::MaybeTlsStream;

/// The example whose memo is the README's picture.
const PICTURED: &str = "pretrain-70b-job.yaml";
/// The window the page is laid out in: about an A4 page's width at 96 dpi, with margins.
const WIDTH: u32 = 800;
/// A phone's window, where a wide table must scroll inside its own box and not the page: the
/// room a wider font would take from the table at [`WIDTH`], and more.
const NARROW: u32 = 360;
/// A phone's window (an iPhone 12 to 15) and a laptop's, for the served page.
const PHONE: u32 = 390;
const DESKTOP: u32 = 1366;
/// Pages a memo may print to: more means a runaway table or a broken page break.
const MAX_PAGES: usize = 14;
/// The page's top and bottom margins in points (`@page` in `templates/memo.html.j2`: 16 mm and
/// 18 mm), where the running title and the page numbers print.
const TOP_MARGIN_PT: f64 = 16.0 / 25.4 * 72.0;
const BOTTOM_MARGIN_PT: f64 = 18.0 / 25.4 * 72.0;
/// The printed width of the page's content in CSS pixels: A4's 210 mm less 2 × 14 mm.
const PRINT_WIDTH: f64 = 182.0 / 25.4 * 96.0;
/// The least share of its writing area a page other than the last must fill.
const LEAST_FILL: f64 = 0.25;
/// Lines of other content the sign-off must share its page with.
const SIGN_OFF_COMPANY: usize = 3;

/// The fontconfig file every browser the tests start reads instead of the machine's own.
fn fonts_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/fonts.conf")
}

/// The font files `fonts.conf` pins: each of its globs that is a path (outside comments).
fn pinned_fonts() -> Vec<PathBuf> {
    let conf = std::fs::read_to_string(fonts_conf()).expect("tests/browser/fonts.conf");
    let mut text = String::new();
    let mut rest = conf.as_str();
    while let Some((before, after)) = rest.split_once("<!--") {
        text.push_str(before);
        rest = after.split_once("-->").map_or("", |(_, after)| after);
    }
    text.push_str(rest);
    text.split("<glob>")
        .skip(1)
        .filter_map(|part| part.split_once("</glob>"))
        .map(|(glob, _)| glob.trim())
        .filter(|glob| glob.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// The Debian package that brings a pinned font, by the folder it is in. (Debian 13 moved the
/// monospaced font to fonts-dejavu-mono, which its fonts-dejavu-core recommends, so that
/// `apt-get install` brings it too; `scripts/install-browser.sh` asks for it by name.)
const FONT_PACKAGES: [(&str, &str); 2] = [
    ("/usr/share/fonts/truetype/dejavu/", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/wqy/", "fonts-wqy-microhei"),
];

/// The families of the pinned fonts: the only ones a page may be drawn in.
const PINNED_FAMILIES: [&str; 5] = [
    "DejaVu Sans",
    "DejaVu Sans Mono",
    "DejaVu Serif",
    "WenQuanYi Micro Hei",
    "WenQuanYi Micro Hei Mono",
];

/// The Debian package of the pinned font `file`.
fn font_package(file: &Path) -> Option<&'static str> {
    FONT_PACKAGES
        .iter()
        .find(|(dir, _)| file.starts_with(dir))
        .map(|&(_, package)| package)
}

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// What a browser test may need from the machine.
#[derive(Clone, Copy, PartialEq)]
enum Need {
    Chromium,
    Pdftotext,
    /// The fonts `tests/browser/fonts.conf` pins, Latin and Chinese.
    Fonts,
}

/// The tools found on this machine, and what is missing with the Debian package that brings it.
struct Machine {
    chromium: Option<PathBuf>,
    pdftotext: Option<PathBuf>,
    /// The pinned font files that are not there.
    missing_fonts: Vec<PathBuf>,
}

/// The tools a browser test runs with.
struct Tools {
    chromium: PathBuf,
    pdftotext: PathBuf,
}

impl Machine {
    fn look() -> Machine {
        let chromium = std::env::var_os("CHROMIUM")
            .map(PathBuf::from)
            .or_else(|| on_path(&["chromium", "chromium-browser", "google-chrome"]));
        Machine {
            chromium,
            pdftotext: on_path(&["pdftotext"]),
            missing_fonts: pinned_fonts()
                .into_iter()
                .filter(|f| !f.is_file())
                .collect(),
        }
    }

    /// What of `needs` is missing here, as one sentence that says what to install; `None` when
    /// the test can run.
    fn missing(&self, needs: &[Need]) -> Option<String> {
        let mut missing = Vec::new();
        for need in needs {
            match need {
                Need::Chromium if self.chromium.is_none() => {
                    missing.push("Chromium: `apt-get install chromium`".to_owned());
                }
                Need::Pdftotext if self.pdftotext.is_none() => {
                    missing.push("pdftotext: `apt-get install poppler-utils`".to_owned());
                }
                Need::Fonts if !self.missing_fonts.is_empty() => {
                    let files: Vec<String> = self
                        .missing_fonts
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect();
                    let mut packages: Vec<&str> = self
                        .missing_fonts
                        .iter()
                        .map(|f| font_package(f).unwrap_or("the package that has it"))
                        .collect();
                    packages.dedup();
                    missing.push(format!(
                        "the fonts `tests/browser/fonts.conf` pins ({} missing): `apt-get \
                         install {}`",
                        files.join(", "),
                        packages.join(" ")
                    ));
                }
                _ => {}
            }
        }
        (!missing.is_empty()).then(|| {
            format!(
                "needs {}; `scripts/install-browser.sh` installs all of it",
                missing.join("; ")
            )
        })
    }

    /// A trial that runs `test` where this machine has what it `needs`. Where it has not, the
    /// trial is reported as ignored with what to install, or fails under CI (`CI` set), where
    /// an ignored browser test would hide a broken page.
    fn trial(&self, name: &str, needs: &[Need], test: fn(&Tools)) -> Trial {
        match self.missing(needs) {
            None => {
                let tools = Tools {
                    chromium: self.chromium.clone().unwrap_or_default(),
                    pdftotext: self.pdftotext.clone().unwrap_or_default(),
                };
                Trial::test(name, move || {
                    test(&tools);
                    Ok(())
                })
            }
            Some(help) if std::env::var_os("CI").is_some() => Trial::test(name, move || {
                Err(Failed::from(format!(
                    "this test {help}; under CI (`CI` set) a browser test that cannot run fails \
                     instead of being ignored"
                )))
            }),
            Some(help) => Trial::ignorable_test(name, move || Ok(Completion::ignored_with(help))),
        }
    }
}

/// What a machine lacks is said with the Debian package that brings it, and nothing is said
/// of what it has.
fn a_missing_tool_is_named_with_its_package() -> Result<(), Failed> {
    let pinned = pinned_fonts();
    // The pinned fonts: Latin and Chinese ones, each from a package the message can name.
    for needed in ["DejaVuSans.ttf", "DejaVuSansMono.ttf", "wqy-microhei.ttc"] {
        if !pinned.iter().any(|f| f.ends_with(needed)) {
            return Err(format!("fonts.conf pins no {needed}: {pinned:?}").into());
        }
    }
    if let Some(file) = pinned.iter().find(|f| font_package(f).is_none()) {
        return Err(format!("no Debian package known for {}", file.display()).into());
    }
    let bare = Machine {
        chromium: None,
        pdftotext: None,
        missing_fonts: pinned,
    };
    let all = [Need::Chromium, Need::Pdftotext, Need::Fonts];
    let help = bare
        .missing(&all)
        .ok_or("nothing missing on a bare machine")?;
    for package in [
        "chromium",
        "poppler-utils",
        "`apt-get install fonts-dejavu-core fonts-wqy-microhei`",
        "DejaVuSans.ttf",
        "install-browser.sh",
    ] {
        if !help.contains(package) {
            return Err(format!("{package} not in {help:?}").into());
        }
    }
    let only_font = Machine {
        chromium: Some(PathBuf::from("/usr/bin/chromium")),
        pdftotext: Some(PathBuf::from("/usr/bin/pdftotext")),
        ..bare
    };
    let help = only_font.missing(&all).ok_or("the font is missing")?;
    if help.contains("chromium") || help.contains("poppler") || !help.contains("fonts.conf") {
        return Err(format!("only the fonts are missing: {help:?}").into());
    }
    if only_font
        .missing(&[Need::Chromium, Need::Pdftotext])
        .is_some()
    {
        return Err("a test that needs no font can run".into());
    }
    // One Chinese font missing: its package alone is named.
    let no_chinese = Machine {
        missing_fonts: vec![PathBuf::from(
            "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        )],
        ..only_font
    };
    let help = no_chinese
        .missing(&all)
        .ok_or("the Chinese font is missing")?;
    if !help.contains("`apt-get install fonts-wqy-microhei`") || help.contains("dejavu-core") {
        return Err(format!("only the Chinese font is missing: {help:?}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let machine = Machine::look();
    let all = [Need::Chromium, Need::Pdftotext, Need::Fonts];
    let mut trials = vec![
        machine.trial(
            "chromium_draws_with_the_pinned_fonts_only",
            &[Need::Chromium, Need::Fonts],
            chromium_draws_with_the_pinned_fonts_only,
        ),
        machine.trial(
            "every_memo_opens_prints_and_reads_back_in_chromium",
            &all,
            every_memo_opens_prints_and_reads_back_in_chromium,
        ),
        machine.trial(
            "the_watch_sees_a_request_a_console_message_and_an_error",
            &[Need::Chromium],
            the_watch_sees_a_request_a_console_message_and_an_error,
        ),
        machine.trial(
            "format_pdf_prints_the_memo_with_the_browser_alone_and_in_a_batch",
            &all,
            format_pdf_prints_the_memo_with_the_browser_alone_and_in_a_batch,
        ),
    ];
    trials.push(machine.trial(
        "the_questionnaire_page_answers_downloads_and_uploads_in_chromium",
        &all,
        page::the_questionnaire_page_answers_downloads_and_uploads_in_chromium,
    ));
    trials.push(machine.trial(
        "a_hostile_template_prints_only_the_memo",
        &all,
        containment::a_hostile_template_prints_only_the_memo,
    ));
    trials.push(Trial::test(
        "a_missing_tool_is_named_with_its_package",
        a_missing_tool_is_named_with_its_package,
    ));
    #[cfg(target_os = "linux")]
    trials.extend(fake_browser::trials());
    libtest_mimic::run(&args, trials).exit();
}

/// A headless Chromium and one `DevTools` connection to it; the process is killed on drop.
struct Browser {
    child: Child,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Events that arrived while waiting for a reply: (session, method, params).
    events: Vec<(String, String, Value)>,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch(chromium: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        // The flags that keep Chromium off the network and quiet on a closed machine.
        let child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .env("FONTCONFIG_FILE", fonts_conf())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));
        let mut child = child;
        // Chromium writes its port and the browser's WebSocket path into this file once ready.
        let port_file = profile.path().join("DevToolsActivePort");
        let started = Instant::now();
        let endpoint = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Some((port, path)) = text.split_once('\n')
                && !path.trim().is_empty()
            {
                break format!("ws://127.0.0.1:{}{}", port.trim(), path.trim());
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("chromium exited at start: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "chromium did not open its DevTools port in 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let (socket, _) = tungstenite::connect(&endpoint)
            .unwrap_or_else(|e| panic!("cannot connect to {endpoint}: {e}"));
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            // A reply that never comes fails the test instead of hanging it.
            stream
                .set_read_timeout(Some(Duration::from_secs(120)))
                .unwrap();
        }
        Browser {
            child,
            socket,
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        }
    }

    /// The next message from the browser, as JSON.
    fn receive(&mut self) -> Value {
        loop {
            let message = self
                .socket
                .read()
                .unwrap_or_else(|e| panic!("no reply from chromium: {e}"));
            if let Ok(text) = message.to_text()
                && !text.is_empty()
            {
                return serde_json::from_str(text).expect("DevTools sends JSON");
            }
        }
    }

    /// Sends `method` (to a page's `session`, or to the browser) and returns its result, keeping
    /// the events that arrive meanwhile.
    fn call(&mut self, session: Option<&str>, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(tungstenite::Message::text(message.to_string()))
            .unwrap_or_else(|e| panic!("cannot send {method}: {e}"));
        loop {
            let reply = self.receive();
            if reply["id"] == json!(id) {
                assert!(
                    reply.get("error").is_none(),
                    "{method} failed: {}",
                    reply["error"]
                );
                return reply["result"].clone();
            }
            self.keep(reply);
        }
    }

    fn keep(&mut self, mut message: Value) {
        if let Some(method) = message["method"].as_str().map(str::to_owned) {
            let session = message["sessionId"].as_str().unwrap_or_default().to_owned();
            self.events
                .push((session, method, message["params"].take()));
        }
    }

    /// Waits for `method` on `session`.
    fn wait_for(&mut self, session: &str, method: &str) {
        if self
            .events
            .iter()
            .any(|(s, m, _)| s == session && m == method)
        {
            return;
        }
        loop {
            let message = self.receive();
            let found =
                message["sessionId"] == json!(session) && message["method"] == json!(method);
            self.keep(message);
            if found {
                return;
            }
        }
    }

    /// Opens `url` in a new tab laid out `WIDTH` pixels wide and returns the tab's session.
    fn open(&mut self, url: &str) -> String {
        let target = self.call(None, "Target.createTarget", &json!({"url": "about:blank"}));
        let session = self.call(
            None,
            "Target.attachToTarget",
            &json!({"targetId": target["targetId"], "flatten": true}),
        )["sessionId"]
            .as_str()
            .expect("a session")
            .to_owned();
        let s = Some(session.as_str());
        for domain in ["Page", "Runtime", "Log", "Network"] {
            self.call(s, &format!("{domain}.enable"), &json!({}));
        }
        self.resize(&session, WIDTH);
        self.call(s, "Page.navigate", &json!({"url": url}));
        self.wait_for(&session, "Page.loadEventFired");
        session
    }

    /// What went wrong on `session`'s page: console output, exceptions, log errors, and every
    /// request but the page's own.
    fn problems(&self, session: &str, url: &str) -> Vec<String> {
        let mut out = Vec::new();
        let watched = self.events.iter().any(|(s, m, p)| {
            s == session && m == "Network.requestWillBeSent" && p["request"]["url"] == json!(url)
        });
        assert!(
            watched,
            "the page's own request was not seen: the watch is blind"
        );
        for (s, method, params) in &self.events {
            if s != session {
                continue;
            }
            match method.as_str() {
                "Runtime.consoleAPICalled" => out.push(format!("console: {}", params["args"])),
                "Runtime.exceptionThrown" => {
                    out.push(format!("exception: {}", params["exceptionDetails"]));
                }
                "Log.entryAdded" if params["entry"]["level"] != json!("verbose") => {
                    out.push(format!("log: {}", params["entry"]));
                }
                "Network.requestWillBeSent" if params["request"]["url"] != json!(url) => {
                    out.push(format!("request: {}", params["request"]["url"]));
                }
                _ => {}
            }
        }
        out
    }

    /// `expression` evaluated in the page.
    fn evaluate(&mut self, session: &str, expression: &str) -> Value {
        self.call(
            Some(session),
            "Runtime.evaluate",
            &json!({"expression": expression, "returnByValue": true}),
        )["result"]["value"]
            .clone()
    }

    /// A base64 answer's `data` decoded.
    fn bytes(&mut self, session: &str, method: &str, params: &Value) -> Vec<u8> {
        let data = self.call(Some(session), method, params)["data"]
            .as_str()
            .expect("data")
            .to_owned();
        BASE64.decode(data.as_bytes()).expect("base64")
    }

    /// Lays `session`'s page out in a window `width` pixels wide.
    fn resize(&mut self, session: &str, width: u32) {
        self.call(
            Some(session),
            "Emulation.setDeviceMetricsOverride",
            &json!({"width": width, "height": 1100, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// Nothing on `session`'s page, laid out `width` pixels wide, is wider than the window:
    /// else `what` fails with the innermost elements that reach past its edge.
    fn fits(&mut self, session: &str, width: u32, what: &str) {
        let overflow = self.evaluate(
            session,
            "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        if overflow != json!(0) {
            let wide = self.evaluate(session, WIDEST);
            panic!("{what}: {overflow} pixels wider than a {width}-pixel window: {wide}");
        }
    }

    /// The families of the fonts the browser draws the text of `session`'s page in: every
    /// element's in the body. (On a `file:` page this logs an error of `DevTools`' own: ask
    /// after [`Browser::problems`].)
    fn fonts_used(&mut self, session: &str) -> BTreeSet<String> {
        let s = Some(session);
        self.call(s, "DOM.enable", &json!({}));
        self.call(s, "CSS.enable", &json!({}));
        let root = self.call(s, "DOM.getDocument", &json!({"depth": 0}))["root"]["nodeId"].clone();
        let nodes = self.call(
            s,
            "DOM.querySelectorAll",
            &json!({"nodeId": root, "selector": "body, body *"}),
        )["nodeIds"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut families = BTreeSet::new();
        for node in nodes {
            let used = self.call(s, "CSS.getPlatformFontsForNode", &json!({"nodeId": node}));
            for font in used["fonts"].as_array().into_iter().flatten() {
                families.insert(font["familyName"].as_str().unwrap_or_default().to_owned());
            }
        }
        families
    }

    fn close(&mut self, session: &str) {
        let target =
            self.call(Some(session), "Target.getTargetInfo", &json!({}))["targetInfo"]["targetId"]
                .clone();
        self.call(None, "Target.closeTarget", &json!({"targetId": target}));
        self.events.retain(|(s, _, _)| s != session);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` without any white space: `pdftotext` breaks lines where the page did, and between
/// two Chinese characters a line break is no space at all.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c) || ('\u{3000}'..='\u{303f}').contains(&c)
}

/// The text of a PDF, one entry per page.
fn pdf_pages(pdftotext: &Path, pdf: &[u8], dir: &Path) -> Vec<String> {
    let file = dir.join("memo.pdf");
    std::fs::write(&file, pdf).unwrap();
    let out = Command::new(pdftotext)
        .arg("-enc")
        .arg("UTF-8")
        .arg(&file)
        .arg("-")
        .output()
        .expect("pdftotext runs");
    assert!(out.status.success(), "pdftotext: {out:?}");
    let text = String::from_utf8(out.stdout).expect("UTF-8 text");
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    pages
}

/// One line of a printed page, as `pdftotext -bbox-layout` places it (points from the top).
struct Line {
    top: f64,
    bottom: f64,
    text: String,
}

/// A printed page: its height and lines, split into the top margin (the running title), the
/// writing area and the bottom margin (the page numbers).
struct Page {
    height: f64,
    header: Vec<Line>,
    body: Vec<Line>,
    footer: Vec<Line>,
}

impl Page {
    fn text(lines: &[Line]) -> String {
        lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The share of the writing area that the page's body fills, from the top margin down.
    fn fill(&self) -> f64 {
        let bottom = self
            .body
            .iter()
            .map(|l| l.bottom)
            .fold(TOP_MARGIN_PT, f64::max);
        (bottom - TOP_MARGIN_PT) / (self.height - TOP_MARGIN_PT - BOTTOM_MARGIN_PT)
    }
}

/// The value of attribute `name` in the tag `tag` (`name="1.5"`).
fn attribute(tag: &str, name: &str) -> f64 {
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"));
    let rest = &tag[at + name.len() + 3..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

/// The pages of a PDF with their lines placed (`pdftotext -bbox-layout`, whose XHTML holds a
/// `<page>` per page, a `<line>` per line and a `<word>` per word).
fn pdf_layout(pdftotext: &Path, file: &Path) -> Vec<Page> {
    let out = Command::new(pdftotext)
        .args(["-bbox-layout", "-enc", "UTF-8"])
        .arg(file)
        .arg("-")
        .output()
        .expect("pdftotext runs");
    assert!(out.status.success(), "pdftotext -bbox-layout: {out:?}");
    let xhtml = String::from_utf8(out.stdout).expect("UTF-8");
    let mut pages = Vec::new();
    for chunk in xhtml.split("<page ").skip(1) {
        let height = attribute(&chunk[..chunk.find('>').unwrap()], "height");
        let mut page = Page {
            height,
            header: Vec::new(),
            body: Vec::new(),
            footer: Vec::new(),
        };
        for line in chunk.split("<line ").skip(1) {
            let tag = &line[..line.find('>').unwrap()];
            let words: Vec<String> = line
                .split("<word ")
                .skip(1)
                .map(|w| {
                    let text = &w[w.find('>').unwrap() + 1..w.find("</word>").unwrap()];
                    text.replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&quot;", "\"")
                        .replace("&apos;", "'")
                        .replace("&amp;", "&")
                })
                .collect();
            let line = Line {
                top: attribute(tag, "yMin"),
                bottom: attribute(tag, "yMax"),
                text: words.join(" "),
            };
            if line.bottom <= TOP_MARGIN_PT {
                page.header.push(line);
            } else if line.top >= height - BOTTOM_MARGIN_PT {
                page.footer.push(line);
            } else {
                page.body.push(line);
            }
        }
        pages.push(page);
    }
    pages
}

/// "Page N of M" as the words files write it, without spaces.
fn page_of(lang: Lang, page: usize, pages: usize) -> String {
    match lang {
        Lang::Zh => format!("第{page}页，共{pages}页"),
        Lang::En => format!("Page{page}of{pages}"),
    }
}

/// The table headers whose text the print layout stacks one character a line: each header's
/// characters grouped by the line they sit on (the top of each one's box), as
/// `text: lines`, for each header on two lines or more where some line holds a single letter.
const STACKED_HEADERS: &str = "Array.from(document.querySelectorAll('th')).map(th => { \
    const lines = new Map(); const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT); \
    const range = document.createRange(); \
    for (let node = walker.nextNode(); node; node = walker.nextNode()) { \
      for (let i = 0; i < node.data.length; i++) { \
        if (/\\s/.test(node.data[i])) continue; \
        range.setStart(node, i); range.setEnd(node, i + 1); \
        const box = range.getBoundingClientRect(); if (box.height === 0) continue; \
        const top = Math.round(box.top); lines.set(top, (lines.get(top) || '') + node.data[i]); } } \
    return [th.textContent, Array.from(lines.values())]; }) \
    .filter(([text, lines]) => lines.length > 1 && lines.some(l => l.length === 1 && /[\\p{L}]/u.test(l))) \
    .map(([text, lines]) => text + ': ' + lines.join(' / '))";

/// The tables that sit in a box that scrolls or clips (overflow other than visible): on paper
/// such a box cuts off what does not fit it. Each as its first header's text.
const BOXED_TABLES: &str = "Array.from(document.querySelectorAll('table')).filter(t => { \
    for (let e = t.parentElement; e; e = e.parentElement) { \
      if (getComputedStyle(e).overflowX !== 'visible') return true; } \
    return false; }).map(t => (t.querySelector('th') || t).textContent.slice(0, 60))";

/// The ids the page prints as `code` (offer and node ids, at least six characters).
const IDS: &str = "Array.from(new Set(Array.from(document.querySelectorAll('code')).map(c => \
    c.textContent).filter(t => /^[A-Za-z0-9][A-Za-z0-9_.-]{5,}$/.test(t) && /[-_]/.test(t))))";

/// The `code` elements (ids) that the print layout breaks other than after a `-`, an `_` or a
/// space: each as its text with `|` where a line ends.
const BROKEN_CODE: &str = "Array.from(document.querySelectorAll('code')).map(code => { \
    const chars = []; const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT); \
    const range = document.createRange(); \
    for (let node = walker.nextNode(); node; node = walker.nextNode()) { \
      for (let i = 0; i < node.data.length; i++) { \
        range.setStart(node, i); range.setEnd(node, i + 1); \
        const box = range.getBoundingClientRect(); \
        if (box.height > 0) chars.push([node.data[i], box.top, box.height]); } } \
    let shown = ''; let bad = false; \
    chars.forEach(([c, top, height], i) => { \
      if (i > 0 && top > chars[i - 1][1] + height / 2) { \
        shown += '|'; if (!/[-_\\s]/.test(chars[i - 1][0])) bad = true; } \
      shown += c; }); \
    return bad ? shown : null; }).filter(x => x)";

/// The pieces of ids that `text` (a PDF's text) shows broken inside a word: a line that ends
/// with the start of an id (past its first `-` or `_`) that stops between two letters or digits
/// of the id, or starts with the end of an id (from before its last `-` or `_`) that begins
/// between two.
fn broken_ids(text: &str, ids: &[String]) -> Vec<String> {
    let is_separator = |c: char| c == '-' || c == '_';
    let trim = |t: &str| {
        t.trim_matches(|c: char| !c.is_ascii_alphanumeric() && !is_separator(c))
            .to_owned()
    };
    let mut found = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (Some(first), Some(last)) = (words.first(), words.last()) else {
            continue;
        };
        let (first, last) = (trim(first), trim(last));
        for id in ids {
            let inside_word = |at: usize| {
                id[..at].ends_with(|c: char| c.is_ascii_alphanumeric())
                    && id[at..].starts_with(|c: char| c.is_ascii_alphanumeric())
            };
            if last.len() < id.len()
                && id.starts_with(&last)
                && last.contains(is_separator)
                && inside_word(last.len())
            {
                found.push(format!("{line:?} ends inside {id}"));
            }
            if first.len() < id.len()
                && id.ends_with(&first)
                && first.contains(is_separator)
                && inside_word(id.len() - first.len())
            {
                found.push(format!("{line:?} starts inside {id}"));
            }
        }
    }
    found
}

/// The innermost elements that reach past the window's right edge, as `tag.class: text`.
const WIDEST: &str = "Array.from(document.body.querySelectorAll('*')).filter(e => \
    e.getBoundingClientRect().right > document.documentElement.clientWidth \
    && !Array.from(e.children).some(c => c.getBoundingClientRect().right > \
    document.documentElement.clientWidth)).slice(0, 5).map(e => e.tagName + '.' + e.className \
    + ': ' + e.textContent.slice(0, 60))";

/// The Markdown memo's answer line, without its marks: what the HTML memo must print on page 1.
fn answer_line(markdown: &str) -> String {
    let line = markdown
        .lines()
        .find(|l| l.starts_with("> **"))
        .expect("the Markdown memo opens with its answer");
    line.trim_start_matches("> ").replace("**", "")
}

/// Nothing on the page is wider than the window, at [`WIDTH`] and at [`NARROW`]: a table too
/// wide scrolls inside its own box. The page is left at [`WIDTH`].
fn fits_both_windows(browser: &mut Browser, session: &str, name: &str) {
    browser.fits(session, WIDTH, name);
    browser.resize(session, NARROW);
    browser.fits(session, NARROW, name);
    browser.resize(session, WIDTH);
}

fn every_memo_opens_prints_and_reads_back_in_chromium(tools: &Tools) {
    let Tools {
        chromium,
        pdftotext,
    } = tools;
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::embedded().unwrap();
    let mut browser = Browser::launch(chromium);
    let write_pictures = std::env::var_os("DECIDE_WRITE_SCREENSHOTS").is_some();
    let mut printed = 0;
    for lang in [Lang::En, Lang::Zh] {
        let graph = Graph::compile_in(common::policy(), lang).unwrap();
        for path in common::examples() {
            let name = format!(
                "{} ({})",
                path.file_name().unwrap().to_string_lossy(),
                lang.code()
            );
            let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
            let (profile, evaluation) =
                decide_tools::decide(&graph, &source, common::as_of()).unwrap();
            let render = |format| {
                memo.render(&graph, &profile, &evaluation, format)
                    .unwrap_or_else(|e| panic!("{name}: {}", e.render()))
            };
            let page = render(Format::Html);
            let answer = answer_line(&render(Format::Markdown));
            let file = dir.path().join(format!("memo.{}.html", lang.code()));
            std::fs::write(&file, &page).unwrap();
            let url = format!("file://{}", file.display());

            let session = browser.open(&url);
            fits_both_windows(&mut browser, &session, &name);
            let png = browser.bytes(
                &session,
                "Page.captureScreenshot",
                &json!({"format": "png"}),
            );
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: a PNG");
            if write_pictures && path.ends_with(PICTURED) {
                let picture = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("docs")
                    .join(format!("memo.{}.png", lang.code()));
                std::fs::write(picture, &png).unwrap();
            }
            let pdf = browser.bytes(
                &session,
                "Page.printToPDF",
                &json!({"printBackground": true, "preferCSSPageSize": true}),
            );
            let (title, sign_off, ids) = check_print_layout(&mut browser, &session, &name);
            let problems = browser.problems(&session, &url);
            assert!(problems.is_empty(), "{name}: {problems:#?}");
            // Last: asking for the fonts has `DevTools` log of its own on a `file:` page.
            let used = browser.fonts_used(&session);
            assert!(
                unpinned(&used).is_empty(),
                "{name}: drawn in fonts not pinned: {:?}",
                unpinned(&used)
            );
            browser.close(&session);

            assert!(pdf.starts_with(b"%PDF-"), "{name}: a PDF");
            let pages = pdf_pages(pdftotext, &pdf, dir.path());
            let layout = pdf_layout(pdftotext, &dir.path().join("memo.pdf"));
            assert_eq!(
                layout.len(),
                pages.len(),
                "{name}: pages with and without layout"
            );
            check_printed_pages(&name, lang, &layout, &title);
            check_sign_off(&name, &layout, &sign_off, &title, &evaluation.decision);
            let text = pages.concat();
            check_pdf_ids(&name, &text, ids);
            let first = squeezed(&pages[0]);
            assert!(
                first.contains(&squeezed(&answer)),
                "{name}: the answer {answer:?} on page 1 of the PDF:\n{}",
                pages[0]
            );
            for w in &evaluation.decision.warnings {
                assert!(
                    first.contains(&squeezed(&w.title)),
                    "{name}: warning {:?} on page 1 of the PDF:\n{}",
                    w.title,
                    pages[0]
                );
            }
            assert!(
                !text.contains("**") && !text.contains('`'),
                "{name}: a Markdown mark printed as text"
            );
            if lang == Lang::Zh {
                let cjk = text.chars().filter(|&c| is_cjk(c)).count();
                let latin = text.chars().filter(char::is_ascii_alphabetic).count();
                assert!(
                    cjk > latin,
                    "{name}: {cjk} Chinese characters against {latin} Latin letters"
                );
            }
            printed += 1;
        }
    }
    assert!(printed >= 2 * 10, "every example in both languages");
}

/// Lays the page out as it prints (print media, the A4 writing area's width), checks that no
/// table sits in a box that would cut it off, no table header stacks one letter a line and no
/// id breaks inside a word, and returns the memo's
/// title, the sign-off's heading and line, and the ids the page prints.
fn check_print_layout(browser: &mut Browser, session: &str, name: &str) -> (String, Value, Value) {
    // The page laid out as it prints (print media, the A4 writing area's width).
    browser.call(
        Some(session),
        "Emulation.setEmulatedMedia",
        &json!({"media": "print"}),
    );
    browser.call(
        Some(session),
        "Emulation.setDeviceMetricsOverride",
        &json!({"width": PRINT_WIDTH.floor(), "height": 1100, "deviceScaleFactor": 1, "mobile": false}),
    );
    let boxed = browser.evaluate(session, BOXED_TABLES);
    assert_eq!(
        boxed,
        json!([]),
        "{name}: printed, tables in a box that would cut them off"
    );
    let stacked = browser.evaluate(session, STACKED_HEADERS);
    assert_eq!(
        stacked,
        json!([]),
        "{name}: table headers printed one character a line"
    );
    let title = browser.evaluate(session, "document.querySelector('h1').textContent");
    let title = title.as_str().expect("the memo's title").to_owned();
    let sign_off = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('.sign-off h2, .sign-off p')).map(e => e.textContent)",
    );
    let ids = browser.evaluate(session, IDS);
    let broken = browser.evaluate(session, BROKEN_CODE);
    assert_eq!(broken, json!([]), "{name}: ids broken inside a word");
    (title, sign_off, ids)
}

/// No line of the PDF's `text` ends or starts inside one of the `ids` the page prints.
fn check_pdf_ids(name: &str, text: &str, ids: Value) {
    let ids: Vec<String> = serde_json::from_value(ids).expect("ids");
    assert!(
        ids.iter().any(|id| id.contains('-')),
        "{name}: the page prints no offer id: {ids:?}"
    );
    let broken = broken_ids(text, &ids);
    assert!(
        broken.is_empty(),
        "{name}: ids broken inside a word in the PDF: {broken:#?}"
    );
}

/// At most [`MAX_PAGES`] pages; every page has the memo's title in its top margin and "page N
/// of M" in its bottom margin, and every page but the last fills at least [`LEAST_FILL`] of its
/// writing area.
fn check_printed_pages(name: &str, lang: Lang, layout: &[Page], title: &str) {
    let count = layout.len();
    assert!(count <= MAX_PAGES, "{name}: {count} pages");
    for (i, page) in layout.iter().enumerate() {
        let header = squeezed(&Page::text(&page.header));
        let footer = squeezed(&Page::text(&page.footer));
        assert!(
            header.contains(&squeezed(title)),
            "{name}: page {} has no running title {title:?} in its top margin: {header:?}",
            i + 1
        );
        let numbered = page_of(lang, i + 1, count);
        assert!(
            footer.contains(&numbered),
            "{name}: page {} has no {numbered:?} in its bottom margin: {footer:?}",
            i + 1
        );
        if i + 1 < count {
            assert!(
                page.fill() >= LEAST_FILL,
                "{name}: page {} of {count} is near-empty ({:.0}% of it, {} lines):\n{}",
                i + 1,
                page.fill() * 100.0,
                page.body.len(),
                Page::text(&page.body)
            );
        }
    }
}

/// The sign-off (its heading `sign_off[0]` and the line `sign_off[1]` that names the memo)
/// carries the memo's title, date and both revisions, and shares its page with at least
/// [`SIGN_OFF_COMPANY`] lines of what comes before it.
fn check_sign_off(
    name: &str,
    layout: &[Page],
    sign_off: &Value,
    title: &str,
    decision: &decide_engine::Decision,
) {
    let (Some(heading), Some(line)) = (sign_off[0].as_str(), sign_off[1].as_str()) else {
        panic!("{name}: no sign-off heading and line: {sign_off}");
    };
    let line = squeezed(line);
    let profile_revision = decision.audit.profile_revision.clone().unwrap_or_default();
    for part in [
        title,
        &decision.as_of,
        &decision.policy.revision,
        &profile_revision,
    ] {
        assert!(
            line.contains(&squeezed(part)),
            "{name}: the sign-off does not name {part:?}: {line}"
        );
    }
    // pdftotext may read the line's bold title apart from the rest: each part is looked for on
    // the page (the one with the sign-off's heading; page 1's facts show the revisions too).
    let on = layout
        .iter()
        .position(|p| {
            let body = squeezed(&Page::text(&p.body));
            p.body
                .iter()
                .any(|l| squeezed(&l.text) == squeezed(heading))
                && body.contains(&decision.policy.revision)
                && body.contains(&profile_revision)
        })
        .unwrap_or_else(|| panic!("{name}: the sign-off's revisions on no one page"));
    let page = squeezed(&Page::text(&layout[on].body));
    for part in [title, &decision.as_of, heading] {
        assert!(
            page.contains(&squeezed(part)),
            "{name}: {part:?} not on the sign-off's page {}",
            on + 1
        );
    }
    let body = &layout[on].body;
    let at = body
        .iter()
        .rposition(|l| squeezed(&l.text) == squeezed(heading))
        .unwrap_or_else(|| panic!("{name}: no sign-off heading on page {}", on + 1));
    assert!(
        at >= SIGN_OFF_COMPANY,
        "{name}: the sign-off stands nearly alone on page {} ({at} lines before it):\n{}",
        on + 1,
        Page::text(body)
    );
}

/// The families of `used` that are not pinned.
fn unpinned(used: &BTreeSet<String>) -> Vec<&String> {
    used.iter()
        .filter(|f| !PINNED_FAMILIES.contains(&f.as_str()))
        .collect()
}

/// Every Chromium the tests start sees the pinned fonts and no other of the machine's: text
/// asked for in fonts a machine may well have (Liberation Sans, Arial's stand-in in
/// fonts-liberation; Noto Sans CJK, the usual Chinese font; the condensed faces fonts-dejavu-extra
/// puts beside the pinned ones) is drawn in a pinned font all the same.
fn chromium_draws_with_the_pinned_fonts_only(tools: &Tools) {
    let dir = tempfile::tempdir().unwrap();
    let families = [
        "\"Liberation Sans\"",
        "Arial",
        "Helvetica",
        "\"Noto Sans CJK SC\"",
        "\"Noto Sans\"",
        "\"DejaVu Sans Condensed\"",
        "\"Droid Sans Fallback\"",
        "\"Segoe UI\"",
        "serif",
        "sans-serif",
        "monospace",
        "system-ui",
    ];
    let mut body = String::new();
    for f in families {
        let _ = write!(
            body,
            "<p style='font-family: {f}'>Quartz glyphs 0123 ¥ → 采购备忘录</p>"
        );
    }
    let file = dir.path().join("fonts.html");
    std::fs::write(
        &file,
        format!(
            "<!DOCTYPE html><html lang=\"en\"><meta charset=\"utf-8\"><body>{body}</body></html>"
        ),
    )
    .unwrap();
    let mut browser = Browser::launch(&tools.chromium);
    let session = browser.open(&format!("file://{}", file.display()));
    let used = browser.fonts_used(&session);
    assert!(
        unpinned(&used).is_empty(),
        "drawn in fonts {} does not pin: {:?}",
        fonts_conf().display(),
        unpinned(&used)
    );
    for family in ["DejaVu Sans", "WenQuanYi Micro Hei"] {
        assert!(used.contains(family), "no text drawn in {family}: {used:?}");
    }
}

fn the_watch_sees_a_request_a_console_message_and_an_error(tools: &Tools) {
    let chromium = &tools.chromium;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("leaky.html");
    std::fs::write(
        &file,
        "<!DOCTYPE html><html><body><img src=\"http://192.0.2.1/x.png\">\
         <script>console.log('hello'); undefined_function();</script></body></html>",
    )
    .unwrap();
    let url = format!("file://{}", file.display());
    let mut browser = Browser::launch(chromium);
    let session = browser.open(&url);
    let problems = browser.problems(&session, &url);
    for expected in [
        "request: \"http://192.0.2.1/x.png\"",
        "console:",
        "exception:",
    ] {
        assert!(
            problems.iter().any(|p| p.starts_with(expected)),
            "{expected} not among {problems:#?}"
        );
    }
}

/// `decide ARGS --as-of AS_OF` from the repository, printing with `chromium` in the pinned
/// fonts, with `env` set too.
fn decide_printing(chromium: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_decide"))
        .args(args)
        .args(["--as-of", common::AS_OF])
        .env("DECIDE_BROWSER", chromium)
        .env("FONTCONFIG_FILE", fonts_conf())
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn format_pdf_prints_the_memo_with_the_browser_alone_and_in_a_batch(tools: &Tools) {
    let Tools {
        chromium,
        pdftotext,
    } = tools;
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = decide_printing(chromium, args, &[]);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let pdf = dir.path().join("memo.pdf");
    let example = "examples/pretrain-70b-job.yaml";
    run(&[
        example,
        "--format",
        "pdf",
        "-o",
        pdf.to_str().unwrap(),
        "--lang",
        "zh",
    ]);
    let markdown = common::run_ok(&[example, "--as-of", common::AS_OF, "--lang", "zh"]);
    let pages = pdf_pages(pdftotext, &std::fs::read(&pdf).unwrap(), dir.path());
    assert!(
        squeezed(&pages[0]).contains(&squeezed(&answer_line(&markdown))),
        "the answer on page 1:\n{}",
        pages[0]
    );

    let out = dir.path().join("memos");
    run(&[
        "batch",
        example,
        "examples/lora-7b-4090.yaml",
        "--format",
        "pdf",
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["lora-7b-4090.pdf", "pretrain-70b-job.pdf"]);
    for name in names {
        let bytes = std::fs::read(out.join(&name)).unwrap();
        assert!(bytes.starts_with(b"%PDF-"), "{name}");
    }
}

/// `decide --format pdf` with a fake browser (a shell script named by `DECIDE_BROWSER`) that
/// misbehaves as a real one can: it leaves a child holding its standard error, hangs, is
/// interrupted, or floods standard error. No Chromium needed; each test takes a few seconds.
/// Linux: the tests read `/proc` and use `setsid` and GNU `stat`.
#[cfg(target_os = "linux")]
mod fake_browser {
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// The example printed, and how long any one `decide` may take before the test gives up.
    const EXAMPLE: &str = "examples/lora-7b-4090.yaml";
    const LIMIT: Duration = Duration::from_secs(20);

    /// A test's folders: `state` for the script and the pids it writes, `tmp` as `decide`'s
    /// `TMPDIR` (where its scratch folder goes), `out` for the output. The `sleep`s the script
    /// started are killed when it is dropped, whatever the test found.
    struct Fake {
        state: tempfile::TempDir,
        tmp: tempfile::TempDir,
        out: tempfile::TempDir,
    }

    impl Fake {
        /// `body` as a `/bin/sh` script; `$STATE` in it is the state folder. A `pid NAME`
        /// function records `$!` in `$STATE/NAME.pid` (whole, once written).
        fn new(body: &str) -> Fake {
            let fake = Fake {
                state: tempfile::tempdir().unwrap(),
                tmp: tempfile::tempdir().unwrap(),
                out: tempfile::tempdir().unwrap(),
            };
            let script = format!(
                "#!/bin/sh\nSTATE='{}'\npid() {{ echo \"$2\" > \"$STATE/$1.tmp\" && mv \"$STATE/$1.tmp\" \"$STATE/$1.pid\"; }}\n{body}\n",
                fake.state.path().display()
            );
            let path = fake.browser();
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            // The fonts of this machine are not the test's: fontconfig answers as told.
            std::fs::create_dir(fake.state.path().join("bin")).unwrap();
            fake.fonts_for_chinese("WenQuanYi Micro Hei\n");
            fake
        }

        /// Makes `fc-list :lang=zh family` list `listed` (empty: no font covers Chinese).
        fn fonts_for_chinese(&self, listed: &str) {
            super::common::write_fc_list(&self.state.path().join("bin"), listed);
        }

        fn browser(&self) -> PathBuf {
            self.state.path().join("browser")
        }

        /// `decide` with `args` and this browser, from the project's folder.
        fn command(&self, args: &[&str]) -> Command {
            let mut command = Command::new(env!("CARGO_BIN_EXE_decide"));
            command
                .args(args)
                .args(["--as-of", super::common::AS_OF])
                .env("DECIDE_BROWSER", self.browser())
                .env("PATH", self.path())
                .env("TMPDIR", self.tmp.path())
                .env_remove("DECIDE_PDF_TIMEOUT_SECS")
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(self.state.path().join("stderr")).unwrap());
            command
        }

        /// `PATH` with the fake `fc-list` first.
        fn path(&self) -> String {
            super::common::path_with(&self.state.path().join("bin"))
        }

        /// The pid the script recorded as `name`, waiting up to [`LIMIT`] for it.
        fn pid(&self, name: &str) -> u32 {
            let file = self.state.path().join(format!("{name}.pid"));
            let started = Instant::now();
            loop {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    return text.trim().parse().unwrap();
                }
                assert!(
                    started.elapsed() < LIMIT,
                    "the fake browser never wrote {name}"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }

        /// What `decide` wrote to standard error.
        fn stderr(&self) -> String {
            std::fs::read_to_string(self.state.path().join("stderr")).unwrap()
        }

        /// What is left in `decide`'s `TMPDIR`.
        fn scratch_left(&self) -> Vec<String> {
            names(self.tmp.path())
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            for entry in std::fs::read_dir(self.state.path()).unwrap().flatten() {
                let Ok(text) = std::fs::read_to_string(entry.path()) else {
                    continue;
                };
                let is_pid = entry.path().extension().is_some_and(|e| e == "pid");
                if let (true, Ok(pid)) = (is_pid, text.trim().parse::<u32>()) {
                    // Only a `sleep` the script started: never a process that reused the pid.
                    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    if cmdline.starts_with(b"sleep\0") && alive(pid) {
                        let _ = Command::new("kill")
                            .args(["-KILL", &pid.to_string()])
                            .status();
                    }
                }
            }
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Whether process `pid` runs (a zombie, dead but not yet reaped by its new parent, does not).
    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            !state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X'))
        })
    }

    /// Waits up to two seconds for `pid` to end (a killed process ends at once, but its
    /// parent may need a moment to notice); whether it did.
    fn ends(pid: u32) -> bool {
        let started = Instant::now();
        while alive(pid) {
            if started.elapsed() > Duration::from_secs(2) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Runs `command` for at most [`LIMIT`] (killing it after that): its exit code and how
    /// long it took.
    fn run(command: &mut Command, during: impl FnOnce(u32)) -> (Option<i32>, Duration) {
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        during(child.id());
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return (status.code(), started.elapsed());
            }
            if started.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("decide did not end in {} s", LIMIT.as_secs());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The fake browser's tests, each named as `fake_browser::NAME`.
    pub fn trials() -> Vec<libtest_mimic::Trial> {
        macro_rules! trials {
            ($($test:ident),* $(,)?) => {
                vec![$(libtest_mimic::Trial::test(
                    concat!("fake_browser::", stringify!($test)),
                    || {
                        $test();
                        Ok(())
                    },
                )),*]
            };
        }
        trials![
            a_browser_that_exits_without_a_pdf_is_not_waited_for_through_its_children,
            a_hung_browser_is_stopped_at_the_timeout_with_its_children,
            a_bad_timeout_is_a_usage_error,
            sigint_while_printing_stops_the_browser_and_keeps_the_old_file,
            sigterm_while_a_batch_prints_stops_the_browser_and_the_batch,
            a_flood_on_standard_error_gives_a_short_message,
            the_scratch_folder_is_private_and_removed_and_leftovers_are_stopped,
            a_chinese_memo_without_a_chinese_font_is_refused_before_the_browser_starts,
        ]
    }

    /// The arguments of `decide` printing one PDF to `out`.
    fn printing(out: &str) -> [&str; 5] {
        [EXAMPLE, "--format", "pdf", "-o", out]
    }

    fn a_browser_that_exits_without_a_pdf_is_not_waited_for_through_its_children() {
        // The first child stays in the browser's process group, the second leaves it (and so
        // cannot be killed with it): both hold its standard error open.
        let fake = Fake::new(
            "sleep 1000 & pid child $!\nsetsid sleep 1000 & pid escaped $!\nsleep 0.3\nexit 0",
        );
        let out = fake.out.path().join("memo.pdf");
        let (code, took) = run(&mut fake.command(&printing(out.to_str().unwrap())), |_| {});
        let err = fake.stderr();
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("printed no PDF"), "{err}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert!(ends(fake.pid("child")), "the browser's child outlived it");
        assert!(!out.exists());
        assert_eq!(fake.scratch_left(), Vec::<String>::new());
    }

    fn a_hung_browser_is_stopped_at_the_timeout_with_its_children() {
        let fake = Fake::new("pid browser $$\nsleep 1000 & pid child $!\nwait");
        let out = fake.out.path().join("memo.pdf");
        let mut command = fake.command(&printing(out.to_str().unwrap()));
        command.env("DECIDE_PDF_TIMEOUT_SECS", "1");
        let (code, took) = run(&mut command, |_| {});
        let err = fake.stderr();
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("did not finish in 1 s"), "{err}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert!(
            ends(fake.pid("browser")),
            "the browser outlived its timeout"
        );
        assert!(
            ends(fake.pid("child")),
            "the browser's child outlived its timeout"
        );
        assert!(!out.exists());
        assert_eq!(fake.scratch_left(), Vec::<String>::new());
    }

    fn a_bad_timeout_is_a_usage_error() {
        let fake = Fake::new("exit 0");
        let out = fake.out.path().join("memo.pdf");
        let mut command = fake.command(&printing(out.to_str().unwrap()));
        command.env("DECIDE_PDF_TIMEOUT_SECS", "soon");
        let (code, _) = run(&mut command, |_| {});
        let err = fake.stderr();
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("DECIDE_PDF_TIMEOUT_SECS"), "{err}");
    }

    /// `decide ARGS` is sent `signal` while the fake browser hangs: it exits `code`, the
    /// browser and its child are gone, the scratch folder too, and `out` is unchanged.
    fn stopped_while_printing(args: &[&str], signal: &str, code: i32) -> Fake {
        let fake = Fake::new("pid browser $$\nsleep 1000 & pid child $!\nwait");
        let (status, took) = run(&mut fake.command(args), |decide| {
            fake.pid("child");
            let sent = Command::new("kill")
                .args([format!("-{signal}"), decide.to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
        });
        let err = fake.stderr();
        assert_eq!(status, Some(code), "{err}");
        assert!(
            err.contains(&format!("interrupted by SIG{signal}")),
            "{err}"
        );
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert!(ends(fake.pid("browser")), "the browser outlived the signal");
        assert!(
            ends(fake.pid("child")),
            "the browser's child outlived the signal"
        );
        assert_eq!(fake.scratch_left(), Vec::<String>::new());
        fake
    }

    fn sigint_while_printing_stops_the_browser_and_keeps_the_old_file() {
        let out = tempfile::tempdir().unwrap();
        let file = out.path().join("memo.pdf");
        std::fs::write(&file, "the old memo").unwrap();
        stopped_while_printing(&printing(file.to_str().unwrap()), "INT", 130);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "the old memo");
        assert_eq!(names(out.path()), ["memo.pdf"]);
    }

    fn sigterm_while_a_batch_prints_stops_the_browser_and_the_batch() {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("memos");
        let args = [
            "batch",
            EXAMPLE,
            "--format",
            "pdf",
            "--out",
            dir.to_str().unwrap(),
        ];
        stopped_while_printing(&args, "TERM", 143);
        assert_eq!(names(&dir), Vec::<String>::new());
    }

    fn a_flood_on_standard_error_gives_a_short_message() {
        // Ten megabytes on one line, then the line that says what went wrong.
        let fake = Fake::new(
            "head -c 10000000 /dev/zero | tr '\\0' x >&2\necho >&2\necho 'the last words' >&2\nexit 3",
        );
        let out = fake.out.path().join("memo.pdf");
        let (code, _) = run(&mut fake.command(&printing(out.to_str().unwrap())), |_| {});
        let err = fake.stderr();
        assert_eq!(code, Some(1), "{}", &err[err.len().saturating_sub(2000)..]);
        assert!(
            err.contains("the last words"),
            "{}",
            &err[err.len().saturating_sub(2000)..]
        );
        assert!(err.len() < 8192, "a message of {} bytes", err.len());
    }

    /// A memo with Chinese text, on a machine whose fontconfig lists no font for Chinese (a
    /// fake `fc-list` first on `PATH`), is refused before the browser starts, naming the
    /// packages that bring one; the same memo prints once a font is listed.
    fn a_chinese_memo_without_a_chinese_font_is_refused_before_the_browser_starts() {
        let fake = Fake::new(
            "pid browser $$\n\
             for a; do case $a in --print-to-pdf=*) out=${a#--print-to-pdf=};; esac; done\n\
             printf '%%PDF-1.4 fake' > \"$out\"\nexit 0",
        );
        let out = fake.out.path().join("memo.pdf");
        let mut args = printing(out.to_str().unwrap()).to_vec();
        args.extend(["--lang", "zh"]);
        for (listed, printed) in [("", false), ("WenQuanYi Micro Hei\n", true)] {
            fake.fonts_for_chinese(listed);
            let (code, _) = run(&mut fake.command(&args), |_| {});
            let err = fake.stderr();
            if printed {
                assert_eq!(code, Some(0), "{err}");
                assert_eq!(std::fs::read_to_string(&out).unwrap(), "%PDF-1.4 fake");
            } else {
                assert_eq!(code, Some(1), "{err}");
                assert!(
                    err.contains("no font on this machine covers Chinese"),
                    "{err}"
                );
                assert!(err.contains("fonts-wqy-microhei"), "{err}");
                assert!(err.contains("scripts/install-browser.sh"), "{err}");
                assert!(!out.exists(), "a PDF was written");
                assert!(
                    !fake.state.path().join("browser.pid").exists(),
                    "the browser was started"
                );
            }
            assert_eq!(fake.scratch_left(), Vec::<String>::new());
        }
    }

    fn the_scratch_folder_is_private_and_removed_and_leftovers_are_stopped() {
        // Prints a PDF (after noting the modes of the scratch folder and page) and leaves a
        // child behind, as a browser's helper processes may.
        let fake = Fake::new(
            "for a; do case $a in --print-to-pdf=*) out=${a#--print-to-pdf=};; file://*) page=${a#file://};; esac; done\n\
             stat -c %a \"$(dirname \"$page\")\" \"$page\" > \"$STATE/modes\"\n\
             printf '%%PDF-1.4 fake' > \"$out\"\n\
             sleep 1000 & pid child $!\nexit 0",
        );
        let out = fake.out.path().join("memo.pdf");
        let (code, took) = run(&mut fake.command(&printing(out.to_str().unwrap())), |_| {});
        assert_eq!(code, Some(0), "{}", fake.stderr());
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "%PDF-1.4 fake");
        let modes = std::fs::read_to_string(fake.state.path().join("modes")).unwrap();
        assert_eq!(modes, "700\n600\n", "the scratch folder's and page's modes");
        assert!(ends(fake.pid("child")), "the browser's child outlived it");
        assert_eq!(fake.scratch_left(), Vec::<String>::new());
    }
}

/// The questionnaire page of `decide serve`, driven as a person would in a real browser: two
/// workloads answered (one in Chinese) with the memo following the answers and agreeing with
/// `decide` on the profile they give, a shorthand echoed, the PDF downloaded with the button,
/// a profile uploaded to fill the form; no console message, no request off the server, nothing
/// wider than the window. `DECIDE_WRITE_SCREENSHOTS=1` rewrites `docs/serve.en.png` and
/// `docs/serve.zh.png`.
mod page {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::common::{self, server::Server};
    use super::{Browser, DESKTOP, PHONE, Tools, WIDTH, answer_line, pdf_pages, squeezed};

    /// The longest the memo may take to follow an answer.
    const FOLLOW: Duration = Duration::from_secs(30);

    /// What the test adds to the page: `answer(name, value)` types into a field (or clicks the
    /// radio or box with that value) the way a person does, so the page's own events fire.
    const ANSWER: &str = "window.answer = (name, value) => {
        const inputs = [...document.querySelectorAll('#questions [name=\"' + name + '\"]')]
            .filter(e => !e.closest('fieldset[disabled]'));
        if (!inputs.length) throw new Error('no field ' + name);
        const e = inputs[0];
        if (e.type === 'radio' || e.type === 'checkbox') {
            inputs.find(i => i.value === value).click();
        } else {
            e.focus();
            e.value = value;
            e.dispatchEvent(new Event('input', {bubbles: true}));
            e.dispatchEvent(new Event('change', {bubbles: true}));
        }
        return Number(document.body.dataset.updated || 0);
    }; true";

    /// The memo's text in the frame beside the form ('' while there is none).
    const MEMO_TEXT: &str = "(() => { const f = document.querySelector('#memo iframe'); \
        return f && !f.hidden && f.contentDocument && f.contentDocument.body \
        ? f.contentDocument.body.innerText : ''; })()";

    /// Evaluates `expression` until it is true, for at most [`FOLLOW`].
    fn until(browser: &mut Browser, session: &str, expression: &str, what: &str) {
        let start = Instant::now();
        while browser.evaluate(session, expression) != json!(true) {
            assert!(start.elapsed() < FOLLOW, "{what}: not within {FOLLOW:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Answers each of `answers` in turn, waiting after each for the page to catch up (a
    /// question may appear only once the one before it is answered).
    fn answer(browser: &mut Browser, session: &str, answers: &[(&str, &str)]) {
        for (name, value) in answers {
            let call = format!("answer({}, {})", json!(name), json!(value));
            let before = browser.evaluate(session, &call);
            let before = before
                .as_u64()
                .unwrap_or_else(|| panic!("{call}: {before}"));
            until(
                browser,
                session,
                &format!("Number(document.body.dataset.updated || 0) > {before}"),
                &format!("the page after {call}"),
            );
        }
    }

    /// The memo `decide` writes for the profile the page shows, as Markdown in `lang`.
    fn memo_of_page(browser: &mut Browser, session: &str, lang: &str, dir: &Path) -> String {
        let yaml = browser.evaluate(
            session,
            "document.getElementById('profile-yaml').textContent",
        );
        let file = dir.join(format!("page.{lang}.yaml"));
        std::fs::write(&file, yaml.as_str().unwrap()).unwrap();
        common::run_ok(&[
            file.to_str().unwrap(),
            "--as-of",
            common::AS_OF,
            "--lang",
            lang,
        ])
    }

    /// Waits for the memo beside the form to show `markdown`'s answer, and returns its text.
    fn memo_shows(browser: &mut Browser, session: &str, markdown: &str, what: &str) -> String {
        let answer = squeezed(&answer_line(markdown));
        let start = Instant::now();
        loop {
            let text = browser.evaluate(session, MEMO_TEXT);
            let text = text.as_str().unwrap_or_default().to_owned();
            if squeezed(&text).contains(&answer) {
                return text;
            }
            assert!(
                start.elapsed() < FOLLOW,
                "{what}: the memo beside the form does not show {answer:?}; it shows:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// At a phone's width (390 px) the page scrolls and nothing else does: nothing is wider than
    /// the window, and the memo, after the form, is in a frame as tall and no wider than the
    /// memo; at a desktop's (1366 px) nothing is wider than the window either.
    fn phone_and_desktop(browser: &mut Browser, session: &str, what: &str) {
        const FRAME: &str = "(() => { const f = document.querySelector('#memo iframe'); \
            const m = f.contentDocument.documentElement; \
            return [m.scrollWidth - m.clientWidth, m.scrollHeight - f.clientHeight, \
                    f.getBoundingClientRect().top > document.querySelector('#questions').getBoundingClientRect().top]; })()";
        browser.resize(session, PHONE);
        let start = Instant::now();
        loop {
            let [wider, taller, after] = browser
                .evaluate(session, FRAME)
                .as_array()
                .cloned()
                .unwrap()
                .try_into()
                .unwrap();
            let fits = wider.as_i64() == Some(0) && taller.as_i64().is_some_and(|t| t <= 1);
            if fits && after == json!(true) {
                break;
            }
            assert!(
                start.elapsed() < FOLLOW,
                "{what} at {PHONE} px: the memo is {wider} px wider than its frame and {taller} px \
                 taller (a scroll inside the page), after the form: {after}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        browser.fits(session, PHONE, what);
        browser.resize(session, DESKTOP);
        browser.fits(session, DESKTOP, what);
        browser.resize(session, WIDTH);
    }

    /// Nothing wider than the window, no console message or error, no request off `origin`.
    fn clean(browser: &mut Browser, session: &str, origin: &str, url: &str, what: &str) {
        browser.fits(session, WIDTH, what);
        let problems: Vec<String> = browser
            .problems(session, url)
            .into_iter()
            // The server's own paths, and images inline in the page (a date field's calendar
            // icon is one, drawn by the browser).
            .filter(|p| {
                !p.starts_with(&format!("request: \"{origin}/"))
                    && !p.starts_with("request: \"data:")
            })
            .collect();
        assert!(problems.is_empty(), "{what}: {problems:#?}");
    }

    /// A screenshot at a desktop's width; written to `docs/` where asked.
    fn picture(browser: &mut Browser, session: &str, name: &str) {
        browser.evaluate(
            session,
            "document.activeElement.blur(); window.scrollTo(0, 0); true",
        );
        browser.call(
            Some(session),
            "Emulation.setDeviceMetricsOverride",
            &json!({"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
        );
        std::thread::sleep(Duration::from_millis(300));
        let png = browser.bytes(session, "Page.captureScreenshot", &json!({"format": "png"}));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: a PNG");
        if std::env::var_os("DECIDE_WRITE_SCREENSHOTS").is_some() {
            let file = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("docs")
                .join(name);
            std::fs::write(file, &png).unwrap();
        }
        browser.resize(session, WIDTH);
    }

    /// Clicks the PDF button and reads back the file the browser downloads: the memo whose
    /// Markdown is `markdown`.
    fn download_pdf(
        browser: &mut Browser,
        session: &str,
        pdftotext: &Path,
        dir: &Path,
        markdown: &str,
    ) {
        // The PDF, by its button, downloaded into a folder of the test's.
        let downloads = dir.join("downloads");
        std::fs::create_dir(&downloads).unwrap();
        browser.call(
            None,
            "Browser.setDownloadBehavior",
            &json!({"behavior": "allow", "downloadPath": downloads.to_str().unwrap()}),
        );
        browser.evaluate(
            session,
            "document.querySelector('button[data-file=\"memo.pdf\"]').click(); true",
        );
        let pdf = downloads.join("memo.pdf");
        let start = Instant::now();
        let whole = |b: &[u8]| {
            b.starts_with(b"%PDF-")
                && b.len() > 32
                && b[b.len() - 32..].windows(5).any(|w| w == b"%%EOF")
        };
        while !std::fs::read(&pdf).is_ok_and(|b| whole(&b)) {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no PDF downloaded"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let pages = pdf_pages(pdftotext, &std::fs::read(&pdf).unwrap(), dir);
        assert!(
            squeezed(&pages[0]).contains(&squeezed(&answer_line(markdown))),
            "the downloaded PDF's first page has the answer:\n{}",
            pages[0]
        );
    }

    /// Chooses `file` in the upload field, as a person picking it does, and waits for the page
    /// that comes back.
    fn upload(browser: &mut Browser, session: &str, file: &Path) {
        browser
            .events
            .retain(|(s, m, _)| !(s == session && m == "Page.loadEventFired"));
        let root =
            browser.call(Some(session), "DOM.getDocument", &json!({}))["root"]["nodeId"].clone();
        let input = browser.call(
            Some(session),
            "DOM.querySelector",
            &json!({"nodeId": root, "selector": "#upload-file"}),
        )["nodeId"]
            .clone();
        browser.call(
            Some(session),
            "DOM.setFileInputFiles",
            &json!({"nodeId": input, "files": [file.to_str().unwrap()]}),
        );
        browser.wait_for(session, "Page.loadEventFired");
    }

    pub(super) fn the_questionnaire_page_answers_downloads_and_uploads_in_chromium(tools: &Tools) {
        let Tools {
            chromium,
            pdftotext,
        } = tools;
        let dir = tempfile::tempdir().unwrap();
        let chromium_path = chromium.to_str().unwrap();
        // The server prints the PDF with a browser of its own: it sees the pinned fonts too.
        let fonts = super::fonts_conf();
        let server = Server::start_with(
            &["--addr", "127.0.0.1:0", "--as-of", common::AS_OF],
            &[
                ("DECIDE_BROWSER", chromium_path),
                ("FONTCONFIG_FILE", fonts.to_str().unwrap()),
            ],
        );
        let origin = format!("http://{}", server.addr);
        let mut browser = Browser::launch(chromium);

        // An inference service in English; then a smaller model, and the memo follows.
        let url = format!("{origin}/");
        let session = browser.open(&url);
        assert_eq!(browser.evaluate(&session, ANSWER), json!(true));
        answer(
            &mut browser,
            &session,
            &[
                ("name", "Support chat"),
                ("workload.task", "inference"),
                ("workload.model_params_b", "70B"),
                ("usage.gpus", "8"),
                ("usage.hours_per_gpu_month", "24/7"),
            ],
        );
        let first = memo_of_page(&mut browser, &session, "en", dir.path());
        let shown = memo_shows(&mut browser, &session, &first, "70B service");
        assert!(shown.contains("Support chat"), "{shown}");
        // A question of training is not asked of a service.
        assert_eq!(
            browser.evaluate(
                &session,
                "document.querySelector('[data-field=\"workload.tokens_b\"]').hidden"
            ),
            json!(true)
        );
        answer(
            &mut browser,
            &session,
            &[("workload.model_params_b", "7"), ("usage.gpus", "1")],
        );
        let second = memo_of_page(&mut browser, &session, "en", dir.path());
        assert_ne!(
            answer_line(&first),
            answer_line(&second),
            "the answers changed the memo"
        );
        memo_shows(&mut browser, &session, &second, "7B service");
        phone_and_desktop(&mut browser, &session, "the English page");
        clean(&mut browser, &session, &origin, &url, "the English page");
        picture(&mut browser, &session, "serve.en.png");

        download_pdf(&mut browser, &session, pdftotext, dir.path(), &second);
        browser.close(&session);

        // A training run in Chinese, with the shorthands people type.
        let url = format!("{origin}/?lang=zh");
        let session = browser.open(&url);
        assert_eq!(browser.evaluate(&session, ANSWER), json!(true));
        answer(
            &mut browser,
            &session,
            &[
                ("name", "客服模型微调"),
                ("workload.task", "full_finetune"),
                ("workload.model_params_b", "13B"),
                ("usage.gpus", "８"),
                ("usage.hours_per_gpu_month", "300"),
                ("budget.monthly_cny", "5万"),
            ],
        );
        let understood = browser.evaluate(
            &session,
            "document.querySelector('[data-field=\"budget.monthly_cny\"] .msg').textContent",
        );
        assert_eq!(understood, json!("5万 → 50,000 元/月"));
        let chinese = memo_of_page(&mut browser, &session, "zh", dir.path());
        let shown = memo_shows(&mut browser, &session, &chinese, "13B fine-tune in Chinese");
        assert!(shown.contains("客服模型微调"), "{shown}");
        clean(&mut browser, &session, &origin, &url, "the Chinese page");
        picture(&mut browser, &session, "serve.zh.png");

        uploaded(&mut browser, &session, &origin, &url);
        browser.close(&session);

        pages_beside(&mut browser, &origin);
        assert_eq!(server.stop(), Some(0));
    }

    /// A profile uploaded fills the form, and the memo is the file's.
    fn uploaded(browser: &mut Browser, session: &str, origin: &str, url: &str) {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pretrain-70b-job.yaml");
        upload(browser, session, &example);
        let model: Value = browser.evaluate(
            session,
            "document.querySelector('[name=\"workload.model_params_b\"]').value",
        );
        assert_eq!(model, json!("70"));
        let from_file = common::run_ok(&[
            example.to_str().unwrap(),
            "--as-of",
            common::AS_OF,
            "--lang",
            "zh",
        ]);
        memo_shows(browser, session, &from_file, "the uploaded profile");
        phone_and_desktop(browser, session, "the Chinese page after the upload");
        clean(browser, session, origin, url, "the page after the upload");
    }

    /// The pages beside the questionnaire: each clean, at the window's width, in either
    /// language; two profiles compared.
    fn pages_beside(browser: &mut Browser, origin: &str) {
        for (path, what) in [
            ("/offers?lang=zh", "the offers page"),
            ("/graph", "the graph's index"),
            ("/graph?node=deployment&lang=zh", "a node's neighbourhood"),
            ("/paste", "the paste page"),
        ] {
            let url = format!("{origin}{path}");
            let session = browser.open(&url);
            clean(browser, &session, origin, &url, what);
            for width in [PHONE, DESKTOP] {
                browser.resize(&session, width);
                browser.fits(&session, width, what);
            }
            browser.resize(&session, WIDTH);
            if path.contains("node=") {
                let drawn = browser.evaluate(
                    &session,
                    "document.querySelectorAll('figure svg rect').length",
                );
                assert!(drawn.as_u64().unwrap_or(0) > 3, "{what}: {drawn}");
            }
            browser.close(&session);
        }
        compare_two(browser, origin);
    }

    /// Two examples pasted into the compare page and posted: both memos side by side, and the
    /// page clean.
    fn compare_two(browser: &mut Browser, origin: &str) {
        let url = format!("{origin}/compare");
        let session = browser.open(&url);
        let read = |name: &str| {
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("examples")
                    .join(name),
            )
            .unwrap()
        };
        let fill = format!(
            "document.querySelector('[name=first]').value = {}; \
             document.querySelector('[name=second]').value = {}; \
             document.querySelector('[name=as_of]').value = {}; true",
            json!(read("lora-7b-4090.yaml")),
            json!(read("serving-7b-chat.yaml")),
            json!(common::AS_OF)
        );
        assert_eq!(browser.evaluate(&session, &fill), json!(true));
        browser
            .events
            .retain(|(s, m, _)| !(s == &session && m == "Page.loadEventFired"));
        browser.evaluate(
            &session,
            "document.querySelector('form[action=\"/compare\"] button').click(); true",
        );
        browser.wait_for(&session, "Page.loadEventFired");
        let memos = browser.evaluate(
            &session,
            "[...document.querySelectorAll('.pair iframe')].map(f => f.contentDocument.body.innerText.length > 500)",
        );
        assert_eq!(memos, json!([true, true]), "two memos side by side");
        clean(browser, &session, origin, &url, "two profiles compared");
        browser.close(&session);
    }
}
