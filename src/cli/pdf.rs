//! `--format pdf`: the HTML memo printed to PDF by a Chromium-family browser already on the
//! machine (Chromium, Chrome or Edge), headless and off the network.
//!
//! Why a browser and not a PDF library: a faithful PDF of the memo needs its layout (tables
//! with headers repeated across pages, page breaks, the SVG chart) and fonts that cover
//! Chinese. A browser has both, and the HTML memo is already tested in one (`tests/browser.rs`);
//! a typesetting library would add a large dependency tree and megabytes of embedded fonts to
//! every `decide`, for one output. The price: `--format pdf` needs a browser, which it looks
//! for (`DECIDE_BROWSER`, then the usual names and install places) and names when missing; and
//! the PDF's bytes carry the browser's creation date, so they differ between runs (its text
//! does not).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use decide::error::{Error, ErrorKind, Result};

/// The environment variable that names the browser to print with.
pub const BROWSER_VAR: &str = "DECIDE_BROWSER";

/// How long a browser may take to print one memo before it is stopped.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Programs looked for on `PATH`, in order.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "microsoft-edge",
    "microsoft-edge-stable",
    "chrome",
    "msedge",
];

/// Where the browsers install themselves on macOS and Windows, outside `PATH`.
const PLACES: &[&str] = &[
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
    r"C:\Program Files\Microsoft\Edge\Application\msedge.exe",
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
];

/// The browser to print with: `DECIDE_BROWSER` if set (it must exist), else the first of
/// [`NAMES`] on `PATH`, else the first of [`PLACES`] that exists.
///
/// # Errors
/// `DECIDE_BROWSER` names no file, or no browser is found.
pub fn browser() -> Result<PathBuf> {
    if let Some(named) = std::env::var_os(BROWSER_VAR).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&named);
        if path.is_file() {
            return Ok(path);
        }
        if let Some(found) = on_path(&[&*path.to_string_lossy()]) {
            return Ok(found);
        }
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "{BROWSER_VAR} is {}, which is not a program",
                path.display()
            ),
        )
        .help(format!(
            "set {BROWSER_VAR} to the path of Chromium, Chrome or Edge, or unset it to look for one"
        )));
    }
    on_path(NAMES)
        .or_else(|| PLACES.iter().map(PathBuf::from).find(|p| p.is_file()))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Io,
                "--format pdf prints the HTML memo with a Chromium-family browser, and none was found",
            )
            .help(format!(
                "install Chromium, Chrome or Edge (Debian: `apt-get install chromium`), or set \
                 {BROWSER_VAR} to one; or write `--format html` and print it from any browser"
            ))
        })
}

/// The first of `names` found in a folder of `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path).find_map(|dir| {
            let file = dir.join(name);
            let exe = file.with_extension("exe");
            [file, exe].into_iter().find(|f| f.is_file())
        })
    })
}

/// `html` printed to PDF on A4 by `browser`, without the browser's header and footer.
///
/// # Errors
/// The scratch folder cannot be written, or the browser fails, times out or prints no PDF
/// (its last lines of standard error are shown).
pub fn print(browser: &Path, html: &str) -> Result<Vec<u8>> {
    let scratch = tempfile::Builder::new()
        .prefix("decide-pdf-")
        .tempdir()
        .map_err(|e| io("cannot create a scratch folder", &e))?;
    let page = scratch.path().join("memo.html");
    let pdf = scratch.path().join("memo.pdf");
    std::fs::write(&page, html).map_err(|e| io("cannot write the scratch page", &e))?;
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            // Off the network: the page fetches nothing, and neither should the browser.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-pdf-header-footer",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(file_url(&page))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if running_as_root() {
        // Chromium refuses to start its sandbox as root (in containers, CI); the page is the
        // memo itself, without script.
        command.arg("--no-sandbox");
    }
    let mut child = command
        .spawn()
        .map_err(|e| failed(browser, &format!("cannot start it: {e}"), ""))?;
    // Read on a thread of its own, so a chatty browser never blocks on a full pipe.
    let said = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| io("cannot wait", &e))? {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(
                browser,
                &format!("it did not finish in {} s", TIMEOUT.as_secs()),
                "",
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = said
        .and_then(|thread| thread.join().ok())
        .unwrap_or_default();
    match std::fs::read(&pdf) {
        Ok(bytes) if status.success() && bytes.starts_with(b"%PDF-") => Ok(bytes),
        _ => Err(failed(
            browser,
            &format!("it printed no PDF ({status})"),
            &stderr,
        )),
    }
}

/// `path` as a `file://` URL (absolute; on Windows with forward slashes).
fn file_url(path: &Path) -> String {
    let text = path.display().to_string().replace('\\', "/");
    if text.starts_with('/') {
        format!("file://{text}")
    } else {
        format!("file:///{text}")
    }
}

#[cfg(target_os = "linux")]
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to the process's effective user.
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(not(target_os = "linux"))]
fn running_as_root() -> bool {
    false
}

fn io(what: &str, e: &std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("--format pdf: {what}: {e}"))
}

/// The browser failed: what happened, and the last lines it wrote to standard error.
fn failed(browser: &Path, what: &str, stderr: &str) -> Error {
    let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
    let mut error = Error::new(
        ErrorKind::Io,
        format!(
            "--format pdf: the browser {} failed: {what}",
            browser.display()
        ),
    );
    if !tail.is_empty() {
        let lines: Vec<&str> = tail.into_iter().rev().collect();
        error = error.help(format!("it said:\n{}", lines.join("\n")));
    }
    error.help(format!(
        "set {BROWSER_VAR} to another browser, or write `--format html` and print it yourself"
    ))
}
