//! Standard output and standard error: every write of the command line goes through here, so a
//! reader that goes away (`decide ... | head`) ends the output quietly instead of panicking.
//!
//! Rust ignores `SIGPIPE`, so a write to a closed pipe fails with `BrokenPipe`; `println!` and
//! `eprintln!` would panic on it (exit 101), which is why the library denies them.
//!
//! Text of the rules (a case's name, a question, a title) is written through [`shown`]: a
//! rules folder is input, and a control character in it (ESC above all) would act on the
//! terminal, retitling it or clearing the screen, instead of showing.

use std::borrow::Cow;
use std::io::Write;

use decide_engine::error::{Error, ErrorKind, Result};

/// Whether the reader of a stream is still there after a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// The text was written.
    Open,
    /// The reader has gone away (a broken pipe): nothing more should be written there.
    Closed,
}

/// Writes `text` to standard output and flushes it.
///
/// # Errors
/// Any write error other than a closed pipe (a full disk behind a redirection, say).
pub fn out(text: &str) -> Result<Pipe> {
    write(&mut std::io::stdout().lock(), text).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot write to standard output: {e}"),
        )
    })
}

/// Writes `text` to standard error and flushes it. An error other than a closed pipe has
/// nowhere to be reported, so it counts as written.
pub fn err(text: &str) -> Pipe {
    write(&mut std::io::stderr().lock(), text).unwrap_or(Pipe::Open)
}

/// Writes `text` to `w` and flushes it; a broken pipe is [`Pipe::Closed`], not an error.
///
/// # Errors
/// Any other write error.
pub fn write(w: &mut impl Write, text: &str) -> std::io::Result<Pipe> {
    match w.write_all(text.as_bytes()).and_then(|()| w.flush()) {
        Ok(()) => Ok(Pipe::Open),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Pipe::Closed),
        Err(e) => Err(e),
    }
}

/// Text of the rules or of a case as a terminal shows it within the program's own lines: every
/// control character (C0 with the line break and the tab, DEL, C1) and every bidirectional
/// override written as its escape, `\u{1b}` for ESC, `\u{a}` for a line break, as
/// [`decide_engine::error::visible`] writes them in memos and errors. The program's own line breaks
/// and colours are added around it, never read from it.
#[must_use]
pub fn shown(text: &str) -> Cow<'_, str> {
    decide_engine::error::escaped_where(text, |c| {
        c.is_control() || decide_engine::error::is_unsafe_char(c)
    })
}

/// Lines of text holding the rules' (a profile written from the questions' words) as a
/// terminal shows them: each line through [`shown`], the line breaks between them kept.
#[must_use]
pub fn shown_lines(text: &str) -> String {
    text.split('\n').map(shown).collect::<Vec<_>>().join("\n")
}
