//! The site: the policy, the memo's templates and the settings a server is started with, and
//! the graphs compiled for the dates and languages asked so far.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use decide_engine::profile::Syntax;
use decide_engine::{Graph, Lang, Policy, Source};
use decide_tools::{Detail, Format, Memo};
use jiff::civil::Date;

/// What a server is held to. Every bound is stated in docs/serve.md's "Limits", with what
/// happens at it.
#[derive(Clone)]
pub struct Settings {
    /// A bearer token every request must carry (`Authorization: Bearer TOKEN`); none by default.
    pub token: Option<String>,
    /// Answer only requests addressed to this machine by a loopback name (a `Host` of
    /// `localhost`, `127.0.0.1` or `[::1]`, any port; a 403 otherwise): what keeps a web page
    /// whose name was rebound to 127.0.0.1 from reading a server that has no token. The
    /// command line sets it for a loopback address without a token; off by default.
    pub local_only: bool,
    /// The most pieces of work (a decision, a comparison, a graph drawn, an upload read) run at
    /// once, on the blocking pool; the others wait their turn, in order.
    pub max_in_flight: usize,
    /// The longest a piece of work waits for its turn: then a **503** with `Retry-After`, and
    /// the work is never started.
    pub queue_wait: Duration,
    /// The longest a request may take once its headers are read (a **503** after it): a
    /// backstop; the body, the wait in the queue and a print have bounds of their own well
    /// inside it.
    pub request_timeout: Duration,
    /// The longest a connection may take to send a request's headers (a client that opens
    /// connections and sends nothing is cut off after it).
    pub header_timeout: Duration,
    /// The longest a request's body may take to arrive whole once its headers are read (a
    /// **408**, and the connection closed).
    pub body_timeout: Duration,
    /// The most requests reading their bodies at once, from all clients (a **503** with
    /// `Retry-After` beyond it, before any of the body is read).
    pub max_bodies: usize,
    /// The most requests reading their bodies at once from one client address.
    pub max_bodies_per_client: usize,
    /// The most connections open at once, from all clients; one more is answered with a
    /// **503** and closed.
    pub max_connections: usize,
    /// The most connections open at once from one client address.
    pub max_connections_per_client: usize,
    /// The most PDFs printed at once (each a browser on the server).
    pub max_prints: usize,
    /// The longest a PDF waits for a free printer: then a **503** with `Retry-After`.
    pub print_wait: Duration,
    /// Where a failure the client is not shown (a panic, a fault of the rules, a browser that
    /// failed) is logged, with the id the client is given.
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
    /// Prints an HTML memo to PDF (a browser on the server, which the command line finds);
    /// without one the page offers no PDF.
    pub pdf: Option<Printer>,
}

/// HTML in, PDF out, or why not (for the server's log only: it may name paths and what the
/// browser said). The second argument says, when asked, whether to stop at once (the server is
/// stopping, or the request went away): a printer asks it often and stops its browser then.
pub type Printer = Arc<dyn Fn(&str, &dyn Fn() -> bool) -> Result<Vec<u8>, String> + Send + Sync>;

impl Default for Settings {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Settings {
            token: None,
            local_only: false,
            // Two a core: one deciding while the other's answer is written, without a queue of
            // half-done work holding memory.
            max_in_flight: 2 * cores,
            queue_wait: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            max_bodies: 32,
            max_bodies_per_client: 8,
            max_connections: 512,
            max_connections_per_client: 32,
            max_prints: 2,
            print_wait: Duration::from_secs(5),
            log: Arc::new(|line| eprintln!("{line}")),
            pdf: None,
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .field("local_only", &self.local_only)
            .field("max_in_flight", &self.max_in_flight)
            .field("queue_wait", &self.queue_wait)
            .field("request_timeout", &self.request_timeout)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_bodies", &self.max_bodies)
            .field("max_bodies_per_client", &self.max_bodies_per_client)
            .field("max_connections", &self.max_connections)
            .field(
                "max_connections_per_client",
                &self.max_connections_per_client,
            )
            .field("max_prints", &self.max_prints)
            .field("print_wait", &self.print_wait)
            .field("pdf", &self.pdf.as_ref().map(|_| "(a printer)"))
            .finish_non_exhaustive()
    }
}

/// The graphs kept compiled: the most recently used last. A graph is compiled for one date's
/// prices and one language; a site asked about many dates keeps the latest few.
const GRAPHS_KEPT: usize = 8;

/// Everything a request is answered from.
pub struct Site {
    policy: Policy,
    memo: Memo,
    as_of: Option<Date>,
    settings: Settings,
    graphs: Mutex<Vec<(Date, Lang, Arc<Graph>)>>,
    /// Permits for work on the blocking pool, [`Settings::max_in_flight`] of them: held by the
    /// work itself, so that work whose request timed out still counts until it ends.
    work: Arc<tokio::sync::Semaphore>,
    /// Permits to print, [`Settings::max_prints`] of them.
    prints: Arc<tokio::sync::Semaphore>,
    /// The connections and the bodies being read, by client address.
    pub(crate) clients: crate::limits::Clients,
    /// The memos the pages frame, kept to be fetched once.
    pub(crate) memos: crate::memos::Memos,
    /// Set once the server is stopping: prints stop their browsers.
    stopping: std::sync::atomic::AtomicBool,
}

impl Site {
    /// A site deciding with `policy` (not yet priced: each request is priced at its date) and
    /// the memo's templates `memo`, at `as_of` where a request names no date (today where this
    /// is `None`).
    #[must_use]
    pub fn new(policy: Policy, memo: Memo, as_of: Option<Date>, settings: Settings) -> Self {
        Site {
            policy,
            memo,
            as_of,
            work: Arc::new(tokio::sync::Semaphore::new(settings.max_in_flight.max(1))),
            prints: Arc::new(tokio::sync::Semaphore::new(settings.max_prints.max(1))),
            clients: crate::limits::Clients::default(),
            memos: crate::memos::Memos::default(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            settings,
            graphs: Mutex::new(Vec::new()),
        }
    }

    /// Compiles the policy at the server's date, so that rules which do not compile are
    /// reported when the server starts rather than to the first request.
    pub fn check(&self) -> decide_engine::Result<()> {
        self.graph(self.as_of(None), Lang::En).map(|_| ())
    }

    /// A permit for work on the blocking pool, once one is free.
    pub(crate) async fn work_permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.work.clone().acquire_owned().await.ok()
    }

    /// A permit to print, once one is free.
    pub(crate) async fn print_permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.prints.clone().acquire_owned().await.ok()
    }

    /// Says the server is stopping: every print stops its browser, and work not yet started
    /// is not started.
    pub(crate) fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the server is stopping.
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The date a request decides at: the one it names, else the server's `--as-of`, else today.
    pub(crate) fn as_of(&self, asked: Option<Date>) -> Date {
        asked
            .or(self.as_of)
            .unwrap_or_else(decide_engine::today::today)
    }

    /// The policy priced at `as_of`, compiled for `lang`: from the kept graphs where it is one.
    pub(crate) fn graph(&self, as_of: Date, lang: Lang) -> decide_engine::Result<Arc<Graph>> {
        let kept = |graphs: &mut Vec<(Date, Lang, Arc<Graph>)>| {
            let i = graphs
                .iter()
                .position(|(date, l, _)| *date == as_of && *l == lang)?;
            let kept = graphs.remove(i);
            let graph = kept.2.clone();
            graphs.push(kept);
            Some(graph)
        };
        let lock = || self.graphs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(graph) = kept(&mut lock()) {
            return Ok(graph);
        }
        // Compiled without the lock held, so that requests for kept graphs do not wait on it;
        // two requests for the same new graph may both compile it, and the first one is kept.
        let graph = Arc::new(Graph::compile_in(self.policy.at(as_of), lang)?);
        let mut graphs = lock();
        if let Some(graph) = kept(&mut graphs) {
            return Ok(graph);
        }
        if graphs.len() == GRAPHS_KEPT {
            graphs.remove(0);
        }
        graphs.push((as_of, lang, graph.clone()));
        Ok(graph)
    }

    /// The profile `body` (YAML, or JSON where `syntax` says so) decided at `as_of` and written
    /// in `format` and `lang`: what `decide PROFILE --format F --lang L --as-of D` prints.
    pub(crate) fn decide(
        &self,
        body: Vec<u8>,
        syntax: Syntax,
        format: Format,
        lang: Lang,
        as_of: Date,
    ) -> decide_engine::Result<String> {
        let graph = self.graph(as_of, lang)?;
        let source = Source::from_profile_bytes("the request's profile", body)?;
        let (profile, evaluation) =
            decide_tools::decide_text(&graph, &source, syntax, as_of, Detail::DEFAULT)?;
        self.memo.render(&graph, &profile, &evaluation, format)
    }
}
