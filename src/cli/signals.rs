//! Signals that would end the process during a batch or while a browser prints a PDF (SIGINT,
//! SIGTERM, SIGHUP when a terminal closes, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2): recorded by a
//! handler that only sets a flag, so the batch stops at its next profile, and a browser printing
//! is killed with its process group (`src/cli/pdf.rs`), through the normal control flow (the
//! temporary output file and the browser's scratch folder are removed as they are dropped, the
//! old output file stays whole) and the process exits 128 + the signal's number: 130 for
//! SIGINT, 143 for SIGTERM, 129 for SIGHUP. A second signal ends the process at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};

use decide_engine::error::{Error, ErrorKind, Result};

/// The signals watched, with their names: every signal whose default action ends the process
/// and that a handler may catch, save SIGPIPE (Rust ignores it; a closed pipe is a write error).
const WATCHED: [(i32, &str); 7] = [
    (SIGINT, "SIGINT"),
    (SIGTERM, "SIGTERM"),
    (SIGHUP, "SIGHUP"),
    (SIGQUIT, "SIGQUIT"),
    (SIGALRM, "SIGALRM"),
    (SIGUSR1, "SIGUSR1"),
    (SIGUSR2, "SIGUSR2"),
];

/// The signals received since [`Signals::watch`].
pub struct Signals {
    /// The number of the last signal received; 0 for none.
    received: Arc<AtomicUsize>,
}

impl Signals {
    /// Starts recording the watched signals instead of ending the process on the first one.
    ///
    /// # Errors
    /// A handler cannot be installed.
    pub fn watch() -> Result<Self> {
        let received = Arc::new(AtomicUsize::new(0));
        let once = Arc::new(AtomicBool::new(false));
        for (signal, _) in WATCHED {
            let number = usize::try_from(signal).unwrap_or_default();
            let register = || -> std::io::Result<()> {
                // Handlers run in the order they are registered: the second signal finds the
                // flag set and takes the default action (the process ends).
                #[cfg(unix)]
                signal_hook::flag::register_conditional_default(signal, Arc::clone(&once))?;
                signal_hook::flag::register(signal, Arc::clone(&once))?;
                signal_hook::flag::register_usize(signal, Arc::clone(&received), number)?;
                Ok(())
            };
            register().map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot install a signal handler: {e}"),
                )
            })?;
        }
        Ok(Signals { received })
    }

    /// The signal received, if any.
    #[must_use]
    pub fn received(&self) -> Option<Signal> {
        let number = self.received.load(Ordering::Relaxed);
        WATCHED
            .iter()
            .find(|(signal, _)| usize::try_from(*signal).is_ok_and(|n| n == number))
            .map(|&(number, name)| Signal { number, name })
    }
}

/// A signal that stops a batch or a browser printing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    number: i32,
    name: &'static str,
}

impl Signal {
    /// SIGTERM: what a server stopping its prints says it was stopped by.
    #[must_use]
    pub fn terminate() -> Signal {
        Signal {
            number: signal_hook::consts::SIGTERM,
            name: "SIGTERM",
        }
    }

    /// The conventional exit code of a process ended by this signal: 128 + its number.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        u8::try_from(128 + self.number).unwrap_or(u8::MAX)
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        self.name
    }
}
