//! SIGINT and SIGTERM during a batch: recorded by a handler that only sets a flag, so the batch
//! stops at its next profile through its normal control flow (its temporary output file is
//! removed as it is dropped, the old output file stays whole) and exits 128 + the signal's
//! number: 130 for SIGINT, 143 for SIGTERM. A second signal ends the process at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};

use decide::error::{Error, ErrorKind, Result};

/// The signals received since [`Signals::watch`].
pub struct Signals {
    /// The number of the last signal received; 0 for none.
    received: Arc<AtomicUsize>,
}

impl Signals {
    /// Starts recording SIGINT and SIGTERM instead of ending the process on the first one.
    ///
    /// # Errors
    /// A handler cannot be installed.
    pub fn watch() -> Result<Self> {
        let received = Arc::new(AtomicUsize::new(0));
        let once = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
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

    /// The signal received, if any: `SIGINT` or `SIGTERM`.
    #[must_use]
    pub fn received(&self) -> Option<Signal> {
        match self.received.load(Ordering::Relaxed) {
            0 => None,
            n if n == usize::try_from(SIGTERM).unwrap_or_default() => Some(Signal::Term),
            _ => Some(Signal::Int),
        }
    }
}

/// A signal that stops a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Int,
    Term,
}

impl Signal {
    /// The conventional exit code of a process ended by this signal: 128 + its number.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Int => 130,
            Signal::Term => 143,
        }
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "SIGINT",
            Signal::Term => "SIGTERM",
        }
    }
}
