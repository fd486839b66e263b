//! The site: the policy, the memo's templates and the settings a server is started with, and
//! the graphs compiled for the dates and languages asked so far.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use decide::profile::Syntax;
use decide::{Detail, Format, Graph, Lang, Memo, Policy, Source};
use jiff::civil::Date;

/// What a server is held to.
#[derive(Clone)]
pub struct Settings {
    /// A bearer token every request must carry (`Authorization: Bearer TOKEN`); none by default.
    pub token: Option<String>,
    /// Answer only requests addressed to this machine by a loopback name (a `Host` of
    /// `localhost`, `127.0.0.1` or `[::1]`, any port; a 403 otherwise): what keeps a web page
    /// whose name was rebound to 127.0.0.1 from reading a server that has no token. The
    /// command line sets it for a loopback address without a token; off by default.
    pub local_only: bool,
    /// The most requests handled at once; the others wait their turn.
    pub max_in_flight: usize,
    /// The longest a request may take once its turn comes (a 503 after it); work it started
    /// on the blocking pool runs to its end and holds its permit until then.
    pub request_timeout: Duration,
    /// The longest a connection may take to send a request's headers (a client that opens
    /// connections and sends nothing is cut off after it).
    pub header_timeout: Duration,
    /// Where a failure the client is not shown (a panic, a fault of the rules) is logged, with
    /// the id the client is given.
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
    /// Prints an HTML memo to PDF (a browser on the server, which the command line finds);
    /// without one the page offers no PDF.
    pub pdf: Option<Printer>,
}

/// HTML in, PDF out, or why not.
pub type Printer = Arc<dyn Fn(&str) -> Result<Vec<u8>, String> + Send + Sync>;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            token: None,
            local_only: false,
            max_in_flight: 64,
            request_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
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
            .field("request_timeout", &self.request_timeout)
            .field("header_timeout", &self.header_timeout)
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
            settings,
            graphs: Mutex::new(Vec::new()),
        }
    }

    /// Compiles the policy at the server's date, so that rules which do not compile are
    /// reported when the server starts rather than to the first request.
    pub fn check(&self) -> decide::Result<()> {
        self.graph(self.as_of(None), Lang::En).map(|_| ())
    }

    /// A permit for work on the blocking pool, once one is free.
    pub(crate) async fn work_permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.work.clone().acquire_owned().await.ok()
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The date a request decides at: the one it names, else the server's `--as-of`, else today.
    pub(crate) fn as_of(&self, asked: Option<Date>) -> Date {
        asked.or(self.as_of).unwrap_or_else(decide::today::today)
    }

    /// The policy priced at `as_of`, compiled for `lang`: from the kept graphs where it is one.
    pub(crate) fn graph(&self, as_of: Date, lang: Lang) -> decide::Result<Arc<Graph>> {
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
    ) -> decide::Result<String> {
        let graph = self.graph(as_of, lang)?;
        let source = Source::from_profile_bytes("the request's profile", body)?;
        let (profile, evaluation) =
            decide::decide_text(&graph, &source, syntax, as_of, Detail::DEFAULT)?;
        self.memo.render(&graph, &profile, &evaluation, format)
    }
}
