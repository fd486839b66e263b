//! `--format pdf`: the HTML memo printed to PDF by a Chromium-family browser already on the
//! machine (Chromium, Chrome or Edge), headless, off the network and fenced off the machine's
//! files.
//!
//! Why a browser and not a PDF library: a faithful PDF of the memo needs its layout (tables
//! with headers repeated across pages, page breaks, the SVG chart) and fonts that cover
//! Chinese. A browser has both, and the HTML memo is already tested in one (`tests/browser.rs`);
//! a typesetting library would add a large dependency tree and megabytes of embedded fonts to
//! every `decide`, for one output. The price: `--format pdf` needs a browser, which it looks
//! for (`DECIDE_BROWSER`, then the usual names and install places) and names when missing; and
//! the PDF's bytes carry the browser's creation date, so they differ between runs (its text
//! does not).
//!
//! The page is the memo behind a content security policy written before it
//! ([`decide_tools::html::print_page`]: inline styles and `data:` images, nothing else: no script,
//! no frame, no `file://`, no address), and the browser resolves no name and reaches no
//! address (a proxy that is not there, loopback included), so a template in a `--rules` folder
//! cannot put another file into the PDF, run a script or call out.
//!
//! A browser is a tree of processes that can hang, flood its standard error or leave helpers
//! behind, so it is held on a short leash: it leads a process group of its own, killed whole
//! once it exits, when it takes longer than the timeout (120 s, or [`TIMEOUT_VAR`]), and when a
//! signal the command watches arrives (the command then exits 128 + the signal, its output file
//! as it was); only the last 64 KiB of its standard error are kept, and a process that left the
//! group holding the pipe is not waited for. The page and the browser's profile live in a
//! private scratch folder (0700, the page 0600) in `TMPDIR`, removed on every way out; only
//! `SIGKILL` of `decide` itself leaves it (and a running browser) behind.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use decide_engine::error::{Error, ErrorKind, Result};

use super::signals::Signal;

/// The environment variable that names the browser to print with.
pub const BROWSER_VAR: &str = "DECIDE_BROWSER";

/// The environment variable that sets how long a browser may take to print one memo, in whole
/// seconds (tests set it low).
pub const TIMEOUT_VAR: &str = "DECIDE_PDF_TIMEOUT_SECS";

/// How long a browser may take to print one memo before it is stopped, unless [`TIMEOUT_VAR`]
/// says otherwise.
const TIMEOUT: Duration = Duration::from_secs(120);

/// How often the browser is asked whether it has exited, and the signals looked at.
const POLL: Duration = Duration::from_millis(10);

/// How long standard error is still read once the browser's process group is gone: only a
/// process that left the group can still hold it open, and it is not waited for.
const GRACE: Duration = Duration::from_millis(500);

/// The most of the browser's standard error kept: its last 64 KiB.
const STDERR_KEPT: usize = 64 * 1024;

/// The last lines of standard error an error shows, and the characters shown of each.
const SHOWN_LINES: usize = 6;
const SHOWN_CHARS: usize = 300;

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
                "install Chromium, Chrome or Edge with a Chinese font (Debian and Ubuntu: \
                 `apt-get install chromium fonts-wqy-microhei`; `scripts/install-browser.sh` in \
                 the project installs both), or set {BROWSER_VAR} to one; or write `--format \
                 html` and print it from any browser"
            ))
        })
}

/// The program that lists the fonts fontconfig sees (the fonts Chromium prints with on Linux).
const FC_LIST: &str = "fc-list";

/// Whether a font on this machine covers the Chinese of `html`, where it has any: a browser
/// with none prints each Chinese character as a box, and exits 0. Asked of fontconfig
/// (`fc-list :lang=zh`), the font source Chromium uses on Linux; elsewhere (macOS, Windows:
/// Chinese fonts come with the system), or where `fc-list` cannot be run, nothing is asked.
///
/// # Errors
/// The memo has Chinese text and fontconfig lists no font for Chinese: the error names the
/// packages that bring one.
pub fn fonts_cover(html: &str) -> Result<()> {
    // Once a Chinese font was found it stays installed for the rest of the run: a batch of PDFs
    // or `decide serve` asks fontconfig once, not once a memo. A refusal is not remembered, so
    // a font installed while the server runs is found at the next print.
    static FOUND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !cfg!(target_os = "linux")
        || FOUND.load(std::sync::atomic::Ordering::Relaxed)
        || !html.chars().any(is_chinese)
    {
        return Ok(());
    }
    let Ok(listed) = Command::new(FC_LIST)
        .args([":lang=zh", "family"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Ok(());
    };
    if !listed.status.success() {
        return Ok(());
    }
    if !listed.stdout.iter().all(u8::is_ascii_whitespace) {
        FOUND.store(true, std::sync::atomic::Ordering::Relaxed);
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Io,
        "the memo has Chinese text and no font on this machine covers Chinese, so its PDF would show every Chinese character as a box",
    )
    .help(
        "install a Chinese font (Debian and Ubuntu: `apt-get install fonts-wqy-microhei` or \
         `fonts-noto-cjk`; `scripts/install-browser.sh` in the project installs Chromium and the \
         first), then print again; or write `--format html`, which any browser with such a font \
         shows",
    ))
}

/// A CJK ideograph (the blocks Chinese text is written in).
fn is_chinese(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
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

/// A browser to print with, and how long it may take.
#[derive(Debug)]
pub struct Printer {
    browser: PathBuf,
    timeout: Duration,
}

/// How printing ended when the browser did not fail.
#[derive(Debug)]
pub enum Printed {
    /// The bytes of the output: the PDF, or the text itself for the other formats.
    Done(Vec<u8>),
    /// A signal stopped the browser: nothing is written, and the process exits 128 + its number.
    Stopped(Signal),
}

/// The browser ([`browser`]) and the timeout ([`TIMEOUT_VAR`], else 120 s), found before any
/// work starts.
///
/// # Errors
/// No browser is found, or [`TIMEOUT_VAR`] is not a whole number of seconds.
pub fn printer() -> Result<Printer> {
    Ok(Printer {
        browser: browser()?,
        timeout: timeout()?,
    })
}

/// [`TIMEOUT_VAR`] if set, else [`TIMEOUT`].
fn timeout() -> Result<Duration> {
    let Some(value) = std::env::var_os(TIMEOUT_VAR).filter(|v| !v.is_empty()) else {
        return Ok(TIMEOUT);
    };
    value
        .to_str()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .filter(|&seconds| seconds > 0)
        .map(Duration::from_secs)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                format!(
                    "{TIMEOUT_VAR} is {}; expected a whole number of seconds, at least 1",
                    value.to_string_lossy()
                ),
            )
            .help(format!(
                "set {TIMEOUT_VAR} to, say, 300, or unset it for {} s",
                TIMEOUT.as_secs()
            ))
        })
}

impl Printer {
    /// `html` printed to PDF on A4, without the browser's header and footer.
    ///
    /// The page and the browser's profile go to a private scratch folder (0700, the page 0600),
    /// removed on every way out. The browser leads a process group of its own, killed whole
    /// once it has exited (helpers it left behind), at the timeout, on an error, or as soon as
    /// `stop` reports a signal; then its standard error, of which the last 64 KiB are kept, is
    /// read for at most [`GRACE`] more.
    ///
    /// # Errors
    /// The scratch folder cannot be written, or the browser fails, times out or prints no PDF
    /// (its last lines of standard error are shown).
    pub fn print(&self, html: &str, stop: &dyn Fn() -> Option<Signal>) -> Result<Printed> {
        fonts_cover(html)?;
        let browser = self.browser.as_path();
        // Declared before the browser, so dropped after it: the browser is stopped before its
        // folder is removed.
        let scratch = scratch()?;
        let page = scratch.path().join("memo.html");
        let pdf = scratch.path().join("memo.pdf");
        // The memo behind a policy that lets it load nothing: no script, no frame, no other
        // file, no address, whatever a rules folder's template wrote.
        write_private(&page, &decide_tools::html::print_page(html))
            .map_err(|e| io("cannot write the scratch page", &e))?;
        let mut command = Command::new(browser);
        command
            .args([
                "--headless",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                // Off the network: the page's policy lets it fetch nothing (print_page), and
                // the browser has no way out either: every name resolves to nothing and every
                // address, loopback included, goes through a proxy that is not there.
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=socks5://127.0.0.1:1",
                "--proxy-bypass-list=<-loopback>",
                "--disable-remote-fonts",
                "--block-new-web-contents",
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
        // A process group of its own, whose id is the browser's pid: killed whole, it takes the
        // browser's renderers and helpers with it. (It also keeps a terminal's Ctrl-C from
        // reaching the browser before `decide` has seen it.)
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut running = Running::new(
            command
                .spawn()
                .map_err(|e| failed(browser, &format!("cannot start it: {e}"), ""))?,
        );
        let said = Tail::read(running.child.stderr.take());
        let started = Instant::now();
        loop {
            if let Some(signal) = stop() {
                running.stop();
                return Ok(Printed::Stopped(signal));
            }
            if running.exited().map_err(|e| io("cannot wait", &e))? {
                break;
            }
            if started.elapsed() >= self.timeout {
                running.stop();
                return Err(failed(
                    browser,
                    &format!(
                        "it did not finish in {} s and was stopped",
                        self.timeout.as_secs()
                    ),
                    &said.text(),
                ));
            }
            std::thread::sleep(POLL);
        }
        // Helpers it left behind are stopped too: they would hold its standard error open.
        let status = running.stop();
        let stderr = said.text();
        if let Some(signal) = stop() {
            return Ok(Printed::Stopped(signal));
        }
        let status = status.map_or_else(|| "its status is unknown".into(), |s| s.to_string());
        match std::fs::read(&pdf) {
            Ok(bytes) if running.succeeded() && bytes.starts_with(b"%PDF-") => {
                Ok(Printed::Done(bytes))
            }
            _ => Err(failed(
                browser,
                &format!("it printed no PDF ({status})"),
                &stderr,
            )),
        }
    }
}

/// A private scratch folder in the temporary folder (`TMPDIR`): 0700 on unix, where tempfile
/// would otherwise leave the mode to the umask (0755 under the usual 022).
fn scratch() -> Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("decide-pdf-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    builder
        .tempdir()
        .map_err(|e| io("cannot create a scratch folder", &e))
}

/// Writes `text` to the new file `path`, readable by its owner alone (0600 on unix).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(path)?, text.as_bytes())
}

/// The browser's process: on unix the leader of a process group of its own, which is killed
/// whole when this is stopped or dropped.
struct Running {
    child: Child,
    /// Its exit status, once reaped.
    status: Option<ExitStatus>,
    /// Whether its group was killed (once: after the browser is reaped its pid may be reused).
    killed: bool,
}

impl Running {
    fn new(child: Child) -> Self {
        Running {
            child,
            status: None,
            killed: false,
        }
    }

    /// Whether the browser has exited. On Linux it is left unreaped (a zombie), so that its pid,
    /// the id of its process group, is not reused before [`Running::stop`] kills the group.
    #[cfg(target_os = "linux")]
    fn exited(&mut self) -> std::io::Result<bool> {
        use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        match waitid(WaitId::Pid(Pid::from_child(&self.child)), options) {
            Ok(found) => Ok(found.is_some()),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the browser has exited (reaped here; its group is killed right after, before
    /// its pid could come round again).
    #[cfg(not(target_os = "linux"))]
    fn exited(&mut self) -> std::io::Result<bool> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status.is_some())
    }

    /// Kills the browser's process group (on unix; elsewhere the browser alone), then reaps the
    /// browser; its exit status, if it could be had.
    fn stop(&mut self) -> Option<ExitStatus> {
        if !self.killed {
            self.killed = true;
            #[cfg(unix)]
            {
                use rustix::process::{Pid, Signal, kill_process_group};
                // An empty group (nothing left behind) is not an error; any other failure
                // falls back on the browser alone.
                if kill_process_group(Pid::from_child(&self.child), Signal::KILL)
                    .is_err_and(|e| e != rustix::io::Errno::SRCH)
                {
                    let _ = self.child.kill();
                }
            }
            #[cfg(not(unix))]
            if self.status.is_none() {
                let _ = self.child.kill();
            }
        }
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
        self.status
    }

    /// Whether the browser exited by itself with success.
    fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The browser's standard error, read on a thread of its own (so a chatty browser never blocks
/// on a full pipe) into a buffer that keeps its last [`STDERR_KEPT`] bytes.
struct Tail {
    kept: Arc<Mutex<Vec<u8>>>,
    /// Says the pipe is closed: every process that held it has ended or closed it.
    closed: mpsc::Receiver<()>,
}

impl Tail {
    fn read(pipe: Option<ChildStderr>) -> Tail {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (send, closed) = mpsc::channel();
        if let Some(mut pipe) = pipe {
            let buffer = Arc::clone(&kept);
            // Without a thread the pipe is dropped: the browser's writes then fail, harmlessly.
            let _ = std::thread::Builder::new()
                .name("browser stderr".into())
                .spawn(move || {
                    let mut chunk = [0u8; 8192];
                    loop {
                        match pipe.read(&mut chunk) {
                            Ok(0) => break,
                            Ok(n) => {
                                let mut kept =
                                    buffer.lock().unwrap_or_else(PoisonError::into_inner);
                                kept.extend_from_slice(&chunk[..n]);
                                // Cut only once twice the limit is held: a flood costs one
                                // copy of 64 KiB per 64 KiB read.
                                if kept.len() > 2 * STDERR_KEPT {
                                    let cut = kept.len() - STDERR_KEPT;
                                    kept.drain(..cut);
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                    let _ = send.send(());
                });
        }
        Tail { kept, closed }
    }

    /// What was read, at most its last [`STDERR_KEPT`] bytes, once the pipe is closed or
    /// [`GRACE`] has passed (the thread is then left to a process outside the browser's group
    /// that still holds the pipe).
    fn text(&self) -> String {
        let _ = self.closed.recv_timeout(GRACE);
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let from = kept.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&kept[from..]).into_owned()
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

/// The browser failed: what happened, and the last lines it wrote to standard error (the last
/// [`SHOWN_CHARS`] characters of a longer line).
fn failed(browser: &Path, what: &str, stderr: &str) -> Error {
    let tail: Vec<String> = stderr
        .lines()
        .rev()
        .filter(|line| !line.trim().is_empty())
        .take(SHOWN_LINES)
        .map(
            |line| match line.char_indices().rev().nth(SHOWN_CHARS - 1) {
                Some((at, _)) if at > 0 => format!("…{}", &line[at..]),
                _ => line.to_owned(),
            },
        )
        .collect();
    let mut error = Error::new(
        ErrorKind::Io,
        format!(
            "--format pdf: the browser {} failed: {what}",
            browser.display()
        ),
    );
    if !tail.is_empty() {
        let lines: Vec<String> = tail.into_iter().rev().collect();
        error = error.help(format!("it said:\n{}", lines.join("\n")));
    }
    error.help(format!(
        "set {BROWSER_VAR} to another browser, or write `--format html` and print it yourself"
    ))
}
