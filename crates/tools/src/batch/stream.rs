//! A stream of profiles decided on every core and handed on in input order, each as soon as it
//! and every one before it are decided: a bounded window of profiles is read ahead, so memory
//! stays flat however long the stream and output starts at once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::{Decided, Item, Options, Unread, decide_one};
use crate::memo::Memo;
use decide_engine::error::{Error, ErrorKind, Result};
use decide_engine::graph::Graph;

/// How many profiles may be read and not yet handed on: enough to keep every core busy
/// around a slow profile, few enough that their records are a few megabytes.
pub const WINDOW: usize = 512;

/// How often the stream asks whether it was interrupted while it waits.
const POLL: Duration = Duration::from_millis(25);

/// What the writer of results says after each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Go,
    /// Stop reading and deciding (the reader of the output went away, say).
    Stop,
}

/// How a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Every profile was decided and handed on.
    Done,
    /// The writer said [`Flow::Stop`].
    Stopped,
    /// `interrupted` said so (a signal).
    Interrupted,
}

/// One decided profile: its label (for a memo's file name; empty for a profile that could not
/// be read), where it was read (its input and the line it starts at), and what deciding it gave.
pub struct Output {
    pub label: String,
    pub source: String,
    pub line: usize,
    pub result: Result<Decided>,
}

enum Event {
    Read(Result<Item, Unread>),
    EndOfInput,
    Decided(usize, Output),
}

/// Decides every profile `profiles` yields (read on a thread of its own, at most [`WINDOW`]
/// ahead of the last handed on) on rayon's pool, and hands each outcome to `write` in input
/// order. `interrupted` is asked after each outcome and at least every few milliseconds;
/// once it says yes, or `write` says stop, no further profile is decided and the stream ends.
///
/// # Errors
/// The first error `write` returns (an output that cannot be written); the stream stops.
pub fn decide_stream<P, W>(
    graph: &Graph,
    memo: &Memo,
    profiles: P,
    options: Options,
    interrupted: &dyn Fn() -> bool,
    mut write: W,
) -> Result<End>
where
    P: Iterator<Item = Result<Item, Unread>> + Send + 'static,
    W: FnMut(Output) -> Result<Flow>,
{
    let (events, inbox) = mpsc::channel::<Event>();
    // One permit per profile that may be in flight; the reader takes one before each read and
    // the writer gives one back after each outcome handed on.
    let (permits, permit) = mpsc::sync_channel::<()>(WINDOW);
    for _ in 0..WINDOW {
        let _ = permits.try_send(());
    }
    let reader_events = events.clone();
    std::thread::Builder::new()
        .name("decide-read".to_owned())
        .spawn(move || {
            let mut profiles = profiles;
            while permit.recv().is_ok() {
                let Some(next) = profiles.next() else {
                    let _ = reader_events.send(Event::EndOfInput);
                    return;
                };
                if reader_events.send(Event::Read(next)).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot start reading the inputs: {e}"),
            )
        })?;
    let cancelled = AtomicBool::new(false);
    let mut ready: BTreeMap<usize, Output> = BTreeMap::new();
    let (mut read, mut written, mut reading) = (0usize, 0usize, true);
    rayon::in_place_scope(|scope| {
        let end = 'stream: loop {
            match inbox.recv_timeout(POLL) {
                Ok(Event::Read(Ok(item))) => {
                    let (index, events, cancelled) = (read, events.clone(), &cancelled);
                    scope.spawn(move |_| {
                        let result = if cancelled.load(Ordering::Relaxed) {
                            Err(Error::new(
                                ErrorKind::Io,
                                "not decided: the batch was stopped",
                            ))
                        } else {
                            // A fault inside deciding one profile (a panic: a bug, or a rule the
                            // checks let through) fails that profile; the writer is waiting for
                            // its outcome and would otherwise wait for ever.
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                decide_one(graph, memo, &item, options)
                            }))
                            .unwrap_or_else(|fault| Err(fault_error(fault.as_ref())))
                        };
                        let outcome = Output {
                            label: item.label,
                            source: item.source.name,
                            line: item.first_line,
                            result,
                        };
                        let _ = events.send(Event::Decided(index, outcome));
                    });
                    read += 1;
                }
                Ok(Event::Read(Err(unread))) => {
                    let outcome = Output {
                        label: String::new(),
                        source: unread.source,
                        line: unread.line,
                        result: Err(unread.error),
                    };
                    ready.insert(read, outcome);
                    read += 1;
                }
                Ok(Event::Decided(index, outcome)) => {
                    ready.insert(index, outcome);
                }
                Ok(Event::EndOfInput) => reading = false,
                Err(_) => {}
            }
            while let Some(outcome) = ready.remove(&written) {
                written += 1;
                let _ = permits.try_send(());
                match write(outcome) {
                    Ok(Flow::Go) => {}
                    Ok(Flow::Stop) => break 'stream Ok(End::Stopped),
                    Err(e) => break 'stream Err(e),
                }
                if interrupted() {
                    break 'stream Ok(End::Interrupted);
                }
            }
            if interrupted() {
                break Ok(End::Interrupted);
            }
            if !reading && written == read {
                break Ok(End::Done);
            }
        };
        // Profiles still queued are skipped; the scope waits for the few being decided.
        cancelled.store(true, Ordering::Relaxed);
        end
    })
}

/// The error for a profile whose deciding panicked, with the panic's message.
fn fault_error(fault: &(dyn std::any::Any + Send)) -> Error {
    let message = fault
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| fault.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    Error::new(
        ErrorKind::Eval,
        format!("not decided: deciding this profile failed inside decide ({message})"),
    )
    .help("this is a bug in decide or a rule its checks let through: please report it with the profile and the rules")
}
